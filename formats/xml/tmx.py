"""TMX 1.4 translation memory: every locale of a unit in one `<tu>`, read and written.

Shape written (valid against tmx14.dtd):
- `<header srclang=source creationtool="Gloss" creationdate=YYYYMMDDThhmmssZ creationid=exporter .../>`;
- `<tu tuid=key>` with `<note>` (asset notes), `<prop type="x-context">`, then one `<tuv xml:lang=...>`
  per locale that has a translation (`<prop type="x-flag">`, `<note>` = translator comment, `<seg>`);
- a plural unit is one `<tu tuid=key>` per CLDR category, marked `<prop type="x-plural">one</prop>`;
  each tuv holds its locale's text for that category (a locale without the category has no tuv).
Reading maps the file's source language (header or tu `srclang`) to the catalogue's source locale,
keeps repeated tuids apart (`id-2`...), and records the header's creation data in `headers`.
"""
from __future__ import annotations

from lxml import etree

from ..catalogue import FLAGS, Catalogue, Translation, Unit
from ..document import ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..plurals import CATEGORIES
from ..reading import CatalogueBuilder, plural_translation
from .parsing import (
    banner_comment, verified, child, children, escape_attribute, escape_text, named_locale, local_name, parse_xml,
    plain_text, xml_attribute,
)

TMX_DTD = "tmx14.dtd"
# Every published TMX version's DTD, as tools name it in their DOCTYPE (OmegaT still writes tmx11.dtd):
# accepted on reading and never loaded.
TMX_DTDS = frozenset({"tmx11.dtd", "tmx12.dtd", "tmx13.dtd", TMX_DTD})
_HEADER_FIELDS = ("creationtool", "creationtoolversion", "creationdate", "creationid", "srclang", "o-tmf", "datatype")


# --- reading ---------------------------------------------------------------------------------------


def read_tmx(data: bytes, options: ReadOptions) -> Catalogue:
    """Every `<tu>` as a unit holding each `<tuv>`'s language."""
    root = parse_xml(data, "TMX", known_dtds=TMX_DTDS)
    if local_name(root) != "tmx":
        raise ParseError(f"expected a <tmx> root element, found <{local_name(root)}>", root.sourceline)
    header, body = child(root, "header"), child(root, "body")
    if body is None:
        raise ParseError("TMX has no <body>", root.sourceline)
    header_fields = {name: header.get(name) for name in _HEADER_FIELDS if header is not None and header.get(name)}
    file_source = named_locale(header_fields.get("srclang", "").replace("*all*", ""), "<header srclang>")
    builder = CatalogueBuilder(options, "id", detected_source=file_source)
    plurals: dict[str, tuple[Unit, dict[str, dict[str, str]], dict[str, str]]] = {}
    for tu in children(body, "tu"):
        _read_tu(builder, tu, file_source, plurals)
    for unit, forms, flags in plurals.values():
        for locale, texts in forms.items():
            translation = plural_translation(texts, locale, flag=flags.get(locale, ""))
            if translation is not None:
                builder.add_translation(unit, locale, translation)
    return builder.build(headers=header_fields)


def _props(element: etree._Element) -> dict[str, str]:
    """`<prop type=...>` values of an element."""
    return {prop.get("type", ""): plain_text(prop) for prop in children(element, "prop")}


def _read_tu(builder: CatalogueBuilder, tu: etree._Element, file_source: str | None, plurals: dict) -> None:
    """One translation unit: a unit, or one category of a plural unit."""
    source = named_locale(tu.get("srclang", "").replace("*all*", ""), "<tu srclang>") or file_source
    props = _props(tu)
    texts: dict[str, Translation] = {}
    for tuv in children(tu, "tuv"):
        code = named_locale(xml_attribute(tuv, "lang") or tuv.get("lang"), "<tuv xml:lang>")
        if not code:
            raise ParseError("<tuv> without xml:lang", tuv.sourceline)
        locale = builder.source_locale if code == source else code
        seg, tuv_props = child(tuv, "seg"), _props(tuv)
        if tuv_props.get("x-untranslated") == "yes":
            continue
        flag = tuv_props.get("x-flag", "")
        comment = "\n".join(plain_text(note) for note in children(tuv, "note"))
        texts[locale] = Translation(plain_text(seg), flag=flag if flag in FLAGS else "", comment=comment)
    source_text = texts.get(builder.source_locale)
    key = tu.get("tuid") or (source_text.text if source_text else "")
    if builder.by_text and source_text and source_text.text:
        key = source_text.text
    if not key:
        raise ParseError("<tu> without tuid or source text", tu.sourceline)
    notes = "\n".join(plain_text(note) for note in children(tu, "note"))
    context = props.get("x-context", "")
    category = props.get("x-plural")
    if category in CATEGORIES:
        _plural_form(builder, plurals, key, context, notes, category, texts)
        return
    unit = builder.add(key, context=context, notes=notes)
    for locale, translation in texts.items():
        builder.add_translation(unit, locale, translation)


