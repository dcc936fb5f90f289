"""Property-based round trips: any text (control characters, quotes, backslashes, any script) survives."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from formats import Catalogue, ReadOptions, Translation, Unit, export_file, read_file
from formats.icu import from_message, is_valid_message

from .samples import options

# Any Unicode text except surrogates (not encodable) and NUL (gettext's string terminator).
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=40)
KEY = st.text(st.characters(categories=("Ll", "Lu", "Nd"), include_characters="_-"), min_size=1, max_size=12)


def roundtrip(ext: str, variant: str, key: str, text: str, context: str = "") -> Translation:
    """Export one unit indexed by ID and read it back; returns its French translation."""
    catalogue = Catalogue(locales=["en", "fr"], units=[
        Unit(id=key, context=context, translations={"en": Translation("source"), "fr": Translation(text)}),
    ])
    exported = export_file(catalogue, ext, variant, options(locale="fr", index="id", all_locales=ext == "csv"))
    read = read_file(ext, variant, exported.data, ReadOptions(locale="fr", index="id"))
    assert len(read.units) == 1
    return read.units[0].translation("fr")


@settings(max_examples=150, deadline=None)
@given(key=KEY, text=TEXT, context=TEXT)
def test_any_text_and_context_survive_po(key: str, text: str, context: str) -> None:
    assert roundtrip("po", "", key, text, context).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_mo(key: str, text: str) -> None:
    assert roundtrip("mo", "", key, text).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_json_and_arb(key: str, text: str) -> None:
    assert roundtrip("json", "", key, text).text == text
    # ARB text is ICU: a text already written in ICU quoting that only makes literal braces reads back as the
    # text it shows (`'{'` -> `{`); every other text comes back as it was
    expected = from_message(text)
    assert roundtrip("arb", "", key, text).text == expected
    assert expected == text or is_valid_message(text)


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_csv(key: str, text: str) -> None:
    assert roundtrip("csv", "", key, text).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_every_yaml_variant(key: str, text: str) -> None:
    for variant in ("", "nested", "rails"):
        assert roundtrip("yml", variant, key, text).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT.filter(lambda text: "|" not in text))  # a pipe is Symfony's plural separator
def test_any_text_without_pipes_survives_symfony_yaml(key: str, text: str) -> None:
    assert roundtrip("yml", "symfony", key, text).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_php_array_codeigniter_and_constants(key: str, text: str) -> None:
    for variant in ("", "codeigniter", "constants"):
        assert roundtrip("php", variant, key, text).text == text


@settings(max_examples=100, deadline=None)
@given(key=KEY, text=TEXT)
def test_any_text_survives_java_properties_and_ini(key: str, text: str) -> None:
    assert roundtrip("properties", "", key, text).text == text
    assert roundtrip("ini", "", key, text).text == text
