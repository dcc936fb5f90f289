"""Java .properties: round trips, Java's own Properties.load and PropertyResourceBundle, corpus, errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats.plurals import with_other
from formats import Catalogue, CharsetError, ParseError, ReadOptions, Translation, Unit, export_file, read_file
from formats.properties import has_arguments
from tests.support import corpus_path

from .samples import PLURAL_LOCALES, options, plural_texts, rich_catalogue
from .validators import java_checker, java_read_properties


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled PropertiesCheck program."""
    return java_checker(tmp_path_factory.mktemp("java"))


TEXTS = {
    "plain": "Bonjour",
    "accents": "Déjà vu — ça coûte 5 €",
    "astral": "Fête 🎉 日本語",
    "leading": "   three leading spaces",
    "trailing": "trailing spaces   ",
    "breaks": "Line one\nLine two\r\n\ttabbed\f",
    "separators": "a = b : c # d ! e",
    "backslash": "C:\\dir\\new \\u0041 not an escape",
    "hash": "# not a comment",
    "bang": "! not a comment either",
    "control": "bell\x07 nul\x00 del\x7f nel\x85",
    "apostrophe_plain": "l'été, sans argument",
    "apostrophe_args": "L'homme {0} a vu l'été {1}",
    "empty": "",
    "key with = : spaces": "key needs escapes",
    "#key": "starts like a comment",
    "clé": "non-ASCII key",
}


def texts_catalogue() -> Catalogue:
    units = [Unit(id=key, translations={"en": Translation("x"), "fr": Translation(text)}) for key, text in TEXTS.items()]
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units)


def in_file(text: str) -> str:
    """What a value becomes in the file: a MessageFormat pattern when it has arguments."""
    return text.replace("'", "''") if has_arguments(text) else text


@pytest.mark.parametrize("charset", ["", "utf-8"])
def test_java_reads_exactly_the_values_we_wrote(tmp_path: Path, java_classes: Path, charset: str) -> None:
    data = export_file(texts_catalogue(), "properties", "", options(locale="fr", charset=charset)).data
    if not charset:
        assert data.isascii()  # ISO-8859-1 by default, everything beyond ASCII as \uXXXX
    path = tmp_path / "Messages_fr.properties"
    path.write_bytes(data)
    java = java_read_properties(java_classes, path, "apostrophe_args")
    expected = {key: in_file(text) for key, text in TEXTS.items()}
    assert java["bundle"] == expected  # Java 9+ bundles read UTF-8, falling back to ISO-8859-1
    if not charset:  # Properties.load(InputStream) reads ISO-8859-1 only
        assert java["properties"] == expected
    assert java["formatted"]["apostrophe_args"] == "L'homme A a vu l'été B"  # MessageFormat undoes the ''
    read = read_file("properties", "", data, ReadOptions(locale="fr"))
    assert {unit.id: unit.translation("fr").text for unit in read.units} == TEXTS


@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_rich_export_loads_in_java(tmp_path: Path, java_classes: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "properties", "", options(locale=locale)).data
    path = tmp_path / f"Messages_{locale}.properties"
    path.write_bytes(data)
    java = java_read_properties(java_classes, path)
    assert java["properties"] == java["bundle"]
    forms = plural_texts(locale) if locale != "en" else {"one": "%d file", "other": "%d files"}
    clauses = with_other(forms)  # ICU requires `other`, also where the locale's integers never reach it (ru)
    assert java["bundle"]["files"] == "{0, plural, " + " ".join(f"{k}{{{v}}}" for k, v in clauses.items()) + "}"
    assert "untouched" in java["bundle"] if locale == "en" else "untouched" not in java["bundle"]


def test_latin1_charset_writes_latin1_bytes_raw_only_when_asked_for_unicode() -> None:
    catalogue = texts_catalogue()
    latin = export_file(catalogue, "properties", "", options(locale="fr", charset="iso-8859-1")).data
    assert b"D\\u00E9j\\u00E0 vu" in latin
    utf8 = export_file(catalogue, "properties", "", options(locale="fr", charset="utf-8")).data
    assert "Déjà vu".encode() in utf8


def test_unknown_charset_is_refused() -> None:
    with pytest.raises(CharsetError, match="unknown charset"):
        export_file(texts_catalogue(), "properties", "", options(locale="fr", charset="klingon"))


def test_reading_separators_continuations_comments_and_latin1() -> None:
    data = (
        "# Greeting shown first\n! second comment line\n"
        "greeting=Bonjour\n"
        "colon:Deux points\n"
        "space Espace\n"
        "  indented   =   value  \n"
        "long = un \\\n     deux \\\n\ttrois\n"
        "escaped\\ key = v\n"
        "\n# orphan comment\n\n"
        "latin = caf\xe9\n"
    ).encode("iso-8859-1")
    read = read_file("properties", "", data, ReadOptions(locale="fr"))
    texts = {unit.id: unit.translation("fr").text for unit in read.units}
    assert texts == {"greeting": "Bonjour", "colon": "Deux points", "space": "Espace", "indented": "value  ",
                     "long": "un deux trois", "escaped key": "v", "latin": "café"}
    assert read.unit("greeting").notes == "Greeting shown first\nsecond comment line"
    assert read.unit("latin").notes == ""


def test_duplicate_key_is_a_format_error() -> None:
    with pytest.raises(ParseError, match=r"line 3: duplicate key 'a' \(first at line 1\)"):
        read_file("properties", "", b"a = 1\nb = 2\na = 3\n", ReadOptions(locale="fr"))


def test_a_ten_megabyte_line_is_refused() -> None:
    with pytest.raises(ParseError, match="line 2: line is"):
        read_file("properties", "", b"a = 1\nb = " + b"x" * (10 << 20), ReadOptions(locale="fr"))


def test_corpus_hibernate_messages_read_with_unicode_escapes() -> None:
    read = read_file("properties", "", corpus_path(
        "properties/hibernate-validator__ValidationMessages_fr.properties").read_bytes(), ReadOptions(locale="fr"))
    assert len(read.units) == 46  # one message per non-blank line
    assert read.unit("jakarta.validation.constraints.NotNull.message").translation("fr").text == "ne doit pas être nul"
    # `{value}` is no MessageFormat argument: the apostrophes of the EL expression stay as they are
    assert "' ou égal' : ''" in read.unit("jakarta.validation.constraints.DecimalMax.message").translation("fr").text


def test_corpus_mozilla_torture_test() -> None:
    read = read_file("properties", "", corpus_path("properties/moz-l10n__bug121341.properties").read_bytes(),
                     ReadOptions(locale="fr"))
    texts = {unit.id: unit.translation("fr").text for unit in read.units}
    assert len(texts) == 11
    assert texts["1"] == "abc"
    assert texts["2"] == "xy\t"
    assert texts["4"] == "this is multiline property"
    assert texts["5"] == "this is another multiline property"
    assert texts["6"] == "test6"  # \u0036 on a CRLF line
    assert texts["7"] == "yet another multiline propery"
    assert texts["8"] == "\ttest5 \t"
    assert texts["9"] == " test6\t\t    "
    assert texts["10aሴb"] == "c췯d"  # raw UTF-8 key and value
    assert texts["11"] == "\uabcd"
    assert texts["3"].startswith("\u1234\t\r\n")  # then the truncated \uAB escape, kept as written
    assert read.unit("1").notes == "simple check"
