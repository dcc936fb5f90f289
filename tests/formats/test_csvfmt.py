"""CSV: the service's own multi-locale layout (round trip, csv-module parse) and Godot CSV import."""
from __future__ import annotations

import csv
import io

import pytest

from formats import ParseError, ReadOptions, read_file
from tests.support import corpus_path

from .samples import export_text, plural_texts, rich_catalogue


def rows(text: str) -> list[list[str]]:
    """Rows parsed by Python's csv module (the independent check)."""
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_layout_header_and_plural_rows() -> None:
    text = export_text(rich_catalogue(("fr", "ru")), "csv", all_locales=True)
    table = rows(text)
    assert table[0] == ["id", "context", "notes", "plural", "en", "fr", "ru"]
    assert table[1] == ["greeting", "", "Shown on the home page", "", "Hello %s", "[fr] Hello %s", "[ru] Hello %s"]
    assert ["menu.open", "File menu", "", "", "Open", "[fr] Open", "[ru] Open"] in table
    plural_rows = [row for row in table if row[0] == "files"]
    assert [row[3] for row in plural_rows] == ["one", "few", "many", "other"]
    assert plural_rows[1] == ["files", "", "", "few", "", "", "%d few (ru)"]
    assert plural_rows[3][4:] == ["%d files", "%d other (fr)", ""]


def test_every_field_is_quoted() -> None:
    text = export_text(rich_catalogue(("fr",)), "csv", locale="fr")
    first_line = text.splitlines()[0]
    assert first_line == '"id","context","notes","plural","en","fr"'
    assert '"Say ""hi"" \\ wave\nthen\tleave"' in text


def test_single_locale_csv_has_source_and_target_columns() -> None:
    table = rows(export_text(rich_catalogue(("fr", "ru")), "csv", locale="ru"))
    assert table[0][4:] == ["en", "ru"]


def test_template_csv_has_keys_and_plural_rows_only() -> None:
    table = rows(export_text(rich_catalogue(("fr",)), "csv", template=True))
    assert table[0] == ["id", "context", "notes", "plural"]
    assert ["files", "", "", "one"] in table and ["files", "", "", "other"] in table


def test_text_index_is_named_in_the_header_and_read_back_as_text() -> None:
    text = export_text(rich_catalogue(("fr",)), "csv", locale="fr", index="text")
    assert rows(text)[0][0] == "text"
    read = read_file("csv", "", text.encode(), ReadOptions())
    assert read.unit("File menu.Open").translation("fr").text == "[fr] Open"
    assert read.unit("%d file").translation("fr").plurals == plural_texts("fr")


def test_multi_locale_round_trip_keeps_every_locale() -> None:
    original = rich_catalogue()
    read = read_file("csv", "", export_text(original, "csv", all_locales=True).encode(), ReadOptions())
    assert read.locales == original.locales
    for locale in original.locales[1:]:
        assert read.unit("files").translation(locale).plurals == plural_texts(locale)
        assert read.unit("menu.open").translation(locale).text == f"[{locale}] Open"


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ('"id","fr"\n"a","b\n', "malformed CSV", None),
        ('"id","context","Klingon dialect"\n', "neither a locale code", 1),
        ('"id","fr"\n"","x"\n', "empty key", 2),
        ('"id","plural","fr"\n"a","several","x"\n', "not one of zero, one", 2),
        ('"id","fr"\n"a","x","extra"\n', "row has 3 cells", 2),
        ("", "empty CSV", None),
        ("\n", "empty CSV header", 1),
        ("\r\n\"id\",\"fr\"\n", "empty CSV header", 1),
    ],
)
def test_broken_csv_raises_format_error(text: str, reason: str, line: int | None) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        read_file("csv", "", text.encode(), ReadOptions())
    if line is not None:
        assert caught.value.line == line


def test_corpus_godot_csv() -> None:
    read = read_file("csv", "", corpus_path("csv/captain-holetooth__translations.csv").read_bytes(), ReadOptions())
    assert read.locales == ["en", "de"]
    assert len(read.units) == 10
    assert read.unit("KEY_GAMENAME").translation("de").text == "Käpt'n Lochzahn"
    assert read.unit("KEY_DEBUG").translation("en").text == "Debugging"
    intro = read.unit("KEY_INTRO1")
    assert not intro.translation("en").translated and not intro.translation("de").translated


def test_godot_comment_columns_are_ignored() -> None:
    read = read_file("csv", "", b"keys,en,_note,fr\nHELLO,Hello,greeting,Bonjour\n", ReadOptions())
    assert read.locales == ["en", "fr"]
    assert read.unit("HELLO").translation("fr").text == "Bonjour"
