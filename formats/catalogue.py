"""The exchange catalogue: the neutral model every reader produces and every writer consumes.

A `Catalogue` holds `Unit`s (one per asset); each unit holds one `Translation` per locale, the source
locale included. Plural units keep every form in `Translation.plurals`, keyed by CLDR category.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from vocabulary import ASSET_TYPES as UNIT_TYPES
from vocabulary import strings_in
from vocabulary import FLAGS, PRINTF_STYLES  # Loco's flags: at most one per translation, "fuzzy" the gettext one

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FLAGS", "PRINTF_STYLES", "UNIT_TYPES", "Catalogue", "Translation", "Unit"]


@dataclass(slots=True)
class Translation:
    """One locale's text of a unit.

    text: None = untranslated, "" = a real blank translation. For a plural unit it mirrors the
          locale's first plural form (Loco's "singular" asset) and `plurals` holds every form.
    plurals: CLDR category -> text, only for plural units (e.g. {"one": "%d file", "other": "%d files"}).
    flag: "" or one of FLAGS.
    comment: translator comment.
    """

    text: str | None = None
    plurals: dict[str, str] = field(default_factory=dict)
    flag: str = ""
    comment: str = ""

    @property
    def translated(self) -> bool:
        """Whether any text exists (blank and flagged translations count, as in Loco's API)."""
        return self.text is not None or bool(self.plurals)

    @property
    def blank(self) -> bool:
        """Whether the translation exists but every text of it is empty."""
        if self.plurals:
            return not any(self.plurals.values())
        return self.text == ""


@dataclass(slots=True)
class Unit:
    """One translatable asset with its translations in every locale of the catalogue.

    id: asset ID; context: msgctxt-like disambiguator; notes: notes for translators (PO `#.`);
    type: text|html|xml; printf: "" or a PRINTF_STYLES name (the style its placeholders use);
    tags, aliases (alias name -> alternative key); plural: whether translations carry plural forms;
    translations: locale code -> Translation (source locale included); references: source refs
    (`src/x.php:12`); meta: format-specific extras a reader found (e.g. Chrome/ARB placeholder
    declarations) so that the same format can write them back; key: the key the unit had in the file
    it was read from (its source text when read by text). Exports compute keys from the index option
    on their own entries (`document.Entry.key`) and never modify the catalogue.
    plural_ids: the asset IDs of a plural unit's plural forms after the singular (form i + 1 of a locale is
    member i), where the catalogue knows them (a project's plural-form assets); formats without plural
    syntax write each form under its own ID (pipeline.plural_forms_apart).
    """

    id: str
    context: str = ""
    notes: str = ""
    type: str = "text"
    printf: str = ""
    tags: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    plural: bool = False
    translations: dict[str, Translation] = field(default_factory=dict)
    references: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    plural_ids: tuple[str, ...] = ()

    def translation(self, locale: str) -> Translation:
        """The translation in a locale, or an untranslated placeholder when there is none."""
        return self.translations.get(locale) or Translation()


@dataclass(slots=True)
class Catalogue:
    """A set of units plus file-level facts.

    source_locale: the project's (or file's) source language; locales: every locale that has
    translations in the catalogue, source first when present; project: project name;
    headers: format metadata read from a file (PO header fields, ARB @@ attributes, Jed header).
    segments: optional runs of units as (content key, count), in order, covering every unit: the
    caller's promise that a run with the same key always holds the same units (see formats/segments.py).
    """

    source_locale: str = "en"
    locales: list[str] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    project: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # what the reader read but could not map, for the user
    segments: list[tuple[Hashable, int]] = field(default_factory=list)

    @property
    def target_locales(self) -> list[str]:
        """The locales other than the source, in catalogue order."""
        return [code for code in self.locales if code != self.source_locale]

    def unit(self, unit_id: str) -> Unit | None:
        """The unit with this asset ID, if any."""
        return next((unit for unit in self.units if unit.id == unit_id), None)

    def texts(self) -> list[str]:
        """Every string the catalogue holds (IDs, texts, notes, tags, metadata...): what writers and stores keep.

        Gathered flat, without a call per unit: read_file checks them all (100k units: about 0.06 s).
        """
        found = [self.project, *self.locales, *strings_in(self.headers)]
        add, extend = found.append, found.extend
        for unit in self.units:
            extend((unit.id, unit.context, unit.notes, unit.key))
            if unit.tags:
                extend(unit.tags)
            if unit.references:
                extend(unit.references)
            if unit.aliases:
                extend(strings_in(unit.aliases))
            if unit.meta:
                extend(strings_in(unit.meta))
            for translation in unit.translations.values():
                if translation.text:
                    add(translation.text)
                if translation.comment:
                    add(translation.comment)
                if translation.plurals:
                    extend(translation.plurals.values())
        return found
