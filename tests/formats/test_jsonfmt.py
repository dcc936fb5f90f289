"""JSON family (json, multi, jed, chrome, i18next v4/v3) and ARB: round trips, shapes, corpus imports."""
from __future__ import annotations

import json

import pytest

from formats import Catalogue, ParseError, ReadOptions, Translation, Unit, export_file, read_file
from tests.support import corpus_path

from .samples import export_text, options, plural_texts, rich_catalogue


def parsed(catalogue: Catalogue, ext: str, variant: str = "", **fields) -> object:
    """An export parsed with the standard json module (an independent check that it is JSON)."""
    return json.loads(export_file(catalogue, ext, variant, options(**fields)).data)


# --- shapes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "variant"),
    [("json", ""), ("json", "multi"), ("json", "jed"), ("json", "chrome"), ("json", "i18next"),
     ("json", "i18next3"), ("arb", "")],
)
def test_every_json_export_parses_with_the_json_module(ext: str, variant: str) -> None:
    for locale in ("fr", "ru", "ar", "ja"):
        assert isinstance(parsed(rich_catalogue(), ext, variant, locale=locale), dict)


def test_default_json_nests_dotted_keys_and_writes_plural_objects() -> None:
    data = parsed(rich_catalogue(("ru",)), "json", locale="ru")
    assert data["menu"] == {"open": "[ru] Open", "close": "[ru] Close"}
    assert data["files"] == plural_texts("ru")
    assert "untouched" not in data  # texts only: an untranslated unit is left out


def test_default_json_holds_texts_only_and_a_template_keeps_every_key() -> None:
    def leaves(tree: dict) -> list:
        return [value for child in tree.values() for value in (leaves(child) if isinstance(child, dict) else [child])]

    data = parsed(rich_catalogue(("ru",)), "json", locale="ru", no_expand=True)
    assert all(isinstance(value, str) for key, value in data.items() if key != "files")
    assert all(isinstance(value, str) for value in leaves(data))
    template = json.loads(export_file(rich_catalogue(("ru",)), "json", "", options(template=True)).data)
    assert template["untouched"] == ""  # keys only, and never a null


def test_i18next_multi_json_and_arb_leave_untranslated_units_out_unless_they_are_asked_for() -> None:
    assert "untouched" not in parsed(rich_catalogue(("ru",)), "json", "i18next", locale="ru")
    assert "untouched" not in parsed(rich_catalogue(("ru", "fr")), "json", "multi", all_locales=True)["ru"]
    assert "untouched" not in parsed(rich_catalogue(("ru",)), "arb", locale="ru")
    asked = parsed(rich_catalogue(("ru",)), "json", "i18next", locale="ru", status="untranslated")
    assert asked["untouched"] == ""


def test_no_expand_keeps_dotted_keys_flat() -> None:
    data = parsed(rich_catalogue(("ru",)), "json", locale="ru", no_expand=True)
    assert data["menu.open"] == "[ru] Open" and "menu" not in data


def test_json_is_pretty_printed_like_loco() -> None:
    text = export_text(rich_catalogue(("fr",)), "json", locale="fr")
    assert text.startswith('{\n    "greeting": "[fr] Hello %s",\n    "menu": {\n        "open": "[fr] Open",')
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), indent=4, ensure_ascii=False) + "\n"


def test_source_text_keys_are_not_nested() -> None:
    catalogue = Catalogue(locales=["en", "fr"], units=[
        Unit(id="a", translations={"en": Translation("Wait. Then go."), "fr": Translation("Attendez. Puis partez.")}),
    ])
    assert parsed(catalogue, "json", locale="fr", index="text") == {"Wait. Then go.": "Attendez. Puis partez."}


def test_reading_accepts_nested_objects_and_flat_dotted_keys_alike() -> None:
    nested = read_file("json", "", b'{"menu": {"file": {"open": "Ouvrir"}}, "title": "Titre"}', ReadOptions(locale="fr"))
    flat = read_file("json", "", b'{"menu.file.open": "Ouvrir", "title": "Titre"}', ReadOptions(locale="fr"))
    for read in (nested, flat):
        assert [u.id for u in read.units] == ["menu.file.open", "title"]
        assert read.unit("menu.file.open").translation("fr").text == "Ouvrir"


def test_reading_plural_objects_null_and_numbers() -> None:
    data = b'{"files": {"one": "%d fichier", "other": "%d fichiers"}, "gone": null, "count": 3, "on": true}'
    read = read_file("json", "", data, ReadOptions(locale="fr"))
    assert read.unit("files").plural
    assert read.unit("files").translation("fr") == Translation("%d fichier", {"one": "%d fichier", "other": "%d fichiers"})
    assert not read.unit("gone").translation("fr").translated
    assert (read.unit("count").translation("fr").text, read.unit("on").translation("fr").text) == ("3", "true")


def test_reading_json_without_locale_takes_it_as_the_source_language() -> None:
    read = read_file("json", "", b'{"hello": "Hello"}', ReadOptions())
    assert read.locales == ["en"] and read.unit("hello").translation("en").text == "Hello"


