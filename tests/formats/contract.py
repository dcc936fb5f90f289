"""The round-trip contract every readable format passes: write a catalogue, read it back, same units.

A format's test module subclasses `FormatContract`, names its ext/variant and declares what the
format cannot hold; each check below skips only when its feature is declared unsupported.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from formats import Catalogue, ExportOptions, ReadOptions, Translation, Unit, export_file, read_file

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


def unit(unit_id: str, target: str | None, locale: str = "fr", source: str | None = None, **fields) -> Unit:
    """A singular unit with a source (en) text and an optional target translation."""
    translations = {"en": Translation(source if source is not None else f"Source of {unit_id}")}
    if target is not None:
        translations[locale] = Translation(target)
    return Unit(id=unit_id, translations=translations, **fields)


def catalogue(units: list[Unit], locale: str = "fr") -> Catalogue:
    """A catalogue with English source and one target locale."""
    return Catalogue(source_locale="en", locales=["en", locale], units=units, project="Contract")


class FormatContract:
    """Shared round-trip checks. Subclasses set ext/variant and the capability flags."""

    ext: str = ""
    variant: str = ""
    multi_locale = False
    supports_context = True
    supports_notes = True
    supports_flags = True
    supports_plurals = True
    supports_untranslated = True  # an untranslated unit survives as a unit without translation
    supports_blank = True  # "" is kept apart from untranslated
    supports_dotted_keys = True
    supports_comments = False  # translator comments
    supports_references = False
    single_form_plurals_detectable = True  # a plural with one form (ja) reads back as plural
    preserves_order = True  # units come back in the order written (MO sorts them)

    # --- helpers --------------------------------------------------------------------------------

    def roundtrip(self, original: Catalogue, locale: str = "fr") -> Catalogue:
        """Write the catalogue in this format (indexed by ID) and read it back."""
        options = ExportOptions(
            locale=locale, index="id", project_name="Contract", exported_by="Tester", exported_at=EXPORTED_AT,
            all_locales=self.multi_locale,
        )
        exported = export_file(original, self.ext, self.variant, options)
        read_options = ReadOptions(locale=locale, index="id", source_locale="en")
        return read_file(self.ext, self.variant, exported.data, read_options)

    def target(self, read: Catalogue, unit_id: str, locale: str = "fr") -> Translation:
        """The translation of a unit read back, failing clearly when the unit is missing."""
        found = read.unit(unit_id)
        assert found is not None, f"unit {unit_id!r} missing after round trip; got {[u.id for u in read.units]}"
        return found.translation(locale)

    def require(self, capability: str) -> None:
        """Skip this check when the format declares it cannot hold the feature."""
        if not getattr(self, capability):
            pytest.skip(f"{self.ext} {self.variant} does not support {capability.removeprefix('supports_')}")

    # --- checks ---------------------------------------------------------------------------------

    def test_plain_texts_survive(self) -> None:
        read = self.roundtrip(catalogue([unit("greeting", "Bonjour"), unit("farewell", "Au revoir")]))
        ids = [u.id for u in read.units]
        assert ids == ["greeting", "farewell"] if self.preserves_order else sorted(ids) == ["farewell", "greeting"]
        assert self.target(read, "greeting").text == "Bonjour"
        assert self.target(read, "farewell").text == "Au revoir"

    def test_unicode_quotes_and_backslashes_survive(self) -> None:
        tricky = 'Ça "marche" \\ très bien: C:\\dir\\n — 日本語 🎉 \'apostrophe\' {brace} <b>&amp;</b>'
        read = self.roundtrip(catalogue([unit("tricky", tricky)]))
        assert self.target(read, "tricky").text == tricky

    def test_newlines_and_tabs_survive(self) -> None:
        text = "Line one\nLine two\n\tindented\n"
        read = self.roundtrip(catalogue([unit("multiline", text)]))
        assert self.target(read, "multiline").text == text

    def test_blank_translation_stays_blank(self) -> None:
        self.require("supports_blank")
        read = self.roundtrip(catalogue([unit("blank", ""), unit("other", "Autre")]))
        translation = self.target(read, "blank")
        assert translation.text == "" and translation.translated

    def test_untranslated_unit_stays_untranslated(self) -> None:
        self.require("supports_untranslated")
        read = self.roundtrip(catalogue([unit("missing", None), unit("present", "Présent")]))
        assert not self.target(read, "missing").translated
        assert self.target(read, "present").text == "Présent"

    def test_keys_with_dots_survive(self) -> None:
        self.require("supports_dotted_keys")
        units = [unit("menu.file.open", "Ouvrir"), unit("menu.file.close", "Fermer"), unit("menu.edit", "Édition")]
        read = self.roundtrip(catalogue(units))
        assert sorted(u.id for u in read.units) == ["menu.edit", "menu.file.close", "menu.file.open"]
        assert self.target(read, "menu.file.open").text == "Ouvrir"
        assert self.target(read, "menu.edit").text == "Édition"

    def test_context_survives(self) -> None:
        self.require("supports_context")
        units = [unit("open", "Ouvrir", context="File menu"), unit("save", "Enregistrer")]
        read = self.roundtrip(catalogue(units))
        assert read.unit("open").context == "File menu"
        assert read.unit("save").context == ""
        assert self.target(read, "open").text == "Ouvrir"

    def test_notes_survive(self) -> None:
        self.require("supports_notes")
        read = self.roundtrip(catalogue([unit("title", "Titre", notes="Shown in the window title bar")]))
        assert read.unit("title").notes == "Shown in the window title bar"

    def test_flags_survive(self) -> None:
        self.require("supports_flags")
        units = [unit("draft", "Brouillon"), unit("wrong", "Faux"), unit("fine", "Bien")]
        units[0].translations["fr"].flag = "fuzzy"
        units[1].translations["fr"].flag = "incorrect"
        read = self.roundtrip(catalogue(units))
        assert self.target(read, "draft").flag == "fuzzy"
        assert self.target(read, "wrong").flag == "incorrect"
        assert self.target(read, "fine").flag == ""

    def test_translator_comment_survives(self) -> None:
        self.require("supports_comments")
        units = [unit("hello", "Salut")]
        units[0].translations["fr"].comment = "Informal on purpose"
        read = self.roundtrip(catalogue(units))
        assert self.target(read, "hello").comment == "Informal on purpose"

    def test_references_survive(self) -> None:
        self.require("supports_references")
        refs = ["src/app.php:12", "templates/home.twig:3"]
        read = self.roundtrip(catalogue([unit("home", "Accueil", references=list(refs))]))
        assert read.unit("home").references == refs

    def _plural_roundtrip(self, locale: str) -> None:
        """A plural unit in `locale` keeps every CLDR form."""
        self.require("supports_plurals")
        texts = PLURAL_TEXTS[locale]
        plural_unit = Unit(
            id="files", plural=True,
            translations={
                "en": Translation(PLURAL_TEXTS["en"]["one"], dict(PLURAL_TEXTS["en"])),
                locale: Translation(next(iter(texts.values())), dict(texts)),
            },
        )
        read = self.roundtrip(catalogue([plural_unit, unit("single", "x", locale=locale)], locale), locale)
        translation = self.target(read, "files", locale)
        if len(texts) > 1 or self.single_form_plurals_detectable:
            assert read.unit("files").plural
            assert translation.plurals == texts
        else:  # the format cannot tell a one-form plural from a singular text
            assert translation.text == next(iter(texts.values()))
        assert not read.unit("single").plural

    def test_plural_with_one_form_japanese(self) -> None:
        self._plural_roundtrip("ja")

    def test_plural_with_two_forms_english(self) -> None:
        self._plural_roundtrip("en")

    def test_plural_with_three_forms_russian(self) -> None:
        self._plural_roundtrip("ru")

    def test_plural_with_six_forms_arabic(self) -> None:
        self._plural_roundtrip("ar")
