"""xml: Android resources (aapt package on a stub project), Java XML properties (Properties.loadFromXML),
Tizen string tables; Android escaping, plurals, string arrays, HTML, translatable="false"; corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats import Catalogue, ReadOptions, Translation, Unit, export_file, read_file
from formats.xml.android import android_key, unescape
from tests.support import corpus_path, require_tool

from .samples import PLURAL_LOCALES, export_text, options, rich_catalogue, run_tool
from .validators import MANIFEST, aapt_package

TRICKY = {
    "apostrophe": "They're here",
    "quotes": 'Say "hi"',
    "at": "@string/not_a_reference",
    "question": "?attr/not_an_attribute",
    "newline": "one\ntwo\tthree",
    "spaces": "  leading, double  inner and trailing  ",
    "backslash": "C:\\dir\\n",
    "percent": "100% sure",
    "several": "%s has %d items",
    "positional": "%1$s has %2$d items",
    "literal_percent_and_arg": "50% off %s",
    "markup_looking": "<b>not html</b> & co",
    "control": "bell \u0007 here",
    "unicode": "Ça — 日本語 🎉",
}


def catalogue(texts: dict[str, str], locale: str = "fr") -> Catalogue:
    """Units translated into `locale` with the given texts."""
    units = [Unit(key, translations={"en": Translation(key), locale: Translation(text)}) for key, text in texts.items()]
    return Catalogue(source_locale="en", locales=["en", locale], units=units)


def test_tricky_texts_pass_aapt_and_read_back(tmp_path: Path) -> None:
    data = export_file(catalogue(TRICKY), "xml", "", options(locale="fr")).data
    aapt_package(tmp_path, {"values/strings.xml": data})
    read = read_file("xml", "", data, ReadOptions(locale="fr"))
    assert {unit.id: unit.translation("fr").text for unit in read.units} == TRICKY


def test_android_escapes_as_written() -> None:
    text = export_text(catalogue(TRICKY), "xml", locale="fr")
    assert '<string name="apostrophe">They\\\'re here</string>' in text
    assert '<string name="quotes">Say \\"hi\\"</string>' in text
    assert '<string name="at">\\@string/not_a_reference</string>' in text
    assert '<string name="question">\\?attr/not_an_attribute</string>' in text
    assert '<string name="newline">one\\ntwo\\tthree</string>' in text
    assert '<string name="several" formatted="false">' in text
    assert '<string name="positional">%1$s has %2$d items</string>' in text
    assert '<string name="literal_percent_and_arg" formatted="false">' in text
    assert '<string name="percent">100% sure</string>' in text
    assert "&lt;b&gt;not html&lt;/b&gt; &amp; co" in text
    assert "\\u0007" in text


@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_rich_export_passes_aapt_in_every_plural_locale(tmp_path: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "xml", "", options(locale=locale)).data
    aapt_package(tmp_path, {"values/strings.xml": data})
    read = read_file("xml", "", data, ReadOptions(locale=locale))
    assert read.unit("files").plural
    expected = {name: text for name, text in rich_catalogue().unit("files").translation(locale).plurals.items()}
    assert read.unit("files").translation(locale).plurals == expected


def test_plurals_use_cldr_quantities() -> None:
    text = export_text(rich_catalogue(("ar",)), "xml", locale="ar")
    quantities = [part.split('"')[0] for part in text.split('quantity="')[1:]]
    assert quantities == ["zero", "one", "two", "few", "many", "other"]


def test_html_units_are_written_as_markup_and_escaped_inside(tmp_path: Path) -> None:
    units = [
        Unit("rich", type="html", translations={"fr": Translation("Salut <b>l'ami</b> <xliff:g id=\"n\">%1$s</xliff:g>")}),
        Unit("broken", type="html", translations={"fr": Translation("a <b>b")}),
    ]
    data = export_file(Catalogue(source_locale="fr", locales=["fr"], units=units), "xml", "", options(locale="fr")).data
    text = data.decode()
    assert '<string name="rich">Salut <b>l\\\'ami</b> <xliff:g id="n">%1$s</xliff:g></string>' in text
    assert '<string name="broken">a &lt;b&gt;b</string>' in text
    aapt_package(tmp_path, {"values/strings.xml": data})
    read = read_file("xml", "", data, ReadOptions(locale="fr"))
    assert read.unit("rich").type == "html"
    assert read.unit("rich").translation("fr").text == units[0].translations["fr"].text


def test_string_arrays_round_trip_as_indexed_units(tmp_path: Path) -> None:
    data = corpus_path("xml/KISS__values-fr_arrays.xml").read_bytes()
    read = read_file("xml", "", data, ReadOptions(locale="fr"))
    assert [unit.id for unit in read.units][:2] == ["defaultSearchProviders[0]", "defaultSearchProviders[1]"]
    assert read.unit("defaultSearchProviders[9]").translation("fr").text == "Marchés d'Applications|market://search?q=%s"
    exported = export_file(read, "xml", "", options(locale="fr")).data
    assert exported.count(b"<string-array ") == 1 and exported.count(b"<item") == 10
    aapt_package(tmp_path, {"values/arrays.xml": exported})


def test_reading_resolves_quotes_whitespace_and_escapes() -> None:
    assert unescape('  a   b\\n  c  ') == "a b\n c"
    assert unescape('"  kept   as is  "') == "  kept   as is  "
    assert unescape("It\\'s \\u0041\\@") == "It's A@"


def test_names_are_made_valid_resource_names() -> None:
    assert android_key("menu.file.open") == "menu.file.open"
    assert android_key("9 lives!") == "_9_lives_"
    assert android_key("protected") == "protected_"
    assert android_key("planets[2]") == "planets[2]"


def test_corpus_moz_strings() -> None:
    read = read_file("xml", "", corpus_path("xml/moz-l10n__strings.xml").read_bytes(), ReadOptions(locale="fr"))
    # 25 <string> (one translatable="false" left out), 4 array items, 2 <plurals>
    assert len(read.units) == 29
    assert read.unit("five") is None
    assert read.unit("welcome").translation("fr").text == "Welcome to <b>Foo</b>!"  # internal entity expanded
    assert read.unit("welcome").type == "html"
    assert read.unit("escaped_html").type == "text"
    assert read.unit("single_quote").translation("fr").text == "They're great"
    assert read.unit("foo").translation("fr").text == 'Foo Bar <a href="foo?id=%s">baz</a> is cool'  # CDATA
    assert read.unit("four").notes == "bar\nfoo"
    assert read.unit("numberOfSongsAvailable_pl").translation("fr").plurals["few"] == "Znaleziono %d piosenki."
    assert read.unit("one").translation("fr").text == ""


@pytest.mark.parametrize(("name", "locale"), [
    ("xml/2fas-android__core_locale_src_main_res_values-fr-rFR_strings.xml", "fr-FR"),
    ("xml/2fas-android__core_locale_src_main_res_values-pl-rPL_strings.xml", "pl-PL"),
])
def test_corpus_2fas_strings_import_and_reexport_through_aapt(tmp_path: Path, name: str, locale: str) -> None:
    read = read_file("xml", "", corpus_path(name).read_bytes(), ReadOptions(locale=locale))
    assert len(read.units) == 831  # 825 strings + 6 plurals
    assert sum(1 for unit in read.units if unit.plural) == 6
    assert read.unit("commons__page_of_page_title").notes == "A number replaces %d, for example, 4 of 5."
    data = export_file(read, "xml", "", options(locale=locale)).data
    aapt_package(tmp_path, {"values/strings.xml": data})


# --- Java XML properties and Tizen -----------------------------------------------------------------

JAVA_CHECKER = """
import java.io.FileInputStream;
import java.util.Properties;
import java.util.TreeSet;

