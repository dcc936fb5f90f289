"""PO, POT and MO: round trips, external validators (msgfmt, msgunfmt, polib), corpus imports, errors."""
from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import polib
import pytest

from formats import (
    Catalogue, CharsetError, ParseError, ReadOptions, Translation, Unit, export_file, plural_rules, read_file,
)
from formats.errors import FormatsError
from formats.gettext import _parse_po_fast, decode_po, parse_po, parse_po_lines
from formats.gettext.common import catalogue_of
from formats.gettext.po_reader import _scan_po
from tests.support import corpus_path, require_tool

from .samples import PLURAL_LOCALES, export_text, options, plural_texts, rich_catalogue, run_tool
from .validators import msgfmt_check


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    """Save bytes under tmp_path."""
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- independent validators --------------------------------------------------------------------


@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_po_export_passes_msgfmt_check(tmp_path: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "po", "", options(locale=locale)).data
    msgfmt_check(write(tmp_path, f"{locale}.po", data))


@pytest.mark.parametrize("locale", ["ar", "ru"])
def test_po_indexed_by_id_passes_msgfmt_check(tmp_path: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "po", "", options(locale=locale, index="id")).data
    msgfmt_check(write(tmp_path, f"{locale}.po", data))


def test_pot_template_passes_msgfmt_check(tmp_path: Path) -> None:
    data = export_file(rich_catalogue(), "pot", "", options()).data
    msgfmt_check(write(tmp_path, "messages.pot", data))


def test_po_in_latin9_passes_msgfmt_and_declares_its_charset(tmp_path: Path) -> None:
    catalogue = rich_catalogue(("fr",))
    catalogue.units[3].translations["fr"] = Translation("Ça coûte 5 €")
    data = export_file(catalogue, "po", "", options(locale="fr", charset="iso-8859-15")).data
    assert b'"Content-Type: text/plain; charset=ISO-8859-15\\n"' in data
    assert "Ça coûte 5 €".encode("iso-8859-15") in data
    msgfmt_check(write(tmp_path, "fr.po", data))
    read = read_file("po", "", data, ReadOptions())
    assert read.unit('Say "hi" \\ wave\nthen\tleave').translation("fr").text == "Ça coûte 5 €"


@pytest.mark.parametrize("locale", ["fr", "ru", "ar", "ja"])
def test_mo_export_is_read_by_msgunfmt_and_polib(tmp_path: Path, locale: str) -> None:
    msgunfmt = require_tool("msgunfmt")
    path = write(tmp_path, f"{locale}.mo", export_file(rich_catalogue(), "mo", "", options(locale=locale)).data)
    result = run_tool(msgunfmt, path)
    assert result.returncode == 0, result.stderr
    assert f'msgstr "[{locale}] Open"' in result.stdout
    mo = polib.mofile(str(path))
    assert mo.metadata["Plural-Forms"] == plural_rules(locale).header
    by_id = {(entry.msgctxt, entry.msgid): entry for entry in mo}
    assert by_id[("File menu", "Open")].msgstr == f"[{locale}] Open"
    expected_forms = list(plural_texts(locale).values())
    assert [by_id[(None, "%d file")].msgstr_plural[i] for i in range(len(expected_forms))] == expected_forms
    assert (None, "Never translated") not in by_id  # MO holds no untranslated messages


def test_mo_compiled_by_msgfmt_reads_like_our_po(tmp_path: Path) -> None:
    msgfmt = require_tool("msgfmt")
    po_data = export_file(rich_catalogue(), "po", "", options(locale="ru")).data
    po_path = write(tmp_path, "ru.po", po_data)
    mo_path = tmp_path / "ru.mo"
    assert run_tool(msgfmt, "-o", mo_path, po_path).returncode == 0
    from_mo = read_file("mo", "", mo_path.read_bytes(), ReadOptions())
    from_po = read_file("po", "", po_data, ReadOptions())
    for unit in from_mo.units:
        assert unit.translation("ru").plurals == from_po.unit(unit.id).translation("ru").plurals
        assert unit.translation("ru").text == from_po.unit(unit.id).translation("ru").text
    # msgfmt leaves fuzzy messages out; ours are all still in the PO.
    assert from_mo.unit("Hello %s") is None and from_po.unit("Hello %s").translation("ru").flag == "fuzzy"


