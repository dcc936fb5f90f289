"""Flat key/value XML: Java XML properties (`xml` variant `java`) and Tizen string tables (`tizen`).

- java: `<properties><comment>banner</comment><entry key=key>text</entry></properties>` with the
  DOCTYPE Java writes (`http://java.sun.com/dtd/properties.dtd`, never fetched: the parser knows it);
  what `java.util.Properties.loadFromXML` reads.
- tizen: `<string_table Bversion Dversion><text id=key>text</text></string_table>`.
Neither holds plurals (each plural form is an entry of its own: pipeline.plural_forms_apart), contexts, notes
or flags; untranslated units are left out.
"""
from __future__ import annotations

import re
from typing import Callable

from ..catalogue import Catalogue, Translation
from ..document import ExportDocument
from ..errors import ParseError
from ..options import LINE_BREAKS, ReadOptions
from ..reading import CatalogueBuilder
from .parsing import banner_comment, verified, comment, escape_attribute, escape_text, local_name, parse_xml, plain_text

JAVA_DTD = "http://java.sun.com/dtd/properties.dtd"
_SUPPLEMENTARY = re.compile("[\U00010000-\U0010FFFF]")


def _read_pairs(data: bytes, options: ReadOptions, what: str, root_name: str, item: str, key_attribute: str,
                known_dtds: frozenset[str] = frozenset()) -> Catalogue:
    """Elements `<item key_attribute=key>text</item>` under `<root_name>` as units."""
    root = parse_xml(data, what, known_dtds)
    if local_name(root) != root_name:
        raise ParseError(f"expected a <{root_name}> root element, found <{local_name(root)}>", root.sourceline)
    builder = CatalogueBuilder(options, "id")
    for element in root:
        if local_name(element) != item:
            continue
        key = element.get(key_attribute)
        if key is None:
            raise ParseError(f"<{item}> without a {key_attribute} attribute", element.sourceline)
        text = plain_text(element)
        builder.add(text if builder.by_text and text else key, Translation(text))
    return builder.build()


def read_java(data: bytes, options: ReadOptions) -> Catalogue:
    """Java XML properties."""
    return _read_pairs(data, options, "Java XML properties", "properties", "entry", "key", frozenset({JAVA_DTD}))


def read_tizen(data: bytes, options: ReadOptions) -> Catalogue:
    """Tizen string table."""
    return _read_pairs(data, options, "Tizen XML", "string_table", "text", "id")


def _pairs(doc: ExportDocument, line: Callable[[str, str], str]) -> str:
    """One line per translated unit of the target locale."""
    locale = doc.locale or doc.source_locale
    rows = []
    for entry in doc.entries:
        text = entry.translation(locale).text
        if text is not None:
            rows.append(line(escape_attribute(entry.key), escape_text(text)))
    return verified("".join(rows), doc.entries)


def write_java(doc: ExportDocument) -> str | bytes:
    """Java XML properties, banner in the `<comment>` element.

    The JDK's own properties XML parser refuses characters beyond U+FFFF in UTF-8 (as bytes and as
    character references alike) but reads them in UTF-16: a UTF-8 export holding such characters is
    written in UTF-16 (with a BOM and a matching declaration) so that `Properties.loadFromXML` reads it.
    """
    banner = f"<comment>{escape_text(comment(' / '.join(doc.banner)))}</comment>\n" if doc.banner else ""
    body = _pairs(doc, lambda key, text: f'<entry key="{key}">{text}</entry>\n')
    wide = doc.charset in ("utf-8", "utf-8-sig") and _SUPPLEMENTARY.search(body) is not None
    declared = "UTF-16" if wide else doc.charset_label
    text = (f'<?xml version="1.0" encoding="{declared}" standalone="no"?>\n'
            f'<!DOCTYPE properties SYSTEM "{JAVA_DTD}">\n<properties>\n{banner}{body}</properties>\n')
    if not wide:
        return text
    ending = LINE_BREAKS[doc.options.breaks.lower()]
    return text.replace("\n", ending).encode("utf-16")


def write_tizen(doc: ExportDocument) -> str:
    """Tizen string table."""
    body = _pairs(doc, lambda key, text: f'    <text id="{key}">{text}</text>\n')
    return (f'<?xml version="1.0" encoding="{doc.charset_label}"?>\n{banner_comment(doc.banner)}'
            f'<string_table Bversion="2.0.0.201311071819" Dversion="20120315">\n{body}</string_table>\n')
