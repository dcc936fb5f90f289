"""The commit journal: where the branch goes, durable in the same single round of fsync as the commit's pack.

A commit used to cost two ordered rounds of fsync: the pack and the ref's lock file before the ref's rename, then
the rename's directory with the working tree. Now a writer stages everything first and flushes it all at once:
the pack and its index under temp names, the pack directory, and this journal's slot naming the new head. Only
then does it rename the pack and the ref into place, so readers never see an object or a ref that is not
durable, and write the working tree and git's index, unflushed.

Those files stay "pending" in the journal, each with the number of the slot that last wrote it, until a later
commit's round flushes them: the oldest first, so that at most a bounded number wait (writes keep rewriting the
same few chunk files, so usually none is ever flushed on its own; a 186 KB chunk file was a third of a round).

After a crash, `GitRepo.recover` reads the latest slot and the one before: it publishes their packs whose rename
was lost (when the temp files are whole); when the ref shows an older commit of the branch (ref renames are not
flushed on their own: the journal holds the head), it moves the ref to the latest slot's commit if that commit
is whole, else to the slot's base; and it checks git's index and the pending files of both slots against HEAD,
resyncing the working tree when anything differs.

The file holds two fixed-size slots, written in place alternately (a slot's number decides which), each with its
own SHA-1: a slot torn by a crash mid-write fails its checksum and the other slot is the latest. The file is
written full of zeros when it is made, so writing a slot in place never needs a new block.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from hashlib import sha1
from pathlib import Path

JOURNAL_FILE = "gloss-journal"  # in .git: no clone, fetch or fsck ever sees it
BRANCH_JOURNALS = "gloss-journals"  # one file per named branch (storage.branches), in .git too
SHORT_READ = 8192
SLOT_SIZE = 128 * 1024  # room for 64 pending paths of the longest allowed length (limits.MAX_PATH_BYTES)


@dataclass
class Slot:
    """One commit (or one settled state) of the branch as the journal records it."""

    seq: int
    base: str | None  # the head the commit was made on (durable before its round began)
    head: str | None  # the head it moves the branch to
    # (temp pack, temp index, final name without suffix) in objects/pack: renamed after the round
    packs: list[list[str]] = field(default_factory=list)
    # the working-tree files (and, ending in "/", directories) written since they were last flushed, each
    # with the slot number of its last write; None: a write too big to list, which flushes its own files
    # and then records a settled slot
    paths: dict[str, int] | None = field(default_factory=dict)
    settled: bool = False  # written after everything it describes was flushed (recovery, or a big write)

    def encode(self) -> bytes | None:
        """The slot as stored (JSON, newline, its SHA-1 in hex, newline); None when it does not fit."""
        body = json.dumps(self.__dict__, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        data = body + b"\n" + sha1(body).hexdigest().encode("ascii") + b"\n"
        return data if len(data) <= SLOT_SIZE else None

    @classmethod
    def decode(cls, raw: bytes) -> "Slot | None":
        """The slot stored in `raw`, or None when it is empty or torn."""
        body, _, rest = raw.partition(b"\n")
        if not body or sha1(body).hexdigest().encode("ascii") != rest[:40]:
            return None
        try:
            return cls(**json.loads(body))
        except (ValueError, TypeError):
            return None


class Journal:
    """The journal file of one repository (its .git directory)."""

    def __init__(self, git_dir: Path, branch: str | None = None):
        self.path = git_dir / JOURNAL_FILE if branch is None else git_dir / BRANCH_JOURNALS / journal_name(branch)

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> tuple[Slot | None, Slot | None]:
        """(the latest valid slot, the one before it when it is also valid), or (None, None)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None, None
        try:
            found = [_read_slot(fd, number * SLOT_SIZE) for number in (0, 1)]
        finally:
            os.close(fd)
        slots = sorted((slot for slot in found if slot is not None), key=lambda slot: slot.seq, reverse=True)
        if not slots:
            return None, None
        latest = slots[0]
        previous = slots[1] if len(slots) > 1 and slots[1].seq == latest.seq - 1 else None
        return latest, previous

    def remove(self) -> None:
        """Delete the journal (its branch is being deleted)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def open(self, flush: Callable[[int], None], flush_directory: Callable[[Path], None]) -> int:
        """The journal opened for writing slots, made (durably, once per repository) when missing."""
        try:
            return os.open(self.path, os.O_WRONLY)
        except FileNotFoundError:
            pass
        if not self.path.parent.exists():
            self.path.parent.mkdir()
            flush_directory(self.path.parent.parent)
        # swept with Gloss's other temps; a dot first, which no branch name (so no journal's name) starts with
        temp = self.path.with_name(f"{'.' if self.path.name != JOURNAL_FILE else ''}gloss-journal-{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, bytes(2 * SLOT_SIZE))
            flush(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.path)
        flush_directory(self.path.parent)
        return os.open(self.path, os.O_WRONLY)

    @staticmethod
    def write(fd: int, slot: Slot) -> None:
        """Write `slot` in place (not flushed: the caller flushes it with the rest of its round)."""
        data = slot.encode()
        if data is None:
            raise ValueError("journal slot too large")  # pending paths are bounded so that it never is
        os.pwrite(fd, data, (slot.seq % 2) * SLOT_SIZE)  # what follows the checksum is never read


def journal_name(branch: str) -> str:
    """A branch's journal file name: its name with `%` and `/` escaped (one flat directory, one file per name;
    limits.MAX_BRANCH_NAME_BYTES keeps it within a file name's length)."""
    return branch.replace("%", "%25").replace("/", "%2F")


def branch_of_journal(file_name: str) -> str:
    return file_name.replace("%2F", "/").replace("%25", "%")


def _read_slot(fd: int, offset: int) -> Slot | None:
    """The slot at `offset`: its first few KiB, and all of it only when a slot is that long."""
    raw = os.pread(fd, SHORT_READ, offset)
    if b"\n" not in raw:
        raw = os.pread(fd, SLOT_SIZE, offset)
    return Slot.decode(raw)


def pending_after(latest: Slot | None, seq: int, paths: list[str], dirs: list[str],
                  limit: int) -> tuple[dict[str, int] | None, list[str]]:
    """The pending working-tree paths of the slot numbered `seq` whose commit writes `paths` and changes the
    entries of `dirs`, and the older pending paths its round must flush now: the oldest, so that at most
    `limit` stay pending (what recovery checks after a crash), or all when the commit itself writes more
    than `limit` (then its own are None: it flushes them itself)."""
    pending = dict(latest.paths or {}) if latest is not None else {}
    own = {**{path: seq for path in paths}, **{directory + "/": seq for directory in dirs}}
    if len(own) > limit:
        return None, [path for path in pending if path not in own]
    older = sorted((path for path in pending if path not in own), key=pending.__getitem__)
    flush = older[:max(0, len(older) + len(own) - limit)]
    for path in flush:
        del pending[path]
    pending.update(own)
    return pending, flush
