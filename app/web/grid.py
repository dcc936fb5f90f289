"""The translator's grid (/translate/<locale>): which rows a page shows, and what each row holds.

A page is found by walking the asset chunks in creation order from where the previous page ended (`after`, an
asset ID: a cursor, so that rows translated meanwhile do not shift the next page) until it has its rows, so a
page of a 100k-asset project reads a few chunks, not the project. Most filters are decided on a chunk's raw
lines (is the asset in the locale's chunk, may its line hold a flag, tags, the searched words); an entry is
parsed only when its line may match. A plural group is one row: its forms per the locale's CLDR rules, each
form one asset (the group's asset, then its members, as app/records.plural_translations numbers them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

from formats.plurals import plural_rules
from storage import AssetRecord, TranslationRecord
from storage.canonical import EMPTY, Chunk
from storage.progress import PROGRESS, status_of
from storage.snapshot import Snapshot

# The state filter's words, in the order the page offers them; "todo" is what save-and-next looks for.
STATES = ("untranslated", "flagged", "translated", "all")
NEEDS_WORK = ("untranslated", "flagged")
JSON_UNSAFE = ('"', "\\")  # characters a line escapes: a search holding one is checked on parsed texts only
CHUNK_INDEX = "grid-chunk-index"  # an asset chunk's ChunkIndex, kept on the chunk (a new version makes its own)


class ChunkIndex(NamedTuple):
    """What a page scan asks of every asset of a chunk, read once per version of the chunk (asset chunks change
    when assets do, not when translations do)."""

    tags: frozenset[str]  # every tag an asset of the chunk has
    groups: frozenset[str]  # plural groups' own assets
    members: frozenset[str]  # the other forms of a group (shown in their group's row)


def chunk_index(snapshot: Snapshot, number: int) -> ChunkIndex:
    chunk = snapshot.asset_chunk(number)
    found = chunk.kept(CHUNK_INDEX)
    if found is None:
        entries = snapshot.asset_entries(number)
        found = ChunkIndex(frozenset(tag for asset in entries.values() for tag in asset.get("tags", ())),
                           frozenset(key for key, asset in entries.items() if asset.get("plurals")),
                           frozenset(key for key, asset in entries.items() if asset.get("plural_of")))
        chunk.keep(CHUNK_INDEX, found)
    return found


def may_hold(state: str, targets: Chunk | None, assets: int) -> bool:
    """Whether a locale chunk may hold a translation in `state`, from its progress counts (storage.progress)
    when they were counted; a chunk with none of that state is skipped without reading a line."""
    if state == "all":
        return True
    counts = targets.kept(PROGRESS) if targets is not None else {"translated": 0, "flagged": 0}
    if counts is None:
        return True
    held = {"untranslated": assets - counts["translated"], "flagged": counts["flagged"],
            "translated": counts["translated"] - counts["flagged"]}
    return held[state] > 0


@dataclass(frozen=True)
class Filters:
    state: str = "all"
    tag: str = ""
    query: str = ""

    def link(self) -> dict[str, str]:
        """The filters as a page link's query arguments (defaults left out)."""
        return {name: value for name, value in (("state", self.state if self.state != "all" else ""),
                                                 ("tag", self.tag), ("q", self.query)) if value}


@dataclass
class Cell:
    """One editable text: an asset in the locale (a plural form is one cell of its group's row)."""

    asset_id: str
    form: str  # the CLDR category of a plural form; "" for a text without plurals
    source: str
    entry: TranslationRecord | None  # the stored translation, None when untranslated

    @property
    def text(self) -> str:
        return self.entry["text"] if self.entry else ""

    @property
    def state(self) -> str:
        """untranslated, flagged or translated (the grid's words, not the export statuses)."""
        if self.entry is None:
            return "untranslated"
        return "flagged" if self.entry.get("flag") else "translated"

    @property
    def status(self) -> str:
        return status_of(self.entry)


@dataclass
class Row:
    asset_id: str
    asset: AssetRecord
    cells: list[Cell]
    missing_forms: list[str] = field(default_factory=list)  # forms the locale has and the group has no asset for

    def states(self) -> set[str]:
        return {cell.state for cell in self.cells}


@dataclass
class Page:
    rows: list[Row]
    next_after: str | None  # the cursor of the next page; None: this is the last


def cell_state(chunk: Chunk, asset_id: str) -> str:
    """A translation's grid state from its chunk's line (parsed only when the line may hold a flag)."""
    if asset_id not in chunk:
        return "untranslated"
    if chunk.may_have_field(asset_id, "flag") and (chunk.peek(asset_id) or {}).get("flag"):
        return "flagged"
    return "translated"


def source_text(snapshot: Snapshot, asset_id: str) -> str:
    entry = snapshot.peek_translation(asset_id, snapshot.source_locale)
    return entry["text"] if entry else ""


