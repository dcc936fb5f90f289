"""Translation memory: pairs (source text -> target text) of a project's translations, fuzzy matched.

The memory of a target locale is the pairs of every asset translated in both the project's source locale and
that locale, kept per chunk (storage.snapshot) on the target locale's chunk: derived data, never the truth.

- A write makes new versions of a few chunks; the pairs of each follow it (registered in storage.derivations,
  handed on) and are updated from the entries that differ since, alone (Chunk.changed_since).
- A cold process finds them in storage.derived under the blob ids of the two chunk files they were made from
  (one part per chunk, `memory-<locale>-<NNNN>`: a write rewrites the file of its chunk's pairs only; one
  part for all took 15 MB at 100k pairs, rewritten whole in the background after every write, and readers
  waited for it), else builds them from the chunks.
- Each pair names the commit that last changed its target text or flag, and that text's author (the entry's
  `author`, who is also the commit's author for the API's writes). The pairs a write changed are attributed
  to the commits since the head they were last found right at, walking first parents back to it once for all
  of them: a tree look-up per commit, and a parse of the chunks it changed (the last WALK_IN_PROCESS
  commits; older history, as a build from nothing may need, from storage.textchanges). The commit is found
  when a pair is first built: a later revert to the same blob keeps that first attribution.

Matching (best_matches): rapidfuzz's `fuzz.ratio` (normalised Indel similarity, 0-100; 100 only for the same
text), one C call per chunk with a score cut-off that rises with the best found so far, over the sources that
share a word with the text that is not frequent in their chunk (a word index per chunk, built on first use).
bench/bench_workbench.py measures it at 200,000 pairs.

TMX units imported into memory.json (snapshot.MEMORY_FILE, the truth, in the repository) are matched the same
way (imported_memory): import_units adds them, keyed by a digest of their texts.

Memory groups (storage.memorygroups): suggestions come from the project and the other members of its group
whose source locale is the same (`group_memories`).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import string
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, NamedTuple

from rapidfuzz import fuzz, process

from . import textchanges
from .canonical import EMPTY, Chunk
from .checks import check_memory_unit
from .derivations import register
from .derived import pack_strings, unpack_strings
from .gitrepo import GitRepo
from .operations import Actor
from .project import Project
from .snapshot import MEMORY_FILE, Snapshot, locale_path
from .transaction import Transaction

MEMORY = "memory"  # the name of a target chunk's pairs among its derived data, and of their storage.derived parts
VERSION = 1  # of the persisted pairs: raise it when what they hold changes
MIN_SCORE = 50  # suggestions below this similarity are noise rather than help

register(MEMORY)  # handed on to a chunk's next versions, and updated by its owner (_locale_memory)


# ----------------------------------------------------------------------------- the pairs of one chunk
@dataclass
class ChunkMemory:
    """The pairs of one chunk: parallel lists, `sources` matched as they are (one C call per chunk)."""

    source_locale: str
    source: Chunk | None  # the chunks they were made from (the source locale's may have no file)
    target: Chunk
    commit: bytes  # the latest head they were found right at: where a walk for the next changes may stop
    ids: list[str]
    sources: list[str]
    targets: list[str]
    authors: list[str | None]
    commits: list[str | None]
    files: list[str] | None = None  # units imported from TMX (memory.json): the file each came from
    _words: dict[str, list[int]] | None = field(default=None, repr=False, compare=False)

    def candidates(self, words: set[str]) -> list[int] | None:
        """The positions of the sources holding one of `words` that is not frequent here (in more than
        1/FREQUENT_SHARE of them), in order; None (compare every source) when every word found is frequent."""
        index = self._words
        if index is None:
            index = self._words = _word_index(self.sources)
        frequent_above = max(8, len(self.sources) // FREQUENT_SHARE)
        found: set[int] = set()
        frequent = False
        for word in words:
            positions = index.get(word)
            if positions is None:
                continue
            if len(positions) > frequent_above:
                frequent = True
            else:
                found.update(positions)
        if not found and frequent:
            return None
        return sorted(found)

    def by_id(self) -> dict[str, tuple[str, str, str | None, str | None]]:
        return {asset_id: (source, target, author, commit) for asset_id, source, target, author, commit
                in zip(self.ids, self.sources, self.targets, self.authors, self.commits)}


Pair = tuple[str, str, "str | None", "str | None"]  # source text, target text, author, commit


def _pair(source: dict[str, Any] | None, target: dict[str, Any] | None) -> tuple[str, str, str | None] | None:
    """(source text, target text, author) of an asset translated on both sides, its translation not flagged
    (a fuzzy or unreviewed text is no example to follow), else None."""
    if source is None or target is None or not source.get("text") or not target.get("text") or target.get("flag"):
        return None
    author = target.get("author")
    name = author.get("name") if isinstance(author, dict) else None
    return source["text"], target["text"], sys.intern(name) if isinstance(name, str) else None


def _memory(source_locale: str, source: Chunk | None, target: Chunk, commit: bytes,
            pairs: dict[str, Pair]) -> ChunkMemory:
    ids = [asset_id for asset_id in target.keys() if asset_id in pairs]  # the chunk's order: stable answers
    rows = [pairs[asset_id] for asset_id in ids]
    return ChunkMemory(source_locale, source, target, commit, ids, [row[0] for row in rows],
                       [row[1] for row in rows], [row[2] for row in rows], [row[3] for row in rows])


def _part(locale: str, number: int) -> str:
    """The storage.derived part of a chunk's pairs (locale codes are file-name safe: see snapshot.locale_path)."""
    return f"{MEMORY}-{locale}-{number:04d}"


