"""The branch ref and durability: `main` moved by compare-and-swap under git's own `refs/heads/main.lock` (so git's
receive-pack and Gloss writers exclude each other), a commit's pack, the journal and the pending working-tree
paths of earlier commits flushed in ONE round of fsync before the ref moves (storage.journal), and recovery,
which brings the ref, the working tree and the index to the latest durable commit after a crash."""
from __future__ import annotations

import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence

from limits import MAX_BRANCH_NAME_BYTES, describe

from ..errors import Busy, Conflict, Invalid
from ..journal import Journal, Slot, pending_after
from . import durable
from .objects import ObjectStore
from .queries import GitCommands
from .worktree import WorkTree

# The refs Gloss serves, named here only: the project's branches (`main` and the named ones, storage.branches),
# and the refs a push names for a key-level merge into one (storage/receive.py); tags are refs/tags/*.
HEADS = "refs/heads/"
REVIEWS = "refs/for/"
MAIN = "main"
BRANCH_REF = HEADS + MAIN
REVIEW_REF = REVIEWS + MAIN
BRANCH = BRANCH_REF.encode()
REF_LOCK_OWNER = "gloss-ref-lock"  # the inode of the ref lock file a Gloss writer created last
ZERO_ID = b"0" * 40
# How long a writer waits for `refs/heads/main.lock` held by someone else (git holds it for milliseconds
# during a push), and the age after which a lock file is taken for the leftover of a killed writer.
REF_LOCK_TIMEOUT = 2.0
# A lock that is not a Gloss writer's (git's own) is taken for a killed git's leftover after this long: git
# holds a ref lock for milliseconds. (A killed Gloss writer's lock is known as such and removed at once.)
STALE_REF_LOCK = 10.0
COMMIT_ID = re.compile(rb"[0-9a-f]{40}")
PENDING_PATHS = 64  # working-tree paths written but not yet flushed, at most (see storage.journal)
ANY = object()  # move_head's `expected` when the branch may point anywhere


# What `git check-ref-format` refuses anywhere in a name: control characters, space and ~ ^ : ? * [ \
FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | frozenset(chr(code) for code in range(32))


def check_branch_name(name: str) -> str:
    """The name if it is a valid branch name (git check-ref-format --branch, within max_branch_name_bytes),
    else Invalid saying which rule it breaks."""
    def refuse(why: str) -> Invalid:
        return Invalid(f"Invalid branch name {name!r}: {why}")

    if not name:
        raise refuse("it is empty")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_BRANCH_NAME_BYTES:
        raise refuse(f"longer than {MAX_BRANCH_NAME_BYTES} bytes {describe('max_branch_name_bytes')}")
    if any(char in FORBIDDEN for char in name):
        raise refuse("no spaces, control characters or any of ~ ^ : ? * [ \\")
    if any(0xD800 <= ord(char) <= 0xDFFF for char in name):
        raise refuse("not valid UTF-8")
    if name in ("@", "HEAD") or name.startswith("-"):
        raise refuse("@, HEAD and names starting with - are reserved")
    if ".." in name or "@{" in name or "//" in name:
        raise refuse("no .., @{ or //")
    if name.startswith("/") or name.endswith("/") or name.endswith("."):
        raise refuse("it may not start or end with / or end with .")
    if any(part.startswith(".") or part.endswith(".lock") for part in name.split("/")):
        raise refuse("no part may start with . or end with .lock")
    return name


class RefMoved(Conflict):
    """The branch no longer points where the write started from (another git writer moved it)."""


def _text(commit: bytes | None) -> str | None:
    return commit.decode("ascii") if commit is not None else None


