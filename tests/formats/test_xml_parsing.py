"""The one hardened XML parser: no external DTD or entity is ever read, entity bombs fail fast, a size limit."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from formats import ParseError, ReadOptions, read_file
from formats.errors import TooLarge
from formats.xml import parsing
from formats.xml.parsing import parse_xml

XML_READERS = [("xlf", ""), ("xlf", "xcode"), ("tmx", ""), ("xml", ""), ("xml", "java"), ("xml", "tizen"),
               ("ts", ""), ("resx", "")]
SECRET = "TOP-SECRET-MARKER-7b"

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<resources><string name="a">&lol9;</string></resources>
"""


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A local file an attacker would like to read, and a DTD beside it that would expose it."""
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    (tmp_path / "evil.dtd").write_text(f'<!ENTITY leak "{SECRET}">')
    return path


def xxe_documents(secret: Path) -> dict[str, bytes]:
    """Every way a document could make the parser read the secret file."""
    dtd = secret.parent / "evil.dtd"
    return {
        "external entity": f'<!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]><r>&x;</r>'.encode(),
        "parameter entity": f'<!DOCTYPE r [<!ENTITY % x SYSTEM "file://{dtd}"> %x;]><r>&leak;</r>'.encode(),
        "external DTD": f'<!DOCTYPE r SYSTEM "file://{dtd}"><r>&leak;</r>'.encode(),
        "public DTD": f'<!DOCTYPE r PUBLIC "-//EVIL//X" "file://{dtd}"><r>&leak;</r>'.encode(),
        "network DTD": b'<!DOCTYPE r SYSTEM "http://127.0.0.1:9/evil.dtd"><r>a</r>',
    }


@pytest.mark.parametrize("case", ["external entity", "parameter entity", "external DTD", "public DTD", "network DTD"])
def test_xxe_is_a_format_error_and_never_reads_the_file(secret_file: Path, case: str) -> None:
    data = xxe_documents(secret_file)[case]
    with pytest.raises(ParseError) as raised:
        parse_xml(data, "Test")
    assert SECRET not in raised.value.message


@pytest.mark.parametrize(("ext", "variant"), XML_READERS)
def test_every_xml_reader_refuses_an_external_entity(secret_file: Path, ext: str, variant: str) -> None:
    data = xxe_documents(secret_file)["external entity"]
    with pytest.raises(ParseError, match="external entity"):
        read_file(ext, variant, data, ReadOptions(locale="fr"))


@pytest.mark.parametrize(("ext", "variant"), XML_READERS)
def test_billion_laughs_fails_fast_in_every_reader(ext: str, variant: str) -> None:
    started = time.monotonic()
    # libxml2's own amplification guard or our expansion budget, whichever trips first: both are 4xx.
    with pytest.raises(ParseError, match="entity expansion|amplification"):
        read_file(ext, variant, BILLION_LAUGHS, ReadOptions(locale="fr"))
    assert time.monotonic() - started < 5  # generous: it fails after ~100k characters, not 10^9


def test_quadratic_blowup_hits_the_same_budget() -> None:
    big = "x" * 50_000
    data = f'<!DOCTYPE r [<!ENTITY a "{big}">]><r>{"&a;" * 10}</r>'.encode()
    with pytest.raises(ParseError, match="entity expansion"):
        parse_xml(data, "Test")


def test_internal_entities_are_expanded_within_the_budget() -> None:
    data = b'<!DOCTYPE r [<!ENTITY foo "Foo"><!ENTITY bar "Bar &foo;">]><r>A &bar; <b>&foo;</b> z</r>'
    root = parse_xml(data, "Test")
    assert "".join(root.itertext()) == "A Bar Foo Foo z"


def test_undeclared_entity_is_a_format_error() -> None:
    with pytest.raises(ParseError):
        parse_xml(b"<r>&nope;</r>", "Test")


def test_a_doctype_without_declarations_is_fine() -> None:
    assert parse_xml(b'<?xml version="1.0"?>\n<!DOCTYPE TS>\n<TS version="2.1"/>', "TS").tag == "TS"


def test_a_known_dtd_is_accepted_but_never_loaded(secret_file: Path) -> None:
    data = b'<!DOCTYPE tmx SYSTEM "tmx14.dtd"><tmx version="1.4"><body/></tmx>'
    assert parse_xml(data, "TMX", known_dtds=frozenset({"tmx14.dtd"})).tag == "tmx"
    with pytest.raises(ParseError, match="external DTD"):
        parse_xml(data, "TMX")


def test_files_above_the_size_limit_are_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsing, "MAX_XML_BYTES", 1000)
    with pytest.raises(TooLarge):  # the API answers it 413 (tests/test_error_statuses.py)
        parse_xml(b"<r>" + b"x" * 2000 + b"</r>", "Test")


def test_broken_xml_names_the_line() -> None:
    with pytest.raises(ParseError) as raised:
        read_file("xlf", "", b'<?xml version="1.0"?>\n<xliff version="1.2">\n<file>\n</xliff>', ReadOptions())
    assert raised.value.line == 4 and "not well-formed" in raised.value.message


@pytest.mark.parametrize(("ext", "variant", "root"), [
    ("xlf", "", "xliff"), ("tmx", "", "tmx"), ("xml", "", "resources"), ("ts", "", "TS"), ("resx", "", "root"),
    ("xml", "java", "properties"), ("xml", "tizen", "string_table"),
])
def test_the_wrong_root_element_is_named(ext: str, variant: str, root: str) -> None:
    with pytest.raises(ParseError, match=f"<{root}>"):
        read_file(ext, variant, b"<html><body/></html>", ReadOptions(locale="fr"))


@pytest.mark.parametrize(("ext", "variant"), XML_READERS)
def test_empty_input_is_a_format_error(ext: str, variant: str) -> None:
    with pytest.raises(ParseError, match="empty"):
        read_file(ext, variant, b"  \n", ReadOptions(locale="fr"))


@pytest.mark.parametrize(("raw", "spelled"), [
    ("fr_FR", "fr-FR"), ("pt-br", "pt-BR"), ("zh_hant_tw", "zh-Hant-TW"), ("es-419", "es-419"), ("DE", "de"),
    ("", None), (None, None),
])
def test_locales_named_in_files_are_spelled_like_the_locale_parameter(raw, spelled) -> None:
    assert parsing.named_locale(raw, "<file target-language>") == spelled


def test_a_file_naming_no_locale_code_is_a_format_error() -> None:
    data = (b'<xliff version="1.2"><file original="f" source-language="en" target-language="not a locale!" '
            b'datatype="x"><body/></file></xliff>')
    with pytest.raises(ParseError, match="target-language"):
        read_file("xlf", "", data, ReadOptions())
