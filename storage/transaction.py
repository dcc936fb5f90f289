"""A write transaction: changes gathered on top of a snapshot, turned into changed files and a new snapshot."""
from __future__ import annotations

import copy
from typing import Any, Callable

from limits import MAX_GLOSSARY_TERMS, describe

from .canonical import EMPTY, EMPTY_TRANSLATIONS, Chunk, E
from .errors import Invalid
from .fields import IsLiveKey, may_hold_key, refuse_keys_in_record
from .records import AssetRecord, LocaleRecord, ProjectMeta, TranslationRecord
from .snapshot import (ASSETS_DIR, GLOSSARY_FILE, LOCALES_DIR, MEMORY_FILE, PROJECT_FILE, STRINGS, Snapshot,
                       aligned_strings, asset_path, build_asset_index, dump_project, existing, locale_path,
                       strings_key)

# Entries of one base chunk a whole-chunk transaction decodes alone before it decodes the chunk whole: one
# decode of a chunk of 1,000 costs about what 100-150 entries found and decoded where they stand cost
WHOLE_AFTER = 50


def bulk_field(kind: str) -> str:
    """The field an import reads of every entry of a chunk of `kind` ("" = assets, else a locale): an asset's
    context, a translation's text (what matching by source text and judging a unit unchanged need)."""
    return "context" if kind == "" else "text"