# --- PO shape ----------------------------------------------------------------------------------


def test_po_header_has_loco_fields_in_loco_order() -> None:
    text = export_text(rich_catalogue(), "po", locale="fr-FR")
    header = decode_header(text)
    assert list(header) == [
        "Project-Id-Version", "Report-Msgid-Bugs-To", "POT-Creation-Date", "PO-Revision-Date", "Last-Translator",
        "Language-Team", "Language", "Plural-Forms", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
        "X-Generator", "X-Loco-Source-Locale", "X-Loco-Target-Locale",
    ]
    assert header["Language"] == "fr_FR"
    assert header["Language-Team"] == "French (France)"
    assert header["Plural-Forms"] == "nplurals=2; plural=n > 1;"
    assert header["PO-Revision-Date"] == "2024-05-06 07:08+0000"
    assert header["X-Loco-Target-Locale"] == "fr-FR"


def decode_header(text: str) -> dict[str, str]:
    """The header fields of a PO text, in order."""
    first = next(message for message in parse_po_lines(text) if message.msgid == "")
    return dict(line.split(": ", 1) for line in first.msgstr[0].splitlines())


def test_po_starts_with_banner_unless_no_comments() -> None:
    text = export_text(rich_catalogue(), "po", locale="fr")
    assert text.splitlines()[:4] == [
        "# Loco po export: Gettext PO", "# Project: Sample", "# Release: Working copy", "# Locale: fr, French",
    ]
    assert "# Exported at: Mon, 06 May 2024 07:08:09 +0000" in text
    assert export_text(rich_catalogue(), "po", locale="fr", no_comments=True).startswith('msgid ""')


def test_template_has_placeholder_date_and_only_empty_msgstrs() -> None:
    text = export_text(rich_catalogue(), "pot")
    header = decode_header(text)
    assert header["PO-Revision-Date"] == "YEAR-MO-DA HO:MI+ZONE"
    assert "X-Loco-Target-Locale" not in header
    messages = [m for m in parse_po_lines(text) if m.msgid]
    assert messages and all(not any(m.msgstr) for m in messages)
    plural = next(m for m in messages if m.msgid_plural)
    assert (plural.msgid, plural.msgid_plural, len(plural.msgstr)) == ("%d file", "%d files", 2)


def test_po_template_option_gives_the_same_body_as_pot() -> None:
    po_template = export_text(rich_catalogue(), "po", template=True, no_comments=True)
    pot = export_text(rich_catalogue(), "pot", no_comments=True)
    assert po_template == pot


def test_po_entry_carries_context_notes_references_and_flags() -> None:
    text = export_text(rich_catalogue(), "po", locale="fr")
    assert '#. Shown on the home page\n#, fuzzy, php-format\nmsgid "Hello %s"\nmsgstr "[fr] Hello %s"' in text
    assert 'msgctxt "File menu"\nmsgid "Open"\nmsgstr "[fr] Open"' in text
    assert '#: src/files.php:12\n#, php-format\nmsgid "%d file"\nmsgid_plural "%d files"' in text
    assert '# check tone\n#. Shown on the home page' in text


def test_flags_other_than_fuzzy_are_written_as_loco_flags_and_read_back() -> None:
    text = export_text(rich_catalogue(("fr",)), "po", locale="fr")
    assert '#, loco-provisional\nmsgid "Close"' in text
    read = read_file("po", "", text.encode(), ReadOptions())
    assert read.unit("Close").translation("fr").flag == "provisional"
    assert read.unit("Hello %s").translation("fr").flag == "fuzzy"


def test_format_flag_is_written_only_when_msgids_are_texts() -> None:
    by_text = export_text(rich_catalogue(("fr",)), "po", locale="fr")
    by_id = export_text(rich_catalogue(("fr",)), "po", locale="fr", index="id")
    assert "php-format" in by_text
    assert "php-format" not in by_id
    assert 'msgid "greeting"\nmsgstr "[fr] Hello %s"' in by_id


