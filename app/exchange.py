"""The mapping between the storage model and the exchange catalogue of `formats/` (export and import).

Plurals: storage keeps a plural group as a singular asset plus linked plural-form assets; a locale's CLDR
forms map to the group's members by index (form i = member i, as gettext's msgstr[i]). The catalogue keeps
one plural unit with a `plurals` dict per locale keyed by category.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Hashable, cast

from formats import Catalogue, RenderCache, Translation, Unit, collector_paused, plural_rules
from vocabulary import asset_id_of_text
from storage import TranslationRecord
from storage import operations as ops
from storage.snapshot import Snapshot
from storage.transaction import Transaction

from .locales import display_name, parse_locale_code



# ----------------------------------------------------------------------------- export
# Read-only empties shared by the export catalogue's units and translations (writers only read them, and a
# mutation would raise): an empty dict or list of their own took 70 MB at 100k assets x 5 locales.
_NO_PLURALS = cast(dict[str, str], MappingProxyType({}))
_NO_MAPPING = cast(dict[str, Any], MappingProxyType({}))
_NO_LIST = cast(list[str], ())
_UNTRANSLATED = Translation(plurals=_NO_PLURALS)


def _plural_translation(entries: dict[str, TranslationRecord], group: list[str], code: str) -> Translation:
    forms = plural_rules(code).forms
    plurals: dict[str, str] = {}
    flag = ""
    for index, member in enumerate(group[: len(forms)]):
        entry = entries.get(member)
        if entry is not None:
            plurals[forms[index]] = entry["text"]
            flag = flag or entry.get("flag", "")
    first = entries.get(group[0])
    return Translation(text=first["text"] if first else None, plurals=plurals, flag=flag)


def snapshot_catalogue(snapshot: Snapshot, locales: list[str] | None = None) -> Catalogue:
    """The whole project (or the given locales, source always included) as an exchange catalogue.

    Built once per snapshot and locale set (snapshots are immutable); callers must not modify it.
    """
    codes = [record["code"] for record in snapshot.locales()]
    wanted = [code for code in codes if locales is None or code in locales or code == snapshot.source_locale]

    def build() -> Catalogue:
        with collector_paused():  # hundreds of thousands of new objects: the collector would rescan them
            return _build_catalogue(snapshot, wanted)

    return snapshot.remember(("catalogue", tuple(wanted)), build)


# Rendered runs of exports (one asset chunk's PO messages per locale and option set), kept across
# requests and commits: an export after a write renders the changed chunk only. Bounded: at 100k assets,
# five locales' PO bodies take about 50 MB.
EXPORT_CACHE_BYTES = 64 * 1024 * 1024
EXPORT_CACHE = RenderCache(EXPORT_CACHE_BYTES)


def _build_catalogue(snapshot: Snapshot, wanted: list[str]) -> Catalogue:
    units: list[Unit] = []
    segments: list[tuple[Hashable, int]] | None = [] if snapshot.commit is not None else None
    for number in snapshot.chunk_numbers():
        chunk_units, content = _chunk_units(snapshot, number, wanted)
        units.extend(chunk_units)
        if segments is not None and content is not None:
            segments.append((content, len(chunk_units)))
        else:
            segments = None  # a chunk without blob ids: no segments at all
    return Catalogue(source_locale=snapshot.source_locale, locales=wanted, units=units, project=snapshot.name,
                     segments=segments or [])


def _chunk_units(snapshot: Snapshot, number: int, wanted: list[str]) -> tuple[list[Unit], Hashable | None]:
    """The units of one asset chunk, and the blob ids of every file they are made from (None if unknown).

    The units are reused while neither the chunk nor a locale chunk it reads has changed. Chunks are
    immutable and shared between snapshots, so after a write only the chunk it touched is rebuilt: the first
    export after a write costs a thousand units, not the whole project.
    """
    asset_chunk = snapshot.asset_chunk(number)
    needed = {number}
    assets = list(snapshot.asset_entries(number).items())  # parsed for the units only: a chunk keeps its lines
    for _, asset in assets:
        for member in asset.get("plurals", ()):
            needed.add(snapshot.asset_index[member])
    read = [(code, n) for code in wanted for n in sorted(needed)]
    content = _content_key(snapshot, number, read)
    sources = tuple(snapshot.locale_chunk(code, n) for code, n in read)
    cached = asset_chunk.kept(("units", tuple(wanted)))
    if cached is not None and len(cached[0]) == len(sources) and all(a is b for a, b in zip(cached[0], sources)):
        return cached[1], content
    entries: dict[str, dict[str, TranslationRecord]] = {code: {} for code in wanted}
    for code, n in read:
        entries[code].update(snapshot.translation_entries(code, n))  # the units keep what they need
    # every locale's translations made in one comprehension each, not by a call per asset and locale
    made = {code: {key: Translation(entry["text"], _NO_PLURALS, entry.get("flag", ""))
                   for key, entry in entries[code].items()} for code in wanted}
    units = []
    for asset_id, asset in assets:
        if asset.get("plural_of"):
            continue  # exported inside its singular's unit
        members = asset.get("plurals")
        tags, aliases, meta = asset.get("tags"), asset.get("aliases"), asset.get("meta")
        unit = Unit(id=asset_id, context=asset.get("context", ""), notes=asset.get("notes", ""),
                    type=asset.get("type", "text"), printf=asset.get("printf", ""),
                    tags=tags or _NO_LIST, aliases=aliases or _NO_MAPPING,  # parsed for this unit alone
                    plural=bool(members), references=_NO_LIST, meta=meta or _NO_MAPPING,
                    plural_ids=tuple(members) if members else ())
        if members:
            group = [asset_id] + members
            unit.translations = {code: _plural_translation(entries[code], group, code) for code in wanted}
        else:
            unit.translations = {code: made[code].get(asset_id, _UNTRANSLATED) for code in wanted}
        units.append(unit)
    asset_chunk.keep(("units", tuple(wanted)), (sources, units))
    return units, content


def _content_key(snapshot: Snapshot, number: int, read: list[tuple[str, int]]) -> Hashable | None:
    """The blob ids of the asset chunk and of every locale chunk its units read (None: a locale has none):
    units made from the same blobs are the same units, in whatever snapshot or process."""
    return snapshot.chunk_blobs(number, read)


# ----------------------------------------------------------------------------- import
@dataclass
class ImportOptions:
    """Loco's import switches (loco-compat §3.10)."""

    index: str = "id"
    ignore_new: bool = False
    ignore_existing: bool = False
    ignore_blank: bool = False
    tag_new: list[str] = field(default_factory=list)
    tag_all: list[str] = field(default_factory=list)
    untag_all: list[str] = field(default_factory=list)
    tag_updated: list[str] = field(default_factory=list)
    untag_updated: list[str] = field(default_factory=list)
    tag_absent: list[str] = field(default_factory=list)
    untag_absent: list[str] = field(default_factory=list)
    delete_absent: bool = False
    flag_new: str = ""
    flag_updated: str = ""


