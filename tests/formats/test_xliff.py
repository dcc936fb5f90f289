"""XLIFF: schema validity (xmllint, strict and transitional XSD), state <-> flags, plurals, inline markup,
XLIFF 2.0 reading, translate-toolkit as a second reader, and the corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats import Catalogue, ReadOptions, Translation, Unit, export_file, read_file
from tests.support import corpus_path, require_tool, schema_path

from .samples import PLURAL_LOCALES, export_text, options, rich_catalogue, run_tool
from .validators import xmllint_schema

SCHEMAS = ("xliff-core-1.2-strict.xsd", "xliff-core-1.2-transitional.xsd")


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("variant", ["", "xcode"])
@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_single_locale_export_is_schema_valid(tmp_path: Path, schema: str, variant: str, locale: str) -> None:
    data = export_file(rich_catalogue(), "xlf", variant, options(locale=locale)).data
    xmllint_schema(tmp_path, data, schema)


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("variant", ["", "xcode"])
@pytest.mark.parametrize("shape", [{"all_locales": True}, {"template": True}, {"locale": "fr", "index": "text"}])
def test_multi_locale_template_and_text_indexed_exports_are_schema_valid(
    tmp_path: Path, schema: str, variant: str, shape: dict
) -> None:
    data = export_file(rich_catalogue(), "xlf", variant, options(**shape)).data
    xmllint_schema(tmp_path, data, schema)


def test_all_locales_export_has_one_file_per_target_locale() -> None:
    text = export_text(rich_catalogue(("fr", "ru")), "xlf", all_locales=True)
    assert text.count("<file ") == 2
    assert 'target-language="fr"' in text and 'target-language="ru"' in text
    read = read_file("xlf", "", text.encode(), ReadOptions())
    assert read.locales == ["en", "fr", "ru"]
    assert read.unit("files").translation("ru").plurals == {"one": "%d one (ru)", "few": "%d few (ru)",
                                                            "many": "%d many (ru)"}
    assert read.unit("menu.open").translation("fr").text == "[fr] Open"


def flagged(flag: str) -> Catalogue:
    """One unit translated into French with a flag."""
    unit = Unit("k", translations={"en": Translation("Source"), "fr": Translation("Cible", flag=flag)})
    return Catalogue(source_locale="en", locales=["en", "fr"], units=[unit])


@pytest.mark.parametrize(("flag", "state"), [
    ("", "translated"), ("fuzzy", "needs-review-translation"), ("incomplete", "needs-translation"),
    ("incorrect", "x-incorrect"), ("provisional", "x-provisional"), ("unapproved", "x-unapproved"),
    ("rejected", "x-rejected"),
])
def test_flags_are_written_as_states_and_read_back(flag: str, state: str) -> None:
    text = export_text(flagged(flag), "xlf", locale="fr")
    assert f'<target state="{state}">Cible</target>' in text
    assert read_file("xlf", "", text.encode(), ReadOptions()).unit("k").translation("fr").flag == flag


@pytest.mark.parametrize(("state", "flag"), [
    ("final", ""), ("signed-off", ""), ("new", "incomplete"), ("needs-review-l10n", "fuzzy"),
    ("needs-adaptation", "incomplete"), ("x-unknown", ""),
])
def test_foreign_states_map_to_flags(state: str, flag: str) -> None:
    data = (f'<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="f" '
            f'source-language="en" target-language="de" datatype="plaintext"><body><trans-unit id="a">'
            f'<source>A</source><target state="{state}">B</target></trans-unit></body></file></xliff>').encode()
    translation = read_file("xlf", "", data, ReadOptions()).unit("a").translation("de")
    assert translation.text == "B" and translation.flag == flag


def test_untranslated_and_blank_targets_are_told_apart() -> None:
    data = (b'<xliff version="1.2"><file original="f" source-language="en" target-language="de" datatype="x">'
            b'<body><trans-unit id="none"><source>A</source></trans-unit>'
            b'<trans-unit id="empty-new"><source>B</source><target state="new"/></trans-unit>'
            b'<trans-unit id="blank"><source>C</source><target state="translated"></target></trans-unit>'
            b"</body></file></xliff>")
    read = read_file("xlf", "", data, ReadOptions())
    assert not read.unit("none").translation("de").translated
    assert not read.unit("empty-new").translation("de").translated
    assert read.unit("blank").translation("de").text == ""


def test_resname_names_the_asset_and_loco_ids_are_ignored() -> None:
    read = read_file("xlf", "", corpus_path("xlf/symfony-loco-provider-test__en.xlf").read_bytes(), ReadOptions())
    assert [unit.id for unit in read.units] == ["index.hello", "index.greetings"]
    assert read.unit("index.greetings").translation("en").text == "Welcome, {firstname}!"


def test_inline_markup_survives_as_xml_unit() -> None:
    data = (b'<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file original="f" '
            b'source-language="en" target-language="fr" datatype="html"><body><trans-unit id="hi">'
            b'<source>Hi <x id="NAME" equiv-text="{{ name }}"/>!</source>'
            b'<target state="translated">Salut <x id="NAME" equiv-text="{{ name }}"/> !</target>'
            b"</trans-unit></body></file></xliff>")
    read = read_file("xlf", "", data, ReadOptions())
    unit = read.unit("hi")
    assert unit.type == "xml"
    assert unit.translation("fr").text == 'Salut <x id="NAME" equiv-text="{{ name }}"/> !'
    again = export_text(read, "xlf", locale="fr")
    assert '<target state="translated">Salut <x id="NAME" equiv-text="{{ name }}"/> !</target>' in again


def test_markup_like_text_of_plain_units_is_escaped() -> None:
    unit = Unit("t", translations={"en": Translation("<b>bold</b> & <x/>"), "fr": Translation("<b>gras</b>")})
    text = export_text(Catalogue(source_locale="en", locales=["en", "fr"], units=[unit]), "xlf", locale="fr")
    assert "<source>&lt;b&gt;bold&lt;/b&gt; &amp; &lt;x/&gt;</source>" in text


def test_context_notes_comments_and_references_round_trip() -> None:
    text = export_text(rich_catalogue(("fr",)), "xlf", locale="fr")
    read = read_file("xlf", "", text.encode(), ReadOptions())
    assert read.unit("menu.open").context == "File menu"
    assert read.unit("greeting").notes == "Shown on the home page"
    assert read.unit("greeting").translation("fr").comment == "check tone"
    assert read.unit("files").references == ["src/files.php:12"]


def test_target_language_is_canonicalised_and_used_by_default() -> None:
    data = (b'<xliff version="1.2"><file original="f" source-language="en_US" target-language="pt_BR" '
            b'datatype="x"><body><trans-unit id="a"><source>A</source><target>B</target></trans-unit></body>'
            b"</file></xliff>")
    read = read_file("xlf", "", data, ReadOptions(locale="auto"))
    assert read.unit("a").translation("pt-BR").text == "B"


def test_xcode_plural_ids_and_format_key() -> None:
    text = export_text(rich_catalogue(("ru",)), "xlf", "xcode", locale="ru")
    assert 'original="en.lproj/Localizable.stringsdict"' in text
    assert '<trans-unit id="/files:dict/NSStringLocalizedFormatKey:dict/:string" xml:space="preserve">' in text
    assert '<trans-unit id="/files:dict/value:dict/few:dict/:string" xml:space="preserve">' in text
    read = read_file("xlf", "xcode", text.encode(), ReadOptions())
    assert read.unit("files").plural
    assert read.unit("files").translation("ru").plurals["few"] == "%d few (ru)"


def test_xliff_2_is_read() -> None:
    data = """<?xml version="1.0"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de_DE">
  <file id="f1">
    <group id="g">
      <unit id="u1" name="greeting">
        <notes><note category="description">On the home page</note></notes>
        <segment state="translated"><source>Hello </source><target>Hallo </target></segment>
        <segment><source>world</source><target>Welt</target></segment>
      </unit>
    </group>
    <unit id="u2"><segment><source>Untranslated</source></segment></unit>
  </file>