def test_multiline_text_is_split_after_newlines() -> None:
    text = export_text(rich_catalogue(("fr",)), "po", locale="fr")
    assert 'msgid ""\n"Say \\"hi\\" \\\\ wave\\n"\n"then\\tleave"\nmsgstr ""\n"[fr] \\"salut\\" \\\\ \\n"\n"fin"' in text


@pytest.mark.parametrize("locale", ["ar", "ru", "ja"])
def test_plural_msgstr_count_follows_the_locale_forms(locale: str) -> None:
    text = export_text(rich_catalogue(), "po", locale=locale)
    message = next(m for m in parse_po_lines(text) if m.msgid_plural)
    assert message.msgstr == list(plural_texts(locale).values())


# --- PO reading --------------------------------------------------------------------------------

PO_BY_TEXT = """\
msgid ""
msgstr ""
"Language: de\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#. Tooltip
#: a.php:1 b.php:2
#, fuzzy, python-format
msgctxt "button"
msgid "Save %(name)s"
msgstr "%(name)s speichern"

msgid "One apple"
msgid_plural "%d apples"
msgstr[0] "Ein Apfel"
msgstr[1] "%d Äpfel"

#~ msgid "Obsolete"
#~ msgstr "Veraltet"
"""


def test_reading_by_text_derives_ids_and_source_translations() -> None:
    read = read_file("po", "", PO_BY_TEXT.encode(), ReadOptions())
    assert read.locales == ["en", "de"]
    save = read.unit("button.Save %(name)s")
    assert (save.context, save.notes, save.references, save.printf) == ("button", "Tooltip", ["a.php:1", "b.php:2"], "python")
    assert save.key == "Save %(name)s"
    assert save.translation("en").text == "Save %(name)s"
    assert save.translation("de") == Translation("%(name)s speichern", flag="fuzzy")
    apples = read.unit("One apple")
    assert apples.plural
    assert apples.translation("en").plurals == {"one": "One apple", "other": "%d apples"}
    assert apples.translation("de").plurals == {"one": "Ein Apfel", "other": "%d Äpfel"}


def test_obsolete_entries_are_ignored() -> None:
    read = read_file("po", "", PO_BY_TEXT.encode(), ReadOptions())
    assert [unit.id for unit in read.units] == ["button.Save %(name)s", "One apple"]


def test_reading_by_id_keeps_msgids_as_ids_without_source_text() -> None:
    read = read_file("po", "", PO_BY_TEXT.encode(), ReadOptions(index="id"))
    assert [unit.id for unit in read.units] == ["Save %(name)s", "One apple"]
    assert read.locales == ["de"]


def test_header_plural_order_decides_which_msgstr_is_which_form() -> None:
    swapped = PO_BY_TEXT.replace("plural=(n != 1)", "plural=(n == 1 ? 1 : 0)")
    apples = read_file("po", "", swapped.encode(), ReadOptions()).unit("One apple")
    assert apples.translation("de").plurals == {"other": "Ein Apfel", "one": "%d Äpfel"}


def test_locale_option_overrides_the_header() -> None:
    read = read_file("po", "", PO_BY_TEXT.encode(), ReadOptions(locale="de-AT"))
    assert read.locales == ["en", "de-AT"]


def test_language_given_as_an_english_name_is_understood() -> None:
    text = PO_BY_TEXT.replace('"Language: de\\n"', '"Language: Dutch (Belgium)\\n"')
    assert read_file("po", "", text.encode(), ReadOptions()).locales == ["en", "nl-BE"]  # canonical, as ?locale= spells it


