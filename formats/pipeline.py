"""The export pipeline: every cross-cutting export option, applied once for every format.

catalogue + options -> `ExportDocument` (selected, ordered, filled, converted, keyed entries) -> the
format's writer -> `finish` (line breaks, charset). Writers only lay out what they are given.

Option semantics decided here:
- filter: comma list of tags; a unit passes when it has any listed tag (`*` = any tag at all) and
  none of the `!`-negated ones (`!*` = untagged units only). Empty = every unit.
- status: comma list of `translated` (has non-blank text, flagged or not), `untranslated`,
  `blank-translation`, `flagged` (any flag), a flag name, `all`; same any/none rule with `!`.
  It is checked on the target locale (every exported locale for multi-locale files: a unit passes if
  one of them matches, and only its matching translations are written, except a bilingual format's
  source, which is the unit's key side; the source locale for templates).
- plural forms: a format without plural syntax (capabilities.plurals False) gets each plural form as a unit of
  its own, under its plural-form asset's ID (plural_forms_apart), before ordering and keying.
- order: `created` keeps catalogue order, `id` sorts by asset ID.
- fallback: a unit untranslated in the target locale takes the fallback locale's translation (plural
  forms re-mapped by category); blank or flagged translations are not replaced.
- index: `id`, `text` (source text; the asset ID when a unit has none) or an alias name (the alias,
  else the asset ID).
- collisions, when two units get the same key (same context too, for formats that hold contexts):
  overwrite = the last unit wins; ignore = the first wins; fail = KeyCollision naming the key;
  auto = later keys get `-2`, `-3`... suffixes; legacy = overwrite. In formats that nest dotted keys,
  a key that is a dotted prefix of another (`a` and `a.b`) also collides: auto and legacy keep the
  longer key flat below the point of conflict ({"a": ..., "a.b": ...}), the others drop or fail.
  Source-text keys are never nested: sentences contain dots.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from datetime import datetime, timezone
from collections.abc import Iterable
from itertools import repeat

from vocabulary import filter_holds, filter_terms, has_tag, plural_form_id, translation_statuses

from .banner import banner_lines
from .charsets import text_codec
from .catalogue import PRINTF_STYLES, Catalogue, Translation, Unit
from .document import Entry, ExportDocument
from .errors import CharsetError, KeyCollision, OptionError
from .options import COLLISION_MODES, LINE_BREAKS, ORDERS, ExportOptions, status_terms
from .plurals import map_plural_forms, plural_rules
from .unique import UniqueNames

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from .registry import FormatSpec

_UNICODE_CHARSETS = {"utf-8", "utf-16", "utf-32", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-8-sig"}


def prepare(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions) -> ExportDocument:
    """Apply every export option to a catalogue and return what the writer renders."""
    keyed = keyed_entries(catalogue, spec, options)
    return document_of(catalogue, spec, options, keyed)


@dataclass(slots=True)
class KeyedEntries:
    """The selected, ordered entries with the keys the index option gives them, before collisions."""

    source: str
    template: bool
    locales: list[str]
    wanted: list[str]  # the source, then the exported locales
    index: str
    entries: list[Entry]


def keyed_entries(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions) -> KeyedEntries:
    """Selection, order, fallback, printf and raw keys: everything of `prepare` that is per unit."""
    _check_options(options)
    source = options.source_locale or catalogue.source_locale
    template = options.template or spec.template_only
    locales = _export_locales(catalogue, options, source, template)
    index = options.index or spec.default_index
    units = select_units(catalogue.units, options.filter, options.status, locales or [source])
    if not spec.capabilities.plurals:
        units = plural_forms_apart(units)
    units = order_units(units, options.order)
    wanted = [source] + [code for code in locales if code != source]
    per_translation = options.all_locales and bool(options.status.strip())
    if (not template and not options.fallback and not options.printf and index == "id" and spec.key_filter is None
            and not per_translation):
        # the most common case in one pass: keyed by asset ID (as below)
        return KeyedEntries(source, template, locales, wanted, index, _entries_by_id(units))
    if not template and not options.fallback:  # the common case, without a call per unit
        entries = [Entry(unit, "", (), unit.translations) for unit in units]
    else:
        entries = [Entry(unit, "", (), _translations(unit, wanted, options, template, source)) for unit in units]
    if options.printf:
        entries = [_convert_entry_printf(entry, options.printf, source, wanted) for entry in entries]
    if index == "id" and spec.key_filter is None:
        for entry in entries:  # the common cases, without a call per unit
            entry.key = entry.unit.id
    elif index == "text" and spec.key_filter is None:
        for entry in entries:  # as _raw_key: the source text, else the asset ID
            found = entry.translations.get(source)
            entry.key = (found.text if found is not None else None) or entry.unit.id
    else:
        for entry in entries:
            entry.key = _raw_key(entry, index, source, spec)
    if per_translation:  # a multi-locale file: status selects each translation, not the whole unit
        status_in, status_out = status_terms(options.status)
        for entry in entries:
            entry.translations = {code: translation for code, translation in entry.translations.items()
                                  if (spec.bilingual and code == source)  # the key side of the unit
                                  or filter_holds(status_in, status_out,
                                                  lambda term: translation_has_status(translation, term))}
    if template and not spec.bilingual:
        for entry in entries:
            entry.translations = _keys_only(entry.translations, source)
    return KeyedEntries(source, template, locales, wanted, index, entries)


def _keys_only(translations: dict[str, Translation], source: str) -> dict[str, Translation]:
    """A template's translations: the source's texts emptied, so no writer can put them in the file (only
    bilingual formats, whose key side is the source text, keep it)."""
    found = translations.get(source)
    if found is None or not found.translated:
        return translations
    return {source: Translation(text="", plurals={name: "" for name in found.plurals})}


def _entries_by_id(units: list[Unit]) -> list[Entry]:
    """`Entry(unit, unit.id, (), unit.translations)` for each unit, with the fields set here rather than through
    the dataclass constructor (a third faster: this runs once per unit of large files)."""
    entries: list[Entry] = list(map(object.__new__, repeat(Entry, len(units))))  # blank, made in a C loop
    for entry, unit in zip(entries, units):
        entry.unit = unit
        entry.key = unit.id
        entry.path = ()
        entry.translations = unit.translations
    return entries


# The fields `_entries_by_id` sets, in order: a field added to Entry must be set there too.
if tuple(item.name for item in fields(Entry)) != ("unit", "key", "path", "translations"):
    raise ImportError("formats.pipeline._entries_by_id sets the fields of Entry: update it")


def document_of(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions, keyed: KeyedEntries,
                keys_unique: bool = False) -> ExportDocument:
    """The document of keyed entries: collisions resolved, charset checked, banner and file facts added.

    keys_unique: the caller has checked that no two entries share a key identity (no collision to resolve).
    """
    source, template, locales = keyed.source, keyed.template, keyed.locales
    locale = None if template or options.all_locales else locales[0]
    nested = nests_keys(spec, options, keyed.index)
    if keys_unique and not nested:
        entries = keyed.entries
        for entry in entries:
            entry.path = (entry.key,)
    else:
        entries = resolve_keys(keyed.entries, options.collisions, nested, spec.context_in_key)
    charset = _charset(options.charset or spec.default_charset)
    if not spec.escapes_charset:
        check_encodable(entries, charset, keyed.wanted)
    project = options.project_name or catalogue.project
    exported_at = options.exported_at or datetime.now(timezone.utc).replace(microsecond=0)
    banner = [] if options.no_comments else banner_lines(
        spec.ext, spec.label, project, [source] if template else locales,
        options.exported_by, exported_at, options.filter,
    )
    return ExportDocument(
        spec=spec, options=options, source_locale=source, locale=locale,
        locales=[] if template else locales, entries=entries, index=keyed.index, project=project,
        namespace=options.namespace or project, charset=charset, exported_at=exported_at,
        banner=banner,
    )


def nests_keys(spec: FormatSpec, options: ExportOptions, index: str) -> bool:
    """Whether dotted keys become nested objects in this export (source-text keys never do)."""
    return spec.nests_keys and not options.no_expand and index != "text"


def finish(document: ExportDocument, rendered: str | bytes) -> bytes:
    """The writer's output with the requested line endings, encoded in the requested charset."""
    if isinstance(rendered, bytes):
        return rendered
    ending = LINE_BREAKS[document.options.breaks.lower()]
    if ending != "\n":
        rendered = re.sub(r"\r\n|\r|\n", ending, rendered)
    return encode_header_text(rendered, document.charset)


