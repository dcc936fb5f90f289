"""XLIFF: 1.2 read and written (default and Xcode styles, one `<file>` per target locale), 2.0 read.

Shapes written (XLIFF 1.2, valid against the strict schema):
- `<file original=project source-language target-language datatype="plaintext"><body>` per target
  locale (all locales: one file per locale other than the source);
- `<trans-unit id=key resname=key xml:space="preserve">` with `<source>`, `<target state=...>` (left
  out when untranslated), `<note>` (asset notes; `from="translator"` for a translator comment),
  a context in `<context-group purpose="information"><context context-type="x-context">` and source
  references as `purpose="location"` groups (sourcefile + linenumber);
- plurals as `<group restype="x-gettext-plurals" resname=key>` of trans-units `key[i]` whose resname
  is the CLDR category, one per category of the source or target locale;
- units whose type is `xml` and whose text is a well-formed fragment of XLIFF inline elements
  (`<x/>`, `<g>`...) are written as markup; every other text is escaped.
- xcode: `<file original="{source}.lproj/Localizable.strings">` with `<trans-unit id=key>`, plurals in
  a `Localizable.stringsdict` file with Xcode's `/key:dict/value:dict/one:dict/:string` IDs.

state <-> flag: translated/final/signed-off = no flag; needs-review-* = fuzzy; needs-translation,
new, needs-l10n, needs-adaptation = incomplete; `x-<flag>` for the other Loco flags. A target with
no text is untranslated unless its state says it is translated (a blank translation).
Reading recognises Xcode's stringsdict IDs and Xcode string-catalogue IDs (`key|==|plural.one`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from ..catalogue import FLAGS, Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..plurals import CATEGORIES, plural_rules
from ..reading import CatalogueBuilder, plural_translation
from .parsing import (
    banner_comment, verified, child, children, escape_attribute, escape_text, named_locale, has_markup, inner_markup,
    local_name, parse_xml, plain_text, well_formed_fragment,
)

NAMESPACE_12 = "urn:oasis:names:tc:xliff:document:1.2"
NAMESPACE_20 = "urn:oasis:names:tc:xliff:document:2.0"
PLURAL_RESTYPE = "x-gettext-plurals"
CONTEXT_TYPE = "x-context"
INLINE_ELEMENTS = frozenset({"g", "x", "bx", "ex", "ph", "bpt", "ept", "it", "mrk", "sub"})

_FLAG_STATE = {"fuzzy": "needs-review-translation", "incomplete": "needs-translation"}
_INCOMPLETE_STATES = {"new", "needs-translation", "needs-l10n", "needs-adaptation"}
_DONE_STATES = {"translated", "final", "signed-off"}
_CONTEXT_TYPES = {CONTEXT_TYPE, "x-gettext-msgctxt", "x-po-msgctxt", "x-msgctxt"}
_XCODE_PLURAL = re.compile(r"^/(.+):dict/([^/]+):dict/(zero|one|two|few|many|other):dict/:string$")
_XCODE_FORMAT = re.compile(r"^/(.+):dict/NSStringLocalizedFormatKey:dict/:string$")
_CATALOG_PLURAL = re.compile(r"^(.+?)\|==\|(?:(.+)\.)?plural\.(zero|one|two|few|many|other)$")
_REFERENCE = re.compile(r"^(.*):(\d+)$")


def state_for(translation: Translation) -> str:
    """The XLIFF 1.2 state of a translation that has text."""
    if not translation.flag:
        return "translated"
    return _FLAG_STATE.get(translation.flag) or f"x-{translation.flag}"


def flag_for(state: str) -> str:
    """The Loco flag an XLIFF state means."""
    state = state.strip()
    if not state or state in _DONE_STATES:
        return ""
    if state.startswith("needs-review"):
        return "fuzzy"
    if state in _INCOMPLETE_STATES:
        return "incomplete"
    flag = state.removeprefix("x-")
    return flag if flag in FLAGS else ""


# --- reading ---------------------------------------------------------------------------------------


@dataclass
class _Record:
    """One translatable message found in the file (a plural collects its forms)."""

    key: str
    locale: str
    context: str = ""
    notes: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    source: str | None = None
    target: str | None = None
    flag: str = ""
    comment: str = ""
    markup: bool = False
    plural: bool = False
    source_forms: dict[str, str] = field(default_factory=dict)
    target_forms: dict[str, str] = field(default_factory=dict)


def read_xliff(data: bytes, options: ReadOptions) -> Catalogue:
    """XLIFF 1.2 (any style) or 2.0; several `<file>` elements with different target languages are several locales."""
    root = parse_xml(data, "XLIFF")
    if local_name(root) != "xliff":
        raise ParseError(f"expected an <xliff> root element, found <{local_name(root)}>", root.sourceline)
    if root.tag == f"{{{NAMESPACE_20}}}xliff" or root.get("version", "").startswith("2"):
        return _read_xliff2(root, options)
    files = children(root, "file")
    if not files:
        raise ParseError("XLIFF holds no <file> element", root.sourceline)
    languages = [named_locale(file.get("target-language"), "<file target-language>") for file in files]
    targets = list(dict.fromkeys(code for code in languages if code))
    builder = CatalogueBuilder(
        options, "id", detected_locale=targets[0] if targets else None,
        detected_source=named_locale(files[0].get("source-language"), "<file source-language>"),
    )
    records: dict[tuple[str, str, str], _Record] = {}
    for file, language in zip(files, languages):
        locale = builder.locale if len(targets) <= 1 else language or builder.locale
        body = child(file, "body")
        if body is not None:
            _collect(body, locale, builder.by_text, records)
    for record in records.values():
        _add_record(builder, record)
    return builder.build()


def _collect(container: etree._Element, locale: str, by_text: bool, records: dict) -> None:
    """Records of every trans-unit in a body or group, nested groups included."""
    for element in container:
        name = local_name(element)
        if name == "trans-unit":
            _collect_unit(element, locale, by_text, records)
        elif name == "group" and element.get("restype") == PLURAL_RESTYPE:
            _collect_plural_group(element, locale, by_text, records)
        elif name == "group":
            _collect(element, locale, by_text, records)


def _collect_unit(element: etree._Element, locale: str, by_text: bool, records: dict) -> None:
    """One trans-unit as a record, or as a plural form of one (Xcode and string-catalogue IDs)."""
    unit_id = element.get("id") or ""
    if _XCODE_FORMAT.match(unit_id):
        return  # the stringsdict format key (`%#@value@`): the forms carry the text
    plural = _XCODE_PLURAL.match(unit_id) or _CATALOG_PLURAL.match(unit_id)
    found = _message(element)
    if found is None:
        return  # neither source nor target (seen in Angular extractions): nothing to translate
    if plural:
        key = plural.group(1) if plural.re is _XCODE_PLURAL or not plural.group(2) else (
            f"{plural.group(1)}|==|{plural.group(2)}")
        record = _record(records, key, found.context, locale, plural=True)
        _merge_form(record, found, plural.group(3))
        return
    key = found.source if by_text and found.source else _unit_key(element)
    record = _record(records, key, found.context, locale)
    record.source, record.target, record.flag, record.comment = found.source, found.target, found.flag, found.comment
    record.notes, record.references, record.markup = found.notes, found.references, found.markup


def _collect_plural_group(group: etree._Element, locale: str, by_text: bool, records: dict) -> None:
    """A gettext-style plural group: its trans-units are the forms, named by resname or by position."""
    forms = [element for element in group if local_name(element) == "trans-unit"]
    found_messages = [_message(element) for element in forms]
    messages = [message for message in found_messages if message is not None]
    if not messages or len(messages) != len(found_messages):
        raise ParseError("a plural <group> holds a <trans-unit> without <source>", group.sourceline)
    key = group.get("resname") or group.get("id") or ""
    if by_text and messages[0].source:
        key = messages[0].source
    record = _record(records, key, messages[0].context, locale, plural=True)
    positional = plural_rules(locale).forms
    for index, (element, found) in enumerate(zip(forms, messages)):
        category = element.get("resname") if element.get("resname") in CATEGORIES else (
            positional[index] if index < len(positional) else None)
        if category is not None:
            _merge_form(record, found, category)
    notes = [text for text in (plain_text(note) for note in children(group, "note")) if text]
    record.notes = record.notes or notes
    own = _Record(key="", locale="")
    for context_group in children(group, "context-group"):
        _read_context_group(context_group, own)
    record.references = record.references or own.references


def _record(records: dict, key: str, context: str, locale: str, plural: bool = False) -> _Record:
    """The record of (locale, context, key), created on first sight (keeps file order)."""
    found = records.get((locale, context, key))
    if found is None:
        found = records[(locale, context, key)] = _Record(key, locale, context, plural=plural)
    return found


def _merge_form(record: _Record, found: _Record, category: str) -> None:
    """Add one plural form's source and target to a plural record."""
    if found.source is not None:
        record.source_forms[category] = found.source
    if found.target is not None:
        record.target_forms[category] = found.target
        record.flag = record.flag or found.flag
    record.notes = record.notes or found.notes
    record.references = record.references or found.references
    record.markup = record.markup or found.markup


