"""Qt Linguist TS 2.1, read and written.

- `<context><name>` groups messages; the name is the unit's context ("" for units without one).
- `<message>`: `<source>` (source text), `<translation>`; `id="..."` (id-based messages) is the key when
  reading by ID and is written when exporting by ID; `<extracomment>` = asset notes; `<translatorcomment>`
  = translator comment; `<location filename line>` = references; a disambiguating `<comment>` is read
  into the notes (after the extracomment).
- `numerus="yes"`: `<numerusform>`s in the target language's CLDR plural order (Qt uses the same counts).
- `type="unfinished"` with text = a flagged translation (fuzzy, or the flag in `<extra-loco-flag>`);
  without text = untranslated; `vanished`/`obsolete` messages are no longer in the program: not imported.
- `language` / `sourcelanguage` name the locales (`fr_FR` reads as `fr-FR`).
"""
from __future__ import annotations

import re

from lxml import etree

from ..catalogue import FLAGS, Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..reading import CatalogueBuilder, plural_translation
from ..plurals import plural_rules
from .parsing import (
    banner_comment, verified, child, children, escape_attribute, escape_text, named_locale, local_name, parse_xml,
    plain_text,
)

_GONE = {"vanished", "obsolete"}
_FLAG_ELEMENT = "extra-loco-flag"
_REFERENCE = re.compile(r"^(.*):(\d+)$")


# --- reading ---------------------------------------------------------------------------------------


def read_ts(data: bytes, options: ReadOptions) -> Catalogue:
    """Contexts of messages; numerus messages become plural units."""
    root = parse_xml(data, "TS")
    if local_name(root) != "TS":
        raise ParseError(f"expected a <TS> root element, found <{local_name(root)}>", root.sourceline)
    builder = CatalogueBuilder(
        options, "text", detected_locale=named_locale(root.get("language"), "<TS language>"),
        detected_source=named_locale(root.get("sourcelanguage"), "<TS sourcelanguage>"),
    )
    for context in children(root, "context"):
        name = plain_text(child(context, "name"))
        for message in children(context, "message"):
            _read_message(builder, message, name)
    return builder.build()


def _read_message(builder: CatalogueBuilder, message: etree._Element, context: str) -> None:
    """One message as a unit with its source and (unless untranslated) its translation."""
    translation = child(message, "translation")
    kind = translation.get("type", "") if translation is not None else ""
    if kind in _GONE:
        return
    source = plain_text(child(message, "source"))
    plural = message.get("numerus") == "yes"
    key = source if builder.by_text or not message.get("id") else message.get("id")
    notes = "\n".join(text for text in (plain_text(child(message, "extracomment")),
                                        plain_text(child(message, "comment"))) if text)
    references = [
        f"{location.get('filename')}:{location.get('line')}" if location.get("line") else location.get("filename")
        for location in children(message, "location") if location.get("filename")
    ]
    target = _translation(builder, message, translation, kind, plural)
    source_translation = (plural_translation({plural_rules(builder.source_locale).forms[0]: source},
                                             builder.source_locale) if plural else Translation(source))
    builder.add(key, target, context=context, notes=notes, source=source_translation, plural=plural,
                references=references)


def _translation(builder: CatalogueBuilder, message: etree._Element, element: etree._Element | None, kind: str,
                 plural: bool) -> Translation | None:
    """The target translation, or None when the message is untranslated."""
    if element is None:
        return None
    flag = ""
    if kind == "unfinished":
        flag = plain_text(child(message, _FLAG_ELEMENT)) or "fuzzy"
        flag = flag if flag in FLAGS else "fuzzy"
    comment = plain_text(child(message, "translatorcomment"))
    if plural:
        forms = plural_rules(builder.locale).forms
        texts = [plain_text(form) for form in children(element, "numerusform")]
        if kind == "unfinished" and not any(texts):
            return None
        return plural_translation(dict(zip(forms, texts)), builder.locale, flag=flag, comment=comment)
    text = plain_text(element)
    if kind == "unfinished" and not text:
        return None
    return Translation(text, flag=flag, comment=comment)


# --- writing ---------------------------------------------------------------------------------------


def write_ts(doc: ExportDocument) -> str:
    """TS 2.1: one <context> per unit context, in order of first appearance."""
    locale = doc.locale
    contexts: dict[str, list[str]] = {}
    for entry in doc.entries:
        contexts.setdefault(entry.unit.context, []).append(_message(doc, entry, locale))
    language = f' language="{escape_attribute(locale.replace("-", "_"))}"' if locale else ""
    body = "".join(
        f"<context>\n    <name>{escape_text(name)}</name>\n{''.join(messages)}</context>\n"
        for name, messages in contexts.items()
    )
    return verified(
        f'<?xml version="1.0" encoding="{doc.charset_label.lower()}"?>\n<!DOCTYPE TS>\n{banner_comment(doc.banner)}'
        f'<TS version="2.1"{language} sourcelanguage="{escape_attribute(doc.source_locale.replace("-", "_"))}">\n'
        f"{body}</TS>\n",
        doc.entries,
    )


def _message(doc: ExportDocument, entry: Entry, locale: str | None) -> str:
    """One <message> element in the DTD's child order."""
    key, unit = entry.key, entry.unit
    identifier = f' id="{escape_attribute(key)}"' if doc.index != "text" else ""
    numerus = ' numerus="yes"' if unit.plural else ""
    source = entry.translation(doc.source_locale)
    source_text = source.text if source.text is not None else key
    parts = [f"    <message{identifier}{numerus}>\n"]
    parts.extend(_location(reference, key) for reference in unit.references)
    parts.append(f"        <source>{escape_text(source_text)}</source>\n")
    if unit.notes:
        parts.append(f"        <extracomment>{escape_text(unit.notes)}</extracomment>\n")
    target = entry.translation(locale)
    if locale and target.comment:
        parts.append(f"        <translatorcomment>{escape_text(target.comment)}</translatorcomment>\n")
    parts.append(_translation_element(doc, entry, target, locale))
    if locale and target.flag and target.flag != "fuzzy" and target.translated:
        parts.append(f"        <{_FLAG_ELEMENT}>{target.flag}</{_FLAG_ELEMENT}>\n")
    parts.append("    </message>\n")
    return "".join(parts)


def _location(reference: str, key: str) -> str:
    """A source reference as <location filename line>."""
    match = _REFERENCE.match(reference)
    path, line = (match.group(1), f' line="{match.group(2)}"') if match else (reference, "")
    return f'        <location filename="{escape_attribute(path)}"{line}/>\n'


def _translation_element(doc: ExportDocument, entry: Entry, target: Translation, locale: str | None) -> str:
    """<translation>, type="unfinished" when untranslated or flagged; numerus forms for plurals."""
    unfinished = not locale or not target.translated or bool(target.flag)
    kind = ' type="unfinished"' if unfinished else ""
    if entry.unit.plural:
        forms = doc.rules(locale).forms
        texts = entry.plural_forms(locale, forms) if locale else {}
        rows = "".join(f"            <numerusform>{escape_text(texts.get(name, ''))}</numerusform>\n"
                       for name in forms)
        return f"        <translation{kind}>\n{rows}        </translation>\n"
    text = target.text if locale and target.text is not None else ""
    return f"        <translation{kind}>{escape_text(text)}</translation>\n"
