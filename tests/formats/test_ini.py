"""INI: round trips, PHP parse_ini_string (raw and normal) and Python configparser(strict=True), errors."""
from __future__ import annotations

import configparser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formats import Catalogue, ExportError, ParseError, ReadOptions, Translation, Unit, export_file, read_file
from formats.ini import ini_key

from .samples import PLURAL_LOCALES, options, plural_texts, rich_catalogue
from .validators import php_parse_ini


TEXTS = {
    "plain": "Bonjour",
    "quotes": "l'été \"chaud\"",
    "backslash": "C:\\dir\\",
    "semicolon": "a; b # c = d : e",
    "reserved": "yes",
    "nothing": "null",
    "brackets": "[section] {x} $y",
    "unicode": "Fête 🎉 日本語",
    "empty": "",
}


def texts_catalogue() -> Catalogue:
    units = [Unit(id=key, translations={"en": Translation("x"), "fr": Translation(text)}) for key, text in TEXTS.items()]
    units.append(Unit(id="menu.file.open", translations={"fr": Translation("Ouvrir")}, notes="File menu"))
    units.append(Unit(id="menu.file.close", translations={"fr": Translation("Fermer")}))
    units.append(Unit(id="menu.edit", translations={"fr": Translation("Édition")}))
    units.append(Unit(id="files", plural=True, translations={"fr": Translation("x", plural_texts("fr"))}))
    units.append(Unit(id="missing", translations={"en": Translation("x")}))
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units)


def save(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "lang.ini"
    path.write_bytes(data)
    return path


def configparser_read(data: bytes) -> dict[str, dict[str, str]]:
    """Sections as configparser(strict=True) reads them (keys before any section go in `[top]`)."""
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str  # keep keys' case
    parser.read_string("[top]\n" + data.decode("utf-8"))
    return {section: dict(parser[section]) for section in parser.sections()}


def test_php_raw_scanner_keeps_exactly_the_quoted_text(tmp_path: Path) -> None:
    data = export_file(texts_catalogue(), "ini", "", options(locale="fr")).data
    raw = php_parse_ini(save(tmp_path, data), raw=True)
    escaped = {key: _written(text) for key, text in TEXTS.items()}
    assert raw == {
        **escaped, "files": plural_texts("fr"), "missing": "",
        "menu.file": {"open": "Ouvrir", "close": "Fermer"}, "menu": {"edit": "Édition"},
    }


def test_php_normal_scanner_reads_the_texts(tmp_path: Path) -> None:
    data = export_file(texts_catalogue(), "ini", "", options(locale="fr")).data
    normal = php_parse_ini(save(tmp_path, data), raw=False)
    assert {key: normal[key] for key in TEXTS} == TEXTS


def test_configparser_strict_reads_every_key_once(tmp_path: Path) -> None:
    data = export_file(texts_catalogue(), "ini", "", options(locale="fr")).data
    sections = configparser_read(data)
    assert sections["menu.file"] == {"open": '"Ouvrir"', "close": '"Fermer"'}
    assert sections["top"]["files[one]"] == '"' + plural_texts("fr")["one"] + '"'
    assert sections["top"]["missing"] == ""
    assert sections["top"]["semicolon"] == '"a; b # c = d : e"'


@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_rich_exports_pass_both_validators(tmp_path: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "ini", "", options(locale=locale)).data
    expected = rich_catalogue().unit("menu.close").translation(locale).text
    assert php_parse_ini(save(tmp_path, data), raw=True)["menu"]["close"] == expected
    assert configparser_read(data)["menu"]["close"] == f'"{expected}"'


def test_round_trip_of_texts_notes_and_sections() -> None:
    data = export_file(texts_catalogue(), "ini", "", options(locale="fr")).data
    read = read_file("ini", "", data, ReadOptions(locale="fr"))
    assert {key: read.unit(key).translation("fr").text for key in TEXTS} == TEXTS
    assert read.unit("menu.file.open").notes == "File menu"
    assert not read.unit("missing").translation("fr").translated


def test_keys_ini_cannot_hold_are_rewritten() -> None:
    catalogue = Catalogue(locales=["en"], units=[Unit(id="a=b [c]?", translations={"en": Translation("x")})])
    assert b"\na_b__c__ = " in export_file(catalogue, "ini", "", options(locale="en")).data


def test_reading_sections_comments_quotes_and_lists() -> None:
    data = b"""; header comment

top = bare value ; trailing comment
single = 'kept \\n as is'
[app]
# about the title
title = "Titre"
days[] = Lundi
days[] = Mardi
[app]
later = "section again"
"""
    read = read_file("ini", "", data, ReadOptions(locale="fr"))
    texts = {unit.id: unit.translation("fr").text for unit in read.units}
    assert texts == {"top": "bare value", "single": "kept \\n as is", "app.title": "Titre", "app.days.0": "Lundi",
                     "app.days.1": "Mardi", "app.later": "section again"}
    assert read.unit("app.title").notes == "about the title"


@pytest.mark.parametrize("data, message", [
    (b"just text\n", r"line 1: expected `key = value`"),
    (b'a = "open\n', r"line 1: unterminated or malformed quoted value"),
])
def test_broken_ini_is_a_format_error(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_file("ini", "", data, ReadOptions(locale="fr"))


def test_a_ten_megabyte_line_is_refused() -> None:
    with pytest.raises(ParseError, match="line 1: line is"):
        read_file("ini", "", b"a = " + b"x" * (10 << 20), ReadOptions(locale="fr"))


_KEY_PARTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_KEYS = st.lists(_KEY_PARTS, min_size=1, max_size=3).map(".".join)
_TEXTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)


def _written(text: str) -> str:
    """The text between the quotes of an INI export: what PHP's raw scanner and configparser give back."""
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
            .replace("\n", "\\n").replace("\r", "\\r"))


