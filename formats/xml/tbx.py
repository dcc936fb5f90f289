"""TBX termbases ⇄ a glossary: {term: {"translations": {locale: text}, "note"?, "forbidden"?}}.

Not a catalogue format (a glossary holds terms, not units), so it is not in the registry: the glossary API
calls `read_tbx` and `write_tbx` itself.

Written: TBX v3 (ISO 30042:2019), dialect TBX-Basic, DCA style, valid against the dialect's integrated RELAX NG
schema (tests/test_glossary_tbx.py runs xmllint on it):
- one `<conceptEntry id="cN">` per term, with `<note>` (the term's note) before its language sections;
- a `<langSec xml:lang>` for the source locale holding the term, then one per locale that translates it;
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
def write_tbx(glossary: Glossary, source_locale: str, title: str) -> bytes:
    """The glossary as a TBX-Basic (v3, DCA) document; `title` names the termbase."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<tbx xmlns="{TBX_NAMESPACE}" type="TBX-Basic" style="dca" xml:lang="{escape_attribute(source_locale)}">',
             "  <tbxHeader>",
             "    <fileDesc>",
             f"      <titleStmt><title>{escape_text(title)}</title></titleStmt>",
             "      <sourceDesc><p>Exported by Gloss from the project's glossary.json</p></sourceDesc>",
             "    </fileDesc>",
             "  </tbxHeader>",
             "  <text>",
             "    <body>"]
    for number, (term, record) in enumerate(glossary.items(), start=1):
        lines.append(f'      <conceptEntry id="c{number}">')
        if record.get("note"):
            lines.append(f"        <note>{escape_text(record['note'])}</note>")
        status = (f'<termNote type="administrativeStatus">{FORBIDDEN_STATUS}</termNote>'
                  if record.get("forbidden") else "")
        sections = [(source_locale, term)] + sorted(record.get("translations", {}).items())
        for locale, text in sections:
            lines.append(f'        <langSec xml:lang="{escape_attribute(locale)}"><termSec>'
                         f"<term>{escape_text(text)}</term>{status}</termSec></langSec>")
        lines.append("      </conceptEntry>")
    lines += ["    </body>", "  </text>", "</tbx>", ""]
    return "\n".join(lines).encode("utf-8")