def encode_header_text(text: str, charset: str) -> bytes:
    """Text encoded in the export's charset; CharsetError for a character of the file header that it cannot
    hold (exported texts were checked by check_encodable, so only header values such as the name remain)."""
    try:
        return text.encode(charset)
    except UnicodeEncodeError as error:
        char = text[error.start]
        raise CharsetError(
            f"character {char!r} (U+{ord(char):04X}) in the file header cannot be encoded in {charset}"
        ) from None


def _check_options(options: ExportOptions) -> None:
    """Reject option values outside their vocabularies with a message listing the valid ones."""
    if options.collisions not in COLLISION_MODES:
        raise OptionError(f"collisions must be one of {', '.join(COLLISION_MODES)}, not {options.collisions!r}")
    if options.order not in ORDERS:
        raise OptionError(f"order must be one of {', '.join(ORDERS)}, not {options.order!r}")
    if options.breaks.lower() not in LINE_BREAKS:
        raise OptionError(f"breaks must be Unix, DOS or Mac, not {options.breaks!r}")
    if options.printf and options.printf not in PRINTF_STYLES:
        raise OptionError(f"printf must be one of {', '.join(PRINTF_STYLES)}, not {options.printf!r}")
    status_terms(options.status)


def _export_locales(catalogue: Catalogue, options: ExportOptions, source: str, template: bool) -> list[str]:
    """The locales whose translations go into the file: the target, or all (source first)."""
    if options.all_locales:
        others = [code for code in catalogue.locales if code != source]
        return [source] + others
    if template:
        return []
    return [options.locale or source]


