"""Key-level merge of a push: the changes a pushed commit makes to its base, replayed as API operations.

A pushed commit is never adopted as it is: its edits are read as key-level changes from `base` to `pushed`
(locales, tags, assets, plural links, translation texts and flags) and applied to the current head through
the same operations as the API, so revisions, authors, times and new asset numbers are computed by Gloss.
Revision, author and time fields edited by hand are therefore ignored. A change on a key that nobody else
touched never conflicts; when both sides changed the same key, the push is the later writer and wins, as a
later API write would. A change that cannot apply (a translation of an asset deleted since the base) refuses
the whole push.
"""
from __future__ import annotations

from typing import Any, Callable

from . import operations as ops
from .errors import Conflict
from .canonical import EMPTY, Chunk
from .snapshot import MEMORY_FILE, Snapshot, asset_path, locale_path
from .transaction import Transaction

ASSET_FIELDS = ("type", "context", "notes", "printf", "aliases")


Entry = dict[str, Any]


def _replay_memory(tx: Transaction, base: Snapshot, pushed: Snapshot) -> int:
    """Translation memory units (memory.json) the push added, changed or removed, unit by unit."""
    if base.files.get(MEMORY_FILE) == pushed.files.get(MEMORY_FILE):
        return 0
    changed = pushed.memory_units.changed_since(base.memory_units)
    for unit_id in changed:
        tx.put_memory_unit(unit_id, pushed.memory_units.peek(unit_id))
    return len(changed)


def replay(tx: Transaction, base: Snapshot, pushed: Snapshot, actor: ops.Actor, now: str) -> int:
    """Apply the changes from `base` to `pushed` onto `tx`; returns how many key-level changes there were.

    Only the catalogue files whose blobs differ are read, so a one-line push costs one chunk, not the project.
    """
    changes = _replay_locales(tx, base, pushed)
    changes += _replay_memory(tx, base, pushed)
    changes += _replay_tags(tx, base, pushed, now)
    assets = changed_entries(base.asset_chunks, pushed.asset_chunks, base.files, pushed.files, asset_path)
    changes += _replay_assets(tx, assets, now)
    changes += _replay_plural_links(tx, assets, now)
    for record in pushed.locales():
        code = record["code"]
        if code in tx.locale_codes():
            entries = changed_entries(base.locale_chunks.get(code, {}), pushed.locale_chunks.get(code, {}),
                                      base.files, pushed.files, lambda number: locale_path(code, number))
            changes += _replay_translations(tx, entries, code, actor, now)
    return changes


Changes = list[tuple[str, "Entry | None", "Entry | None"]]


def changed_entries(before: dict[int, Chunk], after: dict[int, Chunk], before_files: dict[str, bytes],
                    after_files: dict[str, bytes], path_of: Callable[[int], str]) -> Changes:
    """(id, old entry, new entry) for every entry that differs, reading only chunks whose blob changed."""
    found = []
    for number in sorted(set(before) | set(after)):
        path = path_of(number)
        if path in before_files and before_files.get(path) == after_files.get(path):
            continue
        old, new = before.get(number, EMPTY), after.get(number, EMPTY)
        for key in list(old.keys()) + [key for key in new.keys() if key not in old]:
            if old.get(key) != new.get(key):
                found.append((key, old.get(key), new.get(key)))
    return found


def _replay_locales(tx: Transaction, base: Snapshot, pushed: Snapshot) -> int:
    changes = 0
    before = {record["code"]: record["name"] for record in base.locales()}
    for record in pushed.locales():
        code, name = record["code"], record["name"]
        if code not in before:
            if code not in tx.locale_codes():
                ops.add_locale(tx, code, name)
            changes += 1
        elif before[code] != name and code in tx.locale_codes():
            ops.patch_locale(tx, code, None, name)
            changes += 1
    after = {record["code"] for record in pushed.locales()}
    for code in before:
        if code not in after and code in tx.locale_codes():
            ops.delete_locale(tx, code)
            changes += 1
    return changes