def plural_members(asset: AssetRecord, locale: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The (form, asset) pairs of a group's row in `locale` (the group's own asset first, then its members),
    and the forms the locale uses that the group has no asset for."""
    forms = plural_rules(locale).forms
    members = asset.get("plurals", [])[: max(0, len(forms) - 1)]
    return list(zip(forms, [None, *members])), list(forms[1 + len(members):])


def build_row(snapshot: Snapshot, asset_id: str, asset: AssetRecord, locale: str) -> Row:
    if not asset.get("plurals"):
        return Row(asset_id, asset, [Cell(asset_id, "", source_text(snapshot, asset_id),
                                          snapshot.peek_translation(asset_id, locale))])
    pairs, missing = plural_members(asset, locale)
    cells = [Cell(member or asset_id, form, source_text(snapshot, member or asset_id),
                  snapshot.peek_translation(member or asset_id, locale)) for form, member in pairs]
    return Row(asset_id, asset, cells, missing)


class _Scan:
    """The candidates of one chunk, tested line by line before any entry is parsed."""

    def __init__(self, snapshot: Snapshot, locale: str, filters: Filters, number: int):
        self.snapshot, self.locale, self.filters = snapshot, locale, filters
        self.index = chunk_index(snapshot, number)
        self.assets = snapshot.asset_chunk(number)
        self.targets = snapshot.locale_chunk(locale, number) or EMPTY
        self.sources = snapshot.locale_chunk(snapshot.source_locale, number) or EMPTY
        query = filters.query.casefold()
        self.query = query
        # a line holds a text verbatim (non-ASCII kept) unless the query has characters JSON escapes
        self.raw_query = query if query and not any(char in query for char in JSON_UNSAFE) and query.isprintable() \
            else ""

    def row(self, asset_id: str) -> Row | None:
        """The row of `asset_id` when it passes the filters, else None."""
        filters, index = self.filters, self.index
        if asset_id in index.members:
            return None  # a member is a form in its group's row
        if filters.tag and not self.assets.may_have_field(asset_id, "tags"):
            return None
        if self.raw_query and not self._may_contain(asset_id):
            return None
        if asset_id not in index.groups and filters.state != "all":
            if cell_state(self.targets, asset_id) != filters.state:  # the common case: decided on the lines
                return None
        asset = self.assets.peek(asset_id)  # not kept: a scan may read many
        if asset is None:
            return None
        if filters.tag and filters.tag not in asset.get("tags", ()):
            return None
        row = build_row(self.snapshot, asset_id, asset, self.locale)
        if filters.state != "all" and filters.state not in row.states():
            return None
        if self.query and not self._contains(row):
            return None
        return row

    def _may_contain(self, asset_id: str) -> bool:
        query = self.raw_query
        if query in asset_id.casefold():
            return True
        lines = (chunk.line(asset_id) for chunk in (self.sources, self.targets) if asset_id in chunk)
        # a plural group's forms live on other lines: its row is checked on the parsed texts
        return any(query in line.casefold() for line in lines) or asset_id in self.index.groups

    def _contains(self, row: Row) -> bool:
        query = self.query
        return query in row.asset_id.casefold() or any(
            query in cell.source.casefold() or query in cell.text.casefold() for cell in row.cells)


def grid_page(snapshot: Snapshot, locale: str, filters: Filters, after: str | None, size: int) -> Page:
    """The first `size` rows after the asset `after` (None: from the start) that pass `filters`."""
    rows: list[Row] = []
    for asset_id, row in _rows(snapshot, locale, filters, after):
        if len(rows) == size:
            return Page(rows, rows[-1].asset_id)
        rows.append(row)
    return Page(rows, None)


def _rows(snapshot: Snapshot, locale: str, filters: Filters, after: str | None) -> Iterator[tuple[str, Row]]:
    numbers = snapshot.chunk_numbers()
    start = snapshot.asset_index.get(after) if after else None
    if start is not None:
        numbers = [number for number in numbers if number >= start]
    for number in numbers:
        if not _may_match(snapshot, locale, filters, number):
            continue
        scan = _Scan(snapshot, locale, filters, number)
        keys: Iterator[str] = scan.assets.keys()
        if start is not None and number == start:
            keys = _after(keys, after)  # type: ignore[arg-type]
        for asset_id in keys:
            row = scan.row(asset_id)
            if row is not None:
                yield asset_id, row


def _may_match(snapshot: Snapshot, locale: str, filters: Filters, number: int) -> bool:
    """False when no row of chunk `number` can pass the filters (decided on the chunk's index and counts)."""
    index = chunk_index(snapshot, number)
    if filters.tag and filters.tag not in index.tags:
        return False
    # a group's row holds forms from other chunks: its state is not this chunk's to tell
    return bool(index.groups) or may_hold(filters.state, snapshot.locale_chunk(locale, number),
                                          len(snapshot.asset_chunk(number)))


def _after(keys: Iterator[str], after: str) -> Iterator[str]:
    for key in keys:
        if key == after:
            break
    return keys