# --- selection -------------------------------------------------------------------------------------


def translation_has_status(translation: Translation, term: str) -> bool:
    """Whether a translation is in the status or carries the flag named by the term."""
    return term == "all" or term in translation_statuses(translation.translated, translation.blank,
                                                         translation.flag or None)


def select_units(units: Iterable[Unit], tag_filter: str, status: str, locales: list[str]) -> list[Unit]:
    """The units passing the tag filter and, in at least one of the locales, the status filter."""
    tags_in, tags_out = filter_terms(tag_filter)
    status_in, status_out = status_terms(status)
    if not (tags_in or tags_out or status_in or status_out):
        return list(units)
    selected = []
    for unit in units:
        if not filter_holds(tags_in, tags_out, lambda term: has_tag(unit.tags, term)):
            continue
        if (status_in or status_out) and not any(
            filter_holds(status_in, status_out, lambda term: translation_has_status(unit.translation(code), term))
            for code in locales
        ):
            continue
        selected.append(unit)
    return selected


def plural_forms_apart(units: list[Unit]) -> list[Unit]:
    """For formats without plural syntax: each plural unit as its singular followed by one unit per plural form.

    Plural forms are assets of their own (service-api §2), so a flat format writes each under its own ID,
    as Loco's converter did (`"examples" = "exemples";`, `define('TEST_EXAMPLES', ...)`) instead of dropping
    it. Form i + 1 of a locale's CLDR forms is plural form asset i, as in the project (app/exchange.py);
    a unit read from a file, whose plural forms have no IDs yet, names them as new plural-form assets are
    named (`apple-plural`, `apple-plural-2`). A form the locale does not have is untranslated there.
    """
    if not any(unit.plural for unit in units):
        return units
    forms_of: dict[str, list[str]] = {}  # each locale's CLDR forms, looked up once
    flat: list[Unit] = []
    for unit in units:
        if not unit.plural:
            flat.append(unit)
            continue
        for code in unit.translations:
            if code not in forms_of:
                forms_of[code] = plural_rules(code).forms
        flat.extend(_plural_form_units(unit, forms_of))
    return flat


def _plural_form_units(unit: Unit, forms_of: dict[str, list[str]]) -> list[Unit]:
    """The singular and plural-form units of one plural unit, every translation a plain text."""
    used = [forms_of[code].index(name) for code, translation in unit.translations.items()
            for name in translation.plurals if name in forms_of[code]]
    count = max(len(unit.plural_ids), max(used, default=0))
    ids = list(unit.plural_ids) + [plural_form_id(unit.id, number) for number in range(len(unit.plural_ids) + 1,
                                                                                      count + 1)]
    made = []
    for position, unit_id in enumerate([unit.id] + ids):
        translations = {code: _form_translation(translation, forms_of[code], position)
                        for code, translation in unit.translations.items()}
        own = position == 0  # a plural-form asset: the singular's notes, aliases and file extras are not its own
        made.append(Unit(id=unit_id, context=unit.context, notes=unit.notes if own else "", type=unit.type,
                         printf=unit.printf, tags=unit.tags, aliases=unit.aliases if own else {},
                         translations=translations, references=unit.references, meta=unit.meta if own else {},
                         key=unit.key if own else ""))
    return made


