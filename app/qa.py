"""Quality checks over a project's translations (quality.checks), as the API, the asset page and the grid ask.

The checks are pure (quality/); this module finds what they read in a snapshot: the asset record, the source
text, the glossary, the texts of the plural forms. A locale's results are kept per chunk of translations, with
the blob ids they were computed from (the asset chunk, the source and target chunks, glossary.json): a write
changes one chunk, so checking the locale again recomputes that chunk and reuses the others
(bench/bench_checks.py measures both). They are also persisted under the same blob ids (storage.derived, part
`quality-checks`), so that another worker, or this one after a restart, need not check the locale again.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from quality import CheckResult, Glossary, checks_for
from quality.checks import plural_checks
from storage import AssetRecord, TranslationRecord
from storage.canonical import Chunk
from storage.progress import status_of
from storage.snapshot import Snapshot

CHECKS_KEPT = "quality-checks"  # the name a locale chunk keeps its results under (Chunk.keep)
CHECKS_PART = "quality-checks"  # the storage.derived part that persists them


def project_glossary(snapshot: Snapshot) -> Glossary:
    """The snapshot's glossary, compiled once per snapshot."""
    return snapshot.remember(("glossary", snapshot.glossary_blob),
                             lambda: Glossary(snapshot.glossary_terms()))


def glossary_terms_in(snapshot: Snapshot, text: str, locale: str) -> list[dict[str, Any]]:
    """The glossary terms found in a (source) text, for highlighting: span, term, its translation in `locale`,
    note, forbidden."""
    return [found.as_json(locale) for found in project_glossary(snapshot).found_in(text)]


def glossary_segments(snapshot: Snapshot, text: str, locale: str) -> list[tuple[str, dict[str, Any] | None]]:
    """A (source) text cut at the glossary terms it holds: (piece, None) between them, (term as written, the
    term's record for `locale`: glossary_terms_in's) for each; the pieces join back into the text."""
    pieces: list[tuple[str, dict[str, Any] | None]] = []
    position = 0
    for found in glossary_terms_in(snapshot, text, locale):
        if found["start"] > position:
            pieces.append((text[position:found["start"]], None))
        pieces.append((text[found["start"]:found["end"]], found))
        position = found["end"]
    if position < len(text) or not pieces:
        pieces.append((text[position:], None))
    return pieces


def _source_text(snapshot: Snapshot, asset_id: str) -> str | None:
    entry = snapshot.translation(asset_id, snapshot.source_locale)
    return entry["text"] if entry else None


def plural_forms(snapshot: Snapshot, asset: AssetRecord, locale: str) -> dict[str, str | None] | None:
    """For an asset with plural-form assets: the texts of its forms after the first in `locale`, by CLDR
    category (records.plural_translations: member i holds form i); None for any other asset."""
    members = asset.get("plurals", [])
    if not members:
        return None
    from formats.plurals import plural_rules

    forms = plural_rules(locale).forms
    found: dict[str, str | None] = {}
    for index, form in enumerate(forms[1:]):
        entry = snapshot.translation(members[index], locale) if index < len(members) else None
        found[form] = entry["text"] if entry else None
    return found


def translation_checks(snapshot: Snapshot, asset_id: str, locale: str, target_text: str) -> list[CheckResult]:
    """Every check over `target_text` as the translation of an asset in a locale (the text need not be saved:
    the grid checks what the translator types)."""
    asset = snapshot.existing_asset(asset_id)
    return checks_for(asset, _source_text(snapshot, asset_id), target_text, locale, project_glossary(snapshot),
                      source_locale=snapshot.source_locale, plural_forms=plural_forms(snapshot, asset, locale))


def locale_errors(snapshot: Snapshot, locale: str) -> list[dict[str, Any]]:
    """Loco's TranslationError records of a locale (`errors`: the messages), each with `checks`: the
    results with their names and severities, in asset order."""
    found: list[dict[str, Any]] = []
    for number in snapshot.chunk_numbers():
        found += _chunk_errors(snapshot, locale, number)
    return found


def _chunk_errors(snapshot: Snapshot, locale: str, number: int) -> list[dict[str, Any]]:
    """The records of one chunk of the locale: kept with its chunk, by the blobs they were made from; checks
    that read other chunks (plural forms) are added afresh."""
    chunk = snapshot.locale_chunk(locale, number)
    if chunk is None:
        return []
    source_locale = snapshot.source_locale
    blobs = snapshot.chunk_blobs(number, [(source_locale, number), (locale, number)])
    key = None if blobs is None else (CHECKS_KEPT, (locale, source_locale),
                                      (blobs[0], *blobs[1], snapshot.glossary_blob))
    kept = chunk.kept(CHECKS_KEPT)
    if key is not None and kept is not None and kept[0] == key:
        records, plural_ids = kept[1], kept[2]
    else:
        saved = snapshot.saved(CHECKS_PART, key) if key is not None else None
        records, plural_ids = saved if saved is not None else _check_chunk(snapshot, locale, number)
        if key is not None:
            chunk.keep(CHECKS_KEPT, (key, records, plural_ids))
            if saved is None:
                snapshot.save(CHECKS_PART, key, (records, plural_ids))
    if not plural_ids:
        return records
    return list(_with_plural_checks(snapshot, locale, records, plural_ids))


def _check_chunk(snapshot: Snapshot, locale: str, number: int) -> tuple[list[dict[str, Any]], list[str]]:
    """(records of the chunk's translations that fail a check, ids of its assets with plural forms)."""
    source_locale = snapshot.source_locale
    is_source = locale == source_locale
    targets = snapshot.locale_chunk(locale, number)
    if targets is None:
        return [], []
    assets = snapshot.asset_chunk(number)
    sources = snapshot.locale_chunk(source_locale, number)
    glossary = project_glossary(snapshot)
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
        records.append(_record(asset_id, entry, source, is_source, results))
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


def _with_plural_checks(snapshot: Snapshot, locale: str, records: list[dict[str, Any]],
                        plural_ids: list[str]) -> Iterator[dict[str, Any]]:
    by_id = {record["id"]: record for record in records}
    extra: dict[str, list[CheckResult]] = {}
    for asset_id in plural_ids:
        asset = snapshot.existing_asset(asset_id)
        results = plural_checks("", "", locale, plural_forms(snapshot, asset, locale))
        if results:
            extra[asset_id] = results
    if not extra:
        yield from records
        return
    for asset_id, results in extra.items():
        if asset_id not in by_id:
            entry = snapshot.translation(asset_id, locale)
            assert entry is not None
            by_id[asset_id] = _record(asset_id, entry, _source_text(snapshot, asset_id), False, [])
    order = {asset_id: index for index, asset_id in enumerate(snapshot.locale_chunk(locale, snapshot.asset_index[
        plural_ids[0]]).keys())}  # type: ignore[union-attr]
    for asset_id in sorted(by_id, key=lambda found: order.get(found, 0)):
        record = by_id[asset_id]
        if asset_id in extra:
            record = dict(record, errors=record["errors"] + [result.message for result in extra[asset_id]],
                          checks=record["checks"] + [result.as_json() for result in extra[asset_id]])
        yield record


def _record(asset_id: str, entry: TranslationRecord, source: str | None, is_source: bool,
            results: list[CheckResult]) -> dict[str, Any]:
    """Loco's TranslationError (`target` absent for the source locale), with the named results."""
    record: dict[str, Any] = {"id": asset_id, "status": status_of(entry), "source": source or "",
                              "errors": [result.message for result in results]}
    if not is_source:
        record["target"] = entry["text"]
    record["checks"] = [result.as_json() for result in results]
    return record
