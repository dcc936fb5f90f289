"""Quality checks over a project's translations (quality.checks), as the API, the asset page and the grid ask.

The checks are pure (quality/); this module finds what they read in a snapshot: the asset record, the source
text, the glossary, the texts of the plural forms. A locale's results are kept per chunk of translations, with
the blob ids they were computed from (the asset chunk, the source and target chunks, glossary.json): a write
changes one chunk, so checking the locale again recomputes that chunk and reuses the others
(bench/bench_checks.py measures both). They are also persisted under the same blob ids (storage.derived, part
`quality-checks`), so that another worker, or this one after a restart, need not check the locale again.
When many chunks have no results yet (a cold check), a pool of worker processes shares their checks with
this thread (checkpool.pool, from limits.CHECK_POOL_MIN_TRANSLATIONS); one chunk rewritten by a write is
checked here.
"""
from __future__ import annotations

from typing import Any, Iterator

from checkpool.chunk import ChunkResults, check_chunk, record
from checkpool.pool import Job, check_chunks
from limits import CHECK_POOL_MIN_TRANSLATIONS, CHECK_POOL_WORKERS
from quality import CheckResult, Glossary, checks_for
from quality.checks import plural_checks
from storage import AssetRecord
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
    numbers = snapshot.chunk_numbers()
    known = {number: _known_results(snapshot, locale, number) for number in numbers}
    missing = [number for number in numbers if known[number][1] is None]
    computed: dict[int, ChunkResults] = {}
    if _worth_a_pool(snapshot, missing):
        computed = check_chunks(missing, lambda number: _pool_job(snapshot, locale, number),
                                lambda number: _check_chunk(snapshot, locale, number))
    found: list[dict[str, Any]] = []
    for number in numbers:
        key, results = known[number]
        if results is None:
            results = computed.get(number) or _check_chunk(snapshot, locale, number)
            _keep(snapshot, locale, number, key, results)
        found += _with_plurals(snapshot, locale, results)
    return found


def _worth_a_pool(snapshot: Snapshot, missing: list[int]) -> bool:
    """Whether the chunks to check are enough work to share with the pool (limits.CHECK_POOL_MIN_TRANSLATIONS)."""
    return (CHECK_POOL_WORKERS > 0 and len(missing) > 1
            and len(missing) * snapshot.chunk_size >= CHECK_POOL_MIN_TRANSLATIONS)


def _known_results(snapshot: Snapshot, locale: str, number: int) -> tuple[Any, ChunkResults | None]:
    """(the key of a chunk's results: the blobs they come from, None when not final; the results kept with its
    chunk or persisted by a process, None: to be computed). A locale without that chunk has none to compute."""
    chunk = snapshot.locale_chunk(locale, number)
    if chunk is None:
        return None, ([], [])
    source_locale = snapshot.source_locale
    blobs = snapshot.chunk_blobs(number, [(source_locale, number), (locale, number)])
    if blobs is None:
        return None, None
    key = (CHECKS_KEPT, (locale, source_locale), (blobs[0], *blobs[1], snapshot.glossary_blob))
    kept = chunk.kept(CHECKS_KEPT)
    if kept is not None and kept[0] == key:
        return key, (kept[1], kept[2])
    saved = snapshot.saved(CHECKS_PART, key)
    if saved is not None:
        chunk.keep(CHECKS_KEPT, (key, *saved))
        return key, saved
    return key, None


def _keep(snapshot: Snapshot, locale: str, number: int, key: Any, results: ChunkResults) -> None:
    """Keep a chunk's new results with it and for every process (storage.derived), under their key."""
    chunk = snapshot.locale_chunk(locale, number)
    if key is not None and chunk is not None:
        chunk.keep(CHECKS_KEPT, (key, *results))
        snapshot.save(CHECKS_PART, key, results)


def _with_plurals(snapshot: Snapshot, locale: str, results: ChunkResults) -> list[dict[str, Any]]:
    """A chunk's records, with the checks that read other chunks (plural forms) added afresh."""
    records, plural_ids = results
    if not plural_ids:
        return records
    return list(_with_plural_checks(snapshot, locale, records, plural_ids))


def _check_chunk(snapshot: Snapshot, locale: str, number: int) -> ChunkResults:
    """(records of the chunk's translations that fail a check, ids of its assets with plural forms)."""
    targets = snapshot.locale_chunk(locale, number)
    if targets is None:
        return [], []
    return check_chunk(snapshot.asset_chunk(number), snapshot.locale_chunk(snapshot.source_locale, number),
                       targets, locale, snapshot.source_locale, project_glossary(snapshot))


def _pool_job(snapshot: Snapshot, locale: str, number: int) -> Job:
    """What a pool worker needs to check a chunk: the files' bytes and the glossary's terms (plain data)."""
    sources = snapshot.locale_chunk(snapshot.source_locale, number)
    targets = snapshot.locale_chunk(locale, number)
    assert targets is not None  # (a chunk the locale lacks has its results already: none)
    terms = snapshot.remember(("glossary-terms", snapshot.glossary_blob), snapshot.glossary_terms)
    return (snapshot.asset_chunk(number).file_data(), sources.file_data() if sources is not None else None,
            targets.file_data(), locale, snapshot.source_locale, snapshot.glossary_blob, terms)


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
            by_id[asset_id] = record(asset_id, entry, _source_text(snapshot, asset_id), False, [])
    order = {asset_id: index for index, asset_id in enumerate(snapshot.locale_chunk(locale, snapshot.asset_index[
        plural_ids[0]]).keys())}  # type: ignore[union-attr]
    for asset_id in sorted(by_id, key=lambda found: order.get(found, 0)):
        record = by_id[asset_id]
        if asset_id in extra:
            record = dict(record, errors=record["errors"] + [result.message for result in extra[asset_id]],
                          checks=record["checks"] + [result.as_json() for result in extra[asset_id]])
        yield record
