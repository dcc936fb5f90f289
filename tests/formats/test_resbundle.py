"""ICU resource bundles: .txt checked by ICU's genrb, .res checked by ICU's derb, round trips, broken input."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from formats import Catalogue, ParseError, ReadOptions, Translation, Unit, export_file, read_file
from tests.support import require_tool

from .samples import options, rich_catalogue, run_tool
from .validators import genrb


def bundle_catalogue() -> Catalogue:
    """Nested keys, tabs, braces, non-ASCII and an ICU plural, in French.

    No quotes, newlines or characters beyond the BMP: derb cuts one character off the end of a string
    for each escape it prints (an ICU 72 derb bug), so such strings are checked against genrb instead
    (test_our_res_and_genrbs_res_of_our_txt_dump_identically).
    """
    texts = {
        "greeting": "Bonjour, {monde}", "menu.file.open": "Ouvrir…", "menu.file.close": "Fermer",
        "menu.edit": "Édition\tavec tabulation", "lines": "ligne 1 ligne 2", "blank": "", "cjk": "日本語のテキスト",
    }
    units = [Unit(id=key, translations={"en": Translation(key), "fr": Translation(text)}) for key, text in texts.items()]
    units.append(Unit(id="files", plural=True, translations={
        "en": Translation("# file", {"one": "# file", "other": "# files"}),
        "fr": Translation("# fichier", {"one": "# fichier", "other": "# fichiers"})}))
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units, project="Bundle")


EXPECTED = {
    "greeting": "Bonjour, {monde}", "menu.file.open": "Ouvrir…", "menu.file.close": "Fermer",
    "menu.edit": "Édition\tavec tabulation", "lines": "ligne 1 ligne 2", "blank": "", "cjk": "日本語のテキスト",
    "files": "{count, plural, one{# fichier} other{# fichiers}}",
}


def derb_strings(output: str) -> tuple[str, dict[str, str]]:
    """(bundle name, dotted key -> string) of derb's text dump (its escapes: \\" \\n \\uXXXX)."""
    path: list[str] = []
    strings: dict[str, str] = {}
    name = ""
    for line in output.splitlines():
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        leaf = re.fullmatch(r'\s*(.+?) \{ "(.*)" \}', line)
        if leaf:
            value = re.sub(r'\\u([0-9A-Fa-f]{4})|\\n|\\"', lambda m: chr(int(m.group(1), 16)) if m.group(1) else
                           {"\\n": "\n", '\\"': '"'}[m.group(0)], leaf.group(2))
            strings[".".join(path[1:] + [leaf.group(1).strip('"')])] = value
        elif line.rstrip().endswith("{"):
            path.append(line.strip()[:-1].strip().strip('"'))
            name = name or path[0]
        elif line.strip() == "}":
            path.pop()
    return name, strings


def derb(tmp_path: Path, data: bytes, name: str = "fr") -> str:
    """ICU's derb dump of a .res file."""
    tool = require_tool("derb")
    folder = tmp_path / "derb"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.res").write_bytes(data)
    result = run_tool(tool, "-s", folder, "-c", f"{name}.res")  # derb wants the folder apart from the name
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_res_we_write_is_read_by_derb_with_the_same_strings(tmp_path: Path) -> None:
    data = export_file(bundle_catalogue(), "res", "", options(locale="fr")).data
    _, strings = derb_strings(derb(tmp_path, data))
    assert strings == EXPECTED


def test_txt_we_write_compiles_with_genrb_to_the_same_strings(tmp_path: Path) -> None:
    text = export_file(bundle_catalogue(), "txt", "", options(locale="fr")).data
    compiled = genrb(tmp_path, text)
    name, strings = derb_strings(derb(tmp_path, compiled))
    assert name == "fr" and strings == EXPECTED
    back = read_file("res", "", compiled, ReadOptions(locale="fr"))  # genrb's formatVersion 2 layout read by us
    assert {unit.id: unit.translation("fr").text for unit in back.units if not unit.plural} == {
        key: value for key, value in EXPECTED.items() if key != "files"}
    assert back.unit("files").translation("fr").plurals == {"one": "# fichier", "other": "# fichiers"}


def test_our_res_and_genrbs_res_of_our_txt_dump_identically(tmp_path: Path) -> None:
    """ICU's own compiler and our writer give bundles derb cannot tell apart (quotes, backslashes, newlines)."""
    catalogue = rich_catalogue(("fr", "ru", "ja"))
    for locale in ("fr", "ru", "ja"):
        ours = export_file(catalogue, "res", "", options(locale=locale)).data
        theirs = genrb(tmp_path, export_file(catalogue, "txt", "", options(locale=locale)).data)
        assert derb(tmp_path, ours, locale) == derb(tmp_path, theirs, locale)


def test_large_bundle_uses_32_bit_tables_that_derb_reads(tmp_path: Path) -> None:
    """More than 64 KiB of keys needs TABLE32 resources."""
    units = [Unit(id=f"section{n // 100}.key_{n:05d}_" + "x" * 40,
                  translations={"fr": Translation(f"texte {n}")}) for n in range(2000)]
    catalogue = Catalogue(source_locale="en", locales=["en", "fr"], units=units)
    data = export_file(catalogue, "res", "", options(locale="fr")).data
    _, strings = derb_strings(derb(tmp_path, data))
    assert len(strings) == 2000 and strings[units[1999].id] == "texte 1999"
    back = read_file("res", "", data, ReadOptions(locale="fr"))
    assert len(back.units) == 2000