class Branch:
    """One branch of a repository (`main` unless named), and the journal that makes its moves durable.

    `main` is checked out (its moves carry working-tree paths); a named branch is a ref alone, moved by the same
    compare-and-swap with its own journal (no working-tree paths), so that its commits are as durable.
    """

    def __init__(self, path: Path, objects: ObjectStore, name: str = MAIN):
        self.path = path
        self.name = name
        self.git_dir = path / ".git"
        self.ref = (HEADS + name).encode()
        self.ref_path = self.git_dir / self.ref.decode()
        self.objects = objects
        self.journal = Journal(self.git_dir, None if name == MAIN else name)

    def head(self) -> bytes | None:
        """The commit the branch points at, read from the loose ref (never packed: gc.packRefs is off)."""
        try:
            value = durable.read_small(self.ref_path).strip()
        except FileNotFoundError:
            return self._packed_head()
        return value or None

    def _packed_head(self) -> bytes | None:
        try:
            for line in (self.git_dir / "packed-refs").read_bytes().splitlines():
                if line.endswith(b" " + self.ref):
                    return line.split(b" ", 1)[0]
        except FileNotFoundError:
            pass
        except NotADirectoryError:  # a name below another branch's (refs/heads/a/b while a exists)
            pass
        return None

    def move_head(self, commit: bytes, expected: bytes | None | object = ANY,
                  objects: dict[str, tuple[int, bytes]] | None = None,
                  paths: Sequence[str] = (), dirs: Sequence[str] = ()) -> bool:
        """Compare-and-swap the branch from `expected` (None: it must not exist yet) to `commit`, durably,
        for ONE concurrent round of fsync (see storage.journal).

        Follows git's own protocol, so `git receive-pack`, `git update-ref` and Gloss writers exclude each
        other: create `refs/heads/NAME.lock` exclusively and check the current value while holding it. Raises
        RefMoved when the branch moved (then nothing is written). Then: stage `objects` (the commit's own,
        from object_batch(store=False)) as a pack under temp names, record the move in the journal with the
        working-tree `paths` and `dirs` the caller writes next (pending), and flush all that together with
        the oldest pending paths of earlier commits. Only then rename the pack and the ref into place.
        Returns whether the journal lists `paths` and `dirs` as pending; when they are too many, the caller
        flushes them itself (update_worktree(flush=True)).
        """
        fd = self.create_lock()
        journal_fd: int | None = None
        latest: Slot | None = None
        written: Slot | None = None
        entry: list[str] | None = None
        try:
            head = self.head()
            if expected is not ANY and head != expected:
                raise RefMoved("The project changed while this write was being made (another git writer "
                               "moved the branch); nothing was written, retry the request")
            os.write(fd, commit + b"\n")
            journal_fd = self.journal.open(durable.fsync, durable.fsync_directory)
            latest, _ = self.journal.read()
            handles: list[BinaryIO] = []
            if objects:
                handles, entry = self.objects.stage_pack(objects)
            try:
                seq = latest.seq + 1 if latest else 1
                pending, flush = pending_after(latest, seq, list(paths), list(dirs), PENDING_PATHS)
                written = Slot(seq=seq, base=_text(head), head=commit.decode(), packs=[entry] if entry else [],
                               paths=pending)
                Journal.write(journal_fd, written)
                self._flush_round(handles, journal_fd, flush)
            finally:
                for handle in handles:
                    durable.close_quietly(handle)
            if entry:
                self.objects.publish_pack(entry)
        except BaseException:
            try:
                try:
                    if written is not None and journal_fd is not None:  # so that no recovery replays it
                        self._abort_slot(journal_fd, written, latest)
                finally:  # even when the disk refused that slot too
                    if entry:
                        self.objects.discard_pack(entry)
            finally:
                if journal_fd is not None:
                    os.close(journal_fd)
                os.close(fd)
                os.unlink(self._lock_path)
            raise
        os.close(journal_fd)
        os.close(fd)
        os.replace(self._lock_path, self.ref_path)  # the rename releases the lock
        return written.paths is not None

    def _flush_round(self, handles: list[BinaryIO], journal_fd: int, flush: list[str]) -> None:
        """The commit's one round: its staged pack, the pack directory (which holds their names), the journal,
        and the older working-tree paths that must stop being pending (see journal.pending_after)."""
        descriptors = [journal_fd]
        directories = [self.objects.objects_dir / "pack"] if handles else []
        try:
            for relative in flush:
                if relative.endswith("/"):  # a directory ("/" alone: the top of the working tree)
                    if (self.path / relative[:-1]).is_dir():
                        directories.append(self.path / relative[:-1])
                    continue
                try:
                    descriptors.append(os.open(self.path / relative, os.O_RDONLY))
                except OSError:  # deleted since, or a name the file system refused
                    pass
            durable.flush_all_to_disk(handles, directories, descriptors)
        finally:
            for descriptor in descriptors[1:]:
                os.close(descriptor)

    def _abort_slot(self, journal_fd: int, written: Slot, latest: Slot | None) -> None:
        """Replace a failed commit's slot by one where the branch stays put (with the previous slot's pending
        paths, whose flush may not have happened), flushed before the error is answered."""
        Journal.write(journal_fd, Slot(seq=written.seq, base=written.base, head=written.base,
                                       paths=dict(latest.paths or {}) if latest else {}))
        durable.fsync(journal_fd)

    def delete(self, expected: bytes) -> None:
        """Remove the branch if it still points at `expected` (RefMoved if not), under its ref lock; its journal
        goes first, so that recovery never brings back a branch that is gone."""
        fd = self.create_lock()
        try:
            if self.head() != expected:
                raise RefMoved("The branch changed while it was being deleted; nothing was deleted, retry")
            self.journal.remove()
            self.ref_path.unlink()
            durable.fsync_directory(self.ref_path.parent)
        finally:
            os.close(fd)
            os.unlink(self._lock_path)
        heads = self.git_dir / HEADS
        for parent in self.ref_path.parents:  # refs/heads/a/ left empty would block a branch named `a`
            if parent == heads or not parent.is_relative_to(heads):
                break
            try:
                parent.rmdir()
            except OSError:
                break

    @property
    def _lock_path(self) -> Path:
        return self.ref_path.with_name(self.ref_path.name + ".lock")

    @contextmanager
    def ref_lock(self) -> Iterator[None]:
        """Hold git's `refs/heads/NAME.lock` for the block without moving the branch (git is kept out)."""
        os.close(self.create_lock())
        try:
            yield
        finally:
            os.unlink(self._lock_path)

    def create_lock(self) -> int:
        """Create `refs/heads/NAME.lock` exclusively, waiting up to REF_LOCK_TIMEOUT for another holder.

        The lock is made as a private file whose inode is recorded as Gloss's before it is linked into place
        (atomically, failing if the lock exists): a writer killed at any moment leaves either no lock or one
        that the next writer knows for a dead Gloss writer's, never one that passes for git's.
        """
        lock = self._lock_path
        deadline = time.monotonic() + REF_LOCK_TIMEOUT
        pause = 0.001
        temp = self._lock_temp()  # swept if left
        durable.take_spare(self.git_dir, "ref-lock", temp)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while True:
                if os.path.lexists(lock):  # judged by the record of its maker, before ours replaces it
                    if self._remove_dead_ref_lock(lock):
                        continue
                    if time.monotonic() >= deadline:
                        raise Busy(f"The branch is locked by another git process ({self.name}.lock in refs/heads); "
                                   "retry the request") from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)
                    continue
                self._record_ref_lock_owner(os.fstat(fd).st_ino)
                try:
                    os.link(temp, lock)
                    return self._reopen_as(lock, fd)
                except FileNotFoundError:
                    lock.parent.mkdir(parents=True, exist_ok=True)
                except FileExistsError:
                    pass  # git took it meanwhile: wait for it as above
        except BaseException:
            os.close(fd)
            raise
        finally:
            durable.unlink_quietly(temp)

    def _lock_temp(self) -> Path:
        """This thread's private file that becomes the ref lock (create_lock)."""
        return self.git_dir / f"gloss-ref-lock-{os.getpid()}-{threading.get_ident()}.tmp"

    def make_spares(self) -> None:
        """This process's spare for the ref lock's temp file (see durable.make_spare)."""
        durable.make_spare(self.git_dir, "ref-lock")

    @staticmethod
    def _reopen_as(lock: Path, fd: int) -> int:
        """The lock opened by its own name (so the descriptor names the lock, as git's does), for `fd`'s file."""
        reopened = os.open(lock, os.O_WRONLY)
        os.close(fd)
        return reopened

    def _record_ref_lock_owner(self, inode: int) -> None:
        durable.rewrite_small(self.git_dir / REF_LOCK_OWNER, b"%d\n" % inode)

    def _remove_dead_ref_lock(self, lock: Path) -> bool:
        """Remove a ref lock left by a killed writer; True when the lock is gone.

        Callers hold the project's flock, so no live Gloss writer holds the ref lock: one whose inode Gloss
        recorded is a dead writer's. Any other is git's, taken for the milliseconds of a ref transaction,
        unless nobody touched it for STALE_REF_LOCK seconds.
        """
        try:
            info = lock.stat()
            try:
                owned = int((self.git_dir / REF_LOCK_OWNER).read_bytes() or b"0") == info.st_ino
            except (FileNotFoundError, ValueError):
                owned = False
            if not owned and time.time() - info.st_mtime < STALE_REF_LOCK:
                return False
            lock.unlink()
        except FileNotFoundError:
            pass
        return True

    def settle(self, head: bytes | None) -> None:
        """Record in the journal that the branch, the working tree and the index are durable at `head`."""
        latest, _ = self.journal.read()
        fd = self.journal.open(durable.fsync, durable.fsync_directory)
        try:
            Journal.write(fd, Slot(seq=latest.seq + 1 if latest else 1, base=_text(head), head=_text(head),
                                   paths={}, settled=True))
            durable.fsync(fd)
        finally:
            os.close(fd)

    def valid_head(self) -> bytes | None:
        """The branch's commit, or None when the ref is missing or not a commit id (torn by a crash)."""
        head = self.head()
        return head if head is not None and COMMIT_ID.fullmatch(head) else None

    def write_durably(self, commit: bytes) -> None:
        """Set the branch (recovery only, so two rounds of fsync are fine here)."""
        fd = self.create_lock()
        try:
            os.write(fd, commit + b"\n")
            durable.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(self._lock_path)
            raise
        os.close(fd)
        os.replace(self._lock_path, self.ref_path)
        durable.fsync_directory(self.ref_path.parent)