class Transaction:
    """Reads see the transaction's own changes; nothing reaches Git until the project commits it."""

    def __init__(self, base: Snapshot, is_live_key: IsLiveKey | None = None):
        """`is_live_key`: refuse (Invalid, naming the field) any record put that holds a live API key, as a push
        holding it would be refused: an API write must never store what blocks every later push."""
        self.base = base
        self.is_live_key = is_live_key
        self._meta: ProjectMeta | None = None
        self._assets: dict[str, AssetRecord | None] = {}
        self._translations: dict[str, dict[str, TranslationRecord | None]] = {}
        self._memory: dict[str, dict[str, Any] | None] = {}  # memory.json's units set (None: removed)
        # asset id -> chunk number for assets created, renamed or removed in this transaction
        self._index_changes: dict[str, int | None] = {}
        self._terms: dict[str, dict[str, Any] | None] = {}  # glossary term -> record (None: deleted)
        self._read_glossary = False  # whether a glossary term was read (a rebase must find the glossary unchanged)
        self.trailers: list[tuple[str, str]] = []
        # further parents of the commit (a merged push): the commit is made even when no file changes
        self.merge_parents: list[bytes] = []
        self._result: Snapshot | None = None
        # (locale code or "" for assets, chunk number) -> every entry of the base's chunk, when reads go by
        # whole chunks (read_whole_chunks)
        self._whole: dict[tuple[str, int], dict[str, Any]] | None = None
        self._singles: dict[tuple[str, int], dict[str, Any]] = {}  # entries read alone, before the whole chunk
        self._single_at: dict[tuple[str, int], int] = {}  # where the last entry read alone ended in its chunk's file
        # (kind, chunk number, field) -> the field's string value in the base chunk's entries (a translation's
        # text, an asset's context: bulk_field), when reads go by whole chunks: saved with the chunk's blob
        # (storage.snapshot.strings_key) or read off its lines at once (Chunk.string_values), instead of looking
        # into, or serialising, the line of every entry asked about
        self._strings: dict[tuple[str, int, str], dict[str, str]] = {}
        self._codes_of: list[LocaleRecord] | None = None  # the locale list `_codes` was made from
        self._codes: set[str] = set()
        self._read: dict[str, set[str]] = {}  # kind ("" = assets, else a locale) -> ids read from the base
        # kind -> chunk number -> the changes to that chunk (made by build, kept for a rebase)
        self._grouped: dict[str, dict[int, dict[str, Any]]] | None = None
        # (the snapshot a first build started from, its result): chunks the rebase did not change are reused
        self._reuse: tuple[Snapshot, Snapshot] | None = None

    @property
    def result(self) -> Snapshot:
        """The snapshot the project committed (once the write's block has ended without an error)."""
        if self._result is None:
            raise RuntimeError("the transaction has not been committed")
        return self._result

    @result.setter
    def result(self, committed: Snapshot) -> None:
        self._result = committed

    def read_whole_chunks(self) -> None:
        """Read the base's entries a whole chunk at a time, kept by this transaction only: for writes that read
        most of the project (an import). One decode of a chunk costs about what ten single entries cost, and
        the base snapshot, shared by every request, is left without the parsed entries (at 100k assets an
        import kept 300k of them in the cached snapshot, which then stayed in memory for good)."""
        self._whole = {}

    def _note_read(self, kind: str, asset_id: str) -> None:
        """Remember a base entry this transaction read (what a rebase must find unchanged)."""
        read = self._read.get(kind)
        if read is None:
            read = self._read[kind] = set()
        read.add(asset_id)

    def _base_entry(self, kind: str, chunks: dict[int, Chunk[E]], asset_id: str) -> E | None:
        """An asset's entry in the base (kind "" for its record, else a locale code)."""
        number = self.base.asset_index.get(asset_id)
        if number is None:
            return None  # (whether it exists: a rebase compares the sets of assets)
        self._note_read(kind, asset_id)
        chunk = chunks.get(number)
        if chunk is None:
            return None
        if self._whole is None:
            return chunk.get(asset_id)
        entries = self._whole.get((kind, number))
        if entries is None:
            # a few entries of a chunk are decoded where they stand (a re-import reads the records of its plural
            # forms alone, 20 a chunk: decoding every asset chunk whole for them was 0.3 s at 100k)
            singles = self._singles.setdefault((kind, number), {})
            if asset_id in singles or len(singles) < WHOLE_AFTER:
                if asset_id not in singles:  # (looked for after the previous one: reads go in the file's order)
                    at = self._single_at.get((kind, number), 0)
                    singles[asset_id], self._single_at[(kind, number)] = chunk.peek_from(asset_id, at)
                return singles[asset_id]
            entries = self._whole[(kind, number)] = {**chunk.peek_all(), **singles}
        return entries.get(asset_id)

    # ----------------------------------------------------------------- project metadata
    @property
    def meta(self) -> ProjectMeta:
        """The project metadata, copied on first access so that changes stay private to this transaction."""
        if self._meta is None:
            self._meta = copy.deepcopy(self.base.meta)
        return self._meta

    def peek_meta(self) -> ProjectMeta:
        """Read-only view of the metadata (no copy)."""
        return self._meta if self._meta is not None else self.base.meta

    @property
    def chunk_size(self) -> int:
        return self.peek_meta().get("chunk_size", self.base.chunk_size)

    def allocate_seq(self) -> int:
        """The creation sequence number of a new asset (it fixes the asset's chunk forever)."""
        seq = self.meta.get("next_seq", 0)
        self.meta["next_seq"] = seq + 1
        return seq

    # ----------------------------------------------------------------- assets
    def chunk_of(self, asset_id: str) -> int | None:
        if asset_id in self._index_changes:
            return self._index_changes[asset_id]
        return self.base.asset_index.get(asset_id)

    def asset(self, asset_id: str) -> AssetRecord | None:
        if asset_id in self._assets:
            return self._assets[asset_id]
        return self._base_entry("", self.base.asset_chunks, asset_id)

    def existing_asset(self, asset_id: str) -> AssetRecord:
        """The record of an asset the caller knows exists, as this transaction has it (NotFound otherwise)."""
        return existing(self.asset(asset_id), "Asset")

    def has_asset(self, asset_id: str) -> bool:
        return self.chunk_of(asset_id) is not None

    def put_asset(self, asset_id: str, record: AssetRecord) -> None:
        """Create or replace an asset record; `record["n"]` is its sequence number."""
        self._assets[asset_id] = record
        self._index_changes[asset_id] = record["n"] // self.chunk_size

    def remove_asset(self, asset_id: str) -> None:
        """Remove an asset and its translations in every locale."""
        if self.chunk_of(asset_id) is None:
            return
        for code in self.locale_codes():
            if self.translation(asset_id, code) is not None:
                self.put_translation(asset_id, code, None)
        self._assets[asset_id] = None
        self._index_changes[asset_id] = None

    def asset_ids(self) -> list[str]:
        """Current asset IDs in creation order."""
        base = self.base
        kept = [i for i in base.asset_ids() if self._assets.get(i, True) is not None]  # (base order = creation)
        added = sorted((record["n"], i) for i, record in self._assets.items()
                       if record is not None and i not in base.asset_index)
        if not added or added[0][0] >= base.meta.get("next_seq", 0):
            # the usual case: only assets created here, after every base asset (their numbers are new)
            return kept + [asset_id for _, asset_id in added]
        # a renamed asset keeps its number, so its place among the base's: sort on every number
        numbered = [(self.asset(i)["n"], i) for i in kept] + added  # type: ignore[index]
        return [asset_id for _, asset_id in sorted(numbered)]

    # ----------------------------------------------------------------- translations
    def locale_codes(self) -> list[str]:
        return [record["code"] for record in self.peek_meta().get("locales", [])]

    def has_locale(self, locale: str) -> bool:
        """Whether the locale is in the project (cheaper than `in locale_codes()`, asked for every entry read)."""
        locales = self.peek_meta().get("locales", [])
        if self._codes_of is not locales:  # (operations replace the list, never change it in place)
            self._codes_of, self._codes = locales, {record["code"] for record in locales}
        return locale in self._codes

    def translation(self, asset_id: str, locale: str) -> TranslationRecord | None:
        changes = self._translations.get(locale)
        if changes is not None and asset_id in changes:
            return changes[asset_id]
        chunks = self.base.locale_chunks.get(locale)
        if chunks is None or (self._meta is not None and not self.has_locale(locale)):  # (a dropped locale)
            return None
        return self._base_entry(locale, chunks, asset_id)

    def _unchanged_base_chunk(self, kind: str, asset_id: str) -> Chunk | None:
        """The base chunk holding an entry this transaction has not changed (None: changed, or no entry)."""
        changes = self._assets if kind == "" else self._translations.get(kind, {})
        if asset_id in changes or (kind and self._meta is not None and not self.has_locale(kind)):
            return None
        number = self.base.asset_index.get(asset_id)
        chunk = _chunks_of(self.base, kind).get(number) if number is not None else None
        return chunk if chunk is not None and asset_id in chunk else None

    def _string_field(self, kind: str, chunk: Chunk[Any], asset_id: str, field: str) -> str | None:
        """Chunk.string_field of a base entry: from the whole chunk's values, read at once, when reads go by
        whole chunks, else off the entry's line alone."""
        if self._whole is None:
            return chunk.string_field(asset_id, field)
        return self._chunk_strings(kind, self.base.asset_index[asset_id], chunk, field).get(asset_id)

    def _chunk_strings(self, kind: str, number: int, chunk: Chunk[Any], field: str) -> dict[str, str]:
        """asset -> its string value of `field` in base chunk `number` of `kind` (see _strings): as saved for the
        chunk's blob by the write that made it, else off its lines (then saved for the next reader). Reading
        them off the lines of every chunk was two thirds of an unchanged 100k re-import's look-ups."""
        key = (kind, number, field)
        values = self._strings.get(key)
        if values is None:
            blob = self.base.files.get(asset_path(number) if kind == "" else locale_path(kind, number))
            saved = self.base.saved(STRINGS, strings_key(field, blob)) if blob is not None else None
            if saved is not None and len(saved) == len(chunk):
                values = {asset_id: value for asset_id, value in zip(chunk.keys(), saved) if value is not None}
            else:
                values = chunk.string_values(field)
                if blob is not None and self.base.persisted is not None:  # (a big project: see Snapshot.save)
                    self.base.save(STRINGS, strings_key(field, blob), aligned_strings(chunk, values))
            self._strings[key] = values
        return values

    def text_of(self, asset_id: str, locale: str) -> str | None:
        """The translation's text (None: untranslated), read off its stored line without parsing the entry
        when the line allows (Chunk.string_field): an import by source text reads every source text."""
        chunk = self._unchanged_base_chunk(locale, asset_id)
        text = self._string_field(locale, chunk, asset_id, "text") if chunk is not None else None
        if text is not None:
            self._note_read(locale, asset_id)
            return text
        entry = self.translation(asset_id, locale)
        return entry["text"] if entry is not None else None

    def context_of(self, asset_id: str) -> tuple[str, bool]:
        """An existing asset's context and whether it is a plural form of another, read as text_of reads."""
        chunk = self._unchanged_base_chunk("", asset_id)
        record: AssetRecord | None
        if chunk is not None:
            self._note_read("", asset_id)
            if not chunk.may_have_field(asset_id, "plural_of"):
                context = self._string_field("", chunk, asset_id, "context")
                if context is not None:
                    return context, False
            record = chunk.peek(asset_id)  # this entry alone (a plural form: one in fifty, say)
        else:
            record = self.asset(asset_id)
        assert record is not None, asset_id
        return record.get("context", ""), bool(record.get("plural_of"))

    def asset_keys(self, locale: str) -> list[tuple[str, str, bool, str | None]]:
        """(id, context, whether it is a plural form of another, text in `locale` or None) of every asset in
        creation order, as context_of and text_of read them (a plural form's text is not read): what an import
        by source text matches on. A chunk at a time off the base's lines when reads go by whole chunks and no
        asset has changed yet, else asset by asset."""
        if self._whole is None or self._assets:
            return [(asset_id, *self._context_and_text(asset_id, locale)) for asset_id in self.asset_ids()]
        keys: list[tuple[str, str, bool, str | None]] = []
        texts_of = self.base.locale_chunks.get(locale, {}) if locale not in self._translations else {}
        asset_reads = self._read.setdefault("", set())
        text_reads = self._read.setdefault(locale, set())
        for number in sorted(self.base.asset_chunks):
            chunk = self.base.asset_chunks[number]
            ids = list(chunk.keys())
            asset_reads.update(ids)
            contexts = self._chunk_strings("", number, chunk, "context")
            texts_chunk = texts_of.get(number)
            texts = self._chunk_strings(locale, number, texts_chunk, "text") if texts_chunk is not None else {}
            # the records that may link plural forms (one in fifty, say), decoded where they stand in the file:
            # an asset chunk is not split into lines for them (a third of a cold re-import's index was that)
            mentioning = chunk.keys_mentioning("plural_of")
            records = {asset_id: record for asset_id, record in chunk.peek_each([i for i in ids if i in mentioning])
                       if record is not None} if mentioning else {}
            for asset_id in ids:
                context = contexts.get(asset_id)
                if context is None:
                    keys.append((asset_id, *self._context_and_text(asset_id, locale)))
                    continue
                if asset_id in records and records[asset_id].get("plural_of"):
                    keys.append((asset_id, context, True, None))
                    continue
                text = texts.get(asset_id)
                if text is None:
                    text = self.text_of(asset_id, locale)
                else:
                    text_reads.add(asset_id)
                keys.append((asset_id, context, False, text))
        return keys

    def _context_and_text(self, asset_id: str, locale: str) -> tuple[str, bool, str | None]:
        context, plural_form = self.context_of(asset_id)
        return context, plural_form, None if plural_form else self.text_of(asset_id, locale)

    def has_text(self, asset_id: str, locale: str, text: str) -> bool:
        """Whether the translation is exactly `text`. An unchanged base entry is judged from its stored line,
        without parsing it when the line says so (Chunk.starts_with): an unchanged re-import asks for every
        unit."""
        changes = self._translations.get(locale)
        if changes is None or asset_id not in changes:
            number = self.base.asset_index.get(asset_id)
            # its chunk's texts read already: a look-up is all it costs
            known = self._strings.get((locale, number, "text")) if number is not None else None
            if known is not None and known.get(asset_id) == text and (self._meta is None or self.has_locale(locale)):
                self._note_read(locale, asset_id)
                return True
            chunks = self.base.locale_chunks.get(locale)
            chunk = chunks.get(number) if chunks is not None and number is not None else None
            if chunk is None or (self._meta is not None and not self.has_locale(locale)):
                return False
            # the chunk's texts, read at once when reads go by whole chunks (_string_field): the entry is there
            # when its text is, known without splitting a lazy chunk's lines
            if self._whole is not None and self._string_field(locale, chunk, asset_id, "text") == text:
                self._note_read(locale, asset_id)
                return True
            if asset_id not in chunk:
                return False
            self._note_read(locale, asset_id)
            if self._whole is None and chunk.starts_with(asset_id, "text", text):
                return True
        entry = self.translation(asset_id, locale)
        return entry is not None and entry["text"] == text

    def put_translation(self, asset_id: str, locale: str, entry: TranslationRecord | None) -> None:
        """Set (or, with None, erase) the translation of an existing asset in a locale."""
        self._translations.setdefault(locale, {})[asset_id] = entry

    # ----------------------------------------------------------------- glossary
    def term(self, term: str) -> dict[str, Any] | None:
        """A glossary term's record as this transaction has it."""
        if term in self._terms:
            return self._terms[term]
        self._read_glossary = True
        return self.base.glossary.get(term)

    def put_term(self, term: str, record: dict[str, Any] | None) -> None:
        """Set (or, with None, delete) a glossary term."""
        self._terms[term] = record

    # ----------------------------------------------------------------- output
    def is_empty(self) -> bool:
        return (self._meta is None and not self._assets and not self._translations and not self._terms
                and not self._memory)

    def memory_unit(self, unit_id: str) -> dict[str, Any] | None:
        """A translation memory unit of memory.json (storage.memory), with this transaction's changes."""
        if unit_id in self._memory:
            return self._memory[unit_id]
        return self.base.memory_units.peek(unit_id)

    def put_memory_unit(self, unit_id: str, unit: dict[str, Any] | None) -> None:
        """Set (None: remove) a unit of memory.json; new units go after the others."""
        self._memory[unit_id] = unit

    def build(self) -> tuple[Snapshot, dict[str, bytes | None]]:
        """The snapshot after this transaction and the files it changes (path -> bytes, None = deleted)."""
        base = self.base
        changed: dict[str, bytes | None] = {}
        meta = self.peek_meta()
        if self._meta is not None and self._meta != base.meta:
            if self.is_live_key is not None:  # locale names, tags
                refuse_keys_in_record("", meta, self.is_live_key)
            changed[PROJECT_FILE] = dump_project(meta)

        asset_index = base.asset_index
        if self._index_changes:
            asset_index = dict(base.asset_index)
            for asset_id, number in self._index_changes.items():
                if number is None:
                    asset_index.pop(asset_id, None)
                else:
                    asset_index[asset_id] = number

        def seq_of(asset_id: str) -> int:
            return self.asset(asset_id)["n"]  # type: ignore[index]

        if self._reuse is None:  # (a rebased transaction has its first build's, and is never changed)
            self._grouped = {"": self._group_by_chunk(self._assets, base.asset_index)}
            for code, entries in self._translations.items():
                self._grouped[code] = self._group_by_chunk(entries, base.asset_index)
        assert self._grouped is not None
        asset_chunks = dict(base.asset_chunks)
        for number, changes in self._grouped[""].items():
            chunk = self._chunk_with("", number, asset_chunks.get(number), changes, seq_of)
            asset_chunks[number] = chunk
            changed[asset_path(number)] = chunk.to_bytes() if len(chunk) else None
            if not len(chunk):
                del asset_chunks[number]

        codes = self.locale_codes()
        locale_chunks: dict[str, dict[int, Chunk[TranslationRecord]]] = {
            code: dict(base.locale_chunks.get(code, {})) for code in codes}
        for code in set(base.locale_chunks) - set(codes):  # dropped locales lose their directory
            for number in base.locale_chunks[code]:
                changed[locale_path(code, number)] = None
        for code in self._translations:
            if code not in locale_chunks:
                continue
            chunks = locale_chunks[code]
            for number, changes in self._grouped[code].items():
                chunk = self._chunk_with(code, number, chunks.get(number), changes, seq_of)
                path = locale_path(code, number)
                if len(chunk):
                    chunks[number] = chunk
                    changed[path] = chunk.to_bytes()
                else:
                    chunks.pop(number, None)
                    changed[path] = None
        glossary = base.glossary
        if self._terms:
            glossary = base.glossary.with_changes(self._terms, term_order)  # type: ignore[arg-type]
            if len(glossary) > MAX_GLOSSARY_TERMS:
                raise Invalid(f"The glossary would have {len(glossary)} terms {describe('max_glossary_terms')}")
            self._refuse_keys(glossary, self._terms)
            changed[GLOSSARY_FILE] = glossary.to_bytes() if len(glossary) else None
        memory_units = base.memory_units
        if self._memory:
            memory_units = self._memory_with_changes(base.memory_units)
            changed[MEMORY_FILE] = memory_units.to_bytes() if len(memory_units) else None
        # deleting a file that the base commit never had is no change at all
        changed = {path: data for path, data in changed.items() if data is not None or path in base.files}
        if asset_chunks.keys() != base.asset_chunks.keys() and not self._index_changes:
            asset_index = build_asset_index(asset_chunks)
        snapshot = Snapshot(None, meta, dict(base.files), asset_chunks, locale_chunks, asset_index,
                            glossary=glossary)
        snapshot.memory_units = memory_units
        return snapshot, changed

    def _memory_with_changes(self, old: Chunk[Any]) -> Chunk[Any]:
        position = {unit_id: n for n, unit_id in enumerate([*old.keys(), *self._memory])}
        if self.is_live_key is not None:
            for unit_id, unit in self._memory.items():
                if unit is not None:
                    refuse_keys_in_record(unit_id, unit, self.is_live_key, id_field="unit")
        return old.with_changes(self._memory, position.__getitem__)

    def _chunk_with(self, kind: str, number: int, old: Chunk[Any] | None, changes: dict[str, Any],
                    order: Callable[[str], int]) -> Chunk[Any]:
        """A base chunk (kind "" = assets, else a locale; None: no such file yet) with this transaction's
        changes: the first build's result when the chunk is the one that build started from (a rebase)."""
        if self._reuse is not None:
            before, after = self._reuse
            if _chunks_of(before, kind).get(number) is old:
                return _chunks_of(after, kind).get(number, EMPTY)
        chunk = (old or (EMPTY if kind == "" else EMPTY_TRANSLATIONS)).with_changes(changes, order)
        self._refuse_keys(chunk, changes)
        self._keep_strings(kind, number, old, chunk, changes)
        return chunk

    def _keep_strings(self, kind: str, number: int, old: Chunk[Any] | None, chunk: Chunk[Any],
                      changes: dict[str, Any]) -> None:
        """Keep with a new chunk its entries' values of the kind's bulk field (bulk_field), from the old
        chunk's as this transaction read them and the changed entries, when reads go by whole chunks (an
        import): a prepared write saves them with the chunk's blob (storage.snapshot.note_derived), and the
        next import reads them there instead of off every chunk's lines."""
        if self._whole is None:  # (every other write: nothing to look up)
            return
        field = bulk_field(kind)
        before = {} if old is None or not len(old) else self._strings.get((kind, number, field))
        if before is None:
            return
        values = {**before, **{asset_id: entry.get(field) for asset_id, entry in changes.items() if entry is not None}}
        chunk.keep(STRINGS, (field, aligned_strings(chunk, values)))

    def rebase(self, head: Snapshot, built: Snapshot) -> "Transaction | None":
        """This transaction's changes on `head`, a later snapshot, when nothing it read or changed differs
        between its base and `head` (then applying it to either is the same write); else None.

        `built` is this transaction's build() result: the rebased build reuses its chunks wherever `head`
        still has the base's chunk, so that it costs the chunks other writers changed meanwhile, not the
        whole change (a 100k-unit import committed behind a few translation writes).
        """
        base = self.base
        if head.meta != base.meta or head.asset_index.keys() != base.asset_index.keys():
            return None  # the locales, the next asset number or the set of assets moved: prepare again
        if (self._terms or self._read_glossary) and head.glossary is not base.glossary:
            return None  # another write changed the glossary this one reads or writes
        for kind in {""} | set(base.locale_chunks) | set(head.locale_chunks):
            touched = self._read.get(kind, set())
            written = self._assets if kind == "" else self._translations.get(kind, {})
            old_chunks, new_chunks = _chunks_of(base, kind), _chunks_of(head, kind)
            for number in old_chunks.keys() | new_chunks.keys():
                old, new = old_chunks.get(number), new_chunks.get(number)
                if old is new:
                    continue
                changed = new.changed_since(old) if new is not None else tuple(old.keys())  # type: ignore[union-attr]
                if any(key in touched or key in written for key in changed):
                    return None
        rebased = Transaction(head, self.is_live_key)
        rebased._meta, rebased._assets, rebased._translations = self._meta, self._assets, self._translations
        rebased._memory = self._memory  # units are set whole, by key: they apply to any head
        rebased._index_changes, rebased._read, rebased._grouped = self._index_changes, self._read, self._grouped
        rebased._terms, rebased._read_glossary = self._terms, self._read_glossary
        rebased.trailers, rebased.merge_parents = self.trailers, self.merge_parents
        rebased._reuse = (base, built)
        return rebased

    def _refuse_keys(self, chunk: Chunk[Any], changes: dict[str, Any]) -> None:
        """Invalid, naming the field, when a record put holds a live API key as its catalogue line does. Checked
        here, on the lines the chunk has just serialised, rather than at each put: one scan of a line already
        made instead of two serialisations per record (a third of a 100k-unit import's apply)."""
        if self.is_live_key is None:
            return
        written = [asset_id for asset_id, record in changes.items() if record is not None]
        if not may_hold_key("\n".join(chunk.line(asset_id) for asset_id in written)):
            return  # the usual case: one look at all the lines
        for asset_id in written:
            if may_hold_key(chunk.line(asset_id)):
                refuse_keys_in_record(asset_id, changes[asset_id], self.is_live_key)

    def _group_by_chunk(self, changes: dict[str, Any], base_index: dict[str, int]) -> dict[int, dict[str, Any]]:
        """Split per-asset changes by chunk; an asset removed in this transaction is looked up in the base."""
        grouped: dict[int, dict[str, Any]] = {}
        for asset_id, value in changes.items():
            number = self.chunk_of(asset_id)
            if number is None:
                number = base_index.get(asset_id)
            if number is None:
                continue
            grouped.setdefault(number, {})[asset_id] = value
        return grouped


def term_order(term: str) -> tuple[str, str]:
    """Where a term goes in glossary.json: sorted case-insensitively (then exactly), so the file is stable."""
    return term.casefold(), term


def _chunks_of(snapshot: Snapshot, kind: str) -> dict[int, Chunk[Any]]:
    """The asset chunks (kind "") or a locale's chunks of a snapshot."""
    return snapshot.asset_chunks if kind == "" else snapshot.locale_chunks.get(kind, {})


__all__ = ["Transaction", "ASSETS_DIR", "LOCALES_DIR"]