def _unit_key(element: etree._Element) -> str:
    """The asset ID of a trans-unit: resname when present (Loco writes `loco:<hex>` IDs), else its id."""
    key = element.get("resname") or element.get("id")
    if not key:
        raise ParseError("<trans-unit> without id or resname", element.sourceline)
    return key


def _message(element: etree._Element) -> _Record | None:
    """Source, target, state, notes, context and references of a trans-unit (None when it has neither text)."""
    source_element, target_element = child(element, "source"), child(element, "target")
    if source_element is None and target_element is None:
        return None
    if source_element is None:
        raise ParseError(f"<trans-unit id={element.get('id')!r}> has a <target> but no <source>", element.sourceline)
    found = _Record(key="", locale="")
    found.source, markup = _content(source_element)
    if target_element is not None:
        state = target_element.get("state", "")
        text, target_markup = _content(target_element)
        if text or state in _DONE_STATES or element.get("approved") == "yes":
            found.target, found.flag = text, flag_for(state)
        markup = markup or target_markup
    found.markup = markup
    for note in children(element, "note"):
        text = plain_text(note)
        if note.get("from") == "translator" or note.get("annotates") == "target":
            found.comment = text
        elif text:
            found.notes.append(text)
    for group in children(element, "context-group"):
        _read_context_group(group, found)
    return found


def _content(element: etree._Element) -> tuple[str, bool]:
    """An element's text, inline markup kept as XML text; whether it held markup."""
    if has_markup(element):
        return inner_markup(element), True
    return element.text or "", False


def _read_context_group(group: etree._Element, found: _Record) -> None:
    """A msgctxt-like context or a source location."""
    contexts = {item.get("context-type", ""): plain_text(item) for item in children(group, "context")}
    for kind in _CONTEXT_TYPES & contexts.keys():
        found.context = contexts[kind]
    if "sourcefile" in contexts:
        line = contexts.get("linenumber", "")
        found.references.append(f"{contexts['sourcefile']}:{line}" if line else contexts["sourcefile"])


def _add_record(builder: CatalogueBuilder, record: _Record) -> None:
    """A record as a unit (or as another locale's translation of a unit already read)."""
    unit = builder.unit_for(record.key, record.context, plural=record.plural)
    if not unit.notes and record.notes:
        unit.notes = "\n".join(record.notes)
    if not unit.references and record.references:
        unit.references = list(record.references)
    if record.markup:
        unit.type = "xml"
    source_locale = builder.source_locale
    if record.plural:
        source = plural_translation(record.source_forms, source_locale)
        target = plural_translation(record.target_forms, record.locale, flag=record.flag)
    else:
        source = Translation(record.source) if record.source is not None else None
        target = Translation(record.target, flag=record.flag, comment=record.comment) if (
            record.target is not None) else None
    if source is not None and source_locale not in unit.translations or (source is not None and builder.by_text):
        builder.add_translation(unit, source_locale, source)
    if target is not None:
        builder.add_translation(unit, record.locale, target)


def _read_xliff2(root: etree._Element, options: ReadOptions) -> Catalogue:
    """XLIFF 2.0: `<unit name=...>` with segments; state initial/translated/reviewed/final."""
    builder = CatalogueBuilder(
        options, "id", detected_locale=named_locale(root.get("trgLang"), "<xliff trgLang>"),
        detected_source=named_locale(root.get("srcLang"), "<xliff srcLang>"),
    )
    records: dict[tuple[str, str, str], _Record] = {}
    for file in children(root, "file"):
        _collect2(file, builder.locale, builder.by_text, records)
    for record in records.values():
        _add_record(builder, record)
    return builder.build()


def _collect2(container: etree._Element, locale: str, by_text: bool, records: dict) -> None:
    """Records of the units of a 2.0 file or group."""
    for element in container:
        name = local_name(element)
        if name == "group":
            _collect2(element, locale, by_text, records)
        elif name == "unit":
            segments = [part for part in element if local_name(part) in ("segment", "ignorable")]
            sources = [_content(part_source) for part in segments if (part_source := child(part, "source")) is not None]
            targets = [_content(found) for part in segments if (found := child(part, "target")) is not None]
            source = "".join(text for text, _ in sources)
            key = source if by_text and source else element.get("name") or element.get("id") or ""
            if not key:
                raise ParseError("<unit> without id or name", element.sourceline)
            record = _record(records, key, "", locale)
            record.source = source
            record.markup = any(markup for _, markup in sources + targets)
            states = {part.get("state", "") for part in segments if local_name(part) == "segment"}
            if targets:
                record.target = "".join(text for text, _ in targets)
                record.flag = "fuzzy" if "initial" in states and record.target else ""
            notes = child(element, "notes")
            if notes is not None:
                record.notes = [plain_text(note) for note in children(notes, "note") if plain_text(note)]


# --- writing ---------------------------------------------------------------------------------------


def write_xliff(doc: ExportDocument) -> str:
    """XLIFF 1.2, one <file> per target locale."""
    files = [_file(doc, locale, doc.project or "gloss", _default_units(doc, locale)) for locale in _file_locales(doc)]
    return _document(doc, files)


def write_xliff_xcode(doc: ExportDocument) -> str:
    """XLIFF 1.2 as Xcode exports it: Localizable.strings and Localizable.stringsdict files per locale."""
    lproj = f"{doc.source_locale}.lproj"
    files = []
    for locale in _file_locales(doc):
        singular = [entry for entry in doc.entries if not entry.unit.plural]
        plural = [entry for entry in doc.entries if entry.unit.plural]
        files.append(_file(doc, locale, f"{lproj}/Localizable.strings", [
            _unit(doc, entry, locale, entry.key, None, entry.translation(doc.source_locale).text,
                  entry.translation(locale), notes=True, context=False) for entry in singular]))
        if plural:
            files.append(_file(doc, locale, f"{lproj}/Localizable.stringsdict", [
                _xcode_plural(doc, entry, locale) for entry in plural]))
    return _document(doc, files)


def _file_locales(doc: ExportDocument) -> list[str | None]:
    """The target locale of each <file>: every non-source locale, else the one exported (None for templates)."""
    if doc.template:
        return [None]
    others: list[str | None] = [code for code in doc.locales if code != doc.source_locale]
    return others or [doc.locales[0]]


def _document(doc: ExportDocument, files: list[str]) -> str:
    """The XML declaration, banner and <xliff> root around the files."""
    return verified(
        f'<?xml version="1.0" encoding="{doc.charset_label}"?>\n{banner_comment(doc.banner)}'
        f'<xliff xmlns="{NAMESPACE_12}" version="1.2">\n{"".join(files)}</xliff>\n',
        doc.entries,
    )


def _file(doc: ExportDocument, locale: str | None, original: str, units: list[str]) -> str:
    """One <file> element around its units."""
    target = f' target-language="{escape_attribute(locale)}"' if locale else ""
    return (
        f'  <file original="{escape_attribute(original)}" source-language="{escape_attribute(doc.source_locale)}"'
        f'{target} datatype="plaintext">\n    <body>\n{"".join(units)}    </body>\n  </file>\n'
    )


def _default_units(doc: ExportDocument, locale: str | None) -> list[str]:
    """The trans-units (and plural groups) of the default style for one target locale."""
    source_locale = doc.source_locale
    parts = []
    for entry in doc.entries:
        if entry.unit.plural:
            parts.append(_plural_group(doc, entry, locale))
        else:
            parts.append(_unit(doc, entry, locale, entry.key, entry.key, entry.translation(source_locale).text,
                               entry.translation(locale), notes=True, context=True))
    return parts


