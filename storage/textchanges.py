"""Which translations each commit changed: derived data kept beside the commit-graph.

A diff attributes each changed translation to the newest commit that changed its text or flag
(storage.diff), and a translation's revisions are the commits that changed its entry (storage.history). Git
lists the commits that changed a chunk file at once (the commit-graph's Bloom filters), but telling which
entries each of them changed means diffing two versions of a whole chunk: `git log -p` costs about 0.2 ms a
commit on 100 KB chunks, nearly all of it git hashing every line of both versions, so 0.7 s for 3,000
commits. Maintenance (GitRepo.pack_loose_objects) therefore records that answer once per commit, in
`.git/gloss-text-changes`, one line per commit of the branch's first-parent history:

    <CRC-32 of the rest, 8 hex digits> <commit> <its first parent, or nothing for a root commit>[TAB<token>]...

where a token names one changed entry: `token` (the JSON string of `<chunk path>/<key>`: ASCII, no tab or
newline) when its text or flag changed, `rewrite_token` (the same after a `~`) when only the rest of it did
(a new revision of the same text, another author...). Readers then walk those lines instead of git's
patches: a look-up and a split a commit, no decoding. A commit never changes, so neither does its line: an
update appends the commits made since the last one. Derived data only: a commit without a valid line (made
since the last maintenance, or a line a crash tore or garbled) is asked of git as before, so the file
changes how long an answer takes, never the answer.
"""
from __future__ import annotations

import json
import os
import zlib
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Callable, Generator, Iterator, Sequence

from .canonical import entry_lines
from .gitrepo import CommitPatch, GitCommandError, GitRepo
from .records import TranslationRecord
from .snapshot import LOCALES_DIR, chunk_number

INDEX_FILE = "gloss-text-changes"  # in .git
# A commit that changed more entries than this (an import, a locale renamed) gets no line: readers ask git for
# it, which costs one commit's diff, rather than every read of the file carrying a line of megabytes.
MAX_LINE_TOKENS = 10_000


def same_text(one: TranslationRecord | None, other: TranslationRecord | None) -> bool:
    """Equal as far as a reader of translations cares: the text and the flag."""
    if one is None or other is None:
        return one is other
    return one.get("text") == other.get("text") and one.get("flag", "") == other.get("flag", "")


def token(path: str, key: str) -> bytes:
    """How a change of the text or flag of the entry `key` of the chunk file `path` is named by `along`."""
    return encode_basestring_ascii(f"{path}/{key}").encode("ascii")  # what json.dumps writes


def rewrite_token(path: str, key: str) -> bytes:
    """How a change of that entry that left its text and flag as they were is named by `along`."""
    return b"~" + token(path, key)


def entry_of(named: bytes) -> tuple[str, str]:
    """(chunk path, key) of the entry a `token` or `rewrite_token` names."""
    path_and_key = json.loads(named[1:] if named.startswith(b"~") else named)
    locales, code, chunk, key = path_and_key.split("/", 3)
    return f"{locales}/{code}/{chunk}", key


def along(repo: GitRepo, start: bytes, stop: bytes | None, paths: Sequence[str]
          ) -> Generator[tuple[bytes, bytes | None, Sequence[bytes]], None, None]:
    """Each commit from `start` back along first parents to `stop` (left out; when it is not on the way,
    to the root), newest first: (commit, first parent or None, the tokens of the entries it changed against
    that parent).

    Commits the index holds cost a look-up; the others are read from git, limited to `paths` (only those
    paths' changes are certain to be given for them)."""
    index = _read_index(repo)
    commit: bytes | None = start
    while commit is not None and commit != stop:
        record = _record(index.get(commit))
        if record is not None:
            parent, tokens = record
            yield commit, parent, tokens
            commit = parent
            continue
        known = _known(index, stop)
        parent = None
        for commit, parent, patch in _chain_from_git(repo, commit, known, paths):
            yield commit, parent, _tokens(patch)
        commit = parent


def update(repo: GitRepo) -> None:
    """Append the lines of the branch's commits that have none yet (maintenance; niced like the repack)."""
    head = repo.head()
    path = repo.git_dir / INDEX_FILE
    data = _read(path)
    index = _parse(data)
    if head is None or _record(index.get(head)) is not None:
        return
    lines = []
    try:
        for commit, parent, patch in _chain_from_git(repo, head, _known(index, None), [LOCALES_DIR], niced=True):
            try:
                tokens = _tokens(patch)
            except ValueError:  # not a canonical file at that commit: readers will ask git, as before
                continue
            if len(tokens) <= MAX_LINE_TOKENS:
                lines.append(_line(commit, parent, tokens))
        if lines:
            _append(path, data, b"".join(lines))
    except (OSError, GitCommandError):  # the repository went away, or the disk is full: the next run retries
        pass