@dataclass
class ImportReport:
    new_assets: list[str] = field(default_factory=list)
    updated_assets: set[str] = field(default_factory=set)
    new_translations: int = 0
    updated_translations: int = 0
    deleted_assets: int = 0
    locales: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)  # the reader's words on what it could not map

    def message(self) -> str:
        parts = []
        if self.new_assets:
            parts.append(f"{len(self.new_assets)} new asset{'s' * (len(self.new_assets) != 1)}")
        if self.new_translations:
            parts.append(f"{self.new_translations} new translation{'s' * (self.new_translations != 1)}")
        if self.updated_translations:
            parts.append(f"{self.updated_translations} translation{'s' * (self.updated_translations != 1)} updated")
        if self.deleted_assets:
            parts.append(f"{self.deleted_assets} absent asset{'s' * (self.deleted_assets != 1)} deleted")
        return ("Imported " + ", ".join(parts)) if parts else "Nothing updated"


class Importer:
    """Applies a catalogue to a transaction; one instance per import."""

    def __init__(self, tx: Transaction, options: ImportOptions, actor: ops.Actor, now: str,
                 progress: Callable[[float], None] | None = None):
        self.tx = tx
        tx.read_whole_chunks()  # an import reads most of the project
        self.options = options
        self.actor = actor
        self.now = now
        self.progress = progress or (lambda fraction: None)
        self.report = ImportReport()
        self.source = tx.peek_meta()["source"]
        # assets without source text are exported under their ID (the pipeline's text-index fallback):
        # matched back by ID, their derived "source text" (the ID itself) must not be written
        self._keyed_by_id: set[str] = set()
        self._derived_source: set[str] = set()
        # the assets an import by source text finds by that very text (the index's): a unit matched to one has
        # its source text already (read and noted by the index), so it is not looked up again (half the
        # lookups of an unchanged re-import); one whose source text this import changes leaves the set
        self._found_by_text: set[str] = set()

    def apply(self, catalogue: Catalogue) -> ImportReport:
        for code in catalogue.locales:
            if code not in self.tx.locale_codes():
                # a locale named by the file passes the same check as ?locale= (422 when CLDR does not know it)
                ops.add_locale(self.tx, parse_locale_code(code), display_name(code))
        by_text = self._source_text_index() if self.options.index == "text" else None
        seen: set[str] = set()
        options = self.options
        # the assets a file leaves out matter only to these switches (and reading every asset's plural
        # links to know them costs a parse of each)
        absent = options.tag_absent or options.untag_absent or options.delete_absent
        # switches that act on every existing asset a file names, changed or not: else a unit that changes
        # nothing is known by its texts alone (most units of a re-import: _update's calls cost a fifth of it)
        every_existing = options.tag_all or options.untag_all or options.ignore_existing or absent
        total = max(1, len(catalogue.units))
        for number, unit in enumerate(catalogue.units):
            asset_id = self._asset_for(unit, by_text)
            seen.add(asset_id)
            if number % 500 == 0:
                self.progress(number / total)
            if not every_existing and self._leaves_unchanged(asset_id, unit):
                continue
            if self.tx.has_asset(asset_id):
                written = not options.ignore_existing
                if written:
                    self._update(asset_id, unit)
            else:
                written = not options.ignore_new
                if written:
                    self._create(asset_id, unit)
            if written and absent:
                seen.update(self.tx.existing_asset(asset_id).get("plurals", []))
        if absent:
            self._absent(seen)
        return self.report

    # ------------------------------------------------------------------ matching by source text
    def _asset_for(self, unit: Unit, by_text: dict[tuple[str, str], str] | None) -> str:
        """The asset a unit updates or creates: its ID, or with index=text the asset with the same source
        text and context (a new one gets an ID made from the text, like an asset created without id)."""
        if by_text is None:
            return self._id_of(unit.id)
        key = (unit.context, self._source_text(unit))
        if key not in by_text:
            by_text[key] = ops.unique_asset_id(self.tx, key[1])
        asset_id = by_text[key]
        if asset_id in self._keyed_by_id and key[1] == asset_id:
            self._derived_source.add(asset_id)
        return asset_id

    def _source_text(self, unit: Unit) -> str:
        translation = unit.translations.get(self.source)
        return translation.text if translation and translation.text is not None else unit.id

    def _source_text_index(self) -> dict[tuple[str, str], str]:
        """(context, key) -> asset, where the key is the source text, or the ID of an asset without one
        (as exports write it); source texts win over IDs."""
        index: dict[tuple[str, str], str] = {}
        without_text: list[tuple[str, str]] = []
        for asset_id, context, plural_form, text in self.tx.asset_keys(self.source):  # (off the lines, in bulk)
            if plural_form:
                continue
            if text:
                index.setdefault((context, text), asset_id)
            else:
                without_text.append((context, asset_id))
        self._found_by_text = set(index.values())
        for context, asset_id in without_text:
            if (context, asset_id) not in index:
                index[(context, asset_id)] = asset_id
                self._keyed_by_id.add(asset_id)
        return index

    def _id_of(self, key: str) -> str:
        """The asset of a key: the key itself, or for a text that cannot be an ID (a line break, too long, a
        path the API cannot address) an ID derived from it, said in the answer's warnings."""
        asset_id = asset_id_of_text(key)
        if asset_id != key:
            self.report.warnings.append(f"{key[:60]!r} cannot be an asset ID as it is: imported as {asset_id!r}")
        return asset_id

    # ------------------------------------------------------------------ new and existing assets
    def _leaves_unchanged(self, asset_id: str, unit: Unit) -> bool:
        """Whether a unit would change nothing of an existing asset (_update would write nothing): singular,
        without notes or metadata, and each of its translations kept as stored (_keeps)."""
        if unit.plural or unit.notes or unit.meta or not self.tx.has_asset(asset_id):
            return False
        for code, translation in unit.translations.items():
            if not self._keeps(asset_id, code, translation):
                return False
        self.report.locales.update(unit.translations)
        return True

    def _keeps(self, asset_id: str, code: str, translation: Translation) -> bool:
        """Whether a singular unit's translation leaves the asset's text as it is, with no flag to set: the
        source text the asset was found by (index=text), or the text stored."""
        if translation.flag in ops.FLAGS or (code == self.source and asset_id in self._derived_source):
            return False
        if code == self.source and asset_id in self._found_by_text:
            return True
        return translation.text is not None and self.tx.has_text(asset_id, code, translation.text)

    def _create(self, asset_id: str, unit: Unit) -> None:
        ops.check_addressable(asset_id)  # an imported ID must stay reachable through the API too
        ops.create_asset(self.tx, asset_id, self.now, type=unit.type if unit.type in ops.ASSET_TYPES else "text",
                         context=unit.context, notes=unit.notes,
                         printf=unit.printf if unit.printf in ops.PRINTF_STYLES else "",
                         tags=self.options.tag_new + self.options.tag_all, meta=storable_meta(unit.meta))
        self.report.new_assets.append(asset_id)
        self._write_translations(asset_id, unit, new_asset=True)

    def _update(self, asset_id: str, unit: Unit) -> None:
        if unit.notes or unit.meta:  # (else the record is not read: most units of a re-import)
            record = self.tx.existing_asset(asset_id)
            if unit.notes and not record.get("notes"):
                ops.patch_asset(self.tx, asset_id, {"notes": unit.notes}, self.now)
            # like notes, metadata a file brings fills what the asset lacks and never overwrites it
            stored = record.get("meta", {})
            missing = {key: value for key, value in storable_meta(unit.meta).items() if key not in stored}
            if missing:
                ops.set_asset_meta(self.tx, asset_id, {**stored, **missing}, self.now)
        changed = self._write_translations(asset_id, unit, new_asset=False)
        for tag in self.options.tag_all:
            ops.tag_asset(self.tx, asset_id, tag, self.now)
        for tag in self.options.untag_all:
            self._untag(asset_id, tag)
        if changed:
            self.report.updated_assets.add(asset_id)
            for tag in self.options.tag_updated:
                ops.tag_asset(self.tx, asset_id, tag, self.now)
            for tag in self.options.untag_updated:
                self._untag(asset_id, tag)

    def _untag(self, asset_id: str, tag: str) -> None:
        if tag in self.tx.existing_asset(asset_id).get("tags", []):
            ops.untag_asset(self.tx, asset_id, tag, self.now)

    # ------------------------------------------------------------------ translations
    def _write_translations(self, asset_id: str, unit: Unit, new_asset: bool) -> bool:
        changed = False
        for code, translation in unit.translations.items():
            if code == self.source and asset_id in self._derived_source:
                continue  # the key stood for a missing source text: nothing to write
            if not unit.plural and code == self.source and asset_id in self._found_by_text \
                    and self._keeps(asset_id, code, translation):
                self.report.locales.add(code)
                continue  # the text it was found by: unchanged, and no flag to set
            if unit.plural:
                targets = self._plural_targets(asset_id, code, translation)
            else:
                targets = [(asset_id, translation.text)]
            for member, text in targets:
                # (an asset this unit created has no translation yet: not looked up, 2 per unit of a new file)
                changed |= self._set(member, code, text, translation.flag, new_asset and not unit.plural)
            self.report.locales.add(code)
        return changed

    def _plural_targets(self, asset_id: str, code: str, translation: Translation) -> list[tuple[str, str | None]]:
        """(member asset, text) per form of the locale, linking new plural-form assets when needed."""
        forms = plural_rules(code).forms
        texts = [translation.plurals.get(form) for form in forms]
        if not translation.plurals and translation.text is not None:
            texts[0] = translation.text
        group = [asset_id] + self.tx.existing_asset(asset_id).get("plurals", [])
        while len(group) < len(texts) and any(text is not None for text in texts[len(group):]):
            source = self._source_plural_text(asset_id)
            pid = ops.add_plural(self.tx, asset_id, self.now, text=source, actor=self.actor)
            group.append(pid)
        return [(group[i], texts[i]) for i in range(min(len(group), len(texts)))]

    def _source_plural_text(self, asset_id: str) -> str | None:
        """Source text for a new plural-form asset: the source locale's last (`other`) form, as stored."""
        members = [asset_id] + self.tx.existing_asset(asset_id).get("plurals", [])
        entry = self.tx.translation(members[-1], self.source)
        return entry["text"] if entry else None

    def _set(self, asset_id: str, code: str, text: str | None, flag: str, untranslated: bool = False) -> bool:
        """Store one text unless it is absent, blank-and-ignored or unchanged; True when something changed.
        `untranslated`: the asset is known to have no translation in `code` (it was just created)."""
        if text is None or (text == "" and self.options.ignore_blank):
            return False
        wanted_flag = flag if flag in ops.FLAGS else ""
        if not untranslated and not wanted_flag and self.tx.has_text(asset_id, code, text):
            return False  # the same text, and no flag to set (the flag switches concern new or changed texts)
        current = entry = None if untranslated else self.tx.translation(asset_id, code)
        changed = False
        if current is None or current["text"] != text:
            entry = ops.translate(self.tx, asset_id, code, text, self.actor, self.now)
            changed = True
            if code == self.source:
                self._found_by_text.discard(asset_id)
            if current is None:
                self.report.new_translations += 1
            else:
                self.report.updated_translations += 1
        if current is None and self.options.flag_new in ops.FLAGS:
            wanted_flag = wanted_flag or self.options.flag_new
        elif changed and current is not None and self.options.flag_updated in ops.FLAGS:
            wanted_flag = wanted_flag or self.options.flag_updated
        assert entry is not None  # translated above when there was none
        if wanted_flag and entry.get("flag") != wanted_flag:
            ops.flag(self.tx, asset_id, code, wanted_flag, self.actor, self.now)
            changed = True
        return changed

    # ------------------------------------------------------------------ absent assets
    def _absent(self, seen: set[str]) -> None:
        options = self.options
        if not (options.tag_absent or options.untag_absent or options.delete_absent):
            return
        for asset_id in self.tx.asset_ids():
            if asset_id in seen or not self.tx.has_asset(asset_id):
                continue
            if options.delete_absent:
                ops.delete_asset(self.tx, asset_id)
                self.report.deleted_assets += 1
                continue
            for tag in options.tag_absent:
                ops.tag_asset(self.tx, asset_id, tag, self.now)
            for tag in options.untag_absent:
                self._untag(asset_id, tag)


def storable_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """The entries of a unit's format metadata that JSON can hold (a plist reader may give dates or bytes)."""
    kept: dict[str, Any] = {}
    for key, value in meta.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept
