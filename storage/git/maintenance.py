"""Maintenance in the background: repack scheduling (a geometric roll-up of the per-commit packs after a lull, a full
repack when they outgrew the last one), the commit-graph and the derived data updated after it, and the sweeping
of temp files and push quarantines that killed writers left. Never changes what a reader sees."""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from limits import GIT_REQUEST_SECONDS

from .objects import is_own_pack_temp
from .queries import GitCommands
from .worktree import STAGED_DIR

# Background maintenance (see note_commit and pack_loose_objects). A repack is due after GC_EVERY commits of a
# process and waits for a lull, MAINTENANCE_LULL seconds without a commit of that process: a repack beside
# steady writes took a core and the disk from them (POST p95 +50 % with 4 writers). Under writes that never
# pause it runs anyway once GC_FORCE_EVERY commits are waiting, so the number of packs stays bounded (such a
# roll-up skips the delta search, which took the CPU the writes need; the next quiet repack finds them). The
# next repack is a full one when the packs grew past FULL_REPACK_GROWTH times their size after the last full
# repack, or past FULL_REPACK_GROWTH_BUSY times when it was forced during writes (a full repack recomputes
# every delta: seconds of CPU at 10k assets).
GC_EVERY = 50
MAINTENANCE_LULL = 1.0
GC_FORCE_EVERY = 500
FULL_REPACK_GROWTH = 1.4
FULL_REPACK_GROWTH_BUSY = 4.0
MAINTENANCE_LOCK = "gloss-maintenance.lock"  # in .git: the one-repack-at-a-time lock and that size


def newest_change(directory: Path) -> float:
    """The latest mtime of a directory and of everything in it (a push still writing its pack is young)."""
    newest = directory.lstat().st_mtime
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
            except OSError:
                pass
    return newest


def remove_stale_dirs(directories: Iterable[Path], older_than: float) -> int:
    """Delete the directories in which nothing changed for `older_than` seconds; returns how many."""
    removed = 0
    now = time.time()
    for directory in directories:
        try:
            if now - newest_change(directory) >= older_than:
                shutil.rmtree(directory)
                removed += 1
        except OSError:
            pass  # gone meanwhile, or not ours
    return removed


