"""Key-level merge, for a push and for a branch: the changes one side (`theirs`: a pushed commit, a branch's
head) made since the merge base, replayed as API operations onto the other (`ours`: the transaction's head).

Theirs is never adopted as it is: its edits are read as key-level changes from `base` to `theirs` (locales,
tags, assets, plural links, translation texts and flags, glossary terms) and applied through the same operations as the API,
so revisions, times and new asset numbers are computed by Gloss. Revision, author and time fields edited by
hand are therefore ignored. A change on a key that ours did not touch never conflicts. When both sides changed
the same key differently, the `Merge` policy decides: a push is the later writer and wins (PUSH, as a later API
write would); a branch merge takes the side its caller chose for the key or for the whole merge, and else
records a conflict, and conflicts refuse the whole merge (MergeConflict, nothing written). A change that cannot
apply (a translation of an asset deleted since the base) refuses the whole merge.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import operations as ops
from .errors import Conflict
from .canonical import EMPTY, Chunk
from .snapshot import GLOSSARY_FILE, MEMORY_FILE, Snapshot, asset_path, locale_path
from .transaction import Transaction

ASSET_FIELDS = ("type", "context", "notes", "printf", "aliases")


# a pushed file's record (an AssetRecord or TranslationRecord as the push wrote it: storage.checks passed it, but the
# fields Gloss fills may be missing or edited by hand) or the head's
Entry = Mapping[str, Any]
OURS, THEIRS = "ours", "theirs"
STRATEGIES = (OURS, THEIRS)


def _replay_memory(tx: Transaction, base: Snapshot, pushed: Snapshot) -> int:
    """Translation memory units (memory.json) the push added, changed or removed, unit by unit."""
    if base.files.get(MEMORY_FILE) == pushed.files.get(MEMORY_FILE):
        return 0
    changed = pushed.memory_units.changed_since(base.memory_units)
    for unit_id in changed:
        tx.put_memory_unit(unit_id, pushed.memory_units.peek(unit_id))
    return len(changed)


class MergeConflict(Conflict):
    """Both sides changed keys differently and nothing said which side wins: `conflicts` lists them."""

    def __init__(self, conflicts: list[dict[str, Any]]):
        super().__init__(f"{len(conflicts)} key(s) changed differently on both sides; nothing was merged. "
                         "Resolve with strategy=ours|theirs, for the merge or per key")
        self.conflicts = conflicts


@dataclass
class Merge:
    """How a merge treats a key both sides changed differently: the side named for that key in `keys`
    ((asset, locale) -> ours|theirs; locale None for the asset's own fields), else `strategy`, else a conflict
    (asset None: a locale's name, which only `strategy` resolves).
    `keep_authors`: theirs' translations keep their authors (a branch); a push's are its commit's author."""

    strategy: str | None = None
    keys: dict[tuple[str, str | None], str] = field(default_factory=dict)
    keep_authors: bool = False
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    def takes_theirs(self, asset: str | None, locale: str | None, what: str, base: Any, ours: Any,
                     theirs: Any) -> bool:
        """Whether theirs applies to a key both sides changed differently (recording a conflict if nobody said)."""
        choice = (self.keys.get((asset, locale)) if asset is not None else None) or self.strategy
        if choice is None:
            self.conflicts.append({"asset": asset, "locale": locale, "field": what, "base": base, "ours": ours,
                                   "theirs": theirs})
            return False
        return choice == THEIRS


PUSH = Merge(strategy=THEIRS)  # a push is the later writer: it wins, as a later API write would


def replay(tx: Transaction, base: Snapshot, pushed: Snapshot, actor: ops.Actor, now: str,
           merge: Merge = PUSH) -> int:
    """Apply the changes from `base` to `pushed` (theirs) onto `tx` (ours) under the `merge` policy; returns how
    many key-level changes there were. Raises MergeConflict when keys conflict and the policy names no side.

    Only the catalogue files whose blobs differ are read, so a one-line push costs one chunk, not the project.
    """
    merge = Merge(merge.strategy, merge.keys, merge.keep_authors)  # its own list of conflicts
    changes = _replay_locales(tx, base, pushed, merge)
    changes += _replay_memory(tx, base, pushed)
    changes += _replay_tags(tx, base, pushed, now)
    assets = changed_entries(base.asset_chunks, pushed.asset_chunks, base.files, pushed.files, asset_path)
    changes += _replay_assets(tx, base, assets, now, merge)
    changes += _replay_plural_links(tx, assets, now, merge)
    # theirs' deletion of an asset took its translations along: the asset's replay above decided for them
    # (a conflict, the asset kept, or deleted), so their entries are not replayed (nor conflict) one by one
    deleted = {asset_id for asset_id, _, record in assets if record is None}
    for record in pushed.locales():
        code = record["code"]
        if code in tx.locale_codes():
            entries = changed_entries(base.locale_chunks.get(code, {}), pushed.locale_chunks.get(code, {}),
                                      base.files, pushed.files, lambda number: locale_path(code, number))
            changes += _replay_translations(tx, [entry for entry in entries if entry[0] not in deleted], code,
                                            actor, now, merge)
    changes += _replay_glossary(tx, base, pushed, merge)
    if merge.conflicts:
        raise MergeConflict(merge.conflicts)
    return changes


Changes = list[tuple[str, "Entry | None", "Entry | None"]]


def _replay_glossary(tx: Transaction, base: Snapshot, theirs: Snapshot, merge: Merge) -> int:
    """The glossary terms theirs added, changed or deleted, term by term (glossary.json is read only when its
    blob changed); a term ours changed too is the `merge` policy's to decide."""
    if base.files.get(GLOSSARY_FILE) == theirs.files.get(GLOSSARY_FILE):
        return 0
    before, after = base.glossary_terms(), theirs.glossary_terms()
    changes = 0
    for term in sorted(set(before) | set(after)):
        old, new = before.get(term), after.get(term)
        if old == new:
            continue
        changes += 1
        ours = tx.term(term)
        if ours == new or (ours != old and not merge.takes_theirs(None, None, f"glossary term {term!r}", old,
                                                                   ours, new)):
            continue
        if new is not None:
            ops.put_term(tx, term, dict(new))
        elif ours is not None:
            tx.put_term(term, None)
    return changes


def changed_entries(before: dict[int, Chunk[Any]], after: dict[int, Chunk[Any]], before_files: dict[str, bytes],
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


def _replay_locales(tx: Transaction, base: Snapshot, pushed: Snapshot, merge: Merge) -> int:
    changes = 0
    before = {record["code"]: record["name"] for record in base.locales()}
    ours = {record["code"]: record["name"] for record in tx.peek_meta().get("locales", [])}
    for record in pushed.locales():
        code, name = record["code"], record["name"]
        if code not in before:
            if code not in tx.locale_codes():
                ops.add_locale(tx, code, name)
            changes += 1
        elif before[code] != name and code in ours and _theirs_apply(merge, None, code, "name", before[code],
                                                                     ours[code], name):
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


def _replay_assets(tx: Transaction, base: Snapshot, assets: Changes, now: str, merge: Merge) -> int:
    changes = 0
    for asset_id, before, record in assets:
        if record is None:  # theirs deleted it: unless ours changed it meanwhile (then the policy decides)
            if tx.has_asset(asset_id) and _theirs_apply(merge, asset_id, None, "asset", "kept",
                                                        _kept_or_changed(tx, base, asset_id, before), "deleted"):
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
        if not tx.has_asset(asset_id):  # ours deleted what theirs changed
            if merge.takes_theirs(asset_id, None, "asset", "kept", "deleted", "changed"):
                raise Conflict(_deleted(asset_id))
            continue
        changes += _replay_asset_fields(tx, asset_id, before or ops.require_asset(tx, asset_id), record, now,
                                        merge)
    return changes


def _replay_asset_fields(tx: Transaction, asset_id: str, before: Entry, after: Entry,
                         now: str, merge: Merge) -> int:
    ours = ops.require_asset(tx, asset_id)
    patch = {name: after.get(name, "" if name != "aliases" else {}) for name in ASSET_FIELDS
             if after.get(name) != before.get(name) and _theirs_apply(merge, asset_id, None, name, before.get(name),
                                                                     ours.get(name), after.get(name))}
    if patch:
        ops.patch_asset(tx, asset_id, patch, now)
    meta_changed = after.get("meta", {}) != before.get("meta", {}) and _theirs_apply(
        merge, asset_id, None, "meta", before.get("meta", {}), ours.get("meta", {}), after.get("meta", {}))
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


def _theirs_apply(merge: Merge, asset: str | None, locale: str | None, what: str, base: Any, ours: Any,
                  theirs: Any) -> bool:
    """Whether theirs' change of one value applies: yes unless ours changed it too, to something else, and the
    merge policy keeps ours (or records the conflict)."""
    if ours == base or ours == theirs:
        return True
    return merge.takes_theirs(asset, locale, what, base, ours, theirs)


def _replay_plural_links(tx: Transaction, assets: Changes, now: str, merge: Merge) -> int:
    """Links are set from the plural form's side (`plural_of`); the singular's list follows."""
    changes = 0
    for asset_id, before, record in assets:
        if record is None or not tx.has_asset(asset_id):
            continue
        parent, was = record.get("plural_of"), (before or {}).get("plural_of")
        current = ops.require_asset(tx, asset_id).get("plural_of")
        if parent == was or parent == current:
            continue
        if not _theirs_apply(merge, asset_id, None, "plural_of", was, current, parent):
            continue
        if current:
            ops.unlink_plural(tx, current, asset_id, now)
        if parent:
            ops.add_plural(tx, parent, now, pid=asset_id)
        changes += 1
    return changes


def _replay_translations(tx: Transaction, entries: Changes, code: str,
                         actor: ops.Actor, now: str, merge: Merge) -> int:
    changes = 0
    for asset_id, before, after in entries:
        if _text(before) == _text(after) and _flag(before) == _flag(after):
            continue  # only revision, author or time fields differ: Gloss computes those
        changes += 1
        if not tx.has_asset(asset_id):  # ours deleted the asset: theirs' change cannot apply
            if merge.takes_theirs(asset_id, code, "text", _text(before), None, _text(after)):
                raise Conflict(_deleted(asset_id))
            continue
        current = tx.translation(asset_id, code)
        if (_text(current), _flag(current)) == (_text(after), _flag(after)):
            continue  # ours made the same change
        ours_changed = (_text(current), _flag(current)) != (_text(before), _flag(before))
        what = "text" if _text(current) != _text(after) else "flag"
        if ours_changed and not merge.takes_theirs(asset_id, code, what, _text(before), _text(current),
                                                   _text(after)):
            continue
        by = _author(after) if merge.keep_authors else None
        if after is None:
            if current is not None:
                ops.untranslate(tx, asset_id, code)
            continue
        if _text(current) != _text(after):
            ops.translate(tx, asset_id, code, after["text"], by or actor, now)
        current = tx.translation(asset_id, code)
        if _flag(after) and _flag(after) != _flag(current):
            ops.flag(tx, asset_id, code, after["flag"], by or actor, now)
        elif not _flag(after) and _flag(before) and _flag(current):
            ops.unflag(tx, asset_id, code)
    return changes


def _deleted(asset_id: str) -> str:
    return f"asset {asset_id!r} was deleted since the commit your push (or branch) is based on"


def _kept_or_changed(tx: Transaction, base: Snapshot, asset_id: str, before: Entry | None) -> str:
    """How ours left an asset theirs deleted: "kept" as it was at the base, or "changed" (its own fields, or
    the text or flag of one of its translations: deleting it would drop translators' work ours did since)."""
    current = ops.require_asset(tx, asset_id)
    fields = (*ASSET_FIELDS, "tags", "meta", "plural_of")
    if any((before or {}).get(name) != current.get(name) for name in fields):
        return "changed"
    for code in tx.locale_codes():
        was, now = base.translation(asset_id, code), tx.translation(asset_id, code)
        if (_text(was), _flag(was)) != (_text(now), _flag(now)):
            return "changed"
    return "kept"


def _author(entry: Entry | None) -> ops.Actor | None:
    """Who wrote a translation entry, as an actor (a branch merge keeps its translators)."""
    author = (entry or {}).get("author")
    if not isinstance(author, dict):
        return None
    return ops.Actor(author.get("id", 0), author.get("name", ""), author.get("email", ""))


def _text(entry: Entry | None) -> str | None:
    return None if entry is None else entry.get("text")


def _flag(entry: Entry | None) -> str:
    return "" if entry is None else entry.get("flag", "")
