"""What every reader shares: resolving locales and the index option, and assembling the catalogue."""
from __future__ import annotations

from .budget import spend
from .catalogue import Catalogue, Translation, Unit
from .errors import OptionError
from .options import ReadOptions
from .plurals import plural_rules
from .unique import UniqueNames

INDEXES = ("id", "text")


def plural_translation(forms: dict[str, str | None], locale: str, **extra: str) -> Translation | None:
    """A plural translation from {category: text or None}; None when no form has text.

    `text` mirrors the locale's first form (Loco's singular asset), else the first form present.
    """
    present = {name: text for name, text in forms.items() if text is not None}
    if not present:
        return None
    first = plural_rules(locale).forms[0]
    return Translation(text=present.get(first, next(iter(present.values()))), plurals=present, **extra)


def requested_locale(options: ReadOptions) -> str | None:
    """The locale the caller named, or None when it asked for detection."""
    locale = (options.locale or "").strip()
    return None if not locale or locale.lower() == "auto" else locale


class CatalogueBuilder:
    """Collects units while a reader walks a file, applying the index option the same way for all.

    With index "id" a key is the unit ID. With index "text" a key is the source text: the unit ID is
    derived from it (`context.text` when there is a context, as Loco names such assets) and the text
    becomes the source translation unless the reader supplies one. IDs are made unique with `-2`,
    `-3`... suffixes.
    """

    def __init__(
        self,
        options: ReadOptions,
        default_index: str,
        detected_locale: str | None = None,
        detected_source: str | None = None,
    ) -> None:
        self.index = (options.index or default_index).lower()
        if self.index not in INDEXES:
            raise OptionError(f"index must be 'id' or 'text', not {options.index!r}")
        self.by_text = self.index == "text"  # keys are source texts
        self.source_locale = (options.source_locale or detected_source or "en").strip()
        self.locale = requested_locale(options) or detected_locale or self.source_locale
        self.units: list[Unit] = []
        self._ids = UniqueNames()
        self._locales: list[str] = []
        self._by_key: dict[tuple[str, str], Unit] | None = None  # built on first unit_for()
        self._seen: set[str] = set()

    def add(
        self,
        key: str,
        target: Translation | None = None,
        *,
        context: str = "",
        notes: str = "",
        source: Translation | None = None,
        plural: bool = False,
        references: list[str] | None = None,
        printf: str = "",
        meta: dict | None = None,
    ) -> Unit:
        """A new unit for a key, holding the target translation in the file's locale."""
        source_locale, locale = self.source_locale, self.locale
        translations: dict[str, Translation] = {}
        if source is not None or self.by_text:
            translations[source_locale] = source or Translation(key)
            if source_locale not in self._seen:
                self._see(source_locale)
        if target is not None:
            if locale in translations:
                self._put(translations, locale, target)
            else:
                translations[locale] = target
            if locale not in self._seen:
                self._see(locale)
        unit_id = self._ids.claim(f"{context}.{key}" if context and self.by_text else key)
        # Positional arguments: this runs once per unit of large files.
        unit = Unit(unit_id, context, notes, "text", printf, [], {}, plural, translations, references or [], meta or {},
                    key)
        self.units.append(unit)
        spend(len(self.units))
        if self._by_key is not None:
            self._by_key.setdefault((context, key), unit)
        return unit

    def unit_for(self, key: str, context: str = "", plural: bool = False) -> Unit:
        """The unit already read for a key (and context), else a new one without a target translation."""
        if self._by_key is None:  # single-pass readers never ask, so the index is only built for others
            self._by_key = {}
            for known in self.units:
                self._by_key.setdefault((known.context, known.key), known)
        unit = self._by_key.get((context, key))
        if unit is None:
            unit = self.add(key, context=context, plural=plural)
        unit.plural = unit.plural or plural
        return unit

    def add_translation(self, unit: Unit, locale: str, translation: Translation) -> None:
        """Another locale's translation for a unit (multi-locale files)."""
        self._put(unit.translations, locale, translation)
        self._see(locale)

    def build(self, headers: dict[str, str] | None = None, project: str = "") -> Catalogue:
        """The catalogue of every unit added, source locale first in `locales`."""
        locales = sorted(self._locales, key=lambda code: code != self.source_locale)
        return Catalogue(
            source_locale=self.source_locale, locales=locales, units=self.units,
            project=project, headers=dict(headers or {}),
        )

    def _put(self, translations: dict[str, Translation], locale: str, translation: Translation) -> None:
        """Store a translation; a text already there (the source derived from a key) yields only to a real one."""
        existing = translations.get(locale)
        if existing is not None and (not translation.translated or translation.blank):
            return
        translations[locale] = translation

    def _see(self, locale: str) -> None:
        """Remember a locale in order of first appearance."""
        if locale not in self._seen:
            self._seen.add(locale)
            self._locales.append(locale)