class Maintenance:
    """The repacks, commit-graph and sweeps of one repository, and this process's count of its commits."""

    def __init__(self, path: Path, commands: GitCommands):
        self.path = path
        self.git_dir = path / ".git"
        self.objects_dir = self.git_dir / "objects"
        self.commands = commands
        self._commits_since_gc = 0
        self._last_commit = 0.0  # time.monotonic() of this process's last commit
        self._maintenance_due = False  # a repack waits for a lull
        self._packing = threading.Lock()  # one background repack at a time per process

    @contextmanager
    def repacks_held_off(self) -> Iterator[bool]:
        """Keep repacks from starting during the block (a shared hold of the lock a repack takes exclusively);
        yields False, holding nothing, when a repack runs now. For objects stored before a ref names them (an
        import's blobs, stored before its commit): a full repack meanwhile would leave them out as unreachable
        and delete their pack."""
        try:
            fd = os.open(self.git_dir / MAINTENANCE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # (releases the hold)

    def note_commit(self, repack: Callable[[bool], None]) -> None:
        """Count commits; every GC_EVERY, a repack becomes due: it runs in the background after a lull."""
        self._commits_since_gc += 1
        self._last_commit = time.monotonic()
        if self._commits_since_gc >= GC_EVERY and not self._maintenance_due:
            self._maintenance_due = True
            # a daemon while it only waits: a process that exits meanwhile leaves the repack to the next one
            threading.Thread(target=self._pack_after_lull, args=(repack,), name="gloss-pack-wait", daemon=True).start()

    def _pack_after_lull(self, repack: Callable[[bool], None]) -> None:
        """Wait for MAINTENANCE_LULL seconds without a commit (or GC_FORCE_EVERY commits), then repack."""
        while True:
            quiet_for = time.monotonic() - self._last_commit
            if quiet_for >= MAINTENANCE_LULL or self._commits_since_gc >= GC_FORCE_EVERY:
                break
            time.sleep(min(MAINTENANCE_LULL - quiet_for, 0.25))
        self._commits_since_gc = 0
        # not a daemon: a process that exits waits for its repack instead of orphaning it
        threading.Thread(target=self._pack_in_background, args=(repack, quiet_for < MAINTENANCE_LULL),
                         name="gloss-pack").start()

    def _pack_in_background(self, repack: Callable[[bool], None], busy: bool) -> None:
        try:
            with self._packing:
                repack(busy)
        finally:
            self._maintenance_due = False

    def pack_loose_objects(self, wait: bool = True, full: bool | None = None, busy: bool = False,
                           update_derived: Callable[[], None] = lambda: None) -> None:
        """Roll the small per-commit packs up; when that left the packs much bigger than the last full repack
        did, repack everything with fresh deltas instead.

        `--geometric=2` merges only the smallest packs, so a run costs little however big the project and
        the number of packs stays logarithmic in the number of commits; but it never looks for deltas
        between the packs it keeps, so the repository grows several times bigger than `repack -a -d -f`
        would make it. Once the packs outgrow FULL_REPACK_GROWTH times their size after the last full
        repack (FULL_REPACK_GROWTH_BUSY when `busy`: writes are under way), the next run is a full one.
        One repack at a time per repository across processes (a flock on a file in .git, which also holds
        that size): with `wait=False` a process that finds one running leaves the work to it. Git runs niced
        on one thread, so request processes keep the CPU. Safe beside concurrent writers: it only deletes
        packs whose objects it has rewritten, and never prunes.
        """
        try:
            fd = os.open(self.git_dir / MAINTENANCE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:  # the repository went away (deleted project, removed scratch dir): nothing to pack
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                return
            after_last_full = _read_counter(fd)
            if full is None:
                growth = FULL_REPACK_GROWTH_BUSY if busy else FULL_REPACK_GROWTH
                full = not after_last_full or self._pack_bytes() > growth * after_last_full
            mode = ["-a", "-f"] if full else ["--geometric=2"]
            if busy and not full:
                # beside a stream of writes, only roll the packs up: no delta search (the CPU a writer needs);
                # the next quiet repack finds the deltas
                mode.append("--window=0")
            try:
                subprocess.run(["nice", "-n", "10", "git", "-c", "pack.threads=1", "repack", "-d", "-q", *mode],
                               cwd=self.path, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except OSError:
                return
            if full:
                _write_counter(fd, self._pack_bytes())
            self.write_commit_graph()
            update_derived()
            self.sweep_push_quarantines()
        finally:
            os.close(fd)

    def write_commit_graph(self) -> None:
        """Add the commits made since the last run to the commit-graph, with changed-path Bloom filters.

        History reads (storage.history) ask git for the commits that changed one file: with the filters git
        skips every other commit without reading its trees. Derived data: git reads commits missing from it
        the slow way, so a stale or absent graph changes no answer. `--split` writes the new commits as a
        new layer (merged with the smaller ones below it), so a run costs the commits since the last one.
        """
        try:
            subprocess.run(["nice", "-n", "10", "git", "commit-graph", "write", "--reachable", "--changed-paths",
                            "--split", "--no-progress"], cwd=self.path, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.commands.environment())
        except OSError:
            pass

    def _pack_bytes(self) -> int:
        """The size of every pack of the repository."""
        total = 0
        try:
            entries = os.scandir(self.objects_dir / "pack")
        except FileNotFoundError:  # the repository went away while it was being packed
            return 0
        with entries:
            for entry in entries:
                if entry.name.endswith(".pack"):
                    try:
                        total += entry.stat().st_size
                    except FileNotFoundError:  # deleted by a concurrent repack
                        pass
        return total

    def sweep_temp_files(self, older_than: float = 3600.0) -> int:
        """Delete temp files left by killed or failed writers; returns how many.

        Called under the project's write lock, so Gloss's own temp files (ref, index, per-commit pack, loose
        object) can only be leftovers; git's `tmp_pack_*` may belong to a running repack, its commit-graph
        temp and lock files to a running write_commit_graph (a lock left behind would stop every later one), and
        a `tmp_objdir-incoming-*` quarantine to a running push, so only old ones go.
        """
        removed = self.sweep_push_quarantines()
        now = time.time()
        pack_dir = self.objects_dir / "pack"
        ages: dict[Path, float] = {path: older_than for path in pack_dir.glob("tmp_pack_*")}
        graphs = self.objects_dir / "info" / "commit-graphs"
        ages.update((path, older_than) for path in [*graphs.glob("tmp_graph_*"), *graphs.glob("*.lock")])
        ages.update((path, older_than) for path in self.objects_dir.glob("??/tmp_obj_*"))
        # (written before the lock by a prepared write that may still be running: WorkTree.stage)
        ages.update((path, older_than) for path in self.git_dir.glob(STAGED_DIR + "/*"))
        ages.update((path, 0.0) for path in self.git_dir.glob("gloss-*.tmp"))
        ages.update((path, 0.0) for path in self.git_dir.glob("gloss-journals/.gloss-*.tmp"))
        ages.update((path, 0.0) for path in pack_dir.glob("tmp_*") if is_own_pack_temp(path.name))
        for path, min_age in ages.items():
            try:
                if now - path.stat().st_mtime >= min_age:
                    path.unlink()
                    removed += 1
            except OSError:
                pass
        return removed

    def sweep_push_quarantines(self) -> int:
        """Delete what killed pushes left: git's `tmp_objdir-incoming-*` quarantines (up to max_push_bytes each).
        A live push's is younger than a Git request may run (git_request_seconds), so it is never touched."""
        return remove_stale_dirs(self.objects_dir.glob("tmp_objdir-incoming-*"), GIT_REQUEST_SECONDS)


def _read_counter(fd: int) -> int:
    try:
        return int(os.pread(fd, 32, 0).strip() or b"0")
    except ValueError:
        return 0


def _write_counter(fd: int, value: int) -> None:
    data = b"%d\n" % value
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))