def _php_sections(pairs: dict[str, str], transform) -> dict[str, object]:
    """What parse_ini_string with sections gives for these INI keys and texts."""
    result: dict[str, object] = {}
    for key, text in pairs.items():
        section, _, name = key.rpartition(".")
        place = result.setdefault(section, {}) if section else result
        place[name] = transform(text)  # type: ignore[index]
    return result


def _no_key_is_a_section(keys: list[str]) -> bool:
    """PHP keeps a section over a top-level key of the same name, whatever the writer does."""
    sections = {key.rpartition(".")[0] for key in keys}
    return not any(key in sections for key in keys if "." not in key)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEYS, _TEXTS, min_size=1, max_size=12)
       .filter(lambda pairs: len({ini_key(key) for key in pairs}) == len(pairs))
       .filter(lambda pairs: _no_key_is_a_section([ini_key(key) for key in pairs])))
def test_every_key_and_text_reads_back_in_both_php_scanners_configparser_and_gloss(
        tmp_path_factory: pytest.TempPathFactory, pairs: dict[str, str]) -> None:
    catalogue = Catalogue(locales=["fr"], units=[Unit(id=key, translations={"fr": Translation(text)})
                                                 for key, text in pairs.items()])
    data = export_file(catalogue, "ini", "", options(locale="fr")).data
    path = save(tmp_path_factory.mktemp("ini"), data)
    written = {ini_key(key): text for key, text in pairs.items()}
    php_line_breaks = lambda text: text.replace("\n", "\\n").replace("\r", "\\r")  # noqa: E731
    assert php_parse_ini(path, raw=False) == _php_sections(written, php_line_breaks)
    assert php_parse_ini(path, raw=True) == _php_sections(written, _written)
    sections = configparser_read(data)
    assert {f"{section}.{name}" if section != "top" else name: value
            for section, keys in sections.items() for name, value in keys.items()} == {
        key: f'"{_written(text)}"' for key, text in written.items()}
    read = read_file("ini", "", data, ReadOptions(locale="fr"))
    assert {unit.id: unit.translation("fr").text for unit in read.units} == written


@pytest.mark.parametrize("key, written", [
    ("no", "no_"), ("Off", "Off_"), ("menu.NULL", "menu.NULL_"), ("yes.no", "yes.no_"), ("menu.", "menu._"),
    (".x", "_.x"), ("DEFAULT.x", "DEFAULT_.x"), ("a{b}.c!d", "a_b_.c_d"), ("nothing", "nothing"),
])
def test_keys_php_reads_as_constants_or_cannot_hold_get_a_documented_rewrite(key: str, written: str) -> None:
    assert ini_key(key) == written


def test_a_text_ini_cannot_carry_is_an_export_error_naming_its_key() -> None:
    catalogue = Catalogue(locales=["fr"], units=[Unit(id="nul", translations={"fr": Translation("a\x00b")})])
    with pytest.raises(ExportError, match="'nul' holds the character U\\+0000"):
        export_file(catalogue, "ini", "", options(locale="fr"))


def test_line_breaks_inside_quotes_as_loco_writes_them_are_one_value() -> None:
    data = ';; Loco\nsample = "line one\nline \\"two\\"" ; note\nnext = "x"\n'.encode()
    read = read_file("ini", "", data, ReadOptions(locale="fr"))
    assert {unit.id: unit.translation("fr").text for unit in read.units} == {
        "sample": 'line one\nline "two"', "next": "x"}


def test_a_value_that_starts_with_a_quoted_word_is_read_as_the_text_it_is() -> None:
    data = 'LifeMeterType="Surround" puts the bar behind the field. ; c\nz = 1\n'.encode()
    read = read_file("ini", "", data, ReadOptions(locale="pl"))
    assert read.unit("LifeMeterType").translation("pl").text == '"Surround" puts the bar behind the field.'


def test_a_quote_never_closed_names_the_line_it_opened_on() -> None:
    with pytest.raises(ParseError, match="line 2: unterminated"):
        read_file("ini", "", b'a = 1\nb = "open\nc = 2\n', ReadOptions(locale="fr"))


def test_a_key_given_twice_keeps_its_last_value_and_the_answer_names_both_lines() -> None:
    data = b"a = 1\n[s]\nb = 2\np[one] = x\n[s]\nb = 3\np[one] = y\np[other] = z\n"
    read = read_file("ini", "", data, ReadOptions(locale="fr"))
    assert read.unit("s.b").translation("fr").text == "3"
    assert read.unit("s.p").translation("fr").plurals["one"] == "y"
    assert [unit.id for unit in read.units] == ["a", "s.b", "s.p"]
    assert read.warnings == ["line 6: duplicate key 's.b' (first at line 3); the last value is kept",
                             "line 7: duplicate key 's.p[one]' (first at line 4); the last value is kept"]