def test_reading_json_by_text_makes_source_translations() -> None:
    read = read_file("json", "", b'{"Hello": "Bonjour"}', ReadOptions(locale="fr", index="text"))
    assert read.unit("Hello").translation("en").text == "Hello"
    assert read.unit("Hello").translation("fr").text == "Bonjour"


@pytest.mark.parametrize(
    ("data", "reason", "line"),
    [
        (b'{"a": "b",\n "c": }', "invalid JSON", 2),
        (b'["a"]', "top level", None),
        (b'{"a": "\xff"}', "not valid UTF-8", 1),
        (b"\xff\xfe{", "not valid UTF-16", None),
        (b'{"a": ["x", {"b": []}], "c": [[1, 2]]}', None, None),
    ],
)
def test_broken_json_raises_format_error(data: bytes, reason: str | None, line: int | None) -> None:
    if reason is None:  # arrays are not broken: they fold into indexed keys
        read = read_file("json", "", data, ReadOptions(locale="fr"))
        assert [u.id for u in read.units] == ["a.0", "c.0.0", "c.0.1"]
        return
    with pytest.raises(ParseError, match=reason) as caught:
        read_file("json", "", data, ReadOptions(locale="fr"))
    assert caught.value.line == line


def test_multi_locale_json_holds_every_locale_and_reads_back() -> None:
    data = parsed(rich_catalogue(("fr", "ru")), "json", "multi", all_locales=True)
    assert list(data) == ["en", "fr", "ru"]
    assert data["ru"]["files"] == plural_texts("ru")
    read = read_file("json", "multi", json.dumps(data).encode(), ReadOptions())
    assert read.locales == ["en", "fr", "ru"]
    assert read.unit("menu.open").translation("fr").text == "[fr] Open"


def test_all_locales_json_export_implies_multi_and_one_locale_is_flat() -> None:
    assert list(parsed(rich_catalogue(("fr",)), "json", all_locales=True)) == ["en", "fr"]
    only_source = Catalogue(locales=["en"], units=[Unit(id="a", translations={"en": Translation("A")})])
    assert parsed(only_source, "json", all_locales=True) == {"a": "A"}


def test_jed_layout() -> None:
    data = parsed(rich_catalogue(("ru",)), "json", "jed", locale="ru")
    messages = data["locale_data"]["messages"]
    assert data["domain"] == "messages"
    assert messages[""]["lang"] == "ru" and messages[""]["plural_forms"].startswith("nplurals=3;")
    assert messages["File menu\u0004Open"] == ["[ru] Open"]
    assert messages["%d file"] == list(plural_texts("ru").values())
    assert "Never translated" not in messages


def test_jed_reads_its_header_language() -> None:
    text = export_file(rich_catalogue(("ru",)), "json", "jed", options(locale="ru", namespace="app")).data
    read = read_file("json", "jed", text, ReadOptions())
    assert read.locales == ["en", "ru"]
    assert read.unit("%d file").translation("ru").plurals == plural_texts("ru")
    assert read.unit("File menu.Open").context == "File menu"


def test_chrome_keys_are_made_valid_and_notes_become_descriptions() -> None:
    data = parsed(rich_catalogue(("fr",)), "json", "chrome", locale="fr")
    assert data["greeting"] == {"message": "[fr] Hello %s", "description": "Shown on the home page"}
    assert data["menu_open"] == {"message": "[fr] Open"}
    # Chrome has no plurals: each plural form is a message of its own (issue #26 item 2)
    assert data["files"] == {"message": "%d one (fr)"}
    assert data["files_plural"] == {"message": "%d other (fr)"}
    assert "untouched" not in data


def test_i18next_v4_suffixes_and_v3_suffixes() -> None:
    v4 = parsed(rich_catalogue(("ru",)), "json", "i18next", locale="ru")
    assert {key: v4[key] for key in v4 if key.startswith("files")} == {
        "files_one": "%d one (ru)", "files_few": "%d few (ru)", "files_many": "%d many (ru)",
    }
    v3_two_forms = parsed(rich_catalogue(("fr",)), "json", "i18next3", locale="fr")
    assert (v3_two_forms["files"], v3_two_forms["files_plural"]) == ("%d one (fr)", "%d other (fr)")
    v3_many_forms = parsed(rich_catalogue(("ar",)), "json", "i18next3", locale="ar")
    assert [v3_many_forms[f"files_{i}"] for i in range(6)] == list(plural_texts("ar").values())


def test_i18next_lone_suffix_is_an_ordinary_key() -> None:
    read = read_file("json", "i18next", b'{"status_one": "x", "other": "y"}', ReadOptions(locale="en"))
    assert [u.id for u in read.units] == ["status_one", "other"]
    assert not read.unit("status_one").plural