def _unit(
    doc: ExportDocument, entry: Entry, locale: str | None, unit_id: str, resname: str | None, source: str | None,
    target: Translation, *, notes: bool, context: bool, indent: str = "      ",
) -> str:
    """One <trans-unit>: source, target with its state, notes, context and references."""
    key, unit = entry.key, entry.unit
    # this runs once per unit of every export: the common case is one f-string, no helper calls per part
    escape = escape_text if unit.type != "xml" else (lambda text: _inline(text, key, True))
    escaped_id = escape_attribute(unit_id)
    named = "" if resname is None else (
        f' resname="{escaped_id if resname == unit_id else escape_attribute(resname)}"')
    text = (f'{indent}<trans-unit id="{escaped_id}"{named} xml:space="preserve">\n'
            f"{indent}  <source>{escape(source if source is not None else key)}</source>\n")
    if locale is not None and target.text is not None:
        text += f'{indent}  <target state="{state_for(target)}">{escape(target.text)}</target>\n'
    if notes and unit.notes:
        text += f"{indent}  <note>{escape_text(unit.notes)}</note>\n"
    if notes and locale is not None and target.comment:
        text += f'{indent}  <note from="translator">{escape_text(target.comment)}</note>\n'
    if context and unit.context:
        text += (f'{indent}  <context-group purpose="information"><context context-type="{CONTEXT_TYPE}">'
                 f"{escape_text(unit.context)}</context></context-group>\n")
    if context and unit.references:
        text += "".join(_location(reference, key, indent) for reference in unit.references)
    return text + f"{indent}</trans-unit>\n"


def _location(reference: str, key: str, indent: str) -> str:
    """A source reference (`file:line`) as a location context group."""
    match = _REFERENCE.match(reference)
    path, line = (match.group(1), match.group(2)) if match else (reference, "")
    line_context = f'<context context-type="linenumber">{line}</context>' if line else ""
    return (
        f'{indent}  <context-group purpose="location"><context context-type="sourcefile">'
        f"{escape_text(path)}</context>{line_context}</context-group>\n"
    )


def _inline(text: str, key: str, xml: bool) -> str:
    """Text escaped for XML, or kept as markup when the unit is XML and the text is XLIFF inline markup."""
    if xml and well_formed_fragment(text, INLINE_ELEMENTS):
        return text
    return escape_text(text)


def _plural_categories(doc: ExportDocument, locale: str | None) -> list[str]:
    """Every CLDR category of the source or target locale, in canonical order."""
    wanted = set(doc.rules(doc.source_locale).forms) | set(doc.rules(locale).forms if locale else ())
    return [name for name in CATEGORIES if name in wanted]


def _source_form(entry: Entry, doc: ExportDocument, category: str) -> str:
    """The source text of a plural category (its `other` form when the source language lacks it)."""
    source = entry.translation(doc.source_locale)
    if source.plurals:
        return source.plurals.get(category) or source.plurals.get("other") or next(iter(source.plurals.values()))
    return source.text if source.text is not None else entry.key


def _plural_group(doc: ExportDocument, entry: Entry, locale: str | None) -> str:
    """A gettext-style plural group: one trans-unit per CLDR category, resname = category."""
    key = entry.key
    target = entry.translation(locale)
    forms = entry.plural_forms(locale, doc.rules(locale).forms) if locale else {}
    units = []
    for index, category in enumerate(_plural_categories(doc, locale)):
        text = forms.get(category)
        form = Translation(text, flag=target.flag) if text is not None else Translation()
        units.append(_unit(doc, entry, locale, f"{key}[{index}]", category, _source_form(entry, doc, category), form,
                           notes=False, context=False, indent="        "))
    # The group's own notes and locations come before its trans-units, as the schema orders them.
    notes = f"        <note>{escape_text(entry.unit.notes)}</note>\n" if entry.unit.notes else ""
    locations = "".join(_location(reference, key, "      ") for reference in entry.unit.references)
    return (
        f'      <group id="{escape_attribute(key)}" resname="{escape_attribute(key)}" '
        f'restype="{PLURAL_RESTYPE}">\n{notes}{locations}{"".join(units)}      </group>\n'
    )


def _xcode_plural(doc: ExportDocument, entry: Entry, locale: str | None) -> str:
    """A plural as Xcode's stringsdict trans-units: the format key, then one unit per category."""
    key = entry.key
    variable = "value"
    prefix = f"/{key}:dict"
    format_text = f"%#@{variable}@"
    parts = [_unit(doc, entry, locale, f"{prefix}/NSStringLocalizedFormatKey:dict/:string", None, format_text,
                   Translation(format_text), notes=True, context=False)]
    forms = entry.plural_forms(locale, doc.rules(locale).forms) if locale else {}
    target = entry.translation(locale)
    for category in _plural_categories(doc, locale):
        text = forms.get(category)
        form = Translation(text, flag=target.flag) if text is not None else Translation()
        parts.append(_unit(doc, entry, locale, f"{prefix}/{variable}:dict/{category}:dict/:string", None,
                           _source_form(entry, doc, category), form, notes=False, context=False))
    return "".join(parts)
