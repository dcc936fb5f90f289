"""Translation history read back from Git: the revisions of one (asset, locale) pair, newest first."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .canonical import Chunk
from .errors import NotFound
from .gitrepo import GitRepo
from .project import Project
from .snapshot import LOCALES_DIR, Snapshot, chunk_file

_CHUNK_CACHE_SIZE = 64


class _ChunkCache:
    """Parsed chunks by blob id: consecutive commits mostly share the blob we look at."""

    def __init__(self, repo: GitRepo):
        self.repo = repo
        self._items: OrderedDict[bytes, Chunk] = OrderedDict()

    def get(self, blob: bytes) -> Chunk:
        chunk = self._items.get(blob)
        if chunk is None:
            chunk = self._items[blob] = Chunk.parse(self.repo.read_raw(blob))
            if len(self._items) > _CHUNK_CACHE_SIZE:
                self._items.popitem(last=False)
        return chunk


def _blob_at(repo: GitRepo, tree: bytes, path: list[str]) -> bytes | None:
    for name in path:
        entry = repo.read_tree(tree).get(name)
        if entry is None:
            return None
        tree = entry[1]
    return tree


def _trailers(message: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in message.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            found[key] = value.replace("\\n", "\n").replace("\\r", "\r").replace("\\0", "\0") \
                .replace("\\\\", "\\")
    return found


def revisions(project: Project, asset_id: str, locale: str, limit: int = 1000,
              snapshot: Snapshot | None = None) -> list[dict[str, Any]]:
    """Every revision of a translation since it was last created, newest first.

    Walks first-parent history from HEAD, reading only the one chunk file that can hold the entry (commits
    that did not touch it cost a tree lookup). Each revision number is recorded once, as its newest state,
    with the entry's own author and time. Revision 1 ends the walk (nothing older belongs to this
    translation: a deletion resets the count), and so does a commit without the entry. Renames are followed
    through the `Renamed-From` trailer.
    """
    snapshot = snapshot or project.snapshot()
    asset = snapshot.asset(asset_id)
    if asset is None:
        raise NotFound("Asset not in project")
    repo = project.repo
    cache = _ChunkCache(repo)
    path = [LOCALES_DIR, locale, chunk_file(asset["n"] // snapshot.chunk_size)]
    found: list[dict[str, Any]] = []
    commit_id, current_id, last_blob = snapshot.commit, asset_id, None
    while commit_id and len(found) < limit:
        commit = repo.read_commit(commit_id)
        blob = _blob_at(repo, commit.tree, path)
        if blob is None:
            break
        if blob != last_blob:
            last_blob = blob
            entry = cache.get(blob).get(current_id)
            if entry is None:
                break
            if not found or found[-1]["rev"] != entry["rev"]:
                found.append(dict(entry, commit=commit.id.decode()))
            if entry["rev"] <= 1:
                break
        trailers = _trailers(commit.message)
        if trailers.get("Renamed-From") and trailers.get("Asset") == current_id:
            current_id, last_blob = trailers["Renamed-From"], None
        commit_id = commit.parents[0] if commit.parents else None
    return found


def commit_with_trailer(project: Project, key: str, value: str, limit: int = 1000) -> bytes | None:
    """The newest of the last `limit` commits (first-parent) whose trailer `key` equals `value`, or None."""
    repo = project.repo
    commit_id = repo.head()
    needle = f"\n{key}: {value}\n".encode("utf-8")
    for _ in range(limit):
        if commit_id is None:
            return None
        commit = repo.read_commit(commit_id)
        if needle in commit.message:
            return commit_id
        commit_id = commit.parents[0] if commit.parents else None
    return None
