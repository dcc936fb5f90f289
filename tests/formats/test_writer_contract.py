"""The writer contract, generated over every registered writer (see writer_contract.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from formats import plural_rules
from formats.registry import FORMATS, FormatSpec

from .writer_contract import (
    CONSUMERS, NULL_HOLDERS, WRITE_ONLY_CHECKS, Written, catalogue, export, icu_plural_clauses, null_cases,
    null_holding_specs, nulls_in, plural, singular, write_only_specs,
)

WRITE_ONLY = [(spec, check) for spec in write_only_specs() for check in WRITE_ONLY_CHECKS]


@pytest.mark.parametrize("case", WRITE_ONLY, ids=[f"{spec.ext}-{spec.variant or 'default'}-{check.__name__}"
                                                  for spec, check in WRITE_ONLY])
def test_write_only_contract(case: tuple[FormatSpec, Callable[[Written], None]], tmp_path: Path) -> None:
    spec, check = case
    check(Written(spec, tmp_path))


def test_every_write_only_format_has_an_independent_consumer() -> None:
    specs = {(spec.ext, spec.variant) for spec in write_only_specs()}
    assert specs == set(CONSUMERS) and len(specs) == 5


def _missing_everything(locale: str) -> list:
    """Units a file must write without a null: untranslated, blank, a plural with no form in the locale."""
    return [singular("missing", None, locale), singular("blank", "", locale), singular("full", "Plein", locale),
            plural("files", "en"), singular("menu.open", None, locale)]


NULL_CASES = [(spec, case) for spec in null_holding_specs() for case in null_cases()]


@pytest.mark.parametrize("spec, fields", NULL_CASES,
                         ids=[f"{spec.ext}-{spec.variant or 'default'}-{'-'.join(map(str, fields.values())) or 'plain'}"
                              for spec, fields in NULL_CASES])
def test_no_export_holds_a_null(spec: FormatSpec, fields: dict[str, Any], tmp_path: Path) -> None:
    fields = {**fields, "all_locales": spec.multi_locale}
    data = export(catalogue(_missing_everything("fr"), "fr"), spec, "fr", **fields)
    value = NULL_HOLDERS[spec.content_type.split(";")[0]](data, tmp_path)
    assert nulls_in(value) == [], data.decode()


def test_the_null_check_covers_every_json_yaml_and_php_writer() -> None:
    families = {spec.ext for spec in null_holding_specs()}
    assert {"json", "arb", "yml", "php"} <= families


@pytest.mark.parametrize("spec", [spec for spec in FORMATS if spec.writable],
                         ids=[spec.name for spec in FORMATS if spec.writable])
@pytest.mark.parametrize("locale", ["pl", "ru", "ar", "ja"])
def test_every_icu_plural_a_writer_writes_carries_other(spec: FormatSpec, locale: str) -> None:
    units = [plural("files", locale) if locale in ("ru", "ar", "ja") else plural_of(locale), singular("x", "y", locale)]
    data = export(catalogue(units, locale), spec, locale, all_locales=spec.multi_locale)
    text = data.decode("utf-8", "replace")
    for keys in icu_plural_clauses(text):
        assert "other" in keys, (spec.name, keys)


def plural_of(locale: str):
    """A plural unit with a text per form of the locale (Polish: one, few, many)."""
    from formats import Translation, Unit

    forms = {form: f"%d {form} ({locale})" for form in plural_rules(locale).forms}
    return Unit(id="files", plural=True, translations={"en": Translation("%d file", {"one": "%d file",
                                                                                       "other": "%d files"}),
                                                        locale: Translation(next(iter(forms.values())), forms)})


def test_the_icu_clause_finder_sees_a_missing_other() -> None:
    assert icu_plural_clauses("{count, plural, one{a} few{b {n, plural, one{x} other{y}}}}") == [
        ["one", "few"], ["one", "other"]]