def _persisted_key(snapshot: Snapshot, source_locale: str, locale: str, number: int):
    blobs = snapshot.chunk_blobs(number, [(source_locale, number), (locale, number)])
    return None if blobs is None else (MEMORY, (VERSION, source_locale, locale), blobs[1])


def _from_persisted(value: Any, source_locale: str, source: Chunk | None, target: Chunk,
                    commit: bytes) -> ChunkMemory:
    ids, sources, targets, authors, commits = value
    return ChunkMemory(source_locale, source, target, commit, list(unpack_strings(ids)), list(sources),
                       list(targets), list(authors), list(commits))


def _to_persisted(memory: ChunkMemory) -> tuple:
    return (pack_strings(memory.ids), tuple(memory.sources), tuple(memory.targets), tuple(memory.authors),
            tuple(memory.commits))


class _Pending(NamedTuple):
    """A chunk whose pairs need commits from history before they are kept."""

    number: int
    path: str
    pairs: dict[str, Pair]
    unknown: set[str]  # asset ids whose commit is not known yet
    stop: bytes | None  # where the walk for them may end (the head the previous pairs were made at)
    source: Chunk | None
    target: Chunk
    older: frozenset[str] | set[str] = frozenset()  # asset ids whose commit is before `stop`: walked to the root


# The pairs each open project last had per locale and chunk number, in this process: where the pairs of a chunk
# read without its lineage are updated from (a weak key: an evicted project takes them along).
_LAST: weakref.WeakKeyDictionary[Project, dict[str, dict[int, ChunkMemory]]] = weakref.WeakKeyDictionary()


def locale_memory(project: Project, snapshot: Snapshot, locale: str) -> list[ChunkMemory]:
    """The pairs of every chunk of `locale` at `snapshot` (a committed one), updated or built as needed."""
    source_locale = snapshot.source_locale
    if snapshot.commit is None or locale == source_locale or snapshot.locale(locale) is None:
        return []
    return snapshot.remember((MEMORY, locale), lambda: _locale_memory(project, snapshot, source_locale, locale))


def _locale_memory(project: Project, snapshot: Snapshot, source_locale: str, locale: str) -> list[ChunkMemory]:
    assert snapshot.commit is not None
    found: dict[int, ChunkMemory] = {}
    pending: list[_Pending] = []
    last = _LAST.setdefault(project, {}).get(locale, {})
    for number in snapshot.chunk_numbers():
        target = snapshot.locale_chunk(locale, number)
        if target is None:
            continue
        source = snapshot.locale_chunk(source_locale, number)
        cached: ChunkMemory | None = target.kept(MEMORY)
        if cached is not None and cached.source_locale == source_locale and cached.target is target \
                and cached.source is source:
            cached.commit = snapshot.commit  # still right here: a later write's walk starts from this commit
            found[number] = cached
            continue
        if cached is None or cached.source_locale != source_locale:
            key = _persisted_key(snapshot, source_locale, locale, number)
            value = snapshot.saved(_part(locale, number), key) if key is not None else None
            if value is not None:
                found[number] = _from_persisted(value, source_locale, source, target, snapshot.commit)
                target.keep(MEMORY, found[number])
                continue
        if cached is None or cached.source_locale != source_locale:
            # a chunk read anew (no lineage: this process took its pairs from the derived files, without
            # reading it): the pairs this process last had for its number, compared line by line
            cached = last.get(number)
        pending.append(_changes(snapshot, number, locale, cached if cached and cached.source_locale ==
                                source_locale else None, source, target))
    _attribute_all(project, snapshot, pending)
    for item in pending:
        memory = _memory(source_locale, item.source, item.target, snapshot.commit, item.pairs)
        item.target.keep(MEMORY, memory)
        found[item.number] = memory
        key = _persisted_key(snapshot, source_locale, locale, item.number)
        if key is not None and snapshot.persisted is not None:
            snapshot.save(_part(locale, item.number), key, _to_persisted(memory))
    _LAST[project][locale] = found
    return [found[number] for number in sorted(found)]


