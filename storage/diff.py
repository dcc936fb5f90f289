"""Translation changes between two commits: which (asset, locale) texts differ, who changed them and where.

Only the locale files whose blobs differ are read. Each change is then attributed to the newest commit on
the first-parent path from `to` back to `from` that changed that entry (the API commit, or the merge commit
of a push), whose author is the change's author unless the stored entry names its own.
"""
from __future__ import annotations

from typing import Any

from .canonical import EMPTY, Chunk
from .gitrepo import GitRepo, Person
from .history import _blob_at, _ChunkCache
from .project import Project
from .snapshot import Snapshot, locale_path

Change = dict[str, Any]


def _same(one: dict[str, Any] | None, other: dict[str, Any] | None) -> bool:
    """Equal as far as a reader of translations cares: the text and the flag."""
    if one is None or other is None:
        return one is other
    return one.get("text") == other.get("text") and one.get("flag", "") == other.get("flag", "")


def _chunk(repo: GitRepo, cache: dict[bytes, Chunk], blob: bytes | None) -> Chunk:
    if blob is None:
        return EMPTY
    if blob not in cache:
        cache[blob] = Chunk.parse(repo.read_raw(blob))
    return cache[blob]


def translation_changes(project: Project, old: Snapshot, new: Snapshot) -> list[Change]:
    """Every translation whose text or flag differs from `old` to `new`, in locale then asset order."""
    repo = project.repo
    cache: dict[bytes, Chunk] = {}
    codes = [record["code"] for record in new.locales()]
    codes += [record["code"] for record in old.locales() if record["code"] not in codes]
    changes: list[Change] = []
    for code in codes:
        numbers = sorted(set(old.locale_chunks.get(code, {})) | set(new.locale_chunks.get(code, {})))
        for number in numbers:
            path = locale_path(code, number)
            before_blob, after_blob = old.files.get(path), new.files.get(path)
            if before_blob == after_blob:
                continue
            before, after = _chunk(repo, cache, before_blob), _chunk(repo, cache, after_blob)
            for asset_id in list(after.keys()) + [key for key in before.keys() if key not in after]:
                was, now = before.get(asset_id), after.get(asset_id)
                if not _same(was, now):
                    changes.append({"asset": asset_id, "locale": code, "old": was and was.get("text"),
                                    "new": now and now.get("text"), "flag": (now or {}).get("flag", ""),
                                    "revision": (now or {}).get("rev", 0), "path": path,
                                    "author": (now or {}).get("author"), "commit": None})
    _attribute(repo, changes, old.commit, new.commit)
    for change in changes:
        del change["path"]
    return changes


def _attribute(repo: GitRepo, changes: list[Change], old: bytes | None, new: bytes | None) -> None:
    """Fill in each change's commit (and author when the entry names none), walking back from `new`."""
    pending = {(change["path"], change["asset"]): change for change in changes}
    cache = _ChunkCache(repo)
    commit_id = new
    while pending and commit_id and commit_id != old:
        commit = repo.read_commit(commit_id)
        parent = commit.parents[0] if commit.parents else None
        parent_tree = repo.read_commit(parent).tree if parent else None
        for path in {path for path, _ in pending}:
            parts = path.split("/")
            blob = _blob_at(repo, commit.tree, parts)
            before = _blob_at(repo, parent_tree, parts) if parent_tree else None
            if blob == before:
                continue
            now_chunk = cache.get(blob) if blob else EMPTY
            was_chunk = cache.get(before) if before else EMPTY
            for key in [key for key in pending if key[0] == path]:
                if not _same(now_chunk.get(key[1]), was_chunk.get(key[1])):
                    change = pending.pop(key)
                    change["commit"] = commit_id.decode()
                    if change["author"] is None or change["new"] is None:
                        author = Person.parse(commit.author)
                        change["author"] = {"name": author.name, "email": author.email}
        commit_id = parent

