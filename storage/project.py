"""One project: cached snapshot reads and one-commit write transactions under a cross-process lock."""
from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import gc
import logging
import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar


from limits import MAX_PATH_BYTES, MAX_PATH_COMPONENT_BYTES, describe

from . import textchanges
from .derived import DerivedStore
from .errors import Invalid, NotFound
from .fields import IsLiveKey, check_file_size
from .gitrepo import ANY, FILE_MODE, MAIN, TREE_MODE, GitRepo, Person, Staged, parent_dir
from .snapshot import Snapshot, is_layout_path, note_derived, persist_derived
from .trailers import Trailer
from .transaction import Transaction

log = logging.getLogger("gloss.storage")


class ProcessLock:
    """An exclusive `flock` on a lock file: a blocked writer wakes the moment the holder releases.

    (A polling lock such as filelock's sleeps 50 ms between tries, which caps concurrent writers at a few
    dozen commits a second.) The kernel drops the lock when its holder dies, so a killed writer never
    leaves the project locked. Threads of one process share the descriptor: callers hold a thread lock too.
    The lock file is open only while the lock is held (closing it releases the lock), so a worker that wrote
    to thousands of projects keeps no descriptor per project.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> "ProcessLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc_info: object) -> None:
        fd, self._fd = self._fd, None
        assert fd is not None
        os.close(fd)  # releases the flock


# Snapshots with at least this many assets are moved out of the cyclic collector's sight once loaded.
FREEZE_AT = 5000


def keep_out_of_collector(snapshot: Snapshot) -> None:
    """Move what is alive now, above all a big snapshot just loaded, to the collector's permanent generation.

    Full collections otherwise rescan every entry of every cached snapshot (1.75 M objects and 1.1 s at
    100k assets, stalling the request that triggered it) and find nothing: snapshots are acyclic, so
    reference counting still frees them when they are replaced. Every generation is collected first, so
    that no cyclic garbage (a request's, say) gets frozen with them and kept for the life of the process;
    that full collection is cheap, as it only scans what was created since the last freeze.
    """
    if snapshot.assets_in_memory() >= FREEZE_AT:
        gc.collect()
        gc.freeze()


_LIBC: Any = None  # glibc, when this process runs on it (see release_free_memory)


def release_free_memory() -> None:
    """Hand the heap's free pages back to the system after a big load or export (glibc's malloc_trim).

    Building a 100k-asset snapshot or export frees hundreds of MB of temporaries scattered between the
    objects that stay, and glibc keeps those pages: a worker's resident size then stays at its peak. Costs
    about a millisecond; does nothing on other C libraries.
    """
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim  # noqa: B018 - glibc only
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


PAST_SNAPSHOTS = 8  # older snapshots kept per process for `?ref=` reads
# Seconds between a snapshot load (or a value noted for storage.derived) and the save of the derived data: the
# requests after a cold open compute most of it (progress, the asset list), and one save then writes it all.
SAVE_DERIVED_AFTER = 3.0
# Projects from about this many assets keep their derived data (a smaller one opens cold in milliseconds: files
# and timers for each of thousands of small projects would cost more than they save).
PERSIST_DERIVED_AT = 5000


def check_writable_paths(paths) -> None:
    """Refuse, before anything is written, a change whose file names a file system would not take."""
    for path in paths:
        encoded = path.encode("utf-8")
        if len(encoded) > MAX_PATH_BYTES:
            raise Invalid(f"A file path of this change is longer than {MAX_PATH_BYTES} bytes "
                          f"{describe('max_path_bytes')}")
        if any(len(part) > MAX_PATH_COMPONENT_BYTES for part in encoded.split(b"/")):
            raise Invalid(f"A file name of this change is longer than {MAX_PATH_COMPONENT_BYTES} bytes "
                          f"{describe('max_path_component_bytes')}")


def trailer_value(value: str) -> str:
    """Trailers are single lines: escape the characters that would break one."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\0", "\\0")


