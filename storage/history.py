"""Translation history read back from Git.

- `revisions`: the revisions of one (asset, locale) pair, newest first.
- `log`: the project's commits (author, time, summary, trailers, touched locales), newest first, filtered by
  locale, author and tag, a page at a time.
- `commit_changes`: what one commit changed, entry by entry: translations (old and new stored entry), assets and
  glossary terms.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from . import textchanges
from .canonical import EMPTY, Chunk, changed_keys
from .errors import NotFound
from .gitrepo import GitRepo, Person
from .project import Project
from .records import AssetRecord, TranslationRecord
from .snapshot import ASSETS_DIR, GLOSSARY_FILE, LOCALES_DIR, PROJECT_FILE, Snapshot, chunk_file, chunk_number
from .store import SERVICE, iso_from_timestamp
from .trailers import Trailer

_CHUNK_CACHE_SIZE = 64


class _ChunkCache:
    """Parsed chunks by blob id: consecutive commits mostly share the blob we look at."""

    def __init__(self, repo: GitRepo):
        self.repo = repo
        self._items: OrderedDict[bytes, Chunk[Any]] = OrderedDict()

    def get(self, blob: bytes) -> Chunk[Any]:
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
    """The `Key: value` lines of the message's last paragraph (see storage.project.commit_message)."""
    found: dict[str, str] = {}
    paragraphs = message.decode("utf-8", "replace").strip().split("\n\n")
    if len(paragraphs) < 2:
        return found
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            found[key] = value.replace("\\n", "\n").replace("\\r", "\r").replace("\\0", "\0") \
                .replace("\\\\", "\\")
    return found


class Revision(TranslationRecord):
    """A translation as one commit held it (storage.records.TranslationRecord), and that commit's id."""

    commit: str


def revisions(project: Project, asset_id: str, locale: str, limit: int = 1000,
              snapshot: Snapshot | None = None) -> list[Revision]:
    """Every revision of a translation since it was last created, newest first.

    Going back along first-parent history from the snapshot, the entry changes only in the commits that
    change its line of the one chunk file that can hold it (`EntryHistory` finds them without reading a
    file), so the other commits cost nothing here. Each revision number is recorded once, as its newest state, with the entry's
    own author and time and the newest commit that holds that state. Revision 1 ends the walk (nothing older
    belongs to this translation: a deletion resets the count), and so does a commit without the entry.
    Renames are followed through the `Renamed-From` trailer (a rename moves the entry's line, so the
    renaming commit is one of those that change the file).
    """
    snapshot = snapshot or project.snapshot()
    asset = snapshot.asset(asset_id)
    if asset is None:
        raise NotFound("Asset not in project")
    number = asset["n"] // snapshot.chunk_size
    chunk = snapshot.locale_chunks.get(locale, {}).get(number)
    entry, commit = (chunk.get(asset_id) if chunk else None), snapshot.commit
    found: list[Revision] = []
    if commit is None:
        return found
    older = EntryHistory(project.repo, commit, f"{LOCALES_DIR}/{locale}/{chunk_file(number)}", asset_id)
    try:
        while entry is not None and len(found) < limit:
            if not found or found[-1]["rev"] != entry["rev"]:
                found.append({**entry, "commit": commit.decode()})
            if entry["rev"] <= 1:
                break
            step = older.previous()
            if step is None:
                break
            commit, entry = step
    finally:
        older.close()
    return found


def pusher(commit, trailers: dict[str, str] | None = None) -> Person | None:
    """Who pushed the commit: the committer of a push's merge commit (storage.receive), whose author is
    only the name the pushed commit gave; None for any other commit, and for pushes merged before the
    pusher was recorded (their committer is the service). `trailers`: the message's, when already read."""
    if Trailer.PUSHED not in (_trailers(commit.message) if trailers is None else trailers):
        return None
    committer = Person.parse(commit.committer)
    return None if committer == SERVICE else committer


