"""Placeholder detection and conversion between php, java, objc, python and ICU styles."""
from __future__ import annotations

import pytest

from formats.printf import STYLES, convert_printf, detect_printf, placeholders


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("Hello %s", "php"),
        ("%1$s and %2$d", "php"),
        ("Hello %@", "objc"),
        ("%1$@ has %2$ld", "objc"),
        ("%(name)s has %(count)d", "python"),
        ("{0} has {1, number, integer}", "icu"),
        ("Hi {name}", "icu"),
        ("{count, plural, one{# file} other{# files}}", "icu"),
        ("No placeholders here", ""),
        ("50% discount, 100 % sure", ""),  # a space flag is not accepted: prose percentages stay text
    ],
)
def test_detect_printf(text: str, style: str) -> None:
    assert detect_printf(text) == style


# One meaning written in every style: converting from any style to any other gives that style's form.
EQUIVALENTS = [
    {"php": "Hello %s, you have %d new", "java": "Hello %s, you have %d new", "objc": "Hello %@, you have %d new",
     "python": "Hello %s, you have %d new", "icu": "Hello {0}, you have {1, number, integer} new"},
    {"php": "%2$s by %1$s", "java": "%2$s by %1$s", "objc": "%2$@ by %1$@",
     "python": "%(2)s by %(1)s", "icu": "{1} by {0}"},
    {"php": "100%% of %.2f", "java": "100%% of %.2f", "objc": "100%% of %.2f",
     "python": "100%% of %.2f", "icu": "100% of {0, number}"},
]


@pytest.mark.parametrize("row", range(len(EQUIVALENTS)))
@pytest.mark.parametrize("source", ["php", "java", "objc", "python"])
@pytest.mark.parametrize("target", STYLES)
def test_printf_styles_convert_into_each_other(row: int, source: str, target: str) -> None:
    texts = EQUIVALENTS[row]
    assert convert_printf(texts[source], source, target) == texts[target]


@pytest.mark.parametrize(
    ("icu", "target", "expected"),
    [
        ("{0} has {1, number, integer} items", "php", "%1$s has %2$d items"),
        ("{0} has {1, number, integer} items", "java", "%1$s has %2$d items"),
        ("{0} has {1, number, integer} items", "objc", "%1$@ has %2$d items"),
        ("{0} has {1, number, integer} items", "python", "%s has %d items"),
        ("{1} by {0}", "php", "%2$s by %1$s"),
        ("{name} has {count, number, integer}", "python", "%(name)s has %(count)d"),
        ("{name} has {count, number, integer}", "php", "%1$s has %2$d"),
        ("It''s '{'literal'}' 100%", "php", "It's {literal} 100%%"),
        ("{n, plural, one{# file} other{# files}} in {0}", "php", "{n, plural, one{# file} other{# files}} in %1$s"),
    ],
)
def test_icu_converts_to_positional_printf(icu: str, target: str, expected: str) -> None:
    assert convert_printf(icu, "icu", target) == expected


def test_positional_printf_and_icu_round_trip() -> None:
    assert convert_printf(convert_printf("%1$s sent %2$d", "php", "icu"), "icu", "php") == "%1$s sent %2$d"
    assert convert_printf(convert_printf("{0} sent {1}", "icu", "java"), "java", "icu") == "{0} sent {1}"


def test_literal_braces_and_apostrophes_are_quoted_for_icu() -> None:
    assert convert_printf("Use {braces} for %s, it's fine", "php", "icu") == "Use '{'braces'}' for {0}, it's fine"
    assert convert_printf("l'%s", "php", "icu") == "l''{0}"  # an apostrophe before a brace must be doubled


def test_named_python_placeholders_number_by_first_appearance() -> None:
    assert convert_printf("%(a)s %(b)s %(a)s", "python", "php") == "%1$s %2$s %1$s"


def test_java_newline_directive_becomes_a_newline_elsewhere() -> None:
    assert convert_printf("One%nTwo %s", "java", "php") == "One\nTwo %s"


def test_objc_length_modifiers_only_survive_in_objc() -> None:
    assert convert_printf("%lu items", "objc", "php") == "%u items"
    assert convert_printf("%lu items", "objc", "java") == "%d items"
    assert convert_printf("%lu items", "objc", "objc") == "%lu items"


def test_text_without_placeholders_is_unchanged() -> None:
    assert convert_printf("Nothing {here} 100%", "", "icu") == "Nothing {here} 100%"
    assert convert_printf("", "php", "icu") == ""


def test_placeholders_lists_positions_names_and_kinds() -> None:
    found = placeholders("%2$s has %(n)d, %.1f", "python")
    assert [(p.name, p.kind, p.conversion) for p in found] == [("n", "integer", "d"), (None, "float", "f")]
    found = placeholders("%2$s and %1$05d", "php")
    assert [(p.position, p.kind, p.spec) for p in found] == [(2, "string", ""), (1, "integer", "05")]
    found = placeholders("{0} {who} {n, number}", "icu")
    assert [(p.position, p.name, p.kind) for p in found] == [(1, None, "string"), (None, "who", "string"), (None, "n", "float")]