def commit_message(summary: str, trailers: list[tuple[str, str]]) -> str:
    """Summary line, optional body, then `Key: value` trailers that make history machine-readable."""
    summary = summary.replace("\0", "\ufffd")  # git refuses NUL in a commit (fsck nulInCommit)
    title, _, body = summary.strip().partition("\n")
    text = title.strip() + "\n\n"
    if body.strip():
        text += body.strip() + "\n\n"
    return text + "".join(f"{key}: {trailer_value(value)}\n" for key, value in trailers)


T = TypeVar("T")

# Prepares of a prepared write (Project.prepared_write) that may lose the race for the head before the last
# one runs under the project lock: under a steady stream of small writes, a 100k-unit import would else
# re-prepare forever.
PREPARE_ATTEMPTS = 3

# Commits one hold of the project lock may gather before they are made durable, so that a busy process
# still lets the other processes' writers in.
MAX_GROUP = 16


class CommitGroup:
    """Commits made one on top of the other under one hold of the project lock, then made durable together.

    Each write is still its own commit (its author, message and trailers), but the group pays once for what
    dominates a write's cost: reading the other processes' commits, one pack, one fsync round with the
    journal, one ref update, the working tree and the index. No writer's answer leaves before the group is
    durable.
    """

    def __init__(self, base: Snapshot, branch: str = MAIN):
        self.branch = branch  # a group's commits are on one branch
        self.base = base  # the published head the group started from
        self.tip = base  # its last commit
        self.commits: list[bytes] = []
        self.objects: dict[str, tuple[int, bytes]] = {}
        self.changed: dict[str, bytes | None] = {}  # path -> its content after the last commit, None = deleted
        self.done = threading.Event()
        self.error: BaseException | None = None
        # whether its publish moves what is alive to the collector's permanent generation (keep_out_of_collector)
        self.freeze = True
        # working-tree files written ahead (a prepared write's, WorkTree.stage): the publish takes or removes them
        self.staged: Staged = {}
        # whether the project's snapshot of its tip is loaded from Git once it is durable, instead of the one
        # its writes built (see Project._published_snapshot)
        self.reload = False

    def add(self, snapshot: Snapshot, objects: dict[str, tuple[int, bytes]],
            changed: dict[str, bytes | None]) -> None:
        assert snapshot.commit is not None
        self.tip = snapshot
        self.commits.append(snapshot.commit)
        self.objects.update(objects)
        self.changed.update(changed)


MOVABLE_TAGS_SETTING = "gloss.movableTags"
# Called as a commit group is about to be made durable, with the project id, the branch, the group's base and
# tip commits and its new objects (cluster.node: a leader sends them to its followers meanwhile). Never raises.
BeforeDurable = Callable[[str, str, "bytes | None", bytes, "dict[str, tuple[int, bytes]]"], None]