_UNTRANSLATED = Translation()  # shared: writers only read translations


def _form_translation(translation: Translation, forms: list[str], position: int) -> Translation:
    """The text of one plural form of a translation (the singular mirrors the first form), flag kept."""
    if position == 0:
        text = translation.plurals.get(forms[0], translation.text)
    else:
        text = translation.plurals.get(forms[position]) if position < len(forms) else None
    if text is None:
        return _UNTRANSLATED
    return Translation(text, {}, translation.flag, translation.comment)


def order_units(units: list[Unit], order: str) -> list[Unit]:
    """Units in creation (catalogue) order or sorted by asset ID."""
    return sorted(units, key=lambda unit: unit.id) if order == "id" else list(units)


# --- translations ----------------------------------------------------------------------------------


def _translations(
    unit: Unit, locales: list[str], options: ExportOptions, template: bool, source: str
) -> dict[str, Translation]:
    """The unit's translations for the file: templates keep the source only; fallback fills gaps."""
    if not template and not options.fallback:
        return unit.translations  # shared, not copied: writers only read, and only the locales they export
    chosen: dict[str, Translation] = {}
    for code in locales:
        if template and code != source:
            continue
        translation = unit.translations.get(code)
        if (translation is None or not translation.translated) and options.fallback and code != options.fallback:
            translation = _fallback(unit, code, options.fallback) or translation
        if translation is not None:
            chosen[code] = translation
    return chosen


def _fallback(unit: Unit, locale: str, fallback_locale: str) -> Translation | None:
    """The fallback locale's translation adapted to the target locale's plural forms."""
    fallback = unit.translations.get(fallback_locale)
    if fallback is None or not fallback.translated:
        return None
    if not unit.plural or not fallback.plurals:
        return Translation(text=fallback.text)
    forms = map_plural_forms(fallback.plurals, plural_rules(locale).forms)
    return Translation(text=next(iter(forms.values()), None), plurals=forms)


def _convert_entry_printf(entry: Entry, target: str, source_locale: str, locales: list[str]) -> Entry:
    """The entry with the placeholders of its exported texts rewritten in the target printf style."""
    from .printf import convert_printf  # imported on demand: most exports convert no placeholder

    style = entry.unit.printf or _detected_style(entry, source_locale)
    if not style or style == target:
        return entry
    converted = {
        code: replace(
            translation,
            text=convert_printf(translation.text, style, target) if translation.text else translation.text,
            plurals={name: convert_printf(text, style, target) for name, text in translation.plurals.items()},
        )
        for code, translation in entry.translations.items() if code in locales
    }
    return replace(entry, translations=converted)


def _detected_style(entry: Entry, source_locale: str) -> str:
    """The printf style of the unit's source text, else of its first text that has placeholders."""
    from .printf import detect_printf  # imported on demand, as convert_printf

    ordered = [entry.translations.get(source_locale)] + list(entry.translations.values())
    for translation in ordered:
        if translation is None:
            continue
        for text in [translation.text or "", *translation.plurals.values()]:
            style = detect_printf(text)
            if style:
                return style
    return ""


# --- keys ------------------------------------------------------------------------------------------


def _raw_key(entry: Entry, index: str, source: str, spec: FormatSpec) -> str:
    """The key the index option asks for, passed through the format's key filter."""
    unit = entry.unit
    if index == "id":
        key = unit.id
    elif index == "text":
        text = entry.translation(source).text
        key = text if text else unit.id
    else:
        key = unit.aliases.get(index) or unit.id
    return spec.key_filter(key) if spec.key_filter else key


def resolve_keys(entries: list[Entry], mode: str, nested: bool, context_in_key: bool) -> list[Entry]:
    """Entries with unique keys (and, when nesting, conflict-free paths) according to the collision mode."""
    entries = _resolve_duplicates(entries, mode, context_in_key)
    if not nested:
        for entry in entries:
            entry.path = (entry.key,)
        return entries
    if mode in ("auto", "legacy"):
        keys = {entry.key for entry in entries}
        for entry in entries:
            entry.path = _flattened_path(entry.key, keys)
        return entries
    return _drop_nesting_conflicts(entries, mode)