def _changes(snapshot: Snapshot, number: int, locale: str, cached: ChunkMemory | None, source: Chunk | None,
             target: Chunk) -> _Pending:
    """The pairs of a chunk from `cached` (made from earlier versions of its chunks) and the entries that
    differ since, or from the chunks alone; the commits of changed target texts are left to find."""
    path = locale_path(locale, number)
    if cached is None:
        pairs: dict[str, Pair] = {}
        sources = source.peek_all() if source is not None else {}
        for asset_id, entry in target.peek_all().items():
            made = _pair(sources.get(asset_id), entry)
            if made is not None:
                pairs[asset_id] = (*made, None)
        return _Pending(number, path, pairs, set(pairs), None, source, target)
    pairs = cached.by_id()
    changed = set(target.changed_since(cached.target))
    translated_since = set(changed)  # whose commit is since `cached.commit`: the others' is older
    if source is not None:
        changed.update(source.changed_since(cached.source))
    elif cached.source is not None:
        changed.update(cached.source.keys())
    unknown: set[str] = set()
    older: set[str] = set()  # paired since, with a translation from before: found further back
    for asset_id in changed:
        old = pairs.pop(asset_id, None)
        made = _pair(source.peek(asset_id) if source is not None else None, target.peek(asset_id))
        if made is None:
            continue
        if old is not None and old[1] == made[1] and old[3] is not None:  # the same target text: same commit
            pairs[asset_id] = (*made[:2], old[2], old[3])
        else:
            pairs[asset_id] = (*made, None)
            (unknown if asset_id in translated_since else older).add(asset_id)
    return _Pending(number, path, pairs, unknown, cached.commit, source, target, older)


def _attribute_all(project: Project, snapshot: Snapshot, pending: list[_Pending]) -> None:
    """Fill in the commit of each pair `pending` lacks one for, in one walk of the history per stop."""
    assert snapshot.commit is not None
    known: dict[bytes | None, Chunk] = {snapshot.files[item.path]: item.target for item in pending
                                        if item.path in snapshot.files}
    walks: dict[bytes | None, dict[str, set[str]]] = {}
    for item in pending:
        if item.unknown:
            walks.setdefault(item.stop, {})[item.path] = set(item.unknown)
        if item.older:
            walks.setdefault(None, {}).setdefault(item.path, set()).update(item.older)
    commits: dict[tuple[str, str], bytes] = {}
    for stop, wanted in walks.items():
        commits.update(last_commits(project, snapshot.commit, stop, wanted, known=known))
    for item in pending:
        for asset_id in {*item.unknown, *item.older}:
            source, target, author, _ = item.pairs[asset_id]
            commit = commits.get((item.path, asset_id))
            # interned: many pairs share a commit (and an author), which marshal then writes once
            item.pairs[asset_id] = (source, target, author, sys.intern(commit.decode()) if commit else None)


# Commits a walk compares in this process (a tree look-up each, and a parse of the chunks they changed); older
# history is asked of storage.textchanges (its index, else `git log -p`, a process start).
WALK_IN_PROCESS = 64