class Project:
    """A project repository. Safe to share between threads; several processes may open the same one."""

    def __init__(self, project_id: str, path: Path, lock_path: Path, committer: Person,
                 checked_after_crash: bool = False):
        self.id = project_id
        self.repo = GitRepo(path)
        self.repo.derived_data.append(textchanges.update)  # what diffs read (see there)
        self.committer = committer
        self._snapshot: Snapshot | None = None
        # after a big prepared write, the snapshot it started from: what the next load reuses (_published_snapshot)
        self._load_from: Snapshot | None = None
        self.derived = DerivedStore(self.repo.git_dir, on_put=self._save_derived_soon)  # see storage.derived
        self._save_timer: threading.Timer | None = None
        self._past: OrderedDict[bytes, Snapshot] = OrderedDict()  # time-travel snapshots, newest used last
        self._refresh_lock = threading.Lock()
        self._thread_lock = threading.Lock()  # one writer thread of this process at a time
        self._waiting = 0  # writer threads of this process waiting for the thread lock
        self._waiting_lock = threading.Lock()
        self._group: CommitGroup | None = None  # commits made under the file lock, not yet durable
        self.before_durable: BeforeDurable | None = None  # (Store.before_durable)
        # One lock file per project outside its repository, shared by every worker process.
        self._file_lock = ProcessLock(lock_path)
        self._swept = False  # temp files of dead writers are swept at this process's first write
        if not checked_after_crash:  # (this process opened the project before, and evicted it since)
            self._recover_after_crash()

    @property
    def path(self) -> Path:
        return self.repo.path

    def close_files(self) -> None:
        """Close the repository's pack files (the store evicts this project, or it is idle); the project stays
        usable, and a request still holding it reopens what it reads."""
        self.repo.close_files()

    def open_files(self) -> int:
        return self.repo.open_files()

    def cached_assets(self) -> int:
        """The size of the snapshot kept in memory, in assets (the store's measure of a project's memory)."""
        snapshot = self._snapshot
        return len(snapshot) if snapshot is not None else 0

    def writing(self) -> bool:
        """Whether a writer of this process holds the project (its commit group may hold the project lock)."""
        return self._thread_lock.locked() or self._group is not None

    # ----------------------------------------------------------------- settings
    @property
    def movable_tags(self) -> bool:
        """Whether pushes may delete or move tags (off: releases are immutable). Kept in the repository's own
        Git config, outside the project's content, so that no push can turn it on for itself."""
        return self.repo.config_flag(MOVABLE_TAGS_SETTING)

    def set_movable_tags(self, allowed: bool) -> None:
        self.repo.set_config_flag(MOVABLE_TAGS_SETTING, allowed)

    # ----------------------------------------------------------------- reads
    def snapshot(self, branch: str = MAIN) -> Snapshot:
        """The project at the commit `branch` (`main` by default) points at now; cheap when nothing changed since
        the last call. NotFound for a branch that does not exist."""
        if branch != MAIN:
            return self.snapshot_at(self.branch_head(branch))
        head = self.repo.head()
        current = self._snapshot
        if current is not None and current.commit == head:
            return current
        with self._refresh_lock:
            current = self._snapshot
            if current is None or current.commit != head:
                previous, self._load_from = current or self._load_from, None
                current = self._snapshot = self._load(head, previous)
                self._save_derived_soon()
                # A first load reads its chunks later, when requests use them: it has made next to nothing for
                # the collector to freeze, and the collection before the freeze (40-400 ms over the modules a
                # new worker just imported) was most of a cold open's first answer. The next load freezes what
                # the requests made meanwhile.
                if previous is not None:
                    keep_out_of_collector(current)
        return current

    def _load(self, head: bytes | None, previous: Snapshot | None) -> Snapshot:
        """The snapshot of `head` as Git has it, from `previous` (see Snapshot.load)."""
        self.derived.refresh()  # another process's commit: what it saved for its new chunks
        loaded = Snapshot.load(self.repo, head, previous, self.derived) if head else Snapshot.empty()
        if not self._keeps_derived(loaded):
            loaded.persisted = None  # nothing is noted for it (nor kept in memory) or saved
        return loaded

    def _rewrites_much(self, base: Snapshot, built: tuple[Snapshot, dict[str, bytes | None]]) -> bool:
        """Whether a prepared write rewrites chunks of at least FREEZE_AT assets of a project that keeps its
        derived data (saved ahead for those chunks: _save_derived_ahead)."""
        return len(built[1]) * base.chunk_size >= FREEZE_AT and self._keeps_derived(built[0])

    def _published_snapshot(self, group: "CommitGroup") -> Snapshot | None:
        """The project's snapshot once the group is durable: its tip as its writes built it, or, for a big
        prepared write (an import), none: the next read loads the tip from Git, its rewritten chunks read on
        first use with the derived data saved ahead for them, as another process loads that commit. The built
        one held every record the write made, which a 100k-unit import left in its worker for good (283-306
        MB); loaded here, among the write's temporaries, the tip's own objects kept the memory pages around
        them (+55 MB in-process against +19 MB loaded by the next read, once the temporaries are freed). The
        writer's own answer still reads the built one."""
        if not group.reload:
            return group.tip
        self._load_from = group.base
        return None

    def branch_head(self, branch: str) -> bytes:
        """The commit a branch points at; NotFound when there is no such branch (nor can be: an invalid name)."""
        try:
            head = self.repo.named_branch(branch).valid_head()
        except Invalid:
            head = None
        if head is None:
            raise NotFound(f"Unknown branch {branch!r}")
        return head

    def snapshot_at(self, commit: bytes) -> Snapshot:
        """The project at an older commit (time travel), loaded from the current snapshot's unchanged chunks."""
        head = self.snapshot()
        if commit == head.commit:
            return head
        with self._refresh_lock:
            found = self._past.get(commit)
            if found is not None:
                self._past.move_to_end(commit)
                return found
        found = Snapshot.load(self.repo, commit, head, self.derived)
        self._remember_past(found)
        return found

    def _remember_past(self, snapshot: Snapshot) -> None:
        """Keep a snapshot other than main's head (a past commit, a named branch's head) for the next reads."""
        assert snapshot.commit is not None
        with self._refresh_lock:
            self._past[snapshot.commit] = snapshot
            self._past.move_to_end(snapshot.commit)
            while len(self._past) > PAST_SNAPSHOTS:
                self._past.popitem(last=False)

    def save_derived(self) -> None:
        """Persist what the current snapshot's derived data adds to storage.derived (a timer calls it after a
        load; a cold open in any process then reads it instead of computing it)."""
        snapshot = self._snapshot
        try:
            if snapshot is not None and snapshot.commit is not None:
                persist_derived(snapshot, self.derived)
        finally:
            self._save_timer = None

    @staticmethod
    def _keeps_derived(snapshot: Snapshot) -> bool:
        """Whether the project is big enough to persist its derived data (PERSIST_DERIVED_AT), by its number of
        chunks: len() would read a lazy snapshot's asset chunks."""
        return len(snapshot.asset_chunks) * snapshot.chunk_size >= PERSIST_DERIVED_AT

    def _save_derived_soon(self) -> None:
        snapshot = self._snapshot
        if snapshot is None or snapshot.persisted is None:
            return
        if self._save_timer is None:
            timer = self._save_timer = threading.Timer(SAVE_DERIVED_AFTER, self._save_in_background)
            timer.daemon = True
            timer.start()

    def _save_in_background(self) -> None:
        try:
            self.save_derived()
        except Exception as error:  # derived data only: the next load tries again
            log.warning("project %s: derived data not saved (%s)", self.id, error)

    # ----------------------------------------------------------------- writes
    @contextmanager
    def transaction(self, author: Person, summary: str, action: str,
                    trailers: list[tuple[str, str]] | None = None,
                    when: float | None = None, first_in_group: bool = False,
                    committer: Person | None = None,
                    is_live_key: IsLiveKey | None = None, branch: str = MAIN) -> Iterator[Transaction]:
        """Yield a transaction on the latest snapshot of `branch`; on a clean exit commit it as exactly one commit
        on that branch (NotFound when it does not exist).

        `committer`: whose key made the write (an API request's or a push's key user); writes made without a
        key (project creation, the demo seed) are committed by the service (`Store.committer`).
        An exception inside the block discards every change: nothing is written and the ref does not move.
        Writers of this process that queue up meanwhile commit on top of it in the same hold of the project
        lock (a commit group, see CommitGroup), and the block's exit returns once the group is durable.
        `first_in_group`: publish the pending group first and start a new one on the published head: for
        long writes (imports), which should not hold back the answers to small ones made before them, and
        for pushes, which compare the head with commits that only Git can read. `is_live_key`: records holding a
        live API key are refused (Transaction), as a push carrying them would be.
        """
        with self._holding_group(first_in_group, branch) as group:
            tx = Transaction(group.tip, is_live_key)
            tx.trailers.extend(trailers or [])
            yield tx
            tx.result = self._stage(group, tx, author, committer or self.committer, summary, action, when)

    def prepared_write(self, prepare: Callable[[Transaction], T], author: Person, summary: str, action: str,
                       trailers: list[tuple[str, str]] | None = None, committer: Person | None = None,
                       is_live_key: IsLiveKey | None = None,
                       attempts: int = PREPARE_ATTEMPTS, branch: str = MAIN) -> tuple[T, Transaction]:
        """Run `prepare` on a transaction on the latest published snapshot WITHOUT the project lock, then
        commit it in a short critical section if the head is still that snapshot's commit (compare-and-swap).
        When other writers moved the head meanwhile, the prepared changes are committed on the new head if
        those writers changed no entry the prepare read or changed (Transaction.rebase), else the write is
        prepared again on the new head. After `attempts` prepares lost that race, the last one runs under
        the lock, so the write always ends.

        For long writes (imports): other writers of the project wait for the commit only, not for the
        prepare. `prepare` must only read and change its transaction (it may run several times) and may raise
        to abandon the write. Returns its value and the transaction, whose `result` is the committed snapshot,
        or its base when nothing changed (then no commit is made and the lock is never taken). The commit
        starts a commit group of its own, as `transaction(first_in_group=True)`.
        """
        for _ in range(attempts):
            tx = Transaction(self.snapshot(branch), is_live_key)
            tx.trailers.extend(trailers or [])
            value = prepare(tx)
            built = tx.build()  # the costly part of staging, done outside the lock too
            if not built[1] and not tx.merge_parents:
                tx.result = tx.base
                return value, tx
            # the files' blobs are stored before the lock; no repack may start until the commit names them
            with self.repo.repacks_held_off() as held:
                stored = self._store_blobs(built[1]) if held else None
                if stored:
                    self._save_derived_ahead(tx.base, built[0], stored)
                # its working-tree files too, written and flushed before the lock (the publish renames them)
                staged = self.repo.stage_worktree(stored) if stored and branch == MAIN else {}
                try:
                    with self._holding_group(True, branch) as group:
                        # the prepare's temporaries (a catalogue, the records it put) are alive until it returns:
                        # a collection now would scan them all (0.5-0.9 s at 100k units, in the lock); the next
                        # write's publish or snapshot load freezes instead, once they are gone
                        group.freeze = False
                        group.reload = self._rewrites_much(tx.base, built)
                        final: Transaction | None = tx
                        if group.tip.commit != tx.base.commit:
                            # other writers committed meanwhile: when they changed nothing this write read or
                            # changed, it applies to the new head as it is (rebuilding only the chunks they
                            # changed)
                            final = tx.rebase(group.tip, built[0])
                        if final is not None:
                            group.staged, staged = staged, {}  # (the group's publish takes them from here)
                            final.result = self._stage(group, final, author, committer or self.committer,
                                                       summary, action, None, built if final is tx else None,
                                                       stored)
                finally:
                    self.repo.discard_staged(staged)
            if final is not None:
                return value, final
            log.info("project %s: a prepared write conflicts with writes made meanwhile; preparing it again",
                     self.id)
        with self.transaction(author, summary, action, trailers, first_in_group=True, committer=committer,
                              is_live_key=is_live_key, branch=branch) as tx:
            value = prepare(tx)
        return value, tx

    def _store_blobs(self, changed: dict[str, bytes | None]) -> dict[str, tuple[bytes, bytes]]:
        """Store the files of a prepared write as blobs before the project lock: path -> (data, blob id). The
        commit's own pack then holds its trees and commit only; compressing, hashing and flushing the blobs
        of a 100k-unit import (50 MB) inside the lock was most of its critical section."""
        files = [(path, data) for path, data in changed.items() if data is not None]
        ids = self.repo.store_blobs(data for _, data in files)
        return {path: (data, hex_id) for (path, data), hex_id in zip(files, ids)}

    def _save_derived_ahead(self, base: Snapshot, built: Snapshot, stored: dict[str, tuple[bytes, bytes]]) -> None:
        """Save the derived data of a prepared write's new chunks (their keys, their progress counts) under the
        blob ids stored for them, before the commit: the other processes' first reads of the commit find them
        in storage.derived (DerivedStore.refresh) instead of reading and counting every chunk it changed. After
        a 100k-unit import made by the other worker, the writer worker's POSTs each counted the whole locale
        again to answer (1 s in-process; 3-10 s with the POSTs that arrived meanwhile counting it at once)."""
        if not self._keeps_derived(built):  # (a project an import makes big keeps them from now on)
            return
        note_derived(built, ((path, blob) for path, (_, blob) in stored.items()), self.derived)
        # the head's blobs and the new ones: both stay valid whichever wins the commit
        self.derived.save([*base.files.values(), *(blob for _, blob in stored.values())])
        # the entries made now, among the write's temporaries, are read again from the file when next needed
        # (see _published_snapshot)
        self.derived.forget()

    @contextmanager
    def _holding_group(self, first_in_group: bool, branch: str = MAIN) -> Iterator["CommitGroup"]:
        """Hold this process's writer turn and the project's commit group for the block; on exit leave the
        group to the next writer or publish it, and (unless the block raised) wait until it is durable."""
        with self._waiting_lock:
            self._waiting += 1
        self._thread_lock.acquire()
        with self._waiting_lock:
            self._waiting -= 1
        try:
            group = self._open_group(first_in_group, branch)
        except BaseException:
            self._thread_lock.release()
            raise
        try:
            yield group
        finally:
            self._hand_over_or_publish(group)
        if group.commits:  # the answer shows the group's commits: only once they are durable
            group.done.wait()
            if group.error is not None:
                raise group.error

    def _open_group(self, first_in_group: bool, branch: str = MAIN) -> "CommitGroup":
        """Under the thread lock: the open commit group of this process, or a new one under the file lock. A
        group holds the commits of one branch: one for another branch publishes the open one first."""
        group = self._group
        # (a full group was published when it filled up)
        if group is not None and (first_in_group or group.branch != branch):
            self._publish(group)
            group = None
        if group is None:
            self._file_lock.__enter__()
            try:
                self.repair()
                if branch != MAIN:
                    self.repo.restore_branch(branch)
                group = self._group = CommitGroup(self.snapshot(branch), branch)
            except BaseException:
                self._file_lock.__exit__()
                raise
        return group

    def _hand_over_or_publish(self, group: "CommitGroup") -> None:
        """Leave the group to the next writer of this process that waits for it, else make it durable."""
        try:
            with self._waiting_lock:
                waiting = self._waiting
            if not (waiting and len(group.commits) < MAX_GROUP):
                self._publish(group)
        finally:
            self._thread_lock.release()

    def _publish(self, group: "CommitGroup") -> None:
        """Move the branch to the group's last commit in one durable step, wake the group's writers (with the
        error when that failed: then none of their commits exists) and release the project lock."""
        self._group = None
        try:
            if group.commits:
                self._make_durable(group)
        except BaseException as error:
            if not group.done.is_set():
                group.error = error
            elif isinstance(error, Exception):  # durable and answered already: the next writer repairs the rest
                log.warning("project %s: after the commit: %r", self.id, error)
            else:
                raise
        finally:
            self.repo.discard_staged(group.staged)  # (what the working tree did not take)
            self._file_lock.__exit__()
            try:
                if group.commits and group.error is None and group.freeze:
                    # after the lock: its full collection took 0.5-0.9 s after a 100k-unit import, which every
                    # other process's writer waited for
                    keep_out_of_collector(group.tip)
            finally:
                group.done.set()
            if group.commits and group.error is None:
                self.repo.make_spares()  # for this thread's next durable step, now that its writers are answered

    def adopt_head(self, commit: bytes, expected: bytes | None | object = ANY,
                   objects: dict[str, tuple[int, bytes]] | None = None) -> None:
        """Under the write lock: move `main` to a commit whose objects are already here, durably (the journal's
        round of fsync). For a cluster (cluster.replication): a follower takes the commit it fetched from the
        leader, and a leader whose head could not be recorded goes back to the recorded one. Reads follow the
        branch at once; the working tree and the index follow at the next write's repair, as after a crash
        (a resync per replicated commit cost a follower 55-60 ms of the write's answer). Raises RefMoved when
        the branch is not at `expected`, KeyError when the commit is not here. `objects` (checked, e.g.
        GitRepo.unpacked) are stored with the move, in its round of fsync."""
        if objects is None or commit.decode("ascii") not in objects:
            self.repo.read_commit(commit)  # the commit must be whole before the branch names it
        with self._thread_lock:
            if self._group is not None:  # (commits of this process still on their way to the disk)
                self._publish(self._group)
            with self._file_lock:
                if self.repo.head() != commit:
                    self.repo.move_head(commit, expected, objects=objects)

    def repair(self) -> None:
        """Under the write lock: bring the branch, the working tree and the index to the latest durable
        commit when a writer died (or failed) mid-commit, then sweep dead writers' temp files once (after:
        recovery may still need a journaled pack's). Never raises on a path the file system refuses, so a
        project can always be written again."""
        if self.repo.needs_recovery():
            self._recover(thorough=False)
        if not self._swept:
            self.repo.sweep_temp_files()
            self._swept = True

    def _recover(self, thorough: bool) -> None:
        skipped = self.repo.recover(ours=is_layout_path, thorough=thorough)
        if skipped:
            log.warning("project %s: %d path(s) of HEAD cannot be written to the working tree",
                        self.id, len(skipped))

    def _recover_after_crash(self) -> None:
        """At this process's first use of the project: repair what a crash (a power loss) may have left, which
        only a look at the journal, the index and the last written files reveals (see storage.journal)."""
        try:
            if self.repo.needs_recovery(thorough=True):
                with self._thread_lock, self._file_lock:
                    self._recover(thorough=True)
            lagging = self.repo.lagging_branches()
            if lagging:
                with self._thread_lock, self._file_lock:
                    for name in lagging:
                        self.repo.restore_branch(name)
        except (OSError, KeyError, ValueError) as error:  # a read-only disk, say: reads go on, writes retry
            log.warning("project %s: recovery at start failed (%s); the next write retries it", self.id, error)

    def _stage(self, group: "CommitGroup", tx: Transaction, author: Person, committer: Person, summary: str,
               action: str, when: float | None,
               built: tuple[Snapshot, dict[str, bytes | None]] | None = None,
               stored: dict[str, tuple[bytes, bytes]] | None = None) -> Snapshot:
        """Make the transaction's commit on top of the group's last one; the objects stay in memory.
        `built`: the transaction's build(), when the caller made it already (a prepared write); `stored`: the
        blobs it stored already (path -> (data, id); a file whose data differs is written here)."""
        base = tx.base
        snapshot, changed = built if built is not None else tx.build()
        if not changed and not tx.merge_parents:
            return base
        check_writable_paths(path for path, data in changed.items() if data is not None)
        for path, data in changed.items():  # a catalogue the API wrote is one a push may carry back
            if data is not None:
                check_file_size(path, len(data))
        files = dict(base.files)
        with self.repo.object_batch(store=False) as objects:  # stored with the ref by _make_durable
            for path, data in changed.items():
                known = stored.get(path) if stored else None
                if data is None:
                    files.pop(path, None)
                elif known is not None and known[0] is data:
                    files[path] = known[1]
                else:
                    files[path] = self.repo.write_blob(data)
            trees = self._write_trees(files, changed, base.trees)
            message = commit_message(summary, tx.trailers + [(Trailer.ACTION, action)])
            parents = ([base.commit] if base.commit else []) + tx.merge_parents
            commit = self.repo.write_commit(trees[""], parents, author, committer, message, when)
        snapshot.commit, snapshot.files, snapshot.trees = commit, files, trees
        snapshot.persisted = base.persisted
        group.add(snapshot, objects, changed)
        return snapshot

    @contextmanager
    def ref_update(self) -> Iterator[None]:
        """Hold the project's write lock for a change of refs alone (a branch created or deleted), after this
        process's open commit group is published."""
        with self._holding_group(first_in_group=True):
            yield

    def _make_durable(self, group: "CommitGroup") -> None:
        tip = group.tip
        assert tip.commit is not None
        if self.before_durable is not None:  # (a cluster leader sends the group on while its fsync runs)
            self.before_durable(self.id, group.branch, group.base.commit, tip.commit, group.objects)
        if group.branch != MAIN:
            self._make_branch_durable(group)
            return
        removed_dirs = {parent_dir(path) for path, data in group.changed.items() if data is None}
        paths, dirs = self.repo.worktree_changes(group.changed, removed_dirs)
        # One round of fsync per group of commits (see storage.journal). The refresh lock is held until the
        # snapshot is the tip: a reader of this process that sees the moved ref meanwhile waits for it
        # instead of loading the tip again from Git (which under steady writes made every few writers
        # re-parse chunks).
        with self._refresh_lock:
            listed = self.repo.move_head(tip.commit, expected=group.base.commit, objects=group.objects,
                                         paths=paths, dirs=dirs)
            self._snapshot = self._published_snapshot(group)
        # The commits are durable from here on: the group's other writers answer now, while the working tree
        # catches up (readers never use it; the next writer of any process waits for it behind the locks).
        # A failure below (disk full while rewriting the working tree) must not turn an answer into an
        # error: the stale checkout marker makes the next writer resync.
        group.done.set()
        try:  # the tip's files hold the blob id of every file the group wrote
            self.repo.update_worktree(group.changed, tip.files, tip.commit, removed_dirs, flush=not listed,
                                      staged=group.staged)
        except OSError as error:
            log.warning("project %s: committed %s but the working tree lags behind (%s); the next write "
                        "repairs it", self.id, tip.commit.decode()[:12], error.strerror or error)
        for _ in group.commits:
            self.repo.note_commit()

    def _make_branch_durable(self, group: "CommitGroup") -> None:
        """A named branch's group: the same pack, journal round and compare-and-swap as main's, no working tree."""
        tip = group.tip
        assert tip.commit is not None
        self.repo.named_branch(group.branch).move_head(tip.commit, expected=group.base.commit,
                                                       objects=group.objects)
        self._remember_past(tip)
        group.done.set()
        for _ in group.commits:
            self.repo.note_commit()

    def _write_trees(self, files: dict[str, bytes], changed: dict[str, bytes | None],
                     base_trees: dict[str, bytes]) -> dict[str, bytes]:
        """Rewrite the trees on the paths of changed files, deepest first; empty directories disappear."""
        dirty: set[str] = set()
        for path in changed:
            directory = parent_dir(path)
            while True:
                dirty.add(directory)
                if directory == "":
                    break
                directory = parent_dir(directory)
        trees = dict(base_trees)
        # the files of each dirty directory, in one pass over the files (not one per directory)
        files_in: dict[str, dict[str, tuple[int, bytes]]] = {directory: {} for directory in dirty}
        for path, blob in files.items():
            directory, _, name = path.rpartition("/")
            if directory in files_in:
                files_in[directory][name] = (FILE_MODE, blob)
        for directory in sorted(dirty, key=lambda d: (-d.count("/") if d else 1, d)):
            entries = files_in[directory]
            for sub, tree in trees.items():
                if sub and parent_dir(sub) == directory:
                    entries[sub.rsplit("/", 1)[-1]] = (TREE_MODE, tree)
            if entries or directory == "":
                trees[directory] = self.repo.write_tree(entries)
            else:
                trees.pop(directory, None)
        return trees
