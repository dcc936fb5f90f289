"""What a writer receives: `ExportDocument`, the export with every option applied, and its `Entry`s.

The writer contract, as `catalogue.py` is the reader one: a writer is `write_x(doc: ExportDocument) -> str |
bytes` and only lays out what it is given (`pipeline.py` selected, ordered, filled, converted and keyed the
entries; `str` is encoded by the pipeline in the requested charset).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .catalogue import Translation, Unit
from .charsets import charset_label
from .options import ExportOptions, status_terms
from .plurals import PluralRules, plural_rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from .registry import FormatSpec


@dataclass(slots=True)
class Entry:
    """One unit as a writer sees it.

    key: the lookup key chosen by the index option (after collision handling); path: the segments to
    nest it by in formats that expand dotted keys (one segment otherwise); translations: the source's
    and exported locales' translations after fallback, template and printf handling (possibly the
    unit's own dict, which writers only read).
    """

    unit: Unit
    key: str
    path: tuple[str, ...] = ()
    translations: dict[str, Translation] = field(default_factory=dict)

    def translation(self, locale: str | None) -> Translation:
        """The translation in a locale (untranslated when absent or when locale is None)."""
        found = self.translations.get(locale) if locale else None
        return found if found is not None else Translation()

    def plural_forms(self, locale: str | None, forms: list[str]) -> dict[str, str]:
        """The translated plural forms among `forms`, in that order (a lone text counts as the first)."""
        translation = self.translation(locale)
        if translation.plurals:
            return {name: translation.plurals[name] for name in forms if name in translation.plurals}
        return {forms[0]: translation.text} if translation.text is not None else {}


@dataclass
class ExportDocument:
    """Everything a writer needs, with every option already applied."""

    spec: FormatSpec
    options: ExportOptions
    source_locale: str
    locale: str | None  # the target of a single-locale export (None for templates and multi-locale files)
    locales: list[str]  # the locales whose translations the file holds
    entries: list[Entry]
    index: str
    project: str
    namespace: str
    charset: str
    exported_at: datetime
    banner: list[str]

    @property
    def template(self) -> bool:
        """Whether only source keys are exported."""
        return self.locale is None and not self.locales

    @property
    def untranslated_as_empty(self) -> bool:
        """Whether key/value writers, which never write a null, give an untranslated unit an empty text rather
        than leaving it out: in a template (keys only), and when the `status` option asked for untranslated
        units (the keys that need translating)."""
        return self.template or "untranslated" in status_terms(self.options.status)[0]

    def rules(self, locale: str | None) -> PluralRules:
        """Plural rules of a locale (of the source locale when None)."""
        return plural_rules(locale or self.source_locale)

    @property
    def charset_label(self) -> str:
        """The charset as an IANA-style name for file headers (UTF-8, ISO-8859-15, windows-1252)."""
        return charset_label(self.charset)
