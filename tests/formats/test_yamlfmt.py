"""YAML (simple, nested, rails, symfony): round trips, PyYAML + Ruby Psych, corpus, hostile input."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from formats import Catalogue, ParseError, ReadOptions, Translation, Unit, export_file, read_file
from formats.yamlfmt import quote
from tests.support import corpus_path

from .samples import PLURAL_LOCALES, export_text, options, plural_texts, rich_catalogue
from .validators import psych_load


VARIANTS = ("", "nested", "rails", "symfony")
SPECIALS = ["yes", "no", "No", "~", "null", "true", "On", "off", ":", "a: b", "key:", "#hash", "a #b", "%d files",
            "@user", "`tick`", "!important", "&anchor", "*alias", "- dash", "? question", "[list]", "{map}",
            "'single'", '"double"', "1.0", "012", "0x1F", "2024-05-06", ".inf", "", " leading", "trailing ",
            "tab\there", "|pipe", ">fold", "=", "<<", "\u2028line sep", "nel\x85", "bom\ufeff", "\x07bell",
            "Line one\nLine two\n", "Line one\nLine two", "\n\nstarts with breaks", "ends with breaks\n\n",
            "  indented\nblock", "trailing space \nnext", "crlf\r\nline", "émoji 🎉 日本語"]


def special_catalogue() -> Catalogue:
    """One unit per YAML special, and a plural unit, translated into French."""
    units = [Unit(id=f"special{number}", translations={"en": Translation("x"), "fr": Translation(text)})
             for number, text in enumerate(SPECIALS)]
    units.append(Unit(id="yes", translations={"en": Translation("a key that YAML 1.1 reads as true"),
                                              "fr": Translation("une clé")}))
    units.append(Unit(id="untouched", translations={"en": Translation("never translated")}))
    units.append(Unit(id="files", plural=True, translations={"fr": Translation("1", plural_texts("fr"))}))
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units)


def save(tmp_path: Path, data: bytes, name: str = "export.yml") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- independent readers ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_export_with_yaml_specials_reads_the_same_in_pyyaml_and_ruby_psych(tmp_path: Path, variant: str) -> None:
    data = export_file(special_catalogue(), "yml", variant, options(locale="fr")).data
    path = save(tmp_path, data)
    ours = yaml.safe_load(data)
    assert psych_load(path) == ours
    texts = ours["fr"] if variant in ("rails", "nested") else ours  # nested: the locale root (issue #26 item 6)
    for number, text in enumerate(SPECIALS):
        assert texts[f"special{number}"] == text, data.decode()
    assert texts["yes"] == "une clé"  # the key stays the text "yes"
    assert "untouched" not in texts  # untranslated: left out, never a null (`~`)
    expected_forms = plural_texts("fr")
    assert texts["files"] == ("|".join(expected_forms.values()) if variant == "symfony" else expected_forms)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_rich_export_passes_pyyaml_and_psych(tmp_path: Path, variant: str, locale: str) -> None:
    data = export_file(rich_catalogue(), "yml", variant, options(locale=locale)).data
    assert psych_load(save(tmp_path, data)) == yaml.safe_load(data)


def test_rails_all_locales_has_a_root_per_locale_and_the_yaml_prefix(tmp_path: Path) -> None:
    data = export_file(rich_catalogue(), "yml", "rails", options(all_locales=True, yaml_prefix="app")).data
    document = psych_load(save(tmp_path, data))
    assert document == yaml.safe_load(data)
    assert list(document) == list(PLURAL_LOCALES)
    assert document["fr"]["app"]["menu"]["open"] == "[fr] Open"
    assert document["ru"]["app"]["files"] == plural_texts("ru")
    assert document["en"]["app"]["files"] == {"one": "%d file", "other": "%d files"}
    read = read_file("yml", "rails", data, ReadOptions())
    assert read.locales == list(PLURAL_LOCALES)
    assert read.unit("app.files").translation("ar").plurals == plural_texts("ar")


def test_single_locale_rails_export_has_the_locale_root() -> None:
    text = export_text(rich_catalogue(), "yml", "rails", locale="pl", no_comments=True)
    assert text.startswith("pl:\n  greeting: ")


def test_simple_yaml_keeps_dotted_keys_flat_and_nested_expands_them() -> None:
    simple = yaml.safe_load(export_text(rich_catalogue(), "yml", "", locale="fr"))
    nested = yaml.safe_load(export_text(rich_catalogue(), "yml", "nested", locale="fr"))
    assert simple["menu.open"] == "[fr] Open"
    assert nested["fr"]["menu"] == {"open": "[fr] Open", "close": "[fr] Close"}  # under the locale root


def test_nested_yaml_has_the_locale_then_the_namespace_as_roots_and_reads_back_into_that_locale() -> None:
    """[obs LEG-conv] `fr-FR:` / `  test:` / `    sample: échantillon` (issue #26 item 6)."""
    text = export_text(rich_catalogue(), "yml", "nested", locale="fr", namespace="test")
    assert yaml.safe_load(text)["fr"]["test"]["menu"]["open"] == "[fr] Open"
    assert "\nfr:\n  test:\n    # Shown on the home page\n    greeting: " in text
    read = read_file("yml", "nested", text.encode(), ReadOptions(namespace="test"))
    assert read.locales == ["fr"]
    assert read.unit("menu.open").translation("fr").text == "[fr] Open"
    assert read.unit("greeting").notes == "Shown on the home page"
    assert read.unit("files").translation("fr").plurals == plural_texts("fr")


def test_notes_are_comments_above_their_key_and_read_back() -> None:
    text = export_text(rich_catalogue(), "yml", "nested", locale="fr")
    assert "  # Shown on the home page\n  greeting: " in text
    assert read_file("yml", "nested", text.encode(), ReadOptions(locale="fr")).unit("greeting").notes == \
        "Shown on the home page"


def test_multi_line_texts_are_literal_blocks_when_exact() -> None:
    text = export_text(special_catalogue(), "yml", "", locale="fr", no_comments=True)
    assert 'special42: |\n  Line one\n  Line two\n' in text
    assert 'special43: |-\n  Line one\n  Line two\n' in text


@pytest.mark.parametrize("text", ["yes", "No", "~", ":", "%s", "@x", "a: b", "1", "", "null", "y"])
def test_yaml_specials_are_quoted(text: str) -> None:
    assert quote(text).startswith('"')
    assert yaml.safe_load(f"k: {quote(text)}")["k"] == text


@pytest.mark.parametrize("text", ["Bonjour", "Hello %s", "Prix min", "l'été", "日本語"])
def test_plain_texts_stay_plain(text: str) -> None:
    assert quote(text) == text


# --- reading ---------------------------------------------------------------------------------------


def test_reading_keeps_scalars_as_written() -> None:
    data = b"a: yes\nb: 1.50\nc: ~\nd: ''\ne: 2024-05-06\nf: >\n  folded\n  text\n"
    read = read_file("yml", "", data, ReadOptions(locale="fr"))
    texts = {unit.id: unit.translation("fr").text for unit in read.units}
    assert texts == {"a": "yes", "b": "1.50", "c": None, "d": "", "e": "2024-05-06", "f": "folded text\n"}


def test_lists_fold_into_indexed_keys_and_merge_keys_apply() -> None:
    data = b"base: &base\n  ok: OK\n  no: Non\nform:\n  <<: *base\n  no: Pas du tout\ndays: [Lundi, Mardi]\n"
    read = read_file("yml", "", data, ReadOptions(locale="fr"))
    texts = {unit.id: unit.translation("fr").text for unit in read.units}
    assert texts["form.ok"] == "OK" and texts["form.no"] == "Pas du tout"
    assert texts["days.0"] == "Lundi" and texts["days.1"] == "Mardi"


def test_symfony_reads_pipe_plurals_with_intervals_and_escaped_pipes() -> None:
    data = "apples: '{0} Aucune pomme|{1} Une pomme|]1,Inf[ %count% pommes'\nfiles: 'un|des'\nor: 'a||b'\n"
    read = read_file("yml", "symfony", data.encode(), ReadOptions(locale="fr"))
    assert read.unit("files").plural
    assert read.unit("files").translation("fr").plurals == {"one": "un", "other": "des"}
    assert not read.unit("or").plural
    assert not read.unit("apples").plural  # three parts: more than French has forms, kept as written


@pytest.mark.parametrize("payload, message", [
    (b"a: !!python/object/apply:os.system ['echo pwned']\n", "tag !!python/object/apply:os.system"),
    (b"a: !!python/name:os.system\n", "tag !!python/name:os.system"),
    (b"a: !ruby/object:Gem::Installer\n  i: x\n", "tag !ruby/object:Gem::Installer"),
    (b"a: !!binary aGVsbG8=\n", "tag !!binary"),
    (b"a: !!set {x, y}\n", "tag !!set"),
    (b"a: [1\n", "invalid YAML"),
    (b"a: 1\n---\nb: 2\n", "more than one YAML document"),
    (b"- a\n- b\n", "expected a YAML mapping"),
    (b"? [a, b]\n: c\n", "mapping key must be a plain value"),
    (b"a: \xff\n", "not valid UTF-8"),
])
def test_hostile_or_broken_yaml_is_a_format_error(payload: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        read_file("yml", "", payload, ReadOptions(locale="fr"))


def billion_laughs(levels: int = 12) -> bytes:
    """Each level refers to the previous one ten times: 10**levels strings once expanded."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return ("\n".join(lines) + "\n").encode()


def test_alias_bomb_is_refused_quickly() -> None:
    started = time.monotonic()
    with pytest.raises(ParseError, match="aliases expand to too many nodes"):
        read_file("yml", "", billion_laughs(), ReadOptions(locale="fr"))
    assert time.monotonic() - started < 30  # a generous bound: the point is "not a hang"


def test_a_ten_megabyte_line_is_refused() -> None:
    with pytest.raises(ParseError, match="line 1: line is 10485763 characters long"):
        read_file("yml", "", b"a: " + b"x" * (10 << 20), ReadOptions(locale="fr"))


# --- corpus ----------------------------------------------------------------------------------------


def corpus(name: str, variant: str = "") -> Catalogue:
    return read_file("yml", variant, corpus_path(f"yml/{name}").read_bytes(), ReadOptions(locale="fr"))


def test_corpus_symfony_nested_file_has_its_16_texts() -> None:
    read = corpus("SyliusElasticsearchPlugin__messages.fr.yml", "symfony")
    assert len(read.units) == 16
    assert read.unit("bitbag_sylius_elasticsearch_plugin.ui.search_box.query.placeholder").translation("fr").text \
        == "Rechercher des produits..."


def test_corpus_rails_devise_file_reads_its_locale_root() -> None:
    data = corpus_path("yml/alchemy-devise__config_locales_devise.fr.yml").read_bytes()
    read = read_file("yml", "rails", data, ReadOptions())
    assert read.locales == ["fr"]
    assert len(read.units) == 86  # 88 leaves under fr:, three of them the forms of one plural message
    assert read.unit("devise.shared.minimum_password_length").translation("fr").plurals == {
        "one": "(%{count} caractère au moins)", "many": "(%{count} caractères au moins)",
        "other": "(%{count} caractères au moins)",
    }
    assert read.unit("devise.failure.invalid").translation("fr").text == "%{authentication_keys} ou mot de passe incorrect."
    assert read_file("yml", "", data, ReadOptions()).locales == ["fr"]  # a single locale root is detected


def test_corpus_jitsi_mixed_flat_and_nested_keys() -> None:
    read = corpus("jitsi-admin__form.fr.yml")
    assert len(read.units) == 175
    assert read.unit("label.allowMaybeOption").translation("fr").text == "Proposer l'option « sous réserve »"
    assert read.unit("option.monday").translation("fr").text == "Lundi"