class EntryHistory:
    """The earlier states of one entry of one chunk file, newest first, from a first-parent walk of the
    commits that changed the entry (storage.textchanges: recorded by maintenance, or read from git); only
    the state before each of those commits is read."""

    def __init__(self, repo: GitRepo, start: bytes, path: str, key: str):
        self.repo, self.path = repo, path
        self._follow(key)
        self._commits = textchanges.along(repo, start, None, [path])

    def _follow(self, key: str) -> None:
        self.key = key
        self._tokens = {textchanges.token(self.path, key), textchanges.rewrite_token(self.path, key)}

    def previous(self) -> tuple[bytes, TranslationRecord | None] | None:
        """(the newest older commit whose entry differs, the entry there), or None at the root."""
        for commit, parent, tokens in self._commits:
            if self._tokens.isdisjoint(tokens):
                continue
            if parent is None:  # the root commit: nothing before it
                return None
            entry = self._entry_at(parent)
            if entry is None:  # the entry appeared here: created, or renamed from another key
                trailers = _trailers(self.repo.read_commit(commit).message)
                if not (trailers.get(Trailer.RENAMED_FROM) and trailers.get(Trailer.ASSET) == self.key):
                    return parent, None
                self._follow(trailers[Trailer.RENAMED_FROM])
                entry = self._entry_at(parent)
            return parent, entry
        return None

    def _entry_at(self, commit: bytes) -> TranslationRecord | None:
        blob = _blob_at(self.repo, self.repo.read_commit(commit).tree, self.path.split("/"))
        return Chunk.parse(self.repo.read_raw(blob)).get(self.key) if blob is not None else None

    def close(self) -> None:
        self._commits.close()


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


# ----------------------------------------------------------------------------- the project's log
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class CommitInfo:
    """One commit as a reader of the history sees it (immutable, like the commit: shared through a cache)."""

    id: str
    author_name: str
    author_email: str
    time: str  # ISO 8601 UTC, the author time (when the change was made)
    summary: str
    trailers: dict[str, str]
    parent: str | None
    locales: tuple[str, ...] = ()  # locales whose translations the commit changed
    pushed_by: Person | None = None  # the pushing key's user, for a push's merge commit (see `pusher`)


@dataclass
class TranslationChange:
    asset_id: str
    locale: str
    old: TranslationRecord | None  # stored entry before (None: untranslated)
    new: TranslationRecord | None  # stored entry after (None: erased)
    tags: list[str]


@dataclass
class AssetChange:
    asset_id: str
    old: AssetRecord | None  # None: created
    new: AssetRecord | None  # None: deleted


@dataclass
class GlossaryChange:
    term: str
    old: dict[str, Any] | None  # its record in glossary.json before (None: added)
    new: dict[str, Any] | None  # after (None: deleted)


@dataclass
class CommitChanges:
    info: CommitInfo
    translations: list[TranslationChange]
    assets: list[AssetChange]
    project_changed: bool = False  # project.json: locales, tags, settings
    glossary: list[GlossaryChange] = field(default_factory=list)


def _person(ident: bytes) -> tuple[str, str]:
    text = ident.decode("utf-8", "replace")
    name, _, email = text.partition(" <")
    return name.strip(), email.rstrip(">").strip()


def _commit_info(commit_id: bytes, commit) -> CommitInfo:
    name, email = _person(commit.author)
    message = commit.message.decode("utf-8", "replace")
    trailers = _trailers(commit.message)
    return CommitInfo(id=commit_id.decode(), author_name=name, author_email=email,
                      time=iso_from_timestamp(commit.author_time), summary=message.strip().split("\n", 1)[0],
                      trailers=trailers, parent=commit.parents[0].decode() if commit.parents else None,
                      pushed_by=pusher(commit, trailers))


class _Walker:
    """Reads trees and chunks of several commits, sharing parsed objects between them."""

    def __init__(self, repo: GitRepo):
        self.repo = repo
        self.chunks = _ChunkCache(repo)
        self._trees: OrderedDict[bytes, dict[str, tuple[int, bytes]]] = OrderedDict()
        self._raw: OrderedDict[bytes, bytes] = OrderedDict()

    def tree(self, tree_id: bytes | None) -> dict[str, tuple[int, bytes]]:
        if tree_id is None:
            return {}
        entries = self._trees.get(tree_id)
        if entries is None:
            entries = self._trees[tree_id] = self.repo.read_tree(tree_id)
            if len(self._trees) > 4 * _CHUNK_CACHE_SIZE:
                self._trees.popitem(last=False)
        return entries

    def subtree(self, tree_id: bytes | None, name: str) -> bytes | None:
        entry = self.tree(tree_id).get(name)
        return entry[1] if entry else None

    def chunk(self, blob: bytes | None) -> Chunk[Any]:
        return EMPTY if blob is None else self.chunks.get(blob)

    def raw(self, blob: bytes | None) -> bytes:
        """A file's bytes; consecutive commits share most blobs, so the recent ones are kept."""
        if blob is None:
            return b""
        data = self._raw.get(blob)
        if data is None:
            data = self._raw[blob] = self.repo.read_raw(blob)
            if len(self._raw) > _CHUNK_CACHE_SIZE:
                self._raw.popitem(last=False)
        return data

    def changed_locales(self, old_root: bytes | None, new_root: bytes) -> list[str]:
        """Locales whose directory differs between two root trees (only the `locales` trees are read)."""
        old = self.tree(self.subtree(old_root, LOCALES_DIR))
        new = self.tree(self.subtree(new_root, LOCALES_DIR))
        return sorted(code for code in old.keys() | new.keys() if old.get(code) != new.get(code))

    def changed_files(self, old_tree: bytes | None, new_tree: bytes | None,
                      prefix: str = "") -> Iterator[tuple[str, bytes | None, bytes | None]]:
        """(path, old blob, new blob) of every file that differs, descending only into differing trees."""
        if old_tree == new_tree:
            return
        old, new = self.tree(old_tree), self.tree(new_tree)
        for name in sorted(old.keys() | new.keys()):
            before, after = old.get(name), new.get(name)
            if before == after:
                continue
            before_tree = before[1] if before is not None and before[0] & 0o040000 == 0o040000 else None
            after_tree = after[1] if after is not None and after[0] & 0o040000 == 0o040000 else None
            if before_tree is not None or after_tree is not None:
                yield from self.changed_files(before_tree, after_tree, f"{prefix}{name}/")
            else:
                yield f"{prefix}{name}", before[1] if before else None, after[1] if after else None