def _plural_form(builder, plurals: dict, key: str, context: str, notes: str, category: str,
                 texts: dict[str, Translation]) -> None:
    """Collect one category of a plural unit (its tus share the tuid)."""
    if (context, key) not in plurals:
        plurals[(context, key)] = (builder.add(key, context=context, notes=notes, plural=True), {}, {})
    _, forms, flags = plurals[(context, key)]
    for locale, translation in texts.items():
        forms.setdefault(locale, {})[category] = translation.text or ""
        if translation.flag:
            flags[locale] = translation.flag


# --- writing ---------------------------------------------------------------------------------------


def write_tmx(doc: ExportDocument) -> str:
    """TMX 1.4 with every exported locale of every unit."""
    locales = [doc.source_locale] + [code for code in doc.locales if code != doc.source_locale]
    created = doc.exported_at.strftime("%Y%m%dT%H%M%SZ")
    creator = f' creationid="{escape_attribute(doc.options.exported_by)}"' if doc.options.exported_by else ""
    parts = [
        f'<?xml version="1.0" encoding="{doc.charset_label}"?>\n<!DOCTYPE tmx SYSTEM "{TMX_DTD}">\n',
        banner_comment(doc.banner),
        '<tmx version="1.4">\n',
        f'  <header creationtool="Gloss" creationtoolversion="1.0" datatype="plaintext" segtype="sentence" '
        f'adminlang="{escape_attribute(doc.source_locale)}" srclang="{escape_attribute(doc.source_locale)}" '
        f'o-tmf="Gloss" creationdate="{created}"{creator}/>\n',
        "  <body>\n",
    ]
    for entry in doc.entries:
        key = entry.key
        heading = "".join(
            [f"      <note>{escape_text(entry.unit.notes)}</note>\n" if entry.unit.notes else "",
             f'      <prop type="x-context">{escape_text(entry.unit.context)}</prop>\n'
             if entry.unit.context else ""]
        )
        if entry.unit.plural:
            for category in _categories(doc, locales):
                tuvs = [
                    _tuv(code, forms[category], entry.translation(code), key)
                    for code in locales if category in (forms := entry.plural_forms(code, doc.rules(code).forms))
                ]
                parts.append(f'    <tu tuid="{escape_attribute(key)}">\n{heading}'
                             f'      <prop type="x-plural">{category}</prop>\n{"".join(tuvs) or _empty(doc, key)}'
                             f"    </tu>\n")
            continue
        tuvs = [_tuv(code, text, translation, key) for code in locales
                if (text := (translation := entry.translation(code)).text) is not None]
        parts.append(f'    <tu tuid="{escape_attribute(key)}">\n{heading}'
                     f'{"".join(tuvs) or _empty(doc, key)}    </tu>\n')
    parts.append("  </body>\n</tmx>\n")
    return verified("".join(parts), doc.entries)


def _categories(doc: ExportDocument, locales: list[str]) -> list[str]:
    """The CLDR categories any exported locale uses, in canonical order."""
    used = {name for code in locales for name in doc.rules(code).forms}
    return [name for name in CATEGORIES if name in used]


def _tuv(locale: str, text: str, translation: Translation, key: str) -> str:
    """One locale's variant: flag, translator comment, segment."""
    flag = f'        <prop type="x-flag">{translation.flag}</prop>\n' if translation.flag else ""
    note = f"        <note>{escape_text(translation.comment)}</note>\n" if translation.comment else ""
    return (f'      <tuv xml:lang="{escape_attribute(locale)}">\n{note}{flag}'
            f"        <seg>{escape_text(text)}</seg>\n      </tuv>\n")


def _empty(doc: ExportDocument, key: str) -> str:
    """The DTD wants at least one tuv: an empty source-language one marked untranslated (skipped on reading)."""
    return (f'      <tuv xml:lang="{escape_attribute(doc.source_locale)}">\n'
            f'        <prop type="x-untranslated">yes</prop>\n        <seg></seg>\n      </tuv>\n')
