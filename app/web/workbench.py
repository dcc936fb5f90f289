"""What the grid asks of translation memory and of the quality checks: one adapter each.

The grid calls `suggestions_for` and `checks_for` and nothing else of either. Today suggestions come from
`exact_matches`, a stand-in that finds other assets of this project with the very same source text; the
translation memory's index (issue 23, item 2) replaces it behind `suggestions_for`. Checks are app/qa.py's.
"""
from __future__ import annotations

from typing import Any

from storage.snapshot import Snapshot

from ..qa import check_translation
from .grid import source_text

SUGGESTIONS_SHOWN = 3  # Alt+1 .. Alt+3 take them
EXACT_SOURCES = "grid-exact-sources"  # a source chunk's {text: [asset ids]}, kept on the chunk (not handed on)


def suggestions_for(snapshot: Snapshot, asset_id: str, locale: str) -> list[dict[str, Any]]:
    """The best suggestions for translating `asset_id` into `locale`, best first, each in the suggestions API's
    shape: text, score (0-100), source, project, asset, author, commit."""
    return exact_matches(snapshot, asset_id, locale)[:SUGGESTIONS_SHOWN]


def checks_for(snapshot: Snapshot, asset_id: str, locale: str, text: str) -> list[str]:
    """What the checks find wrong with `text` as the translation of `asset_id` into `locale` (warnings: a save
    is never refused for them)."""
    asset = snapshot.existing_asset(asset_id)
    return check_translation(asset, source_text(snapshot, asset_id), text, locale == snapshot.source_locale)


# ----------------------------------------------------------------------------- the stand-in memory
def exact_matches(snapshot: Snapshot, asset_id: str, locale: str) -> list[dict[str, Any]]:
    """Translations into `locale` of the project's other assets whose source text is this asset's, one per
    distinct text, most used first (score 100: the source is the same). A stand-in for the memory's index."""
    source = source_text(snapshot, asset_id)
    if not source.strip():
        return []
    found: dict[str, dict[str, Any]] = {}
    uses: dict[str, int] = {}
    for other in _same_source(snapshot, source):
        entry = snapshot.peek_translation(other, locale) if other != asset_id else None
        if not entry or not entry["text"] or entry.get("flag"):
            continue
        text = entry["text"]
        uses[text] = uses.get(text, 0) + 1
        found.setdefault(text, {"text": text, "score": 100, "source": source, "project": snapshot.name,
                                "asset": other, "author": (entry.get("author") or {}).get("name", ""),
                                "commit": None})  # the memory's index names it; a scan of history would not pay
    return sorted(found.values(), key=lambda item: -uses[item["text"]])


def _same_source(snapshot: Snapshot, source: str) -> list[str]:
    """Assets whose source text is `source`, from each source chunk's text index (built once per chunk version)."""
    matches: list[str] = []
    for number in snapshot.chunk_numbers():
        chunk = snapshot.locale_chunk(snapshot.source_locale, number)
        if chunk is None:
            continue
        index = chunk.kept(EXACT_SOURCES)
        if index is None:
            index = {}
            for key, entry in snapshot.translation_entries(snapshot.source_locale, number).items():
                index.setdefault(entry["text"], []).append(key)
            chunk.keep(EXACT_SOURCES, index)
        matches += index.get(source, ())
    return matches