def _asset_tags(walker: _Walker, roots: tuple[bytes | None, bytes], number: int, asset_id: str) -> list[str]:
    """The asset's tags after the commit (before it, for an asset the commit deleted)."""
    for root in reversed(roots):
        blob = walker.subtree(walker.subtree(root, ASSETS_DIR), chunk_file(number))
        record = walker.chunk(blob).get(asset_id)
        if record is not None:
            return list(record.get("tags", []))
    return []


def _roots(walker: _Walker, commit) -> tuple[bytes | None, bytes]:
    """(parent's root tree or None, the commit's root tree)."""
    return (walker.repo.read_commit(commit.parents[0]).tree if commit.parents else None), commit.tree


def _changed_entries(walker: _Walker, roots: tuple[bytes | None, bytes]
                     ) -> Iterator[tuple[str, str, int, str, bytes | None, bytes | None]]:
    """(kind, locale, chunk number, key, old blob, new blob) of every changed entry, lazily; kind is
    "asset", "translation", "glossary" (the key is the term) or "project" (project.json: key and locale are
    empty then)."""
    for path, before, after in walker.changed_files(*roots):
        parts = path.split("/")
        if path == PROJECT_FILE:
            yield "project", "", 0, "", before, after
            continue
        if path == GLOSSARY_FILE:  # one term a line, like a chunk
            for key in changed_keys(walker.raw(before), walker.raw(after)):
                yield "glossary", "", 0, key, before, after
            continue
        if parts[0] == ASSETS_DIR and len(parts) == 2:
            kind, locale = "asset", ""
        elif parts[0] == LOCALES_DIR and len(parts) == 3:
            kind, locale = "translation", parts[1]
        else:
            continue
        number = chunk_number(parts[-1])
        if number is None:  # a file the loader does not read (see chunk_number) holds no project data
            continue
        for key in changed_keys(walker.raw(before), walker.raw(after)):
            yield kind, locale, number, key, before, after


def _changes(walker: _Walker, commit_id: bytes, limit: int | None = None) -> tuple[CommitChanges, int]:
    """The commit's changes (at most `limit` entries detailed) and how many entries it changed in all."""
    commit = walker.repo.read_commit(commit_id)
    info = _commit_info(commit_id, commit)
    roots = _roots(walker, commit)
    found = CommitChanges(info, [], [], False)
    locales: set[str] = set()
    total = 0
    for kind, locale, number, key, before, after in _changed_entries(walker, roots):
        if kind == "project":
            found.project_changed = True
            continue
        total += 1
        locales.add(locale)
        if limit is not None and total > limit:
            continue
        old, new = walker.chunk(before).get(key), walker.chunk(after).get(key)
        if kind == "glossary":
            found.glossary.append(GlossaryChange(key, old, new))
        elif kind == "asset":
            found.assets.append(AssetChange(key, old, new))
        else:
            found.translations.append(TranslationChange(key, locale, old, new,
                                                        _asset_tags(walker, roots, number, key)))
    found.info = replace(info, locales=tuple(sorted(locales - {""})))
    return found, total


def _touches_tag(walker: _Walker, commit, tag: str) -> bool:
    """Whether the commit changed an asset carrying `tag`, or a translation of one (stops at the first)."""
    roots = _roots(walker, commit)
    seen: set[str] = set()
    for kind, _, number, key, before, after in _changed_entries(walker, roots):
        if kind in ("project", "glossary") or key in seen:  # a term carries no tag
            continue
        seen.add(key)
        if kind == "asset":
            record = walker.chunk(after).get(key) or walker.chunk(before).get(key) or {}
            if tag in record.get("tags", []):
                return True
        elif tag in _asset_tags(walker, roots, number, key):
            return True
    return False


