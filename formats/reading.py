"""What every reader shares: resolving locales and the index option, and assembling the catalogue."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from itertools import compress, repeat

from limits import MAX_LINE_CHARS, describe
from vocabulary import canonical_locale, locale_from_posix

from .budget import affordable, check_time, spend
from .catalogue import Catalogue, Translation, Unit
from .errors import OptionError, ParseError
from .nesting import fold, is_plural_object
from .options import ReadOptions
from .plurals import plural_rules, without_repeated_other
from .unique import UniqueNames

INDEXES = ("id", "text")
# Longest line a line-oriented reader accepts: no translation is a megabyte of unbroken text, and a cap keeps a
# hostile single-line body from reaching the parsers as if it were one.

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from typing import Any

    ScalarText = Callable[[Any, str], "str | None"]  # (leaf value, key) -> text, None = untranslated

_ROWS_AT_ONCE = 4096  # rows `add_rows` builds between two readings of the clock


def plural_translation(forms: Mapping[str, str | None], locale: str, **extra: str) -> Translation | None:
    """A plural translation from {category: text or None}; None when no form has text.

    `text` mirrors the locale's first form (Loco's singular asset), else the first form present.
    """
    present = without_repeated_other({name: text for name, text in forms.items() if text is not None}, locale)
    if not present:
        return None
    first = plural_rules(locale).forms[0]
    return Translation(text=present.get(first, next(iter(present.values()))), plurals=present, **extra)


class ForwardLines:
    """1-based line numbers of positions in a text read front to back, each newline counted once: a scanner
    that asked `text.count("\\n", 0, position)` for every entry was quadratic in the number of entries."""

    __slots__ = ("text", "_counted", "_lines")

    def __init__(self, text: str) -> None:
        self.text, self._counted, self._lines = text, 0, 1

    def at(self, position: int) -> int:
        if position < self._counted:  # a step back (an error pointing before the cursor): count afresh
            return self.text.count("\n", 0, position) + 1
        self._lines += self.text.count("\n", self._counted, position)
        self._counted = position
        return self._lines


QUOTE_OR_BACKSLASH = re.compile(r'["\\]')  # the next of either in one search: two `find`s each scan on


def duplicate_key_warning(key: str, line: int | None, first_line: int | None) -> str:
    """The import answer's word on a key given twice: kept as Ruby, PyYAML, PHP and JavaScript keep it (the last)."""
    where = f"line {line}: " if line else ""
    first = f" (first at line {first_line})" if first_line else ""
    return f"{where}duplicate key {key!r}{first}; the last value is kept"


def require_language(options: ReadOptions, detected: str | None, translated: Callable[[], bool], where: str) -> None:
    """ParseError when a file holding translations names no language and the caller gave none: its texts
    would otherwise be taken for the source locale's. `where`: what in the file would have named it."""
    if requested_locale(options) is None and detected is None and translated():
        raise ParseError(f"the file does not say its language ({where}); give the locale option")


def requested_locale(options: ReadOptions) -> str | None:
    """The locale the caller named (canonically spelled), or None when it asked for detection (`auto`)."""
    locale = (options.locale or "").strip()
    if not locale or locale.lower() == "auto":
        return None
    try:
        return canonical_locale(locale)
    except ValueError as error:
        raise OptionError(str(error)) from None


