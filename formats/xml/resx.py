""".NET ResX (and UWP ResW) resources, read and written.

- `<data name=key xml:space="preserve"><value>text</value><comment>notes</comment></data>`;
  data with a `type` or `mimetype` (images, serialized objects) are not text and are skipped on reading.
- written with the standard `resheader`s (resmimetype text/microsoft-resx, version 2.0, reader, writer)
  and the standard inline schema, plus Loco's `locoLocaleCode` metadata, which reading takes as the locale.
- ResX has no plurals (each plural form is an entry of its own: pipeline.plural_forms_apart), contexts or flags.
"""
from __future__ import annotations

from ..catalogue import Catalogue, Translation
from ..document import ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..plurals import locale_display_name
from .parsing import (
    banner_comment, verified, child, children, escape_attribute, escape_text, named_locale, local_name, parse_xml,
    plain_text,
)
from ..reading import CatalogueBuilder

_ASSEMBLY = "System.Windows.Forms, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089"
RESHEADERS = (
    ("resmimetype", "text/microsoft-resx"),
    ("version", "2.0"),
    ("reader", f"System.Resources.ResXResourceReader, {_ASSEMBLY}"),
    ("writer", f"System.Resources.ResXResourceWriter, {_ASSEMBLY}"),
)
_SCHEMA = """  <xsd:schema id="root" xmlns="" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">
    <xsd:import namespace="http://www.w3.org/XML/1998/namespace" />
    <xsd:element name="root" msdata:IsDataSet="true">
      <xsd:complexType>
        <xsd:choice maxOccurs="unbounded">
          <xsd:element name="metadata">
            <xsd:complexType>
              <xsd:sequence>
                <xsd:element name="value" type="xsd:string" minOccurs="0" />
              </xsd:sequence>
              <xsd:attribute name="name" use="required" type="xsd:string" />
              <xsd:attribute name="type" type="xsd:string" />
              <xsd:attribute name="mimetype" type="xsd:string" />
              <xsd:attribute ref="xml:space" />
            </xsd:complexType>
          </xsd:element>
          <xsd:element name="assembly">
            <xsd:complexType>
              <xsd:attribute name="alias" type="xsd:string" />
              <xsd:attribute name="name" type="xsd:string" />
            </xsd:complexType>
          </xsd:element>
          <xsd:element name="data">
            <xsd:complexType>
              <xsd:sequence>
                <xsd:element name="value" type="xsd:string" minOccurs="0" msdata:Ordinal="1" />
                <xsd:element name="comment" type="xsd:string" minOccurs="0" msdata:Ordinal="2" />
              </xsd:sequence>
              <xsd:attribute name="name" type="xsd:string" use="required" msdata:Ordinal="1" />
              <xsd:attribute name="type" type="xsd:string" msdata:Ordinal="3" />
              <xsd:attribute name="mimetype" type="xsd:string" msdata:Ordinal="4" />
              <xsd:attribute ref="xml:space" />
            </xsd:complexType>
          </xsd:element>
          <xsd:element name="resheader">
            <xsd:complexType>
              <xsd:sequence>
                <xsd:element name="value" type="xsd:string" minOccurs="0" msdata:Ordinal="1" />
              </xsd:sequence>
              <xsd:attribute name="name" type="xsd:string" use="required" />
            </xsd:complexType>
          </xsd:element>
        </xsd:choice>
      </xsd:complexType>
    </xsd:element>
  </xsd:schema>
"""


def read_resx(data: bytes, options: ReadOptions) -> Catalogue:
    """Every text `<data>` as a unit; resheaders become catalogue headers."""
    root = parse_xml(data, "ResX")
    if local_name(root) != "root":
        raise ParseError(f"expected a <root> element, found <{local_name(root)}>", root.sourceline)
    headers = {item.get("name", ""): plain_text(child(item, "value")) for item in children(root, "resheader")}
    metadata = {item.get("name", ""): plain_text(child(item, "value")) for item in children(root, "metadata")}
    locale = named_locale(metadata.get("locoLocaleCode"), "<metadata locoLocaleCode>")
    builder = CatalogueBuilder(options, "id", detected_locale=locale)
    for item in children(root, "data"):
        if item.get("type") or item.get("mimetype"):
            continue  # a binary or serialized resource, not a string
        name = item.get("name")
        if not name:
            raise ParseError("<data> without a name attribute", item.sourceline)
        value = child(item, "value")
        text = plain_text(value) if value is not None else ""
        key = text if builder.by_text and text else name
        builder.add(key, Translation(text), notes=plain_text(child(item, "comment")))
    return builder.build(headers=headers)


def write_resx(doc: ExportDocument) -> str:
    """ResX with the standard schema and resheaders; untranslated units are left out."""
    locale = doc.locale or doc.source_locale
    parts = [f'<?xml version="1.0" encoding="{doc.charset_label.lower()}"?>\n<root>\n',
             _indented(banner_comment(doc.banner)), _SCHEMA]
    parts.extend(f'  <resheader name="{name}">\n    <value>{escape_text(value)}</value>\n  </resheader>\n'
                 for name, value in RESHEADERS)
    parts.append(f'  <metadata name="locoLocaleCode">\n    <value>{escape_text(locale)}</value>\n  </metadata>\n'
                 f'  <metadata name="locoLocaleName" xml:space="preserve">\n'
                 f"    <value>{escape_text(locale_display_name(locale))}</value>\n  </metadata>\n")
    for entry in doc.entries:
        text = entry.translation(locale).text
        if text is None:
            continue
        key = entry.key
        comment = f"\n    <comment>{escape_text(entry.unit.notes)}</comment>" if entry.unit.notes else ""
        parts.append(f'  <data name="{escape_attribute(key)}" xml:space="preserve">\n'
                     f"    <value>{escape_text(text)}</value>{comment}\n  </data>\n")
    parts.append("</root>\n")
    return verified("".join(parts), doc.entries)


def _indented(block: str) -> str:
    """A multi-line block indented by two spaces."""
    return "".join(f"  {line}\n" for line in block.splitlines())
