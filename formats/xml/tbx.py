"""TBX termbases ⇄ a glossary: {term: {"translations": {locale: text}, "note"?, "forbidden"?}}.

Not a catalogue format (a glossary holds terms, not units), so it is not in the registry: the glossary API
calls `read_tbx` and `write_tbx` itself.

Written: TBX-Basic in either of its two versions, the same shape in each:
- "2" (the default): TBX v2 (ISO 30042:2008, `<martif type="TBX-Basic">`), the form Weblate, translate-toolkit
  and most CAT tools exchange; tests/test_api_glossary.py reads it back with translate-toolkit's TBX reader;
- "3": TBX v3 (ISO 30042:2019), DCA style, for the dialect's integrated RELAX NG schema (xmllint runs it when
  $GLOSS_TBX_SCHEMA names that schema: no package ships it);
- one entry (`<termEntry>` / `<conceptEntry>`, id "cN") per term, with `<note>` (the term's note) first;
- a language section (`<langSet>` / `<langSec>`) for the source locale holding the term, then one per locale
  that translates it, each with one term section (`<tig>` / `<termSec>`);
- a forbidden term's term sections say `<termNote type="administrativeStatus">deprecatedTerm-admn-sts</termNote>`.
Read: the same, and TBX v2 (`<martif>`, `<termEntry>`, `<langSet>`, `<tig>`/`<ntig>`) as TBX-Basic 2008 files
and most tools still write; in DCT style too (the data category as the element name). The first term of the
source language's section is the glossary term; the first term of each other section its translation; the
term is forbidden when a term section of the entry says deprecated, superseded or forbidden; `<note>` and
`<descrip type="definition">` of the entry make its note. An entry without a source-language term is skipped
and counted.
"""
from __future__ import annotations

from typing import Any

from lxml import etree

from ..errors import ParseError
from .parsing import escape_attribute, escape_text, local_name, named_locale, parse_xml, plain_text, xml_attribute

TBX_NAMESPACE = "urn:iso:std:iso:30042:ed:3.0"
FORBIDDEN_STATUS = "deprecatedTerm-admn-sts"
_FORBIDDEN_WORDS = ("deprecated", "superseded", "forbidden")
_ENTRIES, _LANGUAGES, _TERMS = ("conceptEntry", "termEntry"), ("langSec", "langSet"), ("termSec", "tig", "ntig")

Glossary = dict[str, dict[str, Any]]


# --- reading ---------------------------------------------------------------------------------------
def read_tbx(data: bytes, source_locale: str) -> tuple[Glossary, int]:
    """The terms of a TBX file whose source language is `source_locale`, and how many entries had no term in it."""
    root = parse_xml(data, "TBX")
    if local_name(root) not in ("tbx", "martif"):
        raise ParseError(f"expected a <tbx> (or TBX v2 <martif>) root element, found <{local_name(root)}>",
                         root.sourceline)
    glossary: Glossary = {}
    skipped = 0
    for entry in root.iter():
        if local_name(entry) not in _ENTRIES:
            continue
        term, record = _read_entry(entry, source_locale)
        if term is None:
            skipped += 1
            continue
        glossary[term] = record
    return glossary, skipped


def _read_entry(entry: etree._Element, source_locale: str) -> tuple[str | None, dict[str, Any]]:
    translations: dict[str, str] = {}
    term: str | None = None
    forbidden = False
    notes = [plain_text(node).strip() for node in entry if local_name(node) == "note"
             or (local_name(node) in ("descrip", "definition") and node.get("type", "definition") == "definition")]
    for section in entry:
        if local_name(section) not in _LANGUAGES:
            continue
        locale = named_locale(xml_attribute(section, "lang") or section.get("lang"), f"<{local_name(section)}>")
        for term_section in (node for node in section if local_name(node) in _TERMS):
            forbidden |= _is_forbidden(term_section)
        text = _first_term(section)
        if locale is None or not text:
            continue
        if _same_language(locale, source_locale) and term is None:
            term = text
        elif not _same_language(locale, source_locale):
            translations.setdefault(locale, text)
    record: dict[str, Any] = {"translations": translations}
    if any(notes):
        record["note"] = "\n".join(note for note in notes if note)
    if forbidden:
        record["forbidden"] = True
    return term, record


def _first_term(section: etree._Element) -> str:
    for term_section in section:
        if local_name(term_section) in _TERMS:
            found = next((node for node in term_section.iter() if local_name(node) == "term"), None)
            if found is not None and plain_text(found).strip():
                return " ".join(plain_text(found).split())
    return ""


def _is_forbidden(term_section: etree._Element) -> bool:
    for node in term_section.iter():
        name = local_name(node)
        if (name == "termNote" and node.get("type") == "administrativeStatus") or name == "administrativeStatus":
            if any(word in plain_text(node).lower() for word in _FORBIDDEN_WORDS):
                return True
    return False


def _same_language(locale: str, source_locale: str) -> bool:
    """`en-US` in a termbase is the language of a project whose source is `en` (and the other way round)."""
    return locale == source_locale or locale.split("-")[0] == source_locale.split("-")[0]


# --- writing ---------------------------------------------------------------------------------------
TBX_VERSIONS = ("2", "3")


def write_tbx(glossary: Glossary, source_locale: str, title: str, version: str = "2") -> bytes:
    """The glossary as a TBX-Basic document of `version` ("2" or "3"); `title` names the termbase.

    TBX needs at least one entry in its body: the caller refuses an empty glossary.
    """
    v2 = version == "2"
    entry, section, term_section = ("termEntry", "langSet", "tig") if v2 else ("conceptEntry", "langSec", "termSec")
    lang = escape_attribute(source_locale)
    root = (f'<martif type="TBX-Basic" xml:lang="{lang}">' if v2 else
            f'<tbx xmlns="{TBX_NAMESPACE}" type="TBX-Basic" style="dca" xml:lang="{lang}">')
    header = "martifHeader" if v2 else "tbxHeader"
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', root, f"  <{header}>", "    <fileDesc>",
             f"      <titleStmt><title>{escape_text(title)}</title></titleStmt>",
             "      <sourceDesc><p>Exported by Gloss from the project's glossary.json</p></sourceDesc>",
             "    </fileDesc>"]
    if v2:  # TBX-Basic 2 names its constraint file (XCS) in the header
        lines.append('    <encodingDesc><p type="XCSURI">TBXBasicXCSV02.xcs</p></encodingDesc>')
    lines += [f"  </{header}>", "  <text>", "    <body>"]
    for number, (term, record) in enumerate(glossary.items(), start=1):
        lines.append(f'      <{entry} id="c{number}">')
        if record.get("note"):
            lines.append(f"        <note>{escape_text(record['note'])}</note>")
        status = (f'<termNote type="administrativeStatus">{FORBIDDEN_STATUS}</termNote>'
                  if record.get("forbidden") else "")
        for locale, text in [(source_locale, term)] + sorted(record.get("translations", {}).items()):
            lines.append(f'        <{section} xml:lang="{escape_attribute(locale)}"><{term_section}>'
                         f"<term>{escape_text(text)}</term>{status}</{term_section}></{section}>")
        lines.append(f"      </{entry}>")
    lines += ["    </body>", "  </text>", "</martif>" if v2 else "</tbx>", ""]
    return "\n".join(lines).encode("utf-8")