def test_file_without_language_needs_the_locale_option() -> None:
    text = PO_BY_TEXT.replace('"Language: de\\n"\n', "")
    with pytest.raises(ParseError, match="give the locale option"):
        read_file("po", "", text.encode(), ReadOptions())
    assert read_file("po", "", text.encode(), ReadOptions(locale="de")).locales == ["en", "de"]


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_dos_and_mac_line_endings_are_read(ending: str) -> None:
    read = read_file("po", "", PO_BY_TEXT.replace("\n", ending).encode(), ReadOptions())
    assert read.unit("One apple").translation("de").plurals["other"] == "%d Äpfel"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ('msgid "a"\nmsgstr "b\n', 2, "malformed string"),
        ('msgid "a"\n\nmsgid "b"\nmsgstr "c"\n', 3, "second msgid"),
        ('msgstr "b"\n', 1, "without a preceding msgid"),
        ('msgid "a"\nmsgstr "b"\nmsgfoo "c"\n', 3, "unexpected text"),
        ('msgid "a\\q"\nmsgstr "b"\n', 1, "invalid escape"),
        ('msgid "a"\nmsgid_plural "as"\nmsgstr[1] "b"\n', 3, "out of order"),
        ('msgid "a"\nmsgid_plural "as"\nmsgstr "b"\n', 3, r"needs msgstr\[n\]"),
        ('msgid "a"\nmsgstr "b"\n"orphan" junk\n', 3, "malformed string"),
        ('msgid "a"\n#. note\nmsgstr "b"\n', 2, "comment inside the message"),
        ('msgid "a"\n', 1, "without msgstr"),
    ],
)
def test_broken_po_raises_format_error_naming_the_line(text: str, line: int, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        read_file("po", "", text.encode(), ReadOptions(locale="fr"))
    assert caught.value.line == line
    assert f"line {line}" in str(caught.value)


def test_undecodable_bytes_raise_format_error_naming_the_line() -> None:
    data = b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "a"\nmsgstr "\xff"\n'
    with pytest.raises(ParseError, match="line 5"):
        read_file("po", "", data, ReadOptions(locale="fr"))


def test_fast_parser_and_line_parser_agree() -> None:
    texts = [export_text(rich_catalogue(), "po", locale=code) for code in PLURAL_LOCALES] + [PO_BY_TEXT]
    for name in ("po/polib__test_iso-8859-15.po", "po/polib__test_msgctxt.po",
                 "po/loco-translate__languages_loco-translate-ru_RU.po", "pot/loco-translate__languages_loco-translate.pot"):
        texts.append(decode_po(corpus_path(name).read_bytes()))
    texts += [_HEADER + entry for entry in SCANNED_SHAPES]  # e.g. an escape never spans two continued strings
    for text in texts:
        fast = _parse_po_fast(text)
        assert fast is not None
        assert [replace(m, line=0) for m in fast] == [replace(m, line=0) for m in parse_po_lines(text)]


_HEADER = 'msgid ""\nmsgstr ""\n"Language: fr\\n"\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n'
# Entries in the everyday shape the one-pass scan reads itself, each with something its string handling must get
# right (escapes, continued lines, escaped backslashes before quotes, octal and hex escapes split over lines).
SCANNED_SHAPES = [
    'msgid "a"\nmsgstr "b"\n',
    'msgid "say \\"hi\\""\nmsgstr "dis \\"salut\\"\\n"\n',
    'msgid "path\\\\"\nmsgstr "C:\\\\dir\\\\"\n',
    'msgid "tab\\there"\nmsgstr "a\\\\nb\\\\\\"c"\n',
    'msgid ""\n"first line\\n"\n"second"\nmsgstr ""\n"premi\\303\\250re\\n"\n"\\x41"\n"1"\n',
    'msgid "octal split"\nmsgstr "\\1"\n"2"\n',
    'msgid "bell \\a and \\r and \\\' and \\?"\nmsgstr "x"\n',
    '#. note one\n#. note two\n#: a.c:1 b.c:2\n#: c.c:3\n#| msgid "old"\nmsgctxt "menu"\nmsgid "Open"\nmsgstr "Ouvrir"\n',
    '# translator says\n#, fuzzy, loco-incorrect, php-format\nmsgid "%s file"\nmsgstr "%s fichier"\n',
    'msgctxt ""\nmsgid "empty context"\nmsgstr ""\n',
    'msgctxt "ctx"\nmsgid ""\nmsgstr "a context with an empty msgid is no header"\n',
    'msgid "one"\nmsgid_plural "many"\nmsgstr[0] "un"\nmsgstr[1] "plusieurs \\"x\\""\n',
    '#: only.c:1\nmsgid "dup"\nmsgstr "1"\n\nmsgid "dup"\nmsgstr "2"\n',
    '#\n#:\nmsgid "bare markers"\nmsgstr "y"\n',
]
# Files the scan leaves to the careful parsers: they must read them, or refuse them, exactly as before.
UNSCANNED_SHAPES = [
    '  msgid "indented"\n  msgstr "x"\n',
    'msgid  "two spaces"\nmsgstr "x"\n',
    'msgid "a" \nmsgstr "trailing space"\n',
    '#~ msgid "obsolete"\n#~ msgstr "x"\n\nmsgid "a"\nmsgstr "b"\n',
    '#, fuzzy\n#~ msgid "obsolete with comments"\n#~ msgstr "x"\n\nmsgid "a"\nmsgstr "b"\n',
    'msgid "a"\nmsgstr "b"\n# trailing comment\n',
    'msgid "bare "quote""\nmsgstr "x"\n',
    'msgid "escaped end\\"\nmsgstr "x"\n',
    'msgid "escaped end\\"\n"continued"\nmsgstr "x"\n',
    'msgid "a\\q"\nmsgstr "b"\n',
    'msgid "a"\nmsgstr "b" "c"\n',
    'msgid "a"\nmsgid_plural "as"\nmsgstr[1] "b"\nmsgstr[0] "c"\n',
    'msgid "a"\nmsgid_plural "as"\nmsgstr "b"\n',
    'msgid "a"\nmsgstr[0] "b"\n',
    'msgid "a"\n#. note\nmsgstr "b"\n',
    'msgid "a"\n',
    'msgid "a"\nmsgstr "b\n',
    'msgid "nul \x00"\nmsgstr "x"\n',
    '#: ref\n\nmsgid "comment apart"\nmsgstr "x"\n',
]


def _careful_read(text: str, options: ReadOptions) -> object:
    """What the line-oriented parsers make of a text: a catalogue, or the error they raise."""
    try:
        return catalogue_of(parse_po(text), options)
    except FormatsError as error:
        return (type(error), str(error), getattr(error, "line", None))


def _read(text: str, options: ReadOptions) -> object:
    """What read_file makes of a text: a catalogue, or the error it raises."""
    try:
        return read_file("po", "", text.encode(), options)
    except FormatsError as error:
        return (type(error), str(error), getattr(error, "line", None))


@pytest.mark.parametrize("entry", SCANNED_SHAPES)
@pytest.mark.parametrize("header", [_HEADER, ""])
def test_one_pass_scan_reads_like_the_careful_parsers(header: str, entry: str) -> None:
    for text in (header + entry, header + entry + "\n\n", header + entry.rstrip("\n"), entry + "\n" + header):
        assert _scan_po(text) is not None, text
        for options in (ReadOptions(locale="fr"), ReadOptions(locale="fr", index="id"), ReadOptions()):
            assert _read(text, options) == _careful_read(text, options), text


@pytest.mark.parametrize("entry", UNSCANNED_SHAPES)
def test_files_the_scan_leaves_alone_read_as_before(entry: str) -> None:
    text = _HEADER + entry
    assert _read(text, ReadOptions(locale="fr")) == _careful_read(text, ReadOptions(locale="fr"))


def test_scan_reads_exports_and_corpus_files_like_the_careful_parsers() -> None:
    texts = [export_text(rich_catalogue(), "po", locale=code) for code in PLURAL_LOCALES] + [PO_BY_TEXT]
    for name in ("po/polib__test_iso-8859-15.po", "po/polib__test_msgctxt.po",
                 "po/loco-translate__languages_loco-translate-ru_RU.po", "pot/loco-translate__languages_loco-translate.pot"):
        texts.append(decode_po(corpus_path(name).read_bytes()))
    for text in texts:
        assert _read(text, ReadOptions()) == _careful_read(text, ReadOptions())


# --- MO ----------------------------------------------------------------------------------------


def test_mo_with_big_endian_byte_order_is_read() -> None:
    pairs = [(b"", b"Language: fr\nContent-Type: text/plain; charset=UTF-8\n"), (b"ctx\x04Open", b"Ouvrir")]
    strings = b""
    offsets = []
    base = 28 + 16 * len(pairs)
    for data in [p[0] for p in pairs] + [p[1] for p in pairs]:
        offsets.append((len(data), base + len(strings)))
        strings += data + b"\0"
    table = b"".join(struct.pack(">2I", *row) for row in offsets)
    blob = struct.pack(">7I", 0x950412DE, 0, len(pairs), 28, 28 + 8 * len(pairs), 0, base) + table + strings
    read = read_file("mo", "", blob, ReadOptions(index="id"))
    assert read.unit("Open").context == "ctx"
    assert read.unit("Open").translation("fr").text == "Ouvrir"


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"\x00" * 10, "shorter than the 28-byte header"), (b"\x00" * 40, "bad magic number"),
     (struct.pack("<7I", 0x950412DE, 0, 5, 28, 68, 0, 108), "runs past the end")],
)
def test_broken_mo_raises_format_error(data: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        read_file("mo", "", data, ReadOptions(locale="fr"))


def test_latin1_charset_failure_names_character_and_key() -> None:
    catalogue = rich_catalogue(("ru",))
    catalogue.units[1].translations["ru"] = Translation("Открыть")
    with pytest.raises(CharsetError, match=r"character 'О' \(U\+041E\) of key 'Open' cannot be encoded in iso8859-1"):
        export_file(catalogue, "po", "", options(locale="ru", charset="latin1"))


@pytest.mark.parametrize("ext", ["po", "mo"])
def test_a_project_name_the_charset_cannot_hold_is_a_charset_error(ext: str) -> None:
    with pytest.raises(CharsetError, match=r"character 'П' \(U\+041F\) in the file header cannot be encoded"):
        export_file(rich_catalogue(("fr",)), ext, "", options(locale="fr", charset="iso-8859-1", project_name="Проект"))


# --- corpus ------------------------------------------------------------------------------------


def read_corpus(name: str, **read_options) -> Catalogue:
    """A corpus file read with the given options."""
    path = corpus_path(name)
    return read_file(path.suffix[1:], "", path.read_bytes(), ReadOptions(**read_options))


def test_corpus_loco_translate_dutch_po() -> None:
    read = read_corpus("po/loco-translate__languages_loco-translate-nl_BE.po")
    assert read.locales == ["en", "nl-BE"]  # from X-Loco-Target-Locale (Language says "Dutch (Belgium)")
    assert len(read.units) == 133  # 134 entries minus the obsolete "Updated"
    assert sum(1 for u in read.units if u.context) == 31
    assert sum(1 for u in read.units if u.plural) == 4
    assert sum(1 for u in read.units if u.translation("nl-BE").translated) == 61
    error = read.unit("Message label.Error")
    assert (error.context, error.translation("en").text, error.translation("nl-BE").text) == ("Message label", "Error", "Fout")
    assert error.notes == "Translators: Bold text label in admin error messages"
    assert read.unit("1 language").translation("nl-BE").plurals == {"one": "1 taal", "other": "%u talen"}
    assert read.unit("%s is not an official WordPress language").printf == "php"
    assert read.headers["X-Generator"] == "Loco - https://localise.biz/"


def test_corpus_loco_translate_russian_po_with_three_forms() -> None:
    read = read_corpus("po/loco-translate__languages_loco-translate-ru_RU.po")
    assert read.locales == ["en", "ru-RU"]
    assert len(read.units) == 133  # two obsolete entries left out
    assert sum(1 for u in read.units if u.translation("ru-RU").translated) == 107
    assert read.unit("Message label.Error").translation("ru-RU").text == "Ошибка"
    # The file declares three forms but gives two for this message: the many form stays untranslated.
    assert read.unit("1 string").translation("ru-RU").plurals == {"one": "1 строка", "few": "%s строк(и)"}
    assert read.unit("1 string").translation("en").plurals == {"one": "1 string", "other": "%s strings"}


def test_corpus_iso_8859_15_po_is_decoded() -> None:
    with pytest.raises(ParseError, match="give the locale option"):
        read_corpus("po/polib__test_iso-8859-15.po")
    read = read_corpus("po/polib__test_iso-8859-15.po", locale="fr")
    assert len(read.units) == 5
    e83 = read.unit("E83: Cannot allocate buffer, using other one...")
    assert e83.translation("fr").text == "E83: L'allocation du tampon a échoué : arrêtez Vim, libérez de la mémoire"
    assert e83.translation("fr").comment.startswith("AB - La situation est probablement plus grave")
    wrapped = read.unit("Test wrapping")
    assert wrapped.references == ["/foo/bar/baz/spam.py:710", "/foo/bar/baz/spam-ham-foo-bar-baz-spam-something-bar.py"]
    assert wrapped.notes.startswith("Added for wrapping test, this is a long extracted comment")
    assert read.unit("@context.Some msgid").translation("fr").text == "Some msgstr"
    assert read.unit("1 line --%d%%--").translation("fr").text == "1 ligne --%d%%--"


def test_corpus_msgctxt_po_and_mo_read_alike() -> None:
    po = read_corpus("po/polib__test_msgctxt.po", locale="fr")
    mo = read_corpus("mo/polib__test_msgctxt.mo", locale="fr")
    for read in (po, mo):
        assert sorted(u.id for u in read.units) == [
            "Some message context.some string", "Some other message context.singular", "some string",
        ]
        assert read.unit("Some message context.some string").translation("fr").text == "une chaîne avec contexte"
        assert read.unit("some string").translation("fr").text == "une chaîne sans contexte"
        plural = read.unit("Some other message context.singular")
        assert plural.context == "Some other message context"
        assert plural.translation("fr").plurals == {"one": "singulier", "other": "pluriel"}


def test_corpus_loco_translate_pot_has_source_texts_only() -> None:
    read = read_corpus("pot/loco-translate__languages_loco-translate.pot")
    assert read.locales == ["en"]
    assert len(read.units) == 133
    assert read.unit("Message label.OK").references == ["../lib/loco-admin.php:54", "../tpl/admin-list.tpl.php:98"]
    assert read.unit("1 string").translation("en").plurals == {"one": "1 string", "other": "%s strings"}


def test_corpus_loco_compiled_german_mo() -> None:
    read = read_corpus("mo/loco-translate__languages_loco-translate-de_DE.mo")
    assert read.locales == ["en", "de-DE"]
    assert len(read.units) == 121
    assert sum(1 for u in read.units if u.context) == 30
    assert sum(1 for u in read.units if u.plural) == 4
    assert read.unit('"%s" folder not writable').translation("de-DE").text == 'Ordner "%s" nicht schreibbar'


def test_corpus_loco_compiled_japanese_mo_keeps_one_form() -> None:
    read = read_corpus("mo/loco-translate__languages_loco-translate-ja.mo")
    assert read.locales == ["en", "ja-JP"]
    assert len(read.units) == 122
    # nplurals=1: the compiler's second msgstr is never used by gettext and is not imported.
    assert read.unit("1 language").translation("ja-JP").plurals == {"other": "%u言語"}


def test_corpus_polib_utf8_mo() -> None:
    read = read_corpus("mo/polib__test_utf8.mo", locale="es")
    assert len(read.units) == 726
    assert sum(1 for u in read.units if u.plural) == 19
    assert read.unit("day").translation("es").plurals == {"one": "día", "other": "días"}


@pytest.mark.parametrize("folder", ["po", "pot", "mo"])
def test_every_gettext_corpus_file_imports_or_explains_why_not(folder: str) -> None:
    files = sorted(corpus_path(folder).iterdir())
    assert files
    for path in files:
        try:
            read = read_file(path.suffix[1:], "", path.read_bytes(), ReadOptions())
        except ParseError as error:
            assert "locale" in str(error), f"{path.name}: unexpected error {error}"
            read = read_file(path.suffix[1:], "", path.read_bytes(), ReadOptions(locale="fr"))
        assert read.units, path.name


def test_catalogue_round_trips_through_po_by_text() -> None:
    original = Catalogue(source_locale="en", locales=["en", "de"], units=[
        Unit(id="a", context="ctx", translations={"en": Translation("Apple"), "de": Translation("Apfel")}),
        Unit(id="b", translations={"en": Translation("Pear")}),
    ])
    read = read_file("po", "", export_file(original, "po", "", options(locale="de")).data, ReadOptions())
    assert [(u.id, u.translation("en").text, u.translation("de").text) for u in read.units] == [
        ("ctx.Apple", "Apple", "Apfel"), ("Pear", "Pear", None),
    ]
