"""Loco's JSON records (loco-compat §4) built from a storage snapshot.

Choices where Loco's material is silent: dates are ISO 8601 UTC with `+00:00`; absent objects and dates are
`null`; absent strings are `""`; `aliases` is always an object.
"""
from __future__ import annotations

from array import array
from itertools import accumulate, groupby
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from formats.plurals import plural_rules
from storage import AssetProgress, AssetRecord, TranslationRecord, UserRef, derivations
from storage.canonical import Chunk
from storage.history import Revision
from storage.progress import status_of
from storage.snapshot import Snapshot


# ----------------------------------------------------------------------------- statuses
def user_record(user: UserRef | None) -> dict[str, Any] | None:
    if not user:
        return None
    return {"id": user.get("id", 0), "name": user.get("name", ""), "email": user.get("email", "")}


# ----------------------------------------------------------------------------- assets
def asset_record(snapshot: Snapshot, asset_id: str, asset: AssetRecord | None = None,
                 progress: AssetProgress | None = None) -> dict[str, Any]:
    if asset is None:
        asset = snapshot.existing_asset(asset_id)
    return {
        "id": asset_id,
        "type": asset.get("type", "text"),
        "context": asset.get("context", ""),
        "notes": asset.get("notes", ""),
        "printf": asset.get("printf", ""),
        "created": asset.get("created"),
        "modified": asset.get("modified"),
        "plurals": len(asset.get("plurals", [])),
        "tags": list(asset.get("tags", [])),
        "aliases": dict(asset.get("aliases", {})),
        "progress": progress if progress is not None else snapshot.asset_progress(asset_id),
    }


ListItem = tuple[str, tuple[str, ...], bytes]  # (id, tags, the pretty rendering of its Asset record in UTF-8)
SEPARATOR = b",\n"  # between two elements of a pretty JSON array


class ChunkList(NamedTuple):
    """One asset chunk's part of the asset list, and the chunks it was built from.

    The renderings are kept joined, as the list's body is made of them: serving a warm list joins one part per
    chunk instead of one per asset (100k strings, then their encoding, were most of a warm 100k-asset list).
    """

    codes: tuple[str, ...]  # the project's locales
    assets: Chunk[AssetRecord]  # the asset chunk
    sources: tuple[Chunk[TranslationRecord] | None, ...]  # the same-numbered chunk of each locale (None: it has none)
    ids: list[str]  # of the assets, in creation order
    tags: list[tuple[str, ...]]  # of each
    body: bytes  # their renderings, each followed by SEPARATOR but the last
    starts: array  # where each rendering starts in `body` + SEPARATOR, then the length of that

    def span(self, first: int, last: int) -> bytes:
        """The renderings `first` to `last` (included), as they are joined in the list."""
        return self.body[self.starts[first]:self.starts[last + 1] - len(SEPARATOR)]

    def renderings(self, indices: Sequence[int]) -> list[bytes]:
        """The renderings at `indices` (ascending), one span per run of consecutive ones: the whole body when
        every one is wanted."""
        if len(indices) == len(self.ids):
            return [self.body] if indices else []
        return [self.span(first, last) for first, last in _runs(indices)]


def _runs(indices: Iterable[int]) -> Iterator[tuple[int, int]]:
    """(first, last) of each run of consecutive numbers among ascending `indices`."""
    for _, run in groupby(enumerate(indices), lambda pair: pair[1] - pair[0]):
        first, *rest = [index for _, index in run]
        yield first, rest[-1] if rest else first