def last_commits(project: Project, head: bytes, stop: bytes | None, wanted: dict[str, set[str]],
                 walk: int | None = WALK_IN_PROCESS, known: dict[bytes | None, Chunk] | None = None
                 ) -> dict[tuple[str, str], bytes]:
    """(chunk path, key) -> the newest commit from `head` back along first parents to `stop` (left out) that
    changed that entry's text or flag (its creation included), for the entries `wanted` names; the last `walk`
    commits in this process (None: all), older ones from storage.textchanges (which knows locale chunks).
    `known`: chunks already read, by blob id (the head's: not parsed again)."""
    repo = project.repo
    remaining = {path: set(keys) for path, keys in wanted.items() if keys}
    if stop is not None and repo.read_commit(head).parents[:1] == [stop]:  # one write since: no walk
        return {(path, key): head for path, keys in remaining.items() for key in keys}
    found: dict[tuple[str, str], bytes] = {}
    parsed: dict[bytes | None, Chunk] = {None: EMPTY, **(known or {})}

    def chunk(blob: bytes | None) -> Chunk:
        if blob not in parsed:
            parsed[blob] = Chunk.parse(repo.read_raw(blob))  # type: ignore[arg-type]
        return parsed[blob]

    commit: bytes | None = head
    for _ in itertools.repeat(None) if walk is None else range(walk):
        if commit is None or commit == stop or not remaining:
            return found
        info = repo.read_commit(commit)
        parent = info.parents[0] if info.parents else None
        after = _chunk_blobs(repo, info.tree, remaining)
        before = _chunk_blobs(repo, repo.read_commit(parent).tree, remaining) if parent else {}
        for path, keys in list(remaining.items()):
            if after.get(path) == before.get(path):
                continue
            old, new = chunk(before.get(path)), chunk(after.get(path))
            for key in keys.intersection(new.changed_since(old)):
                if old is EMPTY or not textchanges.same_text(old.peek(key), new.peek(key)):  # (a new file: no parse)
                    found[(path, key)] = commit
                    keys.discard(key)
            if not keys:
                del remaining[path]
        commit = parent
    if commit is None or commit == stop or not remaining:
        return found
    tokens = {textchanges.token(path, key): (path, key) for path, keys in remaining.items() for key in keys}
    older = textchanges.along(repo, commit, stop, sorted(remaining))
    try:
        for commit, _, changed in older:
            for token in tokens.keys() & set(changed):
                found[tokens.pop(token)] = commit
            if not tokens:
                break
    finally:
        older.close()
    return found


def _chunk_blobs(repo: GitRepo, tree: bytes, paths: Iterable[str]) -> dict[str, bytes]:
    """The blob id of each of `paths` (files of one or a few directories) in the tree `tree`; absent: left out."""
    blobs: dict[str, bytes] = {}
    directories: dict[str, dict[str, tuple[int, bytes]]] = {}
    for path in paths:
        directory, _, name = path.rpartition("/")
        if directory not in directories:
            directories[directory] = _directory(repo, tree, directory)
        entry = directories[directory].get(name)
        if entry is not None:
            blobs[path] = entry[1]
    return blobs


def _directory(repo: GitRepo, tree: bytes, directory: str) -> dict[str, tuple[int, bytes]]:
    entries = repo.read_tree(tree)
    for name in directory.split("/") if directory else ():
        entry = entries.get(name)
        if entry is None:
            return {}
        entries = repo.read_tree(entry[1])
    return entries


# ----------------------------------------------------------------------------- matching
# Words, for the prefilter: lower case, split at white space and ASCII punctuation (str.translate and
# str.split run in C: a regex per source made the index of a chunk 3 times as long)
_PUNCTUATION = str.maketrans({character: " " for character in string.punctuation})


def words_of(text: str) -> list[str]:
    return text.lower().translate(_PUNCTUATION).split()


def _word_index(sources: list[str]) -> dict[str, list[int]]:
    """word -> the positions of the sources holding it, in order (about 5 ms for 1,000 sources)."""
    lines = "\n".join(sources).lower().translate(_PUNCTUATION).split("\n")
    if len(lines) != len(sources):  # a source holds a line break: one at a time
        lines = [source.lower().translate(_PUNCTUATION) for source in sources]
    index: dict[str, list[int]] = {}
    get = index.get
    for position, line in enumerate(lines):
        for word in line.split():
            positions = get(word)
            if positions is None:
                index[word] = [position]
            elif positions[-1] != position:
                positions.append(position)
    return index


PREFILTER_WORDS = 3  # shorter texts are compared with every source (rapidfuzz's length cut-off prunes most)
FREQUENT_SHARE = 20  # a word in more than 1/20 of a chunk's sources selects nothing in it


class Match(NamedTuple):
    score: float
    project: str
    memory: ChunkMemory
    position: int  # in the chunk's lists


