"""The round-trip contract every readable and writable format passes: write a catalogue, read it back.

The checks are generated over the registry (`test_contract.py` parametrises them over every spec with a
reader and a writer), so a new format cannot skip them; what each check expects follows the spec's
declared `Capabilities`, and a check skips only when its feature is declared unsupported.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

import pytest

from formats import Catalogue, ExportOptions, ReadOptions, Translation, Unit, export_file, read_file, restore_keys
from formats.registry import FORMATS, FormatSpec

EXPORTED_AT = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)

# Plural texts per locale, one per CLDR form the locale uses.
PLURAL_TEXTS = {
    "en": {"one": "%d file", "other": "%d files"},
    "ja": {"other": "%d 個のファイル"},
    "ru": {"one": "%d файл", "few": "%d файла", "many": "%d файлов"},
    "ar": {
        "zero": "لا ملفات", "one": "ملف واحد", "two": "ملفان", "few": "%d ملفات", "many": "%d ملفًا", "other": "%d ملف",
    },
}
TRICKY_TEXT = 'Ça "marche" \\ très bien: C:\\dir\\n — 日本語 🎉 \'apostrophe\' {brace} <b>&amp;</b>'


def round_trip_specs() -> list[FormatSpec]:
    """Every registered spec that can be both written and read."""
    return [spec for spec in FORMATS if spec.readable and spec.writable]


def unit(unit_id: str, target: str | None, locale: str = "fr", source: str | None = None, **fields) -> Unit:
    """A singular unit with a source (en) text and an optional target translation."""
    translations = {"en": Translation(source if source is not None else f"Source of {unit_id}")}
    if target is not None:
        translations[locale] = Translation(target)
    return Unit(id=unit_id, translations=translations, **fields)


def catalogue(units: list[Unit], locale: str = "fr") -> Catalogue:
    """A catalogue with English source and one target locale."""
    return Catalogue(source_locale="en", locales=["en", locale], units=units, project="Contract")


class RoundTrip:
    """One spec under test: writes (indexed by ID) and reads back, and knows what the spec declared."""

    def __init__(self, spec: FormatSpec) -> None:
        self.spec = spec
        self.capabilities = spec.capabilities
        # a template holds keys only: the checks then look at the units, not at translations
        self.translations = not spec.template_only

    def __call__(self, original: Catalogue, locale: str = "fr") -> Catalogue:
        options = ExportOptions(
            locale=locale, index="id", project_name="Contract", exported_by="Tester", exported_at=EXPORTED_AT,
            all_locales=self.spec.multi_locale,
        )
        exported = export_file(original, self.spec.ext, self.spec.variant, options)
        read_options = ReadOptions(locale=locale, index="id", source_locale="en", namespace="Contract")
        read = read_file(self.spec.ext, self.spec.variant, exported.data, read_options)
        # as an import does: keys the format rewrote (PHP constant names) go back to the IDs they came from
        restore_keys(read, self.spec.ext, self.spec.variant, [unit.id for unit in original.units])
        return read

    def require(self, capability: str) -> None:
        """Skip the check when the spec declares it cannot hold the feature."""
        if capability == "translations":
            if not self.translations:
                pytest.skip(f"{self.spec.name} is a template: it holds no translations")
        elif not getattr(self.capabilities, capability):
            pytest.skip(f"{self.spec.name} declares no {capability} capability")

    def target(self, read: Catalogue, unit_id: str, locale: str = "fr") -> Translation:
        """The translation of a unit read back, failing clearly when the unit is missing."""
        found = read.unit(unit_id)
        assert found is not None, f"unit {unit_id!r} missing after round trip; got {[u.id for u in read.units]}"
        return found.translation(locale)


# --- checks ------------------------------------------------------------------------------------

def plain_texts_survive(trip: RoundTrip) -> None:
    read = trip(catalogue([unit("greeting", "Bonjour"), unit("farewell", "Au revoir")]))
    ids = [u.id for u in read.units]
    if trip.capabilities.ordered:
        assert ids == ["greeting", "farewell"]
    else:
        assert sorted(ids) == ["farewell", "greeting"]
    if trip.translations:
        assert trip.target(read, "greeting").text == "Bonjour"
        assert trip.target(read, "farewell").text == "Au revoir"


def unicode_quotes_and_backslashes_survive(trip: RoundTrip) -> None:
    trip.require("translations")
    read = trip(catalogue([unit("tricky", TRICKY_TEXT)]))
    assert trip.target(read, "tricky").text == TRICKY_TEXT


def newlines_and_tabs_survive(trip: RoundTrip) -> None:
    trip.require("translations")
    text = "Line one\nLine two\n\tindented\n"
    read = trip(catalogue([unit("multiline", text)]))
    assert trip.target(read, "multiline").text == text


def blank_translation_stays_blank(trip: RoundTrip) -> None:
    trip.require("translations")
    trip.require("blank")
    read = trip(catalogue([unit("blank", ""), unit("other", "Autre")]))
    translation = trip.target(read, "blank")
    assert translation.text == "" and translation.translated


def untranslated_unit_stays_untranslated(trip: RoundTrip) -> None:
    trip.require("untranslated")
    read = trip(catalogue([unit("missing", None), unit("present", "Présent")]))
    assert not trip.target(read, "missing").translated
    if trip.translations:
        assert trip.target(read, "present").text == "Présent"


def keys_with_dots_survive(trip: RoundTrip) -> None:
    trip.require("dotted_keys")
    units = [unit("menu.file.open", "Ouvrir"), unit("menu.file.close", "Fermer"), unit("menu.edit", "Édition")]
    read = trip(catalogue(units))
    assert sorted(u.id for u in read.units) == ["menu.edit", "menu.file.close", "menu.file.open"]
    if trip.translations:
        assert trip.target(read, "menu.file.open").text == "Ouvrir"
        assert trip.target(read, "menu.edit").text == "Édition"


def context_survives(trip: RoundTrip) -> None:
    trip.require("context")
    read = trip(catalogue([unit("open", "Ouvrir", context="File menu"), unit("save", "Enregistrer")]))
    assert read.unit("open").context == "File menu"
    assert read.unit("save").context == ""
    if trip.translations:
        assert trip.target(read, "open").text == "Ouvrir"


def notes_survive(trip: RoundTrip) -> None:
    trip.require("notes")
    read = trip(catalogue([unit("title", "Titre", notes="Shown in the window title bar")]))
    assert read.unit("title").notes == "Shown in the window title bar"


def flags_survive(trip: RoundTrip) -> None:
    trip.require("translations")
    trip.require("flags")
    units = [unit("draft", "Brouillon"), unit("wrong", "Faux"), unit("fine", "Bien")]
    units[0].translations["fr"].flag = "fuzzy"
    units[1].translations["fr"].flag = "incorrect"
    read = trip(catalogue(units))
    assert trip.target(read, "draft").flag == "fuzzy"
    assert trip.target(read, "wrong").flag == "incorrect"
    assert trip.target(read, "fine").flag == ""


def translator_comment_survives(trip: RoundTrip) -> None:
    trip.require("translations")
    trip.require("comments")
    units = [unit("hello", "Salut")]
    units[0].translations["fr"].comment = "Informal on purpose"
    read = trip(catalogue(units))
    assert trip.target(read, "hello").comment == "Informal on purpose"


def references_survive(trip: RoundTrip) -> None:
    trip.require("references")
    refs = ["src/app.php:12", "templates/home.twig:3"]
    read = trip(catalogue([unit("home", "Accueil", references=list(refs))]))
    assert read.unit("home").references == refs


def _plural_round_trip(trip: RoundTrip, locale: str) -> None:
    """A plural unit in `locale` keeps every CLDR form."""
    trip.require("plurals")
    texts = PLURAL_TEXTS[locale]
    plural_unit = Unit(
        id="files", plural=True,
        translations={
            "en": Translation(PLURAL_TEXTS["en"]["one"], dict(PLURAL_TEXTS["en"])),
            locale: Translation(next(iter(texts.values())), dict(texts)),
        },
    )
    read = trip(catalogue([plural_unit, unit("single", "x", locale=locale)], locale), locale)
    assert not read.unit("single").plural
    if not trip.translations:
        assert read.unit("files").plural
        return
    translation = trip.target(read, "files", locale)
    if len(texts) > 1 or trip.capabilities.single_form_plurals:
        assert read.unit("files").plural
        assert translation.plurals == texts
    else:  # the format cannot tell a one-form plural from a singular text
        assert translation.text == next(iter(texts.values()))


def plural_with_one_form_japanese(trip: RoundTrip) -> None:
    _plural_round_trip(trip, "ja")


def plural_with_two_forms_english(trip: RoundTrip) -> None:
    _plural_round_trip(trip, "en")


def plural_with_three_forms_russian(trip: RoundTrip) -> None:
    _plural_round_trip(trip, "ru")


def plural_with_six_forms_arabic(trip: RoundTrip) -> None:
    _plural_round_trip(trip, "ar")


CHECKS: tuple[Callable[[RoundTrip], None], ...] = (
    plain_texts_survive, unicode_quotes_and_backslashes_survive, newlines_and_tabs_survive,
    blank_translation_stays_blank, untranslated_unit_stays_untranslated, keys_with_dots_survive,
    context_survives, notes_survive, flags_survive, translator_comment_survives, references_survive,
    plural_with_one_form_japanese, plural_with_two_forms_english, plural_with_three_forms_russian,
    plural_with_six_forms_arabic,
)