class _ChunkListBuilder:
    """A ChunkList put together from new renderings and spans of an older version's, which are not cut apart."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.tags: list[tuple[str, ...]] = []
        self.pieces: list[bytes] = []
        self.lengths: list[int] = []  # of each rendering with its separator

    def add(self, item: ListItem) -> None:
        self.ids.append(item[0])
        self.tags.append(item[1])
        self.pieces.append(item[2])
        self.lengths.append(len(item[2]) + len(SEPARATOR))

    def add_span(self, older: ChunkList, first: int, last: int) -> None:
        self.ids += older.ids[first:last + 1]
        self.tags += older.tags[first:last + 1]
        self.pieces.append(older.span(first, last))
        starts = older.starts
        self.lengths += [starts[index + 1] - starts[index] for index in range(first, last + 1)]

    def build(self, codes: tuple[str, ...], assets: Chunk[AssetRecord],
              sources: tuple[Chunk[TranslationRecord] | None, ...]) -> ChunkList:
        starts = array("q", accumulate(self.lengths, initial=0))
        return ChunkList(codes, assets, sources, self.ids, self.tags, SEPARATOR.join(self.pieces), starts)


ASSET_LIST = "asset-list"


# The list cache is handed unchanged from each version of an asset chunk to the next (a write makes a new one):
# the reader that finds it stale compares what it was built from with its snapshot's chunks, however many writes
# apart, and builds again only the records that differ.
derivations.register(ASSET_LIST)


def asset_list(snapshot: Snapshot, matches: Callable[[tuple[str, ...]], bool] | None = None
               ) -> tuple[list[str], list[bytes]]:
    """The IDs of the assets whose tags `matches` (None: every asset), in creation order, and their pretty
    renderings in parts to join with SEPARATOR (a whole chunk's in one part when every asset is listed).

    Cached per asset chunk. When it or the same-numbered locale chunks (which hold the translations counted
    in `progress`) changed since the cache was built, by any number of writes, only the records of the
    assets whose entries differ are built again. Only the rendering is kept, not the record (a 100k-asset
    list kept both: hundreds of MB per worker).
    """
    codes = tuple(record["code"] for record in snapshot.locales())
    ids: list[str] = []
    parts: list[bytes] = []
    for number in snapshot.chunk_numbers():
        part = _chunk_list(snapshot, number, codes)
        if matches is None:
            listed: Sequence[int] = range(len(part.ids))
            ids += part.ids
        else:
            listed = [index for index, tags in enumerate(part.tags) if matches(tags)]
            ids += [part.ids[index] for index in listed]
        parts += part.renderings(listed)
    return ids, parts


def _chunk_list(snapshot: Snapshot, number: int, codes: tuple[str, ...]) -> ChunkList:
    chunk = snapshot.asset_chunk(number)
    sources = tuple(snapshot.locale_chunk(code, number) for code in codes)
    cached: ChunkList | None = chunk.kept(ASSET_LIST)
    if cached is None or cached.codes != codes:  # a locale added or removed changes every record's progress
        found = _persisted_list(snapshot, number, codes, sources)
        if found is not None:
            chunk.keep(ASSET_LIST, found)
            return found
        changed = None
    elif cached.assets is chunk and all(a is b for a, b in zip(cached.sources, sources)):
        return cached
    else:
        changed = _changed_assets(cached, chunk, sources)
    builder = _ChunkListBuilder()
    # past half the chunk, one decode of each whole chunk is cheaper than reading the changed entries one by one
    if cached is None or changed is None or 2 * len(changed) > len(chunk):
        progress = snapshot.chunk_asset_progress(number)
        for asset_id, asset in snapshot.asset_entries(number).items():
            builder.add(_list_item(snapshot, asset_id, asset, progress[asset_id]))
    else:
        _rebuild_changed(snapshot, chunk, changed, cached, builder)
    built = builder.build(codes, chunk, sources)
    chunk.keep(ASSET_LIST, built)
    key = _list_key(snapshot, number, codes)
    if key is not None:
        snapshot.save(LISTS, key, (built.tags, built.body, built.starts.tobytes()))
    return built


LISTS = "asset-lists"  # the storage.derived part that keeps them: 40 MB at 100k assets, read on the first list


def _list_key(snapshot: Snapshot, number: int, codes: tuple[str, ...]):
    """The persisted key of one asset chunk's list: the blob ids of the chunks it is made from (None when the
    snapshot's file table is not final, as in a transaction)."""
    blobs = snapshot.chunk_blobs(number, [(code, number) for code in codes])
    if blobs is None:
        return None
    return ASSET_LIST, codes, (blobs[0], *blobs[1])


def _persisted_list(snapshot: Snapshot, number: int, codes: tuple[str, ...],
                    sources: tuple[Chunk[TranslationRecord] | None, ...]) -> ChunkList | None:
    """The chunk's list as a process saved it for the same chunk files (storage.derived), if one did."""
    key = _list_key(snapshot, number, codes)
    found = snapshot.saved(LISTS, key) if key is not None else None
    if found is None:
        return None
    tags, body, starts = found
    chunk = snapshot.asset_chunk(number)  # its keys are the list's IDs: the key holds its blob id
    return ChunkList(codes, chunk, sources, list(chunk.keys()), list(tags), body,
                     array("q", starts))


def _rebuild_changed(snapshot: Snapshot, chunk: Chunk[AssetRecord], changed: set[str], cached: ChunkList,
                     builder: _ChunkListBuilder) -> None:
    """The chunk's list from new records of the `changed` assets and spans of `cached` for the others."""
    position = {asset_id: index for index, asset_id in enumerate(cached.ids)}
    kept: list[int] = []  # a run of consecutive renderings of `cached`, in the chunk's order

    def add_kept() -> None:
        if kept:
            builder.add_span(cached, kept[0], kept[-1])
            kept.clear()

    for asset_id in chunk.keys():
        if asset_id in changed:
            add_kept()
            builder.add(_list_item(snapshot, asset_id, chunk.peek(asset_id)))
            continue
        index = position[asset_id]
        if kept and index != kept[-1] + 1:
            add_kept()
        kept.append(index)
    add_kept()


def _changed_assets(cached: ChunkList, chunk: Chunk[AssetRecord],
                    sources: tuple[Chunk[TranslationRecord] | None, ...]) -> set[str]:
    """The assets whose record or translations differ between the chunks `cached` was built from and these."""
    changed = set(chunk.changed_since(cached.assets))
    for before, after in zip(cached.sources, sources):
        if after is None:
            changed.update(before.keys() if before is not None else ())
        else:
            changed.update(after.changed_since(before))
    return changed


def _list_item(snapshot: Snapshot, asset_id: str, asset: AssetRecord | None,
               progress: AssetProgress | None = None) -> ListItem:
    from .jsonio import pretty_item

    record = asset_record(snapshot, asset_id, asset, progress)
    return asset_id, tuple(record["tags"]), pretty_item(record).encode("utf-8")


# ----------------------------------------------------------------------------- locales
def plural_record(code: str) -> dict[str, Any]:
    rules = plural_rules(code)
    return {"length": rules.length, "equation": rules.equation, "forms": list(rules.forms)}


def locale_record(snapshot: Snapshot, code: str) -> dict[str, Any]:
    record = snapshot.existing_locale(code)
    source = code == snapshot.source_locale
    progress = snapshot.locale_progress(code)
    return {
        "code": code,
        "name": record["name"],
        "source": source,
        "native": source,  # deprecated alias of `source`, still in Loco's 1.0.29 model
        "plurals": plural_record(code),
        "progress": {key: progress[key] for key in ("translated", "untranslated", "flagged", "words")},
    }


def locale_progress_detail(snapshot: Snapshot, code: str) -> dict[str, int]:
    """Loco's dynamic progress object: `translated` and `untranslated` always, other statuses when present."""
    progress = snapshot.locale_progress(code)
    detail = {"translated": progress["translated"], "untranslated": progress["untranslated"]}
    if progress["flagged"]:
        detail["flagged"] = progress["flagged"]
    for status, count in progress["by_status"].items():
        if status != "translated" and count:
            detail[status] = count
    return detail


# ----------------------------------------------------------------------------- translations
def _translation_fields(entry: TranslationRecord | None, asset_id: str | None) -> dict[str, Any]:
    fields: dict[str, Any] = {} if asset_id is None else {"id": asset_id}
    fields.update({
        "status": status_of(entry),
        "flagged": bool(entry and entry.get("flag")),
        "flag": entry.get("flag", "") if entry else "",
        "translated": entry is not None,
        "translation": entry["text"] if entry else "",
        "revision": entry["rev"] if entry else 0,
        "comments": 0,
        "modified": entry.get("modified") if entry else None,
        "author": user_record(entry.get("author")) if entry else None,
        "flagger": user_record(entry.get("flagger")) if entry and entry.get("flag") else None,
    })
    return fields


def translation_record(snapshot: Snapshot, asset_id: str, code: str) -> dict[str, Any]:
    """The Translation record; `plurals` holds the plural-form assets the locale uses, each with its form."""
    record = _translation_fields(snapshot.translation(asset_id, code), asset_id)
    record["locale"] = locale_record(snapshot, code)
    record["plurals"] = plural_translations(snapshot, asset_id, code)
    return record


def plural_translations(snapshot: Snapshot, asset_id: str, code: str) -> list[dict[str, Any]]:
    """Members 1.. of the plural group, up to the locale's number of forms, by index (gettext msgstr[i])."""
    members = snapshot.existing_asset(asset_id).get("plurals", [])
    if not members:
        return []
    forms = plural_rules(code).forms
    out = []
    for index, member in enumerate(members[: max(0, len(forms) - 1)], start=1):
        fields = _translation_fields(snapshot.translation(member, code), member)
        fields["form"] = forms[index]
        out.append(fields)
    return out


def revision_record(entry: Revision) -> dict[str, Any]:
    """A revision (storage.history.revisions); `pushedBy` only for one a push made: the pushing key's user,
    where `author` is whoever the pushed commit named."""
    fields = _translation_fields(entry, None)
    del fields["comments"]
    if entry.get("pusher"):
        fields["pushedBy"] = user_record(entry["pusher"])
    return fields