def test_genrb_resource_kinds_are_read_and_non_text_skipped(tmp_path: Path) -> None:
    source = (
        "\ufeffde_CH {\n"
        "    // the greeting\n"
        '    hello { "Gr\\u00FC\\u00DFe" }\n'
        '    days { "Montag", "Dienstag" }\n'
        '    nested:table { deep { deeper { "tief" } } }\n'
        "    count:int { 42 }\n"
        "    vector:intvector { 1, 2, 3 }\n"
        "    blob:bin { a1b2c3 }\n"
        '    joined { "zu" "sammen" }\n'
        '    "key with space" { "ok" }\n'
        "}\n"
    ).encode()
    expected = {"hello": "Grüße", "days.0": "Montag", "days.1": "Dienstag", "nested.deep.deeper": "tief",
                "joined": "zusammen", "key with space": "ok"}
    from_text = read_file("txt", "", source, ReadOptions())
    assert from_text.locales == ["en", "de-CH"] or from_text.locales == ["de-CH"]
    assert {unit.id: unit.translation("de-CH").text for unit in from_text.units} == expected
    assert from_text.unit("hello").notes == "the greeting"
    from_binary = read_file("res", "", genrb(tmp_path, source), ReadOptions(locale="de-CH"))
    assert {unit.id: unit.translation("de-CH").text for unit in from_binary.units} == expected


def test_txt_of_the_source_template_is_a_root_bundle(tmp_path: Path) -> None:
    text = export_file(bundle_catalogue(), "txt", "", options(template=True)).data
    assert b"root {" in text
    genrb(tmp_path, text)


@pytest.mark.parametrize("cut", [1, 10, 23, 31, 40, 100, -1, -30])
def test_truncated_res_is_refused_naming_the_byte(cut: int) -> None:
    data = export_file(bundle_catalogue(), "res", "", options(locale="fr")).data
    with pytest.raises(ParseError, match=r"(truncated|corrupt).*(byte|bytes) \d+|\d+ bytes"):
        read_file("res", "", data[:cut] if cut > 0 else data[:len(data) + cut], ReadOptions(locale="fr"))


def test_res_with_a_foreign_header_is_refused() -> None:
    with pytest.raises(ParseError, match="not an ICU .res file"):
        read_file("res", "", b"\x20\x00" + b"\x00" * 60, ReadOptions(locale="fr"))


@pytest.mark.parametrize(("data", "message"), [
    (b'fr {\n  a { "x" }\n  b { "y" \n}\n', r"line 4: expected '}' to close the bundle 'fr'|line \d: expected"),
    (b'fr {\n  a { "unterminated }\n}\n', r'line 2: string opened with " is never closed'),
    (b'fr {\n  a { "x" }\n}\nextra', r"line 4: unexpected text after the end of the bundle"),
    (b'fr {\n  a:weird { "x" }\n}\n', r"line 2: unknown resource type :weird"),
    (b'fr {\n  a { "x" }\n  a { "y" }\n}\n', r"line 3: duplicate key 'a'"),
    ('fr { a { "x" } }'.encode("utf-16-le"), r"UTF-16 without a byte-order mark"),
])
def test_broken_txt_names_the_line(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_file("txt", "", data, ReadOptions())


def test_keys_outside_icus_invariant_characters_are_replaced(tmp_path: Path) -> None:
    units = [Unit(id="prix@total#1", translations={"fr": Translation("Prix")})]
    catalogue = Catalogue(source_locale="en", locales=["en", "fr"], units=units)
    text = export_file(catalogue, "txt", "", options(locale="fr")).data
    assert b'"prix_total_1"' in text or b"prix_total_1 {" in text
    genrb(tmp_path, text)


@pytest.mark.parametrize("ext", ["res", "txt"])
def test_corrupted_bundles_fail_only_with_format_errors(ext: str) -> None:
    """Flipped bytes anywhere give a ParseError or a catalogue, never another exception or a hang."""
    import random
    data = export_file(rich_catalogue(("fr",)), ext, "", options(locale="fr")).data
    generator = random.Random(7)
    for _ in range(400):
        corrupted = bytearray(data)
        for _ in range(generator.randint(1, 4)):
            corrupted[generator.randrange(len(corrupted))] = generator.randrange(256)
        try:
            read_file(ext, "", bytes(corrupted), ReadOptions(locale="fr"))
        except ParseError:
            pass


def test_tables_referring_to_each_other_are_refused() -> None:
    """A crafted bundle whose root table lists itself twice would expand exponentially."""
    import struct
    from formats.resbundle.binary import TABLE32, _data_header
    keys = b"a\x00b\x00"
    keys_top = 1 + 7 + 1
    table_at = keys_top
    root = (TABLE32 << 28) | table_at
    table = struct.pack("<i2i2I", 2, 32, 34, root, root)
    indexes = [7, keys_top, table_at + 5, table_at + 5, 2, 0, keys_top]
    data = _data_header() + struct.pack("<I7i", root, *indexes) + keys + table
    with pytest.raises(ParseError, match="loop"):
        read_file("res", "", data, ReadOptions(locale="fr"))


def test_escape_heavy_txt_string_is_read_whole() -> None:
    """Thousands of escapes in one quoted string are all unescaped (the scan that once went quadratic)."""
    data = ('fr {\n    k { "' + '\\"\\n\\u00e9' * 20000 + '" }\n}\n').encode()
    unit, = read_file("txt", "", data, ReadOptions()).units
    assert (unit.id, unit.translation("fr").text) == ("k", '"\né' * 20000)