</xliff>""".encode()
    read = read_file("xlf", "", data, ReadOptions())
    assert [unit.id for unit in read.units] == ["greeting", "u2"]
    assert read.unit("greeting").translation("de-DE").text == "Hallo Welt"
    assert read.unit("greeting").notes == "On the home page"
    assert read.unit("u2").translation("en").text == "Untranslated"
    assert not read.unit("u2").translation("de-DE").translated


def test_translate_toolkit_reads_our_export(tmp_path: Path) -> None:
    xliff = pytest.importorskip("translate.storage.xliff")
    data = export_file(rich_catalogue(("fr",)), "xlf", "", options(locale="fr")).data
    store = xliff.xlifffile.parsestring(data)
    units = {unit.getid().split("\x04")[-1]: unit for unit in store.units}  # tt prefixes the file name
    assert units["menu.open"].target == "[fr] Open"
    assert units["quote"].source == 'Say "hi" \\ wave\nthen\tleave'
    assert units["quote"].target == '[fr] "salut" \\ \nfin'
    assert units["untouched"].target is None
    assert [units[f"files[{index}]"].target for index in (0, 1)] == ["%d one (fr)", "%d other (fr)"]


# --- corpus ------------------------------------------------------------------------------------


def read_corpus(name: str, **fields) -> Catalogue:
    return read_file("xlf", "", corpus_path(f"xlf/{name}").read_bytes(), ReadOptions(**fields))


def test_corpus_angular_messages() -> None:
    read = read_corpus("AlgoreaFrontend__messages.fr.xlf")
    # 766 trans-units, 37 of them repeating an earlier id (the later one wins), one with neither source nor target
    assert len(read.units) == 729
    assert read.locales == ["en", "fr"]
    assert read.unit("auth-error-modal-title").translation("fr").text == "Erreur"
    assert read.unit("auth-error-modal-title").references == ["src/app/app.component.html:46"]
    incomplete = [unit for unit in read.units if unit.translation("fr").flag == "incomplete"]
    assert len(incomplete) == 70  # state="new": Angular copied the source, nobody translated it yet
    assert sum(1 for unit in read.units if unit.type == "xml") == 112  # messages holding <x/> placeholders


def test_corpus_xcode_strings_and_stringsdict() -> None:
    read = read_corpus("moz-l10n__xcode.xliff")
    assert len(read.units) == 6  # 3 strings + 3 stringsdict plurals
    plurals = [unit.id for unit in read.units if unit.plural]
    assert plurals == ["[Generic/Count/EntriesSelected]", "[Generic/Count/Threads]", "followed_by_three_and_others"]
    assert read.unit("[Generic/Count/Threads]").translation("it").plurals == {"one": "%d thread", "other": "%d thread"}
    assert read.unit("Downloads.Toast.Progress.DescriptionText").notes.startswith("The description text")


def test_corpus_xcode_string_catalogue() -> None:
    read = read_corpus("moz-l10n__xcstrings.xliff")
    assert len(read.units) == 7
    assert read.unit("interpolation_key").translation("en").plurals == {
        "one": "There is %lld thing.", "other": "There are %lld things."}
    assert read.unit("one_substitution|==|substitutions.strings").plural
    assert read.unit("string_variant_per_device|==|device.ipad").notes == "iPad-only comment"
    assert read.locales == ["en"]  # Finnish targets are all missing


@pytest.mark.parametrize("name", ["AlgoreaFrontend__messages.fr.xlf", "moz-l10n__xcode.xliff",
                                  "moz-l10n__xcstrings.xliff", "symfony-loco-provider-test__en.xlf"])
def test_corpus_files_survive_our_export_and_the_strict_schema(tmp_path: Path, name: str) -> None:
    read = read_corpus(name)
    data = export_file(read, "xlf", "", options(all_locales=True)).data
    xmllint_schema(tmp_path, data, SCHEMAS[0])
    again = read_file("xlf", "", data, ReadOptions())
    assert [unit.id for unit in again.units] == [unit.id for unit in read.units]