def best_matches(text: str, memories: Iterable[tuple[str, ChunkMemory]], limit: int,
                 exclude: tuple[str, str] | None = None) -> list[Match]:
    """The `limit` pairs whose source is most like `text` (score >= MIN_SCORE), best first, one per distinct
    target text; `exclude`: (project, asset) never suggested (the asset asking).

    A text of PREFILTER_WORDS words or more is compared only with the sources sharing one of its words that is
    not frequent in their chunk (ChunkMemory.candidates); the cut-off rises to the score of the `limit`-th best
    distinct target found so far, which lets rapidfuzz reject the rest sooner (bench/bench_workbench.py)."""
    words = set(words_of(text))
    prefilter = len(words) >= PREFILTER_WORDS
    found: list[Match] = []
    best: dict[str, float] = {}  # target text -> its best score so far
    cutoff: float = MIN_SCORE
    for project_id, memory in memories:
        positions = memory.candidates(words) if prefilter else None
        choices = memory.sources if positions is None else [memory.sources[i] for i in positions]
        if not choices:
            continue
        # a few more than `limit` per chunk: the excluded asset and repeated targets must not leave a gap
        for _, score, index in process.extract(text, choices, scorer=fuzz.ratio, score_cutoff=cutoff,
                                               limit=limit + 2):
            position = index if positions is None else positions[index]
            if exclude is not None and memory.files is None and exclude == (project_id, memory.ids[position]):
                continue
            found.append(Match(score, project_id, memory, position))
            target = memory.targets[position]
            best[target] = max(score, best.get(target, 0.0))
        if len(best) >= limit:
            cutoff = max(cutoff, sorted(best.values(), reverse=True)[limit - 1])
    found.sort(key=lambda match: -match.score)
    chosen: list[Match] = []
    seen: set[str] = set()
    for match in found:
        target = match.memory.targets[match.position]
        if target not in seen:
            seen.add(target)
            chosen.append(match)
            if len(chosen) == limit:
                break
    return chosen


def suggestion(match: Match) -> dict[str, Any]:
    """A match as the API answers it: a translation's names its asset, an imported unit's its TMX file; the
    score is an integer, 100 for the same source text only."""
    memory, index = match.memory, match.position
    imported = memory.files is not None
    score = 100 if match.score == 100 else min(99, round(match.score))
    return {"text": memory.targets[index], "score": score, "source": memory.sources[index],
            "origin": "tmx" if imported else "translation", "project": match.project,
            "asset": None if imported else memory.ids[index],
            "file": memory.files[index] if memory.files is not None else None,
            "author": memory.authors[index], "commit": memory.commits[index]}


# ----------------------------------------------------------------------------- imported units (memory.json)
def unit_id(texts: dict[str, str]) -> str:
    """A unit's key in memory.json: a digest of its texts, so that a unit imported twice is kept once."""
    data = json.dumps(texts, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return "u" + hashlib.sha256(data).hexdigest()[:24]


def import_units(tx: Transaction, units: Iterable[dict[str, str]], file: str, actor: Actor | None) -> int:
    """Add to memory.json each unit ({locale: text}: those with a text, two locales or more) it lacks; how many
    were added."""
    added = 0
    for texts in units:
        texts = {code: text for code, text in texts.items() if text}
        if len(texts) < 2:
            continue
        key = unit_id(texts)
        if tx.memory_unit(key) is not None:
            continue
        record: dict[str, Any] = {"file": file, "texts": texts}
        if actor is not None:
            record["author"] = actor.record()
        check_memory_unit(f"unit {key}", key, record)
        tx.put_memory_unit(key, record)
        added += 1
    return added


def imported_memory(project: Project, snapshot: Snapshot, locale: str) -> ChunkMemory | None:
    """The units of memory.json with a text in the source locale and in `locale`, as pairs (kept with the
    file's chunk while its blob stays; each names the commit that added it, from a walk of the history)."""
    units, source_locale = snapshot.memory_units, snapshot.meta.get("source", "")
    if snapshot.commit is None or not len(units):
        return None
    name = (MEMORY, source_locale, locale)
    found: ChunkMemory | None = units.kept(name)
    if found is None:
        pairs = {key: unit for key, unit in units.peek_items()
                 if unit["texts"].get(source_locale) and unit["texts"].get(locale)}
        commits = last_commits(project, snapshot.commit, None, {MEMORY_FILE: set(pairs)}, walk=None)
        ids = list(pairs)
        found = ChunkMemory(source_locale, None, units, snapshot.commit, ids,
                            [pairs[key]["texts"][source_locale] for key in ids],
                            [pairs[key]["texts"][locale] for key in ids],
                            [(pairs[key].get("author") or {}).get("name") for key in ids],
                            [commit.decode() if (commit := commits.get((MEMORY_FILE, key))) else None
                             for key in ids],
                            [pairs[key]["file"] for key in ids])
        units.keep(name, found)
    return found


def group_memories(members: Iterable[tuple[str, Project, Snapshot]], source_locale: str, locale: str
                   ) -> Iterator[tuple[str, ChunkMemory]]:
    """(project id, chunk pairs) of each (project id, project, snapshot) given whose source locale is
    `source_locale`: its translations', then its imported units'."""
    for project_id, project, snapshot in members:
        if snapshot.commit is None or snapshot.meta.get("source") != source_locale:
            continue
        for memory in locale_memory(project, snapshot, locale):
            yield project_id, memory
        imported = imported_memory(project, snapshot, locale)
        if imported is not None:
            yield project_id, imported
