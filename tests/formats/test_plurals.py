"""Plural rules from CLDR (Babel): forms, gettext equations (checked by msgfmt), locale names."""
from __future__ import annotations

from pathlib import Path

import pytest
from babel import Locale
from babel.localedata import locale_identifiers

from formats import locale_display_name, plural_rules
from formats.plurals import categories_for_indices, compile_equation, map_plural_forms
from tests.support import require_tool

from .samples import run_tool


@pytest.mark.parametrize(
    ("code", "length", "forms"),
    [
        ("en", 2, ["one", "other"]),
        ("fr", 2, ["one", "other"]),
        ("ru", 3, ["one", "few", "many"]),
        ("ja", 1, ["other"]),
        ("ar", 6, ["zero", "one", "two", "few", "many", "other"]),
        ("pl", 3, ["one", "few", "many"]),
        ("he", 3, ["one", "two", "other"]),  # Babel's gettext table says 2: CLDR wins
        ("cy", 6, ["zero", "one", "two", "few", "many", "other"]),
    ],
)
def test_plural_forms_and_lengths(code: str, length: int, forms: list[str]) -> None:
    rules = plural_rules(code)
    assert (rules.length, rules.forms) == (length, forms)


def test_english_equation_is_the_familiar_one() -> None:
    assert plural_rules("en").equation == "n != 1"
    assert plural_rules("ja").equation == "0"


@pytest.mark.parametrize("code", ["fr_FR", "fr-FR", "FR-fr"])
def test_region_spellings_are_accepted(code: str) -> None:
    assert plural_rules(code) == plural_rules("fr")


def test_unknown_locale_gets_english_like_rules_and_keeps_its_code_as_name() -> None:
    assert plural_rules("x-pseudo").forms == ["one", "other"]
    assert locale_display_name("x-pseudo") == "x-pseudo"


@pytest.mark.parametrize(
    ("code", "name"),
    [("fr-FR", "French (France)"), ("fr_FR", "French (France)"), ("en-GB-x-abcde", "English (United Kingdom)"),
     ("pt-BR", "Portuguese (Brazil)"), ("zh-Hans", "Chinese (Simplified)"), ("ja", "Japanese")],
)
def test_locale_display_name(code: str, name: str) -> None:
    assert locale_display_name(code) == name


def test_every_cldr_locale_equation_picks_the_cldr_category_for_0_to_1000() -> None:
    # One locale per (language, CLDR rule set): regional variants share both, and so their equation.
    representatives = {}
    for identifier in locale_identifiers():
        locale = Locale.parse(identifier)
        representatives.setdefault((locale.language, tuple(sorted(locale.plural_form.rules.items()))), identifier)
    assert len(representatives) > 100
    for identifier in representatives.values():
        rules = plural_rules(identifier)
        cldr = Locale.parse(identifier).plural_form
        equation = compile_equation(rules.equation)
        assert equation is not None, identifier
        mismatches = [n for n in range(1001) if rules.forms[equation(n)] != cldr(n)]
        assert not mismatches, f"{identifier}: {rules.equation} wrong for {mismatches[:5]}"


def test_equations_are_accepted_by_msgfmt(tmp_path: Path) -> None:
    msgfmt = require_tool("msgfmt")
    codes = sorted({Locale.parse(i).language for i in locale_identifiers()})
    for code in codes:
        rules = plural_rules(code)
        po = tmp_path / f"{code}.po"
        forms = "".join(f'msgstr[{i}] "x"\n' for i in range(rules.length))
        po.write_text(
            'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            f'"Plural-Forms: {rules.header}\\n"\n\nmsgid "a"\nmsgid_plural "b"\n{forms}',
            encoding="utf-8",
        )
        result = run_tool(msgfmt, "-c", "-o", "/dev/null", po)
        assert result.returncode == 0, f"{code}: {rules.header}\n{result.stderr}"


def test_equation_parser_uses_c_precedence() -> None:
    # In C, "!" binds tighter than "==": !n == 0 is (!n) == 0, true for n != 0.
    equation = compile_equation("!n == 0")
    assert [equation(n) for n in (0, 1, 5)] == [0, 1, 1]
    assert compile_equation("n %") is None
    assert compile_equation("n > 1 ? 1 : 0")(2) == 1


def test_categories_for_indices_follow_the_file_equation() -> None:
    russian = "n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2"
    assert categories_for_indices("ru", 3, russian) == ["one", "few", "many"]
    assert categories_for_indices("en", 2, "n == 1 ? 1 : 0") == ["other", "one"]
    assert categories_for_indices("fr", 2, None) == ["one", "other"]
    assert categories_for_indices("he", 2, "n != 1") == ["one", "other"]


def test_map_plural_forms_between_locales() -> None:
    english = {"one": "%d file", "other": "%d files"}
    assert map_plural_forms(english, ["one", "few", "many"]) == {"one": "%d file", "few": "%d files", "many": "%d files"}
    assert map_plural_forms(english, ["other"]) == {"other": "%d files"}
    assert map_plural_forms({}, ["one"]) == {}