def file_locale(value: str, where: str) -> str:
    """A locale a file names (`ru_RU`, `pt-br`, `sr_RS@latin`, `de_DE.UTF-8`), canonically spelled.

    ParseError (422) naming `where` it was found when the value is no language tag.
    """
    code = locale_from_posix(value)
    if code is None:
        raise ParseError(f"{where} names {value!r}, which is not a locale code such as fr, fr-FR or fr_FR")
    return code


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
        self._canonical: dict[str, str] = {}
        self.source_locale = self.canonical(options.source_locale or detected_source or "en")
        self.locale = requested_locale(options) or self.canonical(detected_locale or self.source_locale)
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

    def add_rows(self, keys: list[str], texts: list[str], contexts: list[str], notes: list[str],
                 references: list[list[str]], special: dict[int, RowParts] | None = None) -> None:
        """Many units at once, the same as `add(keys[i], Translation(texts[i]) if texts[i] else None,
        context=contexts[i], notes=notes[i], references=references[i])` gives row by row; a row in `special`
        takes its target translation, source translation, plural flag and printf style from there instead of
        `texts`. Each row's references list becomes its unit's."""
        special = special or {}
        for start in range(0, len(keys), _ROWS_AT_ONCE):
            end = min(start + _ROWS_AT_ONCE, len(keys))
            chunk = {row - start: parts for row, parts in special.items() if start <= row < end} if special else {}
            if self._add_at_once(keys[start:end], texts[start:end], contexts[start:end], notes[start:end],
                                 references[start:end], chunk):
                continue
            for row in range(start, end):
                parts = special.get(row)
                if parts is None:
                    self.add(keys[row], Translation(texts[row]) if texts[row] else None, context=contexts[row],
                             notes=notes[row], references=references[row])
                else:
                    self.add(keys[row], parts.target, context=contexts[row], notes=notes[row],
                             references=references[row], source=parts.source, plural=parts.plural,
                             printf=parts.printf)

    def _add_at_once(self, keys: list[str], texts: list[str], contexts: list[str], notes: list[str],
                     references: list[list[str]], special: dict[int, RowParts]) -> bool:
        """`add_rows` of a few thousand rows in one tight loop; False, with nothing added, when `add` must take
        them one by one: an ID taken or repeated (`add` gives suffixes), a source translation without index
        "text" or a target locale that is the source one (`_put` decides), the unit limit (`add` names the unit
        that passes it)."""
        by_text, source_locale, locale = self.by_text, self.source_locale, self.locale
        translated = any(texts) or any(parts.target for parts in special.values())
        if (not affordable(len(self.units) + len(keys)) or (translated and by_text and locale == source_locale)
                or (not by_text and any(parts.source for parts in special.values()))):
            return False
        ids = keys
        if by_text and any(contexts):  # `context.key` where there is a context (in a few rows, usually)
            ids = keys[:]
            for row in compress(range(len(keys)), contexts):
                ids[row] = f"{contexts[row]}.{keys[row]}"
        if not self._ids.claim_all(ids):
            return False
        units = _plain_units(ids, keys, texts, contexts, notes, references, source_locale if by_text else None,
                             locale)
        for row, parts in special.items():
            unit = units[row]
            translations = unit.translations
            if texts[row]:  # the target made from the row's text is not its own (its locale is not the source's)
                del translations[locale]
            if parts.source is not None:
                translations[source_locale] = parts.source
            if parts.target is not None:
                translations[locale] = parts.target
            unit.plural, unit.printf = parts.plural, parts.printf
        if by_text and units:
            self._see(source_locale)
        if translated:
            self._see(locale)
        self.units += units
        check_time()
        if self._by_key is not None:
            for unit in units:
                self._by_key.setdefault((unit.context, unit.key), unit)
        return True

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
        """Another locale's translation for a unit (multi-locale files); `locale` as the file spells it."""
        locale = self.canonical(locale)
        self._put(unit.translations, locale, translation)
        self._see(locale)

    def canonical(self, code: str) -> str:
        """A locale named by the file or the caller, canonically spelled (cached: called per translation)."""
        found = self._canonical.get(code)
        if found is None:
            found = self._canonical[code] = file_locale(code, "the file")
        return found

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


@dataclass(slots=True)
class RowParts:
    """What a row of `CatalogueBuilder.add_rows` holds beyond a plain text (as `add` takes them)."""

    target: Translation | None
    source: Translation | None = None
    plural: bool = False
    printf: str = ""