def _replay_tags(tx: Transaction, base: Snapshot, pushed: Snapshot, now: str) -> int:
    before, after = set(base.tags()), set(pushed.tags())
    for name in pushed.tags():
        if name not in before:
            ops.create_tag(tx, name)
    for name in before - after:
        if name in tx.peek_meta().get("tags", []):
            ops.delete_tag(tx, name, now)
    return len(after ^ before)


def _replay_assets(tx: Transaction, assets: Changes, now: str) -> int:
    changes = 0
    for asset_id, before, record in assets:
        if record is None:
            if tx.has_asset(asset_id):
                ops.delete_asset(tx, asset_id)
            changes += 1
    for asset_id, before, record in assets:
        if record is None:
            continue
        if before is None and not tx.has_asset(asset_id):
            ops.create_asset(tx, asset_id, now, type=record["type"], context=record.get("context", ""),
                             notes=record.get("notes", ""), printf=record.get("printf", ""),
                             tags=record.get("tags", []))
            changes += 1
        if not tx.has_asset(asset_id):
            raise Conflict(f"asset {asset_id!r} was deleted since the commit your push is based on")
        changes += _replay_asset_fields(tx, asset_id, before or ops.require_asset(tx, asset_id), record, now)
    return changes


def _replay_asset_fields(tx: Transaction, asset_id: str, before: dict[str, Any], after: dict[str, Any],
                         now: str) -> int:
    patch = {field: after.get(field, "" if field != "aliases" else {}) for field in ASSET_FIELDS
             if after.get(field) != before.get(field)}
    if patch:
        ops.patch_asset(tx, asset_id, patch, now)
    meta_changed = after.get("meta", {}) != before.get("meta", {})
    if meta_changed:
        ops.set_asset_meta(tx, asset_id, after.get("meta", {}), now)
    old_tags, new_tags = before.get("tags", []), after.get("tags", [])
    for name in new_tags:
        if name not in old_tags:
            ops.tag_asset(tx, asset_id, name, now)
    for name in old_tags:
        if name not in new_tags and name in ops.require_asset(tx, asset_id).get("tags", []):
            ops.untag_asset(tx, asset_id, name, now)
    return int(bool(patch) or meta_changed or old_tags != new_tags)


def _replay_plural_links(tx: Transaction, assets: Changes, now: str) -> int:
    """Links are set from the plural form's side (`plural_of`); the singular's list follows."""
    changes = 0
    for asset_id, before, record in assets:
        if record is None:
            continue
        parent, was = record.get("plural_of"), (before or {}).get("plural_of")
        current = ops.require_asset(tx, asset_id).get("plural_of")
        if parent == was or parent == current:
            continue
        if current:
            ops.unlink_plural(tx, current, asset_id, now)
        if parent:
            ops.add_plural(tx, parent, now, pid=asset_id)
        changes += 1
    return changes


def _replay_translations(tx: Transaction, entries: Changes, code: str,
                         actor: ops.Actor, now: str) -> int:
    changes = 0
    for asset_id, before, after in entries:
        if _text(before) == _text(after) and _flag(before) == _flag(after):
            continue  # only revision, author or time fields differ: Gloss computes those
        changes += 1
        if not tx.has_asset(asset_id):
            raise Conflict(f"asset {asset_id!r} was deleted since the commit your push is based on")
        if after is None:
            if tx.translation(asset_id, code) is not None:
                ops.untranslate(tx, asset_id, code)
            continue
        if _text(before) != _text(after):
            ops.translate(tx, asset_id, code, after["text"], actor, now)
        current = tx.translation(asset_id, code)
        if _flag(after) and _flag(after) != _flag(current):
            ops.flag(tx, asset_id, code, after["flag"], actor, now)
        elif not _flag(after) and _flag(before) and _flag(current):
            ops.unflag(tx, asset_id, code)
    return changes


def _text(entry: dict[str, Any] | None) -> str | None:
    return None if entry is None else entry.get("text")


def _flag(entry: dict[str, Any] | None) -> str:
    return "" if entry is None else entry.get("flag", "")
