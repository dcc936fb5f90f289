"""Writer contract, generated over every writable format: a plural form is never dropped (issue #26 item 2).
Formats with plural syntax write the forms as plurals; the others write each form as an entry of its own."""
from __future__ import annotations

import pytest

from formats import Catalogue, ExportOptions, ReadOptions, Translation, Unit, export_file, read_file
from formats.registry import FORMATS

FORMS = {"one": "Qpomme", "other": "Qpommes"}


def catalogue() -> Catalogue:
    units = [Unit(id="apple", plural=True, translations={
        "en": Translation("Qapple", plurals={"one": "Qapple", "other": "Qapples"}),
        "fr": Translation("Qpomme", plurals=dict(FORMS))})]
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units, project="test")


def exported(spec) -> bytes:
    options = ExportOptions(locale="fr", all_locales=spec.multi_locale, index="id")
    return export_file(catalogue(), spec.ext, spec.variant, options).data


@pytest.mark.parametrize("spec", [spec for spec in FORMATS if spec.writable and not spec.template_only],
                         ids=lambda spec: spec.name)
def test_every_plural_form_is_written(spec) -> None:
    data = exported(spec)
    for text in FORMS.values():
        assert any(text.encode(encoding) in data for encoding in ("utf-8", "utf-16-le", "utf-16-be")), text


@pytest.mark.parametrize("spec", [spec for spec in FORMATS if spec.writable and spec.readable
                                  and not spec.capabilities.plurals], ids=lambda spec: spec.name)
def test_without_plural_syntax_each_form_reads_back_as_a_unit_of_its_own(spec) -> None:
    read = read_file(spec.ext, spec.variant, exported(spec), ReadOptions(locale="fr", index="id"))
    assert sorted(unit.translation("fr").text or "" for unit in read.units) == sorted(FORMS.values())
    assert not any(unit.plural for unit in read.units)
