"""Translation progress, counted per chunk: a locale's counts, and each asset's count of locales.

A locale chunk's counts are derived data (storage.derivations): a write updates them from the entries it changed
instead of recounting the chunk, and storage.derived persists them by blob id, so that a cold open of a big
project answers its locales' progress without reading a chunk.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from vocabulary import translation_statuses

from .canonical import EMPTY, EMPTY_TRANSLATIONS, Chunk
from .derivations import register
from .records import AssetProgress, AssetRecord, ChunkCounts, LocaleProgress, TranslationRecord

PROGRESS = "progress"  # the name of a locale chunk's counts among its derived data


def status_of(entry: TranslationRecord | None) -> str:
    """A translation's status in the vocabulary of the export `status` parameter."""
    if entry is None:
        return translation_statuses(False, False, None)[0]
    return translation_statuses(True, entry["text"] == "", entry.get("flag"))[0]


# ----------------------------------------------------------------------------- a locale
def chunk_counts(chunk: Chunk[TranslationRecord]) -> ChunkCounts:
    """Counts of one locale chunk, entry by entry (later versions get theirs from _updated_counts)."""
    return _counts_of(chunk.peek_all().values())  # one decode of the chunk, nothing kept


def _counts_of(entries: Iterable[TranslationRecord]) -> ChunkCounts:
    """The counts of these entries (as _count adds them up one by one, with locals: a chunk at a time)."""
    flagged = words = 0
    by_status: dict[str, int] = {}
    translated = 0
    for entry in entries:
        translated += 1
        flagged += bool(entry.get("flag"))
        words += len(entry["text"].split())
        status = status_of(entry)
        by_status[status] = by_status.get(status, 0) + 1
    return {"translated": translated, "flagged": flagged, "words": words, "by_status": by_status}


def _updated_counts(counts: ChunkCounts, parent: Chunk[TranslationRecord], chunk: Chunk[TranslationRecord],
                    keys: tuple[str, ...], values: Mapping[str, TranslationRecord | None] | None) -> ChunkCounts:
    """A chunk's counts from its parent's and the entries that changed between them, read from `values` when
    the writer gave them. When most entries changed (an import rewrites whole chunks) the chunk is counted
    afresh instead: from the values, parsing only the entries they lack."""
    def new(key: str) -> TranslationRecord | None:
        return values[key] if values is not None and key in values else chunk.peek(key)

    if 2 * len(keys) > len(chunk):
        if values is None:
            return chunk_counts(chunk)
        return _counts_of(entry for entry in map(new, chunk.keys()) if entry is not None)
    counts = _copy_counts(counts)
    for key in keys:
        _count(counts, parent.peek(key), -1)
        _count(counts, new(key), +1)
    return counts


register(PROGRESS, _updated_counts, persisted=1)  # a function of the chunk's bytes alone: kept by storage.derived
# the counts of no entry: new locale files (an import's) are counted from the values written into them
EMPTY_TRANSLATIONS.derived[PROGRESS] = chunk_counts(EMPTY)


def _copy_counts(counts: ChunkCounts) -> ChunkCounts:
    copied = counts.copy()  # (a copy, then a field set: cheaper than {**counts, ...})
    copied["by_status"] = dict(counts["by_status"])
    return copied


def _count(counts: ChunkCounts, entry: TranslationRecord | None, sign: int) -> None:
    if entry is None:
        return
    counts["translated"] += sign
    counts["flagged"] += sign * bool(entry.get("flag"))
    counts["words"] += sign * len(entry["text"].split())
    status = status_of(entry)
    counts["by_status"][status] = counts["by_status"].get(status, 0) + sign
    if not counts["by_status"][status]:
        del counts["by_status"][status]


def locale_counts(chunks: Iterable[Chunk[TranslationRecord]], assets: int) -> LocaleProgress:
    """translated (flagged included), untranslated, flagged, words, and a count per status, of a locale whose
    chunks are `chunks` in a project of `assets` assets; each chunk's counts are kept on it."""
    translated = flagged = words = 0
    by_status: dict[str, int] = {}
    for chunk in chunks:
        counts: ChunkCounts | None = chunk.derived.get(PROGRESS)
        if counts is None:
            counts = chunk.derived[PROGRESS] = chunk_counts(chunk)
        translated += counts["translated"]
        flagged += counts["flagged"]
        words += counts["words"]
        for status, count in counts["by_status"].items():
            by_status[status] = by_status.get(status, 0) + count
    return {"translated": translated, "flagged": flagged, "words": words, "untranslated": assets - translated,
            "by_status": by_status}


# ----------------------------------------------------------------------------- assets
def asset_counts(translations: Iterable[TranslationRecord | None], locales: int) -> AssetProgress:
    """An asset's progress record from its entry in each of the `locales` locales (None: untranslated):
    counts of locales, translated (flagged included), untranslated, flagged."""
    translated = flagged = 0
    for entry in translations:
        if entry is not None:
            translated += 1
            flagged += bool(entry.get("flag"))
    return _asset_record(translated, flagged, locales)


def _asset_record(translated: int, flagged: int, locales: int) -> AssetProgress:
    return {"translated": translated, "untranslated": locales - translated, "flagged": flagged}


def chunk_asset_counts(assets: Chunk[AssetRecord], translations: list[Chunk[TranslationRecord] | None]
                       ) -> dict[str, AssetProgress]:
    """asset_counts of every asset of one asset chunk, from the same-numbered chunk of each locale (None: it
    has none), with one C-level decode of each (a decode per translation was most of a first 100k-asset list:
    500,000 of them)."""
    counts = {asset_id: [0, 0] for asset_id in assets.keys()}
    for chunk in translations:
        for asset_id, entry in (chunk.peek_all() if chunk is not None else {}).items():
            count = counts.get(asset_id)
            if count is not None:
                count[0] += 1
                count[1] += bool(entry.get("flag"))
    return {asset_id: _asset_record(translated, flagged, len(translations))
            for asset_id, (translated, flagged) in counts.items()}
