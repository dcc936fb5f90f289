"""Writer contract, generated over every writable format: a template holds the source keys, never the source
translations (service-api §4.3 "only source keys ... not the source translations"). Bilingual formats
(XLIFF, TMX, TS, gettext), whose key side is the source text, declare it (`FormatSpec.bilingual`)."""
from __future__ import annotations

import pytest

from formats import Catalogue, ExportOptions, Translation, Unit, export_file
from formats.registry import FORMATS

SOURCE_TEXT = "Zebrawelcomeqx"


def catalogue() -> Catalogue:
    units = [Unit(id="zulu.title", translations={"en": Translation(SOURCE_TEXT), "fr": Translation("Bienvenue")}),
             Unit(id="apple", plural=True, translations={
                 "en": Translation("Zebraapple", plurals={"one": "Zebraapple", "other": "Zebraapples"}),
                 "fr": Translation("pomme", plurals={"one": "pomme", "other": "pommes"})})]
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units, project="test")


@pytest.mark.parametrize("spec", [spec for spec in FORMATS if spec.writable and not spec.bilingual],
                         ids=lambda spec: spec.name)
def test_a_template_holds_no_source_translation(spec) -> None:
    data = export_file(catalogue(), spec.ext, spec.variant, ExportOptions(template=True, index="id")).data
    for encoding in ("utf-8", "utf-16"):
        assert SOURCE_TEXT.encode(encoding)[2 if encoding == "utf-16" else 0:] not in data
        assert b"Zebraapple" not in data