def key_identity(entry: Entry, context_in_key: bool) -> tuple[str, str]:
    """What must be unique in the file: the key, with the context where the format holds one."""
    return (entry.unit.context if context_in_key else "", entry.key)


def _resolve_duplicates(entries: list[Entry], mode: str, context_in_key: bool) -> list[Entry]:
    """Entries whose identities are unique: first or last wins, suffixed, or an error."""
    if context_in_key:  # as key_identity, without a call per entry
        identities: set[object] = {(entry.unit.context, entry.key) for entry in entries}
    else:
        identities = {entry.key for entry in entries}
    if len(identities) == len(entries):
        return entries  # no two alike (the usual case): every mode keeps every entry as it is
    if mode in ("overwrite", "legacy"):
        kept = {key_identity(entry, context_in_key): entry for entry in entries}
        chosen = {id(entry) for entry in kept.values()}
        return [entry for entry in entries if id(entry) in chosen]
    names = UniqueNames()
    owners: dict[tuple[str, str], Entry] = {}
    result = []
    for entry in entries:
        scope = entry.unit.context if context_in_key else ""
        if names.taken(entry.key, scope):
            if mode == "fail":
                raise KeyCollision(
                    f"key {entry.key!r} is used by assets {owners[(scope, entry.key)].unit.id!r} and {entry.unit.id!r}"
                )
            if mode == "ignore":
                continue
        entry.key = names.claim(entry.key, scope)
        owners[(scope, entry.key)] = entry
        result.append(entry)
    return result


def _flattened_path(key: str, keys: set[str]) -> tuple[str, ...]:
    """Dotted segments, except that expansion stops before a prefix that is itself a key."""
    if "." not in key:
        return (key,)
    head, _, tail = key.partition(".")
    if "." not in tail:  # the common two-segment key, without the general loop
        return (key,) if head in keys else (head, tail)
    segments = key.split(".")
    prefix = segments[0]
    for depth in range(1, len(segments)):
        if prefix in keys:
            return tuple(segments[:depth - 1]) + (".".join(segments[depth - 1:]),)
        prefix = f"{prefix}.{segments[depth]}"
    return tuple(segments)


def _drop_nesting_conflicts(entries: list[Entry], mode: str) -> list[Entry]:
    """Entries without dotted-prefix conflicts: the first (ignore) or last (overwrite) wins, or fail."""
    ordered = entries if mode != "overwrite" else list(reversed(entries))
    leaves: dict[str, Entry] = {}
    interiors: dict[str, Entry] = {}
    kept: list[Entry] = []
    for entry in ordered:
        segments = entry.key.split(".")
        prefixes = [".".join(segments[:depth]) for depth in range(1, len(segments))]
        clash = interiors.get(entry.key) or next((leaves[p] for p in prefixes if p in leaves), None)
        if clash is not None:
            if mode == "fail":
                raise KeyCollision(
                    f"key {entry.key!r} (asset {entry.unit.id!r}) conflicts with key {clash.key!r} "
                    f"(asset {clash.unit.id!r}) when dotted keys are nested"
                )
            continue
        leaves[entry.key] = entry
        for prefix in prefixes:
            interiors.setdefault(prefix, entry)
        entry.path = tuple(segments)
        kept.append(entry)
    return kept if mode != "overwrite" else list(reversed(kept))


# --- charset ---------------------------------------------------------------------------------------


def _charset(name: str) -> str:
    """The Python codec name of a requested charset, or CharsetError naming it."""
    codec = text_codec(name or "utf-8")
    if codec is None:
        raise CharsetError(f"unknown charset {name[:40]!r}: name a text encoding such as UTF-8 or ISO-8859-1")
    return codec


def check_encodable(entries: list[Entry], charset: str, locales: list[str]) -> None:
    """Fail with the offending character and key when an exported text cannot be written in the charset."""
    if charset in _UNICODE_CHARSETS:
        return
    for entry in entries:
        texts = [entry.key, entry.unit.context, entry.unit.notes]
        for translation in (entry.translations[code] for code in locales if code in entry.translations):
            texts.append(translation.text or "")
            texts.extend(translation.plurals.values())
        for text in texts:
            try:
                text.encode(charset)
            except UnicodeEncodeError as error:
                char = text[error.start]
                raise CharsetError(
                    f"character {char!r} (U+{ord(char):04X}) of key {entry.key!r} cannot be encoded in {charset}"
                ) from None
