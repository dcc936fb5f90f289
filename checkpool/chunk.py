"""Every check over one chunk of a locale's translations: a function of the chunks alone (the asset chunk, the
source and target chunks) and the glossary, so that app.qa runs it in its own process or a pool worker runs it
on the same files (checkpool.pool), with the same records."""
from __future__ import annotations

from typing import Any, Mapping

from quality import CheckResult, Glossary, checks_for
from storage import AssetRecord, TranslationRecord
from storage.canonical import Chunk
from storage.progress import status_of

ChunkResults = tuple[list[dict[str, Any]], list[str]]  # (records of the failing translations, plural asset ids)


def check_chunk(assets: Chunk[AssetRecord], sources: Chunk[TranslationRecord] | None,
                targets: Chunk[TranslationRecord], locale: str, source_locale: str,
                glossary: Glossary) -> ChunkResults:
    """(records of the chunk's translations that fail a check, ids of its assets with plural forms)."""
    is_source = locale == source_locale
    failing: dict[str, tuple[str | None, list[CheckResult]]] = {}
    plural_ids = []
    # Only the texts are read of the translations (the whole entry of a failing one): decoding every entry
    # made 200,000 dicts per 100k translations, a third of the time with the collections they set off.
    target_texts = targets.leading_strings("text")
    source_texts = sources.leading_strings("text") if sources is not None else {}
    fields = _chunk_fields(assets)
    for asset_id in targets.keys():
        asset = fields.get(asset_id) or _checked_fields(assets, asset_id)
        if asset is None:
            continue
        if asset.get("plurals") and not is_source:
            plural_ids.append(asset_id)
        source = source_texts.get(asset_id)
        if source is None and sources is not None:
            source = _text(sources, asset_id)
        target = target_texts.get(asset_id)
        if target is None:
            target = _text(targets, asset_id)
        if target is None:
            continue
        results = checks_for(asset, source, target, locale, glossary, source_locale=source_locale)
        if results:
            failing[asset_id] = source, results
    records = []
    for asset_id, entry in targets.peek_each(failing):  # only their whole entries are decoded
        source, results = failing[asset_id]
        assert entry is not None
        records.append(record(asset_id, entry, source, is_source, results))
    return records, plural_ids


def _chunk_fields(assets: Chunk[AssetRecord]) -> dict[str, Mapping[str, Any]]:
    """What the checks read of each asset of a chunk (_checked_fields'), for the assets whose line shows `type`
    then `printf` as strings (canonical lines do), in one pass over the chunk's file; none when an asset of the
    chunk may have `max_length` or `plurals` (then each asset is read alone). Assets alike share one dict."""
    if assets.mentions("max_length") or assets.mentions("plurals"):
        return {}
    shared: dict[tuple[str, ...], Mapping[str, Any]] = {}
    found = {}
    for asset_id, (kind, printf) in assets.string_fields("type", "printf").items():
        asset = shared.get((kind, printf))
        if asset is None:
            asset = shared[kind, printf] = {"printf": printf, "type": kind}
        found[asset_id] = asset
    return found


def _checked_fields(assets: Chunk[AssetRecord], asset_id: str) -> Mapping[str, Any] | None:
    """What the checks read of an asset (`printf`, `type`, `max_length`, `plurals`: see checks_for), its two
    strings decoded alone when its line allows, else the whole entry (None: no such asset)."""
    if asset_id not in assets:
        return None
    line = assets.line(asset_id)
    if '"max_length"' not in line and '"plurals"' not in line:
        printf, kind = assets.string_field(asset_id, "printf"), assets.string_field(asset_id, "type")
        if (printf is not None or '"printf"' not in line) and (kind is not None or '"type"' not in line):
            return {"printf": printf or "", "type": kind}
    return assets.peek(asset_id)


def _text(chunk: Chunk[TranslationRecord], asset_id: str) -> str | None:
    """The text of a translation in a chunk, decoded alone when its line allows (None: no such entry)."""
    text = chunk.string_field(asset_id, "text")
    if text is None:
        entry = chunk.peek(asset_id)
        text = entry["text"] if entry else None
    return text


def record(asset_id: str, entry: TranslationRecord, source: str | None, is_source: bool,
           results: list[CheckResult]) -> dict[str, Any]:
    """Loco's TranslationError (`target` absent for the source locale), with the named results."""
    found: dict[str, Any] = {"id": asset_id, "status": status_of(entry), "source": source or "",
                             "errors": [result.message for result in results]}
    if not is_source:
        found["target"] = entry["text"]
    found["checks"] = [result.as_json() for result in results]
    return found