public class LoadXml {
    public static void main(String[] args) throws Exception {
        Properties properties = new Properties();
        try (FileInputStream in = new FileInputStream(args[0])) {
            properties.loadFromXML(in);
        }
        StringBuilder out = new StringBuilder();
        for (String key : new TreeSet<>(properties.stringPropertyNames())) {
            out.append(key).append('\\u0000').append(properties.getProperty(key)).append('\\u0000');
        }
        System.out.print(out);
    }
}
"""


@pytest.fixture(scope="module")
def java_checker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compiled class that loads a file with java.util.Properties.loadFromXML and prints key NUL value NUL."""
    javac = require_tool("javac")
    require_tool("java")
    folder = tmp_path_factory.mktemp("java")
    (folder / "LoadXml.java").write_text(JAVA_CHECKER)
    result = run_tool(javac, "-d", folder, folder / "LoadXml.java")
    assert result.returncode == 0, result.stderr
    return folder


def java_load(folder: Path, data: bytes) -> dict[str, str]:
    """The properties Java reads from the XML document."""
    path = folder / "export.xml"
    path.write_bytes(data)
    result = run_tool(require_tool("java"), "-cp", folder, "LoadXml", path)
    assert result.returncode == 0, result.stderr
    fields = result.stdout.split("\0")[:-1]
    return dict(zip(fields[::2], fields[1::2]))


def test_java_properties_xml_loads_in_java(java_checker: Path) -> None:
    texts = {key: text for key, text in TRICKY.items() if key != "control"}  # XML 1.0 cannot carry U+0007
    data = export_file(catalogue(texts), "xml", "java", options(locale="fr")).data
    assert java_load(java_checker, data) == texts
    read = read_file("xml", "java", data, ReadOptions(locale="fr"))
    assert {unit.id: unit.translation("fr").text for unit in read.units} == texts


def test_control_characters_are_an_export_error_in_plain_xml() -> None:
    from formats import ExportError

    with pytest.raises(ExportError, match="U\\+0007"):
        export_file(catalogue({"control": TRICKY["control"]}), "xml", "java", options(locale="fr"))


def test_tizen_string_table() -> None:
    text = export_text(catalogue({"IDS_HELLO": "Bonjour & <salut>"}), "xml", "tizen", locale="fr")
    assert '<text id="IDS_HELLO">Bonjour &amp; &lt;salut&gt;</text>' in text
    assert text.count("<string_table ") == 1
    read = read_file("xml", "tizen", text.encode(), ReadOptions(locale="fr"))
    assert read.unit("IDS_HELLO").translation("fr").text == "Bonjour & <salut>"