# ----------------------------------------------------------------------------- from git
def _chain_from_git(repo: GitRepo, start: bytes, known: Callable[[bytes], bool], paths: Sequence[str],
                    niced: bool = False) -> Iterator[tuple[bytes, bytes | None, CommitPatch | None]]:
    """(commit, first parent, its patch of `paths` or None) from `start` back to the first commit after it
    that `known` accepts (left out), newest first: the chain is listed first (cheap), then `git log -p`
    is asked for that stretch only, and read only as far as the caller goes."""
    stretch: list[tuple[bytes, bytes | None]] = []
    end = None
    chain = repo.first_parent_chain(start, niced)
    try:
        for commit, parent in chain:
            if stretch and known(commit):
                end = commit
                break
            stretch.append((commit, parent))
    finally:
        chain.close()
    patches = repo.first_parent_patches(start, paths, stop_at=end, niced=niced)
    try:
        patch = next(patches, None)
        for commit, parent in stretch:
            if patch is not None and patch.id == commit:
                yield commit, parent, patch
                patch = next(patches, None)
            else:
                yield commit, parent, None
    finally:
        patches.close()


def _is_chunk(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == LOCALES_DIR and chunk_number(parts[2]) is not None


def _tokens(patch: CommitPatch | None) -> list[bytes]:
    """The tokens of the entries the patch changed in chunk files (ValueError for a file that is not
    canonical). A line whose value is the same (it only gained or lost its separating comma) is no change."""
    tokens: list[bytes] = []
    if patch is None:
        return tokens
    for path in sorted(patch.removed.keys() | patch.added.keys()):
        if not _is_chunk(path):
            continue
        before, after = entry_lines(patch.removed.get(path, [])), entry_lines(patch.added.get(path, []))
        for key in sorted(before.keys() | after.keys()):
            if before.get(key) == after.get(key):
                continue
            if same_text(_value(after, key), _value(before, key)):
                tokens.append(rewrite_token(path, key))
            else:
                tokens.append(token(path, key))
    return tokens


def _value(lines: dict[str, str], key: str) -> TranslationRecord | None:
    line = lines.get(key)
    return json.loads(line) if line is not None else None


# ----------------------------------------------------------------------------- the file
def _read(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return b""


def _read_index(repo: GitRepo) -> dict[bytes, bytes]:
    return _parse(_read(repo.git_dir / INDEX_FILE))


def _parse(data: bytes) -> dict[bytes, bytes]:
    """commit id -> its line, unparsed (a diff reads a few of them); after the last newline there is
    nothing, or a line being appended or torn by a crash: left out."""
    lines = data.split(b"\n")
    lines.pop()
    return {line[9:49]: line for line in lines}


def _known(index: dict[bytes, bytes], stop: bytes | None) -> Callable[[bytes], bool]:
    """Where a stretch read from git ends: at `stop`, or at a commit the index holds."""
    return lambda commit: commit == stop or _record(index.get(commit)) is not None


def _record(line: bytes | None) -> tuple[bytes | None, list[bytes]] | None:
    """(first parent, tokens) of an index line; None for no line, or one a crash garbled."""
    if line is None or b"%08x" % zlib.crc32(line[9:]) != line[:8]:
        return None
    ids, *tokens = line[9:].split(b"\t")
    return ids[41:] or None, tokens


def _line(commit: bytes, parent: bytes | None, tokens: list[bytes]) -> bytes:
    rest = b"\t".join([commit + b" " + (parent or b""), *tokens])
    return b"%08x %s\n" % (zlib.crc32(rest), rest)


def _append(path: Path, data: bytes, lines: bytes) -> None:
    """Add lines at the end (one writer: maintenance holds its lock); a line a crash cut short goes first,
    so that it does not run into the next one. Readers see whole lines, and at most a partial last one."""
    complete = data.rfind(b"\n") + 1
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        if complete != len(data):
            os.ftruncate(fd, complete)
        view = memoryview(lines)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