class Recovery:
    """Repairs what a killed writer or a power loss left: the branch, the working tree and the index."""

    def __init__(self, branch: Branch, objects: ObjectStore, worktree: WorkTree, commands: GitCommands):
        self.branch = branch
        self.objects = objects
        self.worktree = worktree
        self.commands = commands

    def needs_recovery(self, thorough: bool = False) -> bool:
        """Whether the branch, the working tree or the index may lag behind the journal (a writer killed, or
        a crash). `thorough` also checks what a power loss may have torn, which nothing else reveals: the
        index and the working-tree files of the last two commits (see storage.journal)."""
        latest, previous = self.branch.journal.read()
        head = self.branch.valid_head()
        if self.worktree.checked_out_commit() != head:
            return True
        if latest is None:
            return False  # a repository written before the journal existed, or never written
        if _text(head) != latest.head or latest.paths is None:  # (None: a big write that did not settle)
            return True
        return thorough and not self._worktree_matches(head, latest, previous)

    def recover(self, ours: Callable[[str], bool] = lambda path: True, thorough: bool = False) -> list[str]:
        """Under the project's write lock: bring the branch, the working tree and the index to the latest
        durable commit. Publishes the journaled packs whose rename was lost; when the ref lags behind the
        journal, moves it to the latest slot's commit if that commit is whole, else to the slot's base; then
        resyncs the working tree and the index when they may lag. Returns the paths that could not be
        written (see WorkTree.resync)."""
        target = self.restore_ref(self.branch)
        if not self.needs_recovery(thorough):  # the ref was all that lagged
            return []
        skipped = self.worktree.resync(self.branch.head(), ours)
        self.branch.settle(target)
        return skipped

    def restore_ref(self, branch: Branch) -> bytes | None:
        """Under the write lock: publish the journaled packs of `branch` whose rename was lost, and move its ref
        to the journal's latest commit (or that slot's base, when the commit is not whole) when the ref lags
        behind it. Returns the commit the branch is at then. (The ref part of `recover`; named branches, which
        have no working tree, need nothing more.)"""
        latest, previous = branch.journal.read()
        head = branch.valid_head()
        target = head
        if latest is not None:
            for slot in (previous, latest):
                for entry in slot.packs if slot is not None else ():
                    self.objects.restore_pack(entry)
            if _text(head) != latest.head and self._ref_lags(head, latest):
                whole = latest.head is not None and self._has_commit(latest.head.encode("ascii"))
                chosen = latest.head if whole else latest.base
                target = chosen.encode("ascii") if chosen is not None else head
                if target != head and target is not None:
                    branch.write_durably(target)
        return target

    def _ref_lags(self, head: bytes | None, latest: Slot) -> bool:
        """Whether the ref shows a commit before the latest slot's base: its rename (or a few of them, which
        nothing flushes on their own) was lost, or it is torn. A ref elsewhere was moved by someone else."""
        if head is None or _text(head) == latest.base:
            return True
        return latest.base is not None and self.commands.is_ancestor(head, latest.base.encode("ascii"))

    def _has_commit(self, commit: bytes) -> bool:
        """Whether a commit and its root tree can be read (the objects of a pack whose round completed)."""
        try:
            self.objects.read_raw(self.objects.read_commit(commit).tree)
            return True
        except (KeyError, ValueError):
            return False

    def _worktree_matches(self, head: bytes | None, latest: Slot, previous: Slot | None) -> bool:
        """Whether the index (whole, with a good checksum) lists exactly HEAD's files, and the working-tree
        files that the last commits wrote without a completed flush hold HEAD's content."""
        wanted: dict[str, bytes] = {}
        if head is not None:
            self.objects.collect_files(self.objects.read_commit(head).tree, "", wanted)
        if not self.worktree.index_lists(wanted):
            return False
        unflushed = [latest.paths] + ([] if latest.settled or previous is None else [previous.paths])
        for paths in unflushed:
            if paths is None:
                return False  # a big write that crashed before it settled: check everything
            if not all(self.worktree.file_holds(relative, wanted.get(relative)) for relative in paths
                       if not relative.endswith("/")):
                return False
        return True