# The fields of Unit and Translation, in order, that `_plain_units` sets itself: a field added to either class
# must be added there too (a unit without it would fail on first use; the scan tests compare whole units).
_UNIT_FIELDS = ("id", "context", "notes", "type", "printf", "tags", "aliases", "plural", "translations", "references",
                "meta", "key", "plural_ids")
_TRANSLATION_FIELDS = ("text", "plurals", "flag", "comment")
if (tuple(item.name for item in fields(Unit)) != _UNIT_FIELDS
        or tuple(item.name for item in fields(Translation)) != _TRANSLATION_FIELDS):
    raise ImportError("formats.reading._plain_units sets the fields of Unit and Translation: update it")


def _plain_units(ids: list[str], keys: list[str], texts: list[str], contexts: list[str], notes: list[str],
                 references: list[list[str]], source_locale: str | None, locale: str) -> list[Unit]:
    """Units of plain rows: the target translation is the text (none when empty), the source one the key when
    `source_locale` is given (index "text"). As `Unit(...)` and `Translation(...)` make them, but a third
    faster: their attributes are set here, not through the dataclass constructors (this runs once per unit
    of large files)."""
    # Blank instances made in C loops (cheaper than one call each here), then filled in.
    new, count = object.__new__, len(keys)
    units: list[Unit] = list(map(new, repeat(Unit, count)))
    targets = map(new, repeat(Translation, count)) if any(texts) else repeat(None)
    sources = map(new, repeat(Translation, count)) if source_locale is not None else repeat(None)
    for unit, target, source, unit_id, key, text, context, note, refs in zip(
            units, targets, sources, ids, keys, texts, contexts, notes, references):
        if text:
            target.text = text
            target.plurals = {}
            target.flag = target.comment = ""
        if source is not None:
            source.text = key
            source.plurals = {}
            source.flag = source.comment = ""
            translations = {source_locale: source, locale: target} if text else {source_locale: source}
        else:
            translations = {locale: target} if text else {}
        unit.id = unit_id
        unit.context = context
        unit.notes = note
        unit.type = "text"
        unit.printf = ""
        unit.tags = []
        unit.aliases = {}
        unit.plural = False
        unit.translations = translations
        unit.references = refs
        unit.meta = {}
        unit.key = key
        unit.plural_ids = ()
    return units


def leaf_translation(value: Any, key: str, locale: str, scalar_text: ScalarText) -> Translation | None:
    """A tree leaf (a scalar, or an object of plural forms) as a translation; None when untranslated."""
    if is_plural_object(value):
        return plural_translation(value, locale)
    text = scalar_text(value, key)
    return None if text is None else Translation(text=text)


def add_tree(
    builder: CatalogueBuilder, tree: dict[str, Any], locale: str, scalar_text: ScalarText,
    notes: Mapping[str, str] | None = None,
) -> None:
    """Every leaf of a nested object (JSON, YAML, PHP arrays) as a unit, or a translation of one, in `locale`.

    Nested keys fold into dotted IDs; objects of CLDR plural forms are plural units; `notes` maps dotted
    keys to notes for translators (comments found beside them).
    """
    for key, value in fold(tree, is_plural_object):
        translation = leaf_translation(value, key, locale, scalar_text)
        unit = builder.unit_for(key, plural=is_plural_object(value))
        if notes and key in notes and not unit.notes:
            unit.notes = notes[key]
        if translation is not None:
            builder.add_translation(unit, locale, translation)


def check_line_lengths(text: str) -> None:
    """ParseError naming the first line longer than MAX_LINE_CHARS."""
    if len(text) <= MAX_LINE_CHARS:
        return
    start, number = 0, 1
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > MAX_LINE_CHARS:
            raise ParseError(f"line is {end - start} characters long {describe('max_line_chars')}", number)
        start, number = end + 1, number + 1


def decode_utf8(data: bytes, what: str) -> str:
    """UTF-8 file bytes as text (a BOM is dropped); ParseError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ParseError(f"{what} is not valid UTF-8 (byte 0x{data[error.start]:02x})", line) from None