def commit_changes(project: Project, commit_id: str, limit: int | None = None) -> tuple[CommitChanges, int]:
    """What one commit of the project changed (at most `limit` entries detailed) and how many entries in all;
    NotFound for anything that is not one of its commits."""
    if not COMMIT_ID.match(commit_id or "") or project.repo.unreachable_objects({commit_id.encode()}):
        raise NotFound("No such commit")  # an object no ref reaches (a refused push's) is no commit of it
    try:
        return _changes(_Walker(project.repo), commit_id.encode(), limit)
    except (KeyError, ValueError):  # absent object, or not a commit
        raise NotFound("No such commit") from None


@dataclass(frozen=True)
class CommitDigest:
    """One commit as a webhook names it: who made it, its action, and the translations it changed."""

    info: CommitInfo
    pairs: tuple[tuple[str, str], ...]  # (asset, locale) of every translation entry it changed, sorted


def commits_since(project: Project, since: bytes, head: bytes) -> list[CommitDigest] | None:
    """The first-parent commits after `since` up to `head`, oldest first, each with the (asset, locale) pairs it
    changed (from the text-change index, or git for the commits it does not hold yet); None when `since` is not
    on `head`'s first-parent history."""
    changed: list[tuple[bytes, tuple[tuple[str, str], ...]]] = []
    walk = textchanges.along(project.repo, head, since, [LOCALES_DIR])
    parent: bytes | None = head
    try:
        for commit_id, parent, tokens in walk:
            pairs = sorted({(key, path.split("/")[1]) for path, key in map(textchanges.entry_of, tokens)})
            changed.append((commit_id, tuple(pairs)))
    finally:
        walk.close()
    if since != head and parent != since:  # the walk reached the root without meeting `since`
        return None
    commits = project.repo.read_commits([commit_id for commit_id, _ in changed])
    return [CommitDigest(_commit_info(commit_id, commits[commit_id]), pairs) for commit_id, pairs in reversed(changed)]


def _matches_author(info: CommitInfo, author: str) -> bool:
    wanted = author.casefold()
    return wanted in info.author_name.casefold() or wanted in info.author_email.casefold()


def log(project: Project, *, locale: str = "", author: str = "", tag: str = "", offset: int = 0,
        limit: int = 20, start: bytes | None = None) -> tuple[list[CommitInfo], bool]:
    """A page of the first-parent history from `start` (default: main's head), newest first, and whether more
    commits match.

    Filters: `locale` keeps commits that changed that locale's translations (a tree comparison, no file is
    parsed); `author` matches the author's name or email (case-insensitive substring); `tag` keeps commits
    that changed a translation or an asset carrying the tag (those commits' changed chunks are read).
    """
    walker = _Walker(project.repo)
    page: list[CommitInfo] = []
    skipped = 0
    commit_id = start or project.repo.head()
    while commit_id:
        info = _summary(walker, commit_id)
        keep = (not locale or locale in info.locales) and (not author or _matches_author(info, author))
        if keep and tag:
            keep = _cached(_TAG_CACHE, (commit_id, tag),
                           lambda: _touches_tag(walker, walker.repo.read_commit(commit_id), tag))
        if keep:
            if skipped < offset:
                skipped += 1
            elif len(page) == limit:
                return page, True
            else:
                page.append(info)
        commit_id = info.parent.encode() if info.parent else None
    return page, False


# Commits never change, so what was read from one is kept per process (bounded): a later page of the log,
# or the same page for the next reader, costs no object reads for the commits already seen.
_CACHE_ENTRIES = 200_000
_SUMMARY_CACHE: dict[bytes, CommitInfo] = {}
_TAG_CACHE: dict[tuple[bytes, str], bool] = {}


def _cached(cache: dict, key, compute):
    value = cache.get(key)
    if value is None:
        value = compute()
        if len(cache) >= _CACHE_ENTRIES:
            cache.clear()  # crude but bounded; refilled by the next walks
        cache[key] = value
    return value


def _summary(walker: _Walker, commit_id: bytes) -> CommitInfo:
    """The commit's info with the locales it changed (a comparison of `locales` trees with its parent's)."""

    def compute() -> CommitInfo:
        commit = walker.repo.read_commit(commit_id)
        parent_root = walker.repo.read_commit(commit.parents[0]).tree if commit.parents else None
        return replace(_commit_info(commit_id, commit),
                       locales=tuple(walker.changed_locales(parent_root, commit.tree)))

    return _cached(_SUMMARY_CACHE, commit_id, compute)