def test_arb_layout_with_icu_plural_and_metadata() -> None:
    data = parsed(rich_catalogue(("fr",)), "arb", locale="fr-FR")
    assert data["@@locale"] == "fr_FR"
    assert data.get("files") in ("{count, plural, one{%d one (fr-FR)} other{%d other (fr-FR)}}", None)
    data = parsed(rich_catalogue(("fr",)), "arb", locale="fr")
    assert data["files"] == "{count, plural, one{%d one (fr)} other{%d other (fr)}}"
    assert data["@files"] == {"placeholders": {"count": {"type": "num"}}}
    assert data["@greeting"] == {"description": "Shown on the home page"}
    assert data["@menu.open"] == {"context": "File menu"}
    assert "untouched" not in data and "@untouched" not in data


def test_arb_plural_with_explicit_zero_stays_text() -> None:
    data = b'{"@@locale": "fr", "n": "{count, plural, =0{aucun} one{un} other{#}}"}'
    unit = read_file("arb", "", data, ReadOptions()).unit("n")
    assert not unit.plural and unit.translation("fr").text.startswith("{count, plural, =0{aucun}")


# --- corpus ------------------------------------------------------------------------------------


def read_corpus(name: str, ext: str = "json", variant: str = "", **fields) -> Catalogue:
    """A corpus file read with the given options."""
    return read_file(ext, variant, corpus_path(name).read_bytes(), ReadOptions(**fields))


def test_corpus_dkim_messages_json_with_line_comments() -> None:
    for variant in ("", "chrome"):  # plain json recognises the messages.json shape
        read = read_corpus("json/dkim_verifier__de_messages.json", variant=variant, locale="de")
        assert len(read.units) == 252
        assert read.unit("loading").translation("de").text == "Überprüfen…"
        tag = read.unit("SUCCESS_TAG")
        assert tag.translation("de").text == "DKIM signiert durch $1"
        assert tag.notes == "Tag shown in Conversation add-on for valid mail. Should be kept short."


def test_corpus_iron_messages_json_keeps_newlines() -> None:
    read = read_corpus("json/Iron-Update-Notifier__fr_messages.json", variant="chrome", locale="fr")
    assert [u.id for u in read.units] == [
        "confirmationMessage", "downloadUrl", "extensionDescription", "extensionName",
        "notificationMessage", "notificationTitle",
    ]
    assert read.unit("confirmationMessage").translation("fr").text == (
        "Une nouvelle version de SRWare Iron est disponible.\nVoulez-vous visiter la page de téléchargement?"
    )


def test_corpus_moz_messages_json_keeps_placeholders() -> None:
    read = read_corpus("json/moz-l10n__messages.json", variant="chrome", locale="fr")
    assert len(read.units) == 5
    assert read.unit("SourceString").translation("fr").text == "Translated Strîņg"
    assert read.unit("MultipleComments").notes == "Second comment"  # the later duplicate key wins, as in JSON
    placeholders = read.unit("placeholders")
    assert placeholders.translation("fr").text == "Hello$$$ $1YOUR_NAME$ at $2"
    assert placeholders.meta["chrome.placeholders"] == {"1your_name": {"content": "$1", "example": "Cira"}}
    rewritten = json.loads(export_file(read, "json", "chrome", options(locale="fr")).data)
    assert rewritten["placeholders"]["placeholders"] == {"1your_name": {"content": "$1", "example": "Cira"}}


def test_corpus_flutter_arb() -> None:
    read = read_corpus("arb/yubioath-flutter__app_fr.arb", ext="arb")
    assert read.locales == ["fr"]  # @@locale; no source texts in a translation ARB
    assert len(read.units) == 573
    assert sum(1 for u in read.units if not u.translation("fr").translated) == 48  # null values
    assert read.unit("s_save").translation("fr").text == "Enregistrer"
    assert read.unit("q_rename_target").translation("fr").text == "Renommer {label}\u00a0?"
    assert read.unit("q_rename_target").meta["arb.placeholders"] == {"label": {}}
    assert read.unit("rfc4514_examples").translation("fr").text.startswith("Exemples\u00a0:\nCN=exemple de nom")
    assert read.unit("_readme") is None  # @_readme documents nothing translatable
    assert read.headers["locale"] == "fr"


@pytest.mark.parametrize(("folder", "ext"), [("json", "json"), ("arb", "arb")])
def test_every_json_corpus_file_imports_or_explains_why_not(folder: str, ext: str) -> None:
    files = sorted(corpus_path(folder).iterdir())
    assert files
    for path in files:
        try:
            read = read_file(ext, "", path.read_bytes(), ReadOptions(locale="fr"))
        except ParseError as error:  # pragma: no cover - every current file imports
            pytest.fail(f"{path.name}: {error}")
        assert read.units, path.name


@pytest.mark.parametrize("header", [{}, "", {"domain": "messages", "plural_forms": "nplurals=2; plural=(n != 1);"}])
def test_a_jed_domain_whose_header_names_no_language_reads_into_the_locale_given(header) -> None:
    data = json.dumps({"domain": "messages", "locale_data": {"messages": {"": header, "Hello": ["Bonjour"]}}})
    catalogue = read_file("json", "jed", data.encode(), ReadOptions(locale="fr"))
    assert catalogue.unit("Hello").translation("fr").text == "Bonjour"
    with pytest.raises(ParseError, match="does not say its language .no lang in the header of domain 'messages'"):
        read_file("json", "jed", data.encode(), ReadOptions())
