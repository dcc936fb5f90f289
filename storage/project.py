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
from typing import Any, Iterator


from limits import MAX_PATH_BYTES, MAX_PATH_COMPONENT_BYTES, describe

from .errors import Invalid
from .gitrepo import FILE_MODE, TREE_MODE, GitRepo, Person
from .snapshot import Snapshot, is_layout_path
from .transaction import Transaction

log = logging.getLogger("gloss.storage")


class ProcessLock:
    """An exclusive `flock` on a lock file: a blocked writer wakes the moment the holder releases.

    (A polling lock such as filelock's sleeps 50 ms between tries, which caps concurrent writers at a few
    dozen commits a second.) The kernel drops the lock when its holder dies, so a killed writer never
    leaves the project locked. Threads of one process share the descriptor: callers hold a thread lock too.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> "ProcessLock":
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_UN)


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
    if len(snapshot.asset_index) >= FREEZE_AT:
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


def parent_dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


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


class Project:
    """A project repository. Safe to share between threads; several processes may open the same one."""

    def __init__(self, project_id: str, path: Path, lock_path: Path, committer: Person):
        self.id = project_id
        self.repo = GitRepo(path)
        self.committer = committer
        self._snapshot: Snapshot | None = None
        self._past: OrderedDict[bytes, Snapshot] = OrderedDict()  # time-travel snapshots, newest used last
        self._refresh_lock = threading.Lock()
        self._thread_lock = threading.Lock()
        # One lock file per project outside its repository, shared by every worker process.
        self._file_lock = ProcessLock(lock_path)
        self._swept = False  # temp files of dead writers are swept at this process's first write

    @property
    def path(self) -> Path:
        return self.repo.path

    # ----------------------------------------------------------------- reads
    def snapshot(self) -> Snapshot:
        """The project at the commit `main` points at now; cheap when nothing changed since the last call."""
        head = self.repo.head()
        current = self._snapshot
        if current is not None and current.commit == head:
            return current
        with self._refresh_lock:
            current = self._snapshot
            if current is None or current.commit != head:
                previous = current
                current = Snapshot.load(self.repo, head, current) if head else Snapshot.empty()
                self._snapshot = current
                keep_out_of_collector(current)
                if previous is None and len(current.asset_index) >= FREEZE_AT:  # a first, whole load
                    release_free_memory()
        return current

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
        found = Snapshot.load(self.repo, commit, head)
        with self._refresh_lock:
            self._past[commit] = found
            while len(self._past) > PAST_SNAPSHOTS:
                self._past.popitem(last=False)
        return found

    # ----------------------------------------------------------------- writes
    @contextmanager
    def transaction(self, author: Person, summary: str, action: str,
                    trailers: list[tuple[str, str]] | None = None,
                    when: float | None = None) -> Iterator[Transaction]:
        """Yield a transaction on the latest snapshot; on a clean exit commit it as exactly one commit.

        An exception inside the block discards every change: nothing is written and the ref does not move.
        """
        with self._thread_lock, self._file_lock:
            self.repair()
            tx = Transaction(self.snapshot())
            tx.trailers.extend(trailers or [])
            yield tx
            tx.result = self._commit(tx, author, summary, action, when)

    def repair(self) -> None:
        """Under the write lock: sweep dead writers' temp files once, and bring the working tree to HEAD
        when a writer died (or failed) between moving the ref and updating it. Never raises on a path the
        file system refuses, so a project can always be written again."""
        if not self._swept:
            self.repo.sweep_temp_files()
            self._swept = True
        if self.repo.checked_out_commit() != self.repo.head():
            skipped = self.repo.resync_worktree(ours=is_layout_path)
            if skipped:
                log.warning("project %s: %d path(s) of HEAD cannot be written to the working tree",
                            self.id, len(skipped))

    def _commit(self, tx: Transaction, author: Person, summary: str, action: str, when: float | None) -> Snapshot:
        base = tx.base
        snapshot, changed = tx.build()
        if not changed and not tx.merge_parents:
            return base
        check_writable_paths(path for path, data in changed.items() if data is not None)
        files = dict(base.files)
        blob_ids: dict[str, bytes] = {}
        with self.repo.object_batch(store=False) as objects:  # one pack per commit, stored by move_head
            for path, data in changed.items():
                if data is None:
                    files.pop(path, None)
                else:
                    blob_ids[path] = files[path] = self.repo.write_blob(data)
            trees = self._write_trees(files, changed, base.trees)
            message = commit_message(summary, tx.trailers + [("Action", action)])
            parents = ([base.commit] if base.commit else []) + tx.merge_parents
            commit = self.repo.write_commit(trees[""], parents, author, self.committer, message, when)
        # the pack is flushed with the ref's lock file, and the ref's directory with the working-tree files:
        # two rounds of fsync per commit
        self.repo.move_head(commit, expected=base.commit, flush_directory=False, objects=objects)
        # The commit is durable from here on: a failure below (disk full while rewriting the working tree)
        # must not turn the answer into an error. The stale checkout marker makes the next writer resync.
        removed_dirs = {parent_dir(path) for path, data in changed.items() if data is None}
        try:
            self.repo.update_worktree(changed, blob_ids, commit, removed_dirs)
        except OSError as error:
            log.warning("project %s: committed %s but the working tree lags behind (%s); the next write "
                        "repairs it", self.id, commit.decode()[:12], error.strerror or error)
        snapshot.commit, snapshot.files, snapshot.trees = commit, files, trees
        with self._refresh_lock:
            self._snapshot = snapshot
        keep_out_of_collector(snapshot)
        self.repo.note_commit()
        return snapshot

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
        for directory in sorted(dirty, key=lambda d: (-d.count("/") if d else 1, d)):
            entries: dict[str, tuple[int, bytes]] = {}
            for path, blob in files.items():
                if parent_dir(path) == directory:
                    entries[path.rsplit("/", 1)[-1]] = (FILE_MODE, blob)
            for sub, tree in trees.items():
                if sub and parent_dir(sub) == directory:
                    entries[sub.rsplit("/", 1)[-1]] = (TREE_MODE, tree)
            if entries or directory == "":
                trees[directory] = self.repo.write_tree(entries)
            else:
                trees.pop(directory, None)
        return trees
