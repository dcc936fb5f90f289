"""The only code that touches Git: objects, the branch ref, the working tree and the index.

Objects are written straight into the object store (blobs, trees, commit) and the branch ref is moved last, by a
compare-and-swap under git's own `refs/heads/main.lock`, so a reader that resolves the ref always sees a complete
commit and git's receive-pack and Gloss writers exclude each other. A commit is durable after one round of fsync
(storage.journal); the working tree and the index are brought in line with HEAD after the ref moves, and a
marker file left by a crash in between, or the journal after a power loss, makes recovery repair them.
"""
from __future__ import annotations

import fcntl
import io
import mmap
import errno
import os
import re
import shutil
import stat
import struct
import subprocess
import threading
import time
import weakref
import zlib
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import partial
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import BinaryIO, Callable, Generator, Iterable, Iterator, Mapping, Sequence, cast

from dulwich.index import IndexEntry, Stage, index_entry_from_stat, read_index_dict, write_cache_entry
from dulwich.object_store import DiskObjectStore, OverlayObjectStore
from dulwich.objects import Commit, ObjectID, RawObjectID, Tag, Tree
from dulwich.pack import Pack
from dulwich.repo import Repo

from .errors import Busy, Conflict
from .journal import Journal, Slot, pending_after
from limits import GIT_REQUEST_SECONDS

BRANCH = b"refs/heads/main"
FILE_MODE = 0o100644
TREE_MODE = 0o040000
# Compression of the objects a commit writes: level 1 is several times faster than the default, and the
# periodic full repack stores most of them as deltas anyway.
LOOSE_COMPRESSION = 1
CHECKOUT_FILE = "gloss-checkout"  # the commit the working tree and index were brought to
REF_LOCK_OWNER = "gloss-ref-lock"  # the inode of the ref lock file a Gloss writer created last
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
ZERO_ID = b"0" * 40
DELTA_BASE_CACHE_BYTES = 8 * 1024 * 1024  # per pack; see GitRepo.__init__
# How long a writer waits for `refs/heads/main.lock` held by someone else (git holds it for milliseconds
# during a push), and the age after which a lock file is taken for the leftover of a killed writer.
REF_LOCK_TIMEOUT = 2.0
# A lock that is not a Gloss writer's (git's own) is taken for a killed git's leftover after this long: git
# holds a ref lock for milliseconds. (A killed Gloss writer's lock is known as such and removed at once.)
STALE_REF_LOCK = 10.0
COMMIT_ID = re.compile(rb"[0-9a-f]{40}")
PENDING_PATHS = 64  # working-tree paths written but not yet flushed, at most (see storage.journal)
RESYNC_FLUSH_BATCH = 64  # files a resync keeps open to flush them in one round
ANY = object()  # move_head's `expected` when the branch may point anywhere


@dataclass(frozen=True)
class CommitPatch:
    """One commit of a first-parent walk and the lines it changed, per path (see first_parent_patches)."""

    id: bytes
    parent: bytes | None
    removed: dict[str, list[bytes]]  # path -> the lines the commit removed from it (without the "-")
    added: dict[str, list[bytes]]  # path -> the lines it added


def _parse_patches(stream: BinaryIO) -> Iterator[CommitPatch]:
    """Commits from `git log --format=%x00%H %P -p -U0` output: a NUL starts a commit (no diff line can)."""
    commit: CommitPatch | None = None
    path, in_hunk = "", False
    for line in stream:
        line = line.rstrip(b"\n")
        if line.startswith(b"\0"):
            if commit is not None:
                yield commit
            ids = line[1:].split()
            commit = CommitPatch(ids[0], ids[1] if len(ids) > 1 else None, {}, {})
        elif commit is None:
            continue
        elif line.startswith(b"diff --git a/"):
            names = line[len(b"diff --git a/"):].decode("utf-8", "replace")
            path, in_hunk = names[:(len(names) - 3) // 2], False  # "P b/P": no renames, both sides alike
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line[:1] == b"-":
            commit.removed.setdefault(path, []).append(line[1:])
        elif in_hunk and line[:1] == b"+":
            commit.added.setdefault(path, []).append(line[1:])
    if commit is not None:
        yield commit


class RefMoved(Conflict):
    """The branch no longer points where the write started from (another git writer moved it)."""


def _unlink_quietly(path: Path) -> None:
    """Delete a file if it is there; a name the file system cannot even hold counts as absent."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        if error.errno not in UNWRITABLE_PATH:
            raise


# Errors that say a path itself can never be written here (rather than that the disk is full or read-only).
UNWRITABLE_PATH = (errno.ENAMETOOLONG, errno.EINVAL, errno.EISDIR, errno.ENOTDIR, errno.EILSEQ)

def _close_quietly(closable) -> None:
    try:
        closable.close()
    except Exception:  # closing at exit or at collection must never fail either
        pass


def _keep_only_mappings(pack: Pack) -> None:
    """Close the file objects dulwich keeps beside a pack's mappings, so each pack file is open once.

    Python's mmap (before 3.13's `trackfd`) keeps its own duplicate of the descriptor, so every `.idx` and
    `.pack` was open twice; once mapped, dulwich reads only through the mapping and closes the mapping
    itself (closing a closed file again does nothing).
    """
    for part in _pack_parts(pack):
        handle = getattr(part, "_file", None)
        if handle is not None and not handle.closed and isinstance(getattr(part, "_contents", None), mmap.mmap):
            handle.close()


def _pack_parts(pack: Pack) -> tuple[object, object]:
    """A pack's index and data objects, None until dulwich loads them (its private attributes: read defensively,
    as a dulwich release may rename them; then files are merely counted and closed as dulwich itself does)."""
    return getattr(pack, "_idx", None), getattr(pack, "_data", None)


def _descriptors(part: object) -> int:
    """Descriptors one loaded pack index or pack data holds: its mapping's, and its file's if still open."""
    if part is None or getattr(part, "_contents", None) is None:
        return 0
    handle = getattr(part, "_file", None)
    return 1 + (handle is not None and not handle.closed)


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


def parent_dir(path: str) -> str:
    """The directory of a repository path ("" for the top)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _text(commit: bytes | None) -> str | None:
    return commit.decode("ascii") if commit is not None else None


def _is_own_pack_temp(name: str) -> bool:
    """`tmp_pack_<pid>_<thread>` / `tmp_idx_<pid>_<thread>`: a temp file of `_write_pack` (git's differ)."""
    parts = name.split("_")
    return len(parts) == 4 and parts[1] in ("pack", "idx") and parts[2].isdigit() and parts[3].isdigit()


@dataclass(frozen=True)
class Person:
    """A Git identity."""

    name: str
    email: str

    @classmethod
    def parse(cls, ident: bytes) -> "Person":
        """`Name <email>` as a Person."""
        name, _, rest = ident.decode("utf-8", "replace").partition("<")
        return cls(name.strip(), rest.partition(">")[0].strip())

    def ident(self) -> bytes:
        name = self.name.replace("<", "").replace(">", "").replace("\n", " ").strip() or "unknown"
        email = self.email.replace("<", "").replace(">", "").replace("\n", "").strip()
        return f"{name} <{email}>".encode("utf-8")


PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def _pack_header(type_num: int, size: int) -> bytes:
    """A packed object's header: type and size, seven bits a byte after the first four."""
    out = bytearray()
    byte = (type_num << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


class GitCommandError(Exception):
    """The git command line failed."""


def git_environment() -> dict[str, str]:
    """The environment without GIT_* variables: a hook's GIT_DIR must not redirect our own git calls."""
    keep = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH")
    return {name: value for name, value in os.environ.items()
            if not name.startswith("GIT_") or name in keep}


def fsync(fd: int) -> None:
    """Flush a file's data and metadata to stable storage (one place, so tests can observe every call)."""
    os.fsync(fd)


def flush_to_disk(handle: BinaryIO) -> None:
    """Push a file object's buffered bytes to the kernel, then to stable storage."""
    handle.flush()
    fsync(handle.fileno())


_flushers: tuple[int, ThreadPoolExecutor] | None = None  # (the process that made it, the pool)


def flush_all_to_disk(handles: list[BinaryIO], directories: Iterable[Path] = (),
                      descriptors: Iterable[int] = ()) -> None:
    """Flush several files (and directories) at once: concurrent fsyncs share one journal commit, so the
    group costs about what one fsync costs instead of one per file."""
    global _flushers
    jobs: list[Callable[[], None]] = []
    for handle in handles:
        handle.flush()
        jobs.append(partial(fsync, handle.fileno()))
    jobs.extend(partial(fsync, fd) for fd in descriptors)
    jobs.extend(partial(fsync_directory, directory) for directory in directories)
    if len(jobs) <= 1:
        for job in jobs:
            job()
        return
    if _flushers is None or _flushers[0] != os.getpid():  # a forked worker cannot use its parent's threads
        _flushers = (os.getpid(), ThreadPoolExecutor(max_workers=4, thread_name_prefix="gloss-fsync"))
    # the calling thread makes one of the fsyncs itself: one thread fewer to wake (and to hand the GIL to)
    futures = [_flushers[1].submit(job) for job in jobs[1:]]
    try:
        jobs[0]()
    finally:  # every fsync has ended before the caller goes on, even when one failed
        wait(futures)
    for future in futures:
        future.result()


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable (POSIX needs the directory itself flushed)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class GitRepo:
    """A non-bare repository whose branch `main` is written through plumbing."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.git_dir = self.path / ".git"
        self.objects_dir = self.git_dir / "objects"
        self.ref_path = self.git_dir / BRANCH.decode()
        self._dulwich = Repo(str(self.path))
        # dulwich keeps up to 96 MiB of resolved delta bases PER PACK (git's default for a short-lived
        # command); in a long-lived worker that was ~100 MB of a 100k project's memory, for no speed-up
        # on snapshot loads, which read each chunk once.
        self._dulwich.object_store.delta_base_cache_limit = DELTA_BASE_CACHE_BYTES
        self._store_lock = threading.Lock()  # guards dulwich's pack cache (see read_raw)
        self._commits_since_gc = 0
        self._last_commit = 0.0  # time.monotonic() of this process's last commit
        self._maintenance_due = False  # a repack waits for a lull
        self._batch: dict[str, tuple[int, bytes]] | None = None
        self._packing = threading.Lock()  # one background repack at a time per process
        # Derived data that maintenance brings up to date after the commit-graph, under its lock: functions
        # of the repository that the owner registers (Project registers storage.textchanges.update).
        self.derived_data: list[Callable[[GitRepo], None]] = []
        # (the index file's stamp, path -> its serialised entry) as this process last wrote or read it
        self._index_cache: tuple[tuple[int, int, int] | None, dict[bytes, bytes]] | None = None
        self._packs_newest_first: list[Pack] | None = None  # see _read_packed_newest_first
        self._packs_listed: int | None = None  # the pack directory's mtime when that list was made
        self._git_env: dict[str, str] = {}  # a quarantine view's object directories (with_quarantine)
        self._stores_to_close: list = []
        self.journal = Journal(self.git_dir)
        # The packs close when the repository goes away (a project the store evicted while a request still
        # used it: a worker serving thousands of projects would run out of files otherwise), or at exit while
        # the interpreter still works (packs left to the collector at shutdown each print an "Exception
        # ignored in __del__" traceback).
        weakref.finalize(self, _close_quietly, self._dulwich)

    def close(self) -> None:
        """Release the open pack files."""
        _close_quietly(self._dulwich)
        for store in self._stores_to_close:
            _close_quietly(store)

    def close_files(self) -> None:
        """Close the pack files (and their mappings) now; the next read opens the ones it needs again.

        Safe while other threads use the repository: reads hold the store lock, which this takes too.
        """
        with self._store_lock:
            self._dulwich.object_store.close()
            self._packs_newest_first = None

    def open_files(self) -> int:
        """How many descriptors the repository's packs hold (an index and a data file per opened pack)."""
        with self._store_lock:
            packs = list(getattr(self._dulwich.object_store, "_pack_cache", {}).values())  # dulwich's open packs
        return sum(_descriptors(part) for pack in packs for part in _pack_parts(pack))

    # ----------------------------------------------------------------- creation
    @classmethod
    def init(cls, path: Path) -> "GitRepo":
        """Create an empty repository whose HEAD points at `main`."""
        path.mkdir(parents=True, exist_ok=False)
        Repo.init(str(path)).close()
        git_dir = path / ".git"
        (git_dir / "HEAD").write_bytes(b"ref: " + BRANCH + b"\n")
        config = git_dir / "config"
        # Gloss does its own maintenance (pack_loose_objects), so git's automatic gc (which receive-pack and
        # porcelain commands would start) is off, and refs stay loose; pushes into the served working tree
        # are refused.
        config.write_text(
            config.read_text()
            + "[gc]\n\tauto = 0\n\tpackRefs = false\n"
            + "[receive]\n\tdenyCurrentBranch = refuse\n"
        )
        (git_dir / "description").write_text("Gloss translation project\n")
        return cls(path)

    def with_quarantine(self, quarantine: Path) -> "GitRepo":
        """A read view that also sees the objects of a push still in git's quarantine directory (dulwich
        reads and git commands alike); close it when done, the quarantine's packs are open."""
        view = GitRepo(self.path)
        unused, quarantine_store = view._dulwich.object_store, DiskObjectStore(str(quarantine))
        # this repository's store, with its loaded pack indexes and the lock that guards them (read_raw)
        view._dulwich.object_store = OverlayObjectStore(  # type: ignore[assignment]  # reads only
            [quarantine_store, self._dulwich.object_store])
        view._store_lock = self._store_lock
        view._stores_to_close = [quarantine_store, unused]  # the overlay's own close does nothing
        view._git_env = {"GIT_OBJECT_DIRECTORY": str(quarantine), "GIT_QUARANTINE_PATH": str(quarantine),
                         "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.objects_dir.resolve())}
        return view

    def _git_environment(self) -> dict[str, str]:
        return {**git_environment(), **self._git_env}

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """Run the git command line in this repository and return its standard output."""
        result = subprocess.run(["git", *args], cwd=self.path, input=input, capture_output=True,
                                env=self._git_environment())
        if check and result.returncode != 0:
            raise GitCommandError(result.stderr.decode("utf-8", "replace").strip())
        return result.stdout

    def resolve(self, ref: str) -> bytes | None:
        """The commit a revision names (`HEAD~2`, a tag, a full or abbreviated id), or None.

        Only commits reachable from the branch or a tag count: an object that a refused push left behind
        was never validated, so it is not part of the project.
        """
        if not ref or ref.startswith("-") or any(ord(ch) < 32 for ch in ref) or len(ref) > 256:
            return None
        try:
            found = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}").strip()
            if not found or self.unreachable_commits({found}):
                return None
        except GitCommandError:
            return None
        return found

    def is_ancestor(self, ancestor: bytes, descendant: bytes) -> bool:
        result = subprocess.run(["git", "merge-base", "--is-ancestor", ancestor.decode(), descendant.decode()],
                                cwd=self.path, capture_output=True, env=self._git_environment())
        return result.returncode == 0

    def merge_base(self, one: bytes, other: bytes) -> bytes | None:
        try:
            found = self.git("merge-base", one.decode(), other.decode()).strip()
        except GitCommandError:
            return None
        return found or None

    def new_commits(self, tip: bytes) -> list[bytes]:
        """Commits reachable from `tip` and from no ref yet, oldest first (what a push brings)."""
        listed = self.git("rev-list", "--reverse", "--topo-order", tip.decode(), "--not", "--all")
        return listed.split()

    def quarantined_objects(self) -> dict[bytes, tuple[bytes, int]]:
        """The objects of a push still in quarantine (a `with_quarantine` view): id -> (type, size).

        Sizes come from the object headers (`cat-file --batch-check`): nothing is inflated, so a small pack
        holding a huge blob costs no memory here. The repository's own objects are not listed.
        """
        quarantine = self._git_env.get("GIT_QUARANTINE_PATH")
        if quarantine is None:
            return {}
        result = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
            cwd=self.path, capture_output=True, check=True,
            env={**git_environment(), "GIT_OBJECT_DIRECTORY": quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""})
        found = {}
        for line in result.stdout.splitlines():
            object_id, kind, size = line.split()
            found[object_id] = (kind, int(size))
        return found

    def objects_new_from(self, tips: list[bytes]) -> set[bytes]:
        """Objects reachable from `tips` that no ref reaches (a superset: git does not walk all of history)."""
        if not tips:
            return set()
        return set(self.git("rev-list", "--objects", "--no-object-names", *(tip.decode() for tip in tips),
                            "--not", "--all").split())

    def missing_objects(self, object_ids: Iterable[bytes]) -> set[bytes]:
        """Those of `object_ids` this repository (not counting a quarantine) does not hold."""
        listed = self.git("cat-file", "--batch-check=%(objectname)", input=b"".join(i + b"\n" for i in object_ids))
        return {line.split()[0] for line in listed.splitlines() if line.endswith(b" missing")}

    def unreachable_objects(self, object_ids: set[bytes]) -> set[bytes]:
        """Those of `object_ids` that neither the branch nor a tag reaches (objects not held included): what a
        fetch may not be given. Commits cost a walk down to the refs, other objects a listing of history."""
        wanted = object_ids - set(self.git("for-each-ref", "--format=%(objectname)", "refs/heads/", "refs/tags/")
                                  .split())
        if not wanted:
            return set()
        listed = self.git("cat-file", "--batch-check=%(objectname) %(objecttype)",
                          input=b"".join(object_id + b"\n" for object_id in wanted))
        commits = {line.split()[0] for line in listed.splitlines() if line.endswith(b" commit")}
        unreachable = self.unreachable_commits(commits)
        others = wanted - commits
        if others:
            unreachable |= others - set(self.git("rev-list", "--objects", "--no-object-names", "--branches",
                                                 "--tags").split())
        return unreachable

    def unreachable_commits(self, commits: set[bytes]) -> set[bytes]:
        """Those of `commits` (commits this repository holds) that neither the branch nor a tag reaches.

        The one rule for what is part of the project: fetches, time travel and the dashboard's change pages
        serve only reachable commits, as a commit no ref reaches (left by a refused push or a crash) was never
        validated."""
        if not commits:
            return set()
        return commits & set(self.git("rev-list", *(c.decode() for c in commits), "--not", "--branches",
                                      "--tags").split())

    def unified_diff(self, old: bytes, new: bytes) -> bytes:
        """`git diff` between two commits' trees (the canonical files, one asset per line)."""
        return self.git("diff", "--no-color", "--no-ext-diff", "--no-renames", old.decode(), new.decode())

    def first_parent_patches(self, start: bytes, paths: Sequence[str], stop_at: bytes | None = None,
                             niced: bool = False) -> Generator[CommitPatch, None, None]:
        """The commits from `start` back along first parents that changed one of `paths`, newest first, each
        with the lines it removed and added there (against its first parent, merges included).

        This is `git log --first-parent -p -U0 -- paths`, streamed: a caller that has what it needs stops
        iterating and git is stopped with it, and commits that touch none of the paths cost git a lookup in
        the changed-path Bloom filters of the commit-graph (see write_commit_graph; without one git compares
        their trees, still without reading a file). `stop_at`, a commit on `start`'s first-parent chain,
        ends the walk there (it and its ancestors are left out). `niced`: for background maintenance.
        """
        args = ["log", "--first-parent", "--diff-merges=first-parent", "--root", "-p", "-U0", "--text",
                "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/",
                "--dst-prefix=b/", "--format=%x00%H %P", start.decode()]
        if stop_at is not None:
            args.append("^" + stop_at.decode())
        with self._git_stream([*args, "--", *paths], niced) as stream:
            yield from _parse_patches(stream)

    def first_parent_chain(self, start: bytes, niced: bool = False
                           ) -> Generator[tuple[bytes, bytes | None], None, None]:
        """(commit, its first parent or None) from `start` back to the root, newest first, streamed (a few
        microseconds a commit with the commit-graph: no tree is read)."""
        with self._git_stream(["rev-list", "--first-parent", "--parents", start.decode()], niced) as stream:
            for line in stream:
                ids = line.split()
                yield ids[0], ids[1] if len(ids) > 1 else None

    @contextmanager
    def _git_stream(self, args: Sequence[str], niced: bool = False) -> Iterator[BinaryIO]:
        """The standard output of a git command, read as it comes; git is stopped when the block ends, so a
        reader that has what it needs spares git the rest of its walk."""
        command = ["nice", "-n", "10", "git", *args] if niced else ["git", *args]
        with subprocess.Popen(command, cwd=self.path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=self._git_environment()) as process:
            try:
                yield cast(BinaryIO, process.stdout)
            finally:
                process.kill()

    # ----------------------------------------------------------------- objects
    @contextmanager
    def object_batch(self, store: bool = True) -> Iterator[dict[str, tuple[int, bytes]]]:
        """Collect the objects written inside the block and store them as ONE pack when it ends.

        A commit's blob, trees and commit then cost two new files (pack and index) instead of one file and
        often one fan-out directory each; file creation dominates a write's cost on slow disks. The many
        small packs are rolled up geometrically in the background (pack_loose_objects). With `store=False`
        the caller gets the objects to hand to move_head, which stores them with the ref in one fsync round.
        """
        batch: dict[str, tuple[int, bytes]] = {}
        self._batch = batch
        try:
            yield batch
            if batch and store:
                self._write_pack(batch)
        finally:
            self._batch = None

    def write_object(self, type_name: bytes, content: bytes) -> bytes:
        """Store one object: into the open batch, else loose (temp file then rename: never torn)."""
        header = type_name + b" " + str(len(content)).encode() + b"\0"
        raw = header + content
        hex_id = sha1(raw).hexdigest()
        if self._batch is not None:
            self._batch[hex_id] = (PACK_TYPES[type_name], content)
            return hex_id.encode()
        directory = self.objects_dir / hex_id[:2]
        target = directory / hex_id[2:]
        if target.exists():
            return hex_id.encode()
        # `tmp_obj_` is the prefix git itself uses, so fsck ignores a leftover after a crash.
        temp = directory / f"tmp_obj_{os.getpid()}_{threading.get_ident()}"
        compressed = zlib.compress(raw, LOOSE_COMPRESSION)
        for attempt in range(5):
            try:
                handle = open(temp, "wb")
                break
            except FileNotFoundError:
                # the fan-out directory is not there yet, or a concurrent repack just removed it as empty
                if attempt == 4:
                    raise
                directory.mkdir(exist_ok=True)
        try:
            with handle:
                handle.write(compressed)
                flush_to_disk(handle)
            os.chmod(temp, 0o444)
            os.replace(temp, target)
        except BaseException:
            _unlink_quietly(temp)  # a full disk must not leave temp files behind
            raise
        fsync_directory(directory)
        return hex_id.encode()

    def _write_pack(self, objects: dict[str, tuple[int, bytes]]) -> None:
        """Store `objects` as one pack, durable before it is visible (object_batch outside a commit)."""
        handles, entry = self._stage_pack(objects)
        try:
            try:
                flush_all_to_disk(handles)
            finally:
                for handle in handles:
                    handle.close()
            self._publish_pack(entry)
        except BaseException:
            self._discard_pack(entry)
            raise
        fsync_directory(self.objects_dir / "pack")

    def _stage_pack(self, objects: dict[str, tuple[int, bytes]]) -> tuple[list[BinaryIO], list[str]]:
        """Write a version-2 pack and its version-2 index under temp names (which git ignores, and which
        sweep_temp_files removes when a crash leaves them); returns the open files, for the caller to flush
        with the rest of its round, and [temp pack, temp index, final name] for _publish_pack."""
        body = [b"PACK", struct.pack(">II", 2, len(objects))]
        offset = 12
        entries = []  # (binary sha, crc32, offset)
        for hex_id, (type_num, content) in objects.items():
            packed = _pack_header(type_num, len(content)) + zlib.compress(content, LOOSE_COMPRESSION)
            entries.append((bytes.fromhex(hex_id), zlib.crc32(packed), offset))
            body.append(packed)
            offset += len(packed)
        pack = b"".join(body)
        pack_sha = sha1(pack).digest()
        pack += pack_sha
        entries.sort()
        fanout = [0] * 256
        for binary, _, _ in entries:
            fanout[binary[0]] += 1
        running = 0
        for i in range(256):
            running += fanout[i]
            fanout[i] = running
        index = b"".join([
            b"\xfftOc", struct.pack(">I", 2), struct.pack(">256I", *fanout),
            b"".join(binary for binary, _, _ in entries),
            b"".join(struct.pack(">I", crc) for _, crc, _ in entries),
            b"".join(struct.pack(">I", off) for _, _, off in entries),  # packs here stay far below 2 GiB
            pack_sha,
        ])
        index += sha1(index).digest()
        suffix = f"{os.getpid()}_{threading.get_ident()}"
        entry = [f"tmp_pack_{suffix}", f"tmp_idx_{suffix}", f"pack-{pack_sha.hex()}"]
        handles: list[BinaryIO] = []
        try:
            for name, data in zip(entry, (pack, index)):
                handles.append(open(self.objects_dir / "pack" / name, "wb"))
                handles[-1].write(data)
                handles[-1].flush()  # whole in the kernel: a killed process leaves complete files
        except BaseException:
            for handle in handles:
                handle.close()
            self._discard_pack(entry)  # a full disk must leave nothing behind
            raise
        return handles, entry

    def _publish_pack(self, entry: Sequence[str]) -> None:
        """Rename a staged pack into place, its index last: readers only look for packs that have one."""
        pack_dir = self.objects_dir / "pack"
        for temp, suffix in zip(entry[:2], (".pack", ".idx")):
            os.chmod(pack_dir / temp, 0o444)
            os.replace(pack_dir / temp, pack_dir / (entry[2] + suffix))

    def _discard_pack(self, entry: Sequence[str]) -> None:
        """Remove a staged pack's temp files, and the pack itself unless its index made it visible."""
        pack_dir = self.objects_dir / "pack"
        for temp in entry[:2]:
            _unlink_quietly(pack_dir / temp)
        if not (pack_dir / (entry[2] + ".idx")).exists():
            _unlink_quietly(pack_dir / (entry[2] + ".pack"))

    def _restore_pack(self, entry: Sequence[str]) -> None:
        """After a crash: publish a journaled pack whose rename was lost, if its temp files are whole."""
        pack_dir = self.objects_dir / "pack"
        if (pack_dir / (entry[2] + ".idx")).exists():
            return
        try:
            pack, index = (pack_dir / entry[0]).read_bytes(), (pack_dir / entry[1]).read_bytes()
        except FileNotFoundError:
            return
        whole = (len(pack) >= 32 and pack[:4] == b"PACK" and sha1(pack[:-20]).digest() == pack[-20:]
                 and entry[2] == f"pack-{pack[-20:].hex()}" and len(index) >= 40
                 and sha1(index[:-20]).digest() == index[-20:] and index[-40:-20] == pack[-20:])
        if whole:  # (a torn one is left for sweep_temp_files)
            self._publish_pack(entry)
            fsync_directory(pack_dir)

    def write_blob(self, data: bytes) -> bytes:
        return self.write_object(b"blob", data)

    def write_tree(self, entries: Mapping[str, tuple[int, bytes]]) -> bytes:
        """Write a tree from name -> (mode, hex id)."""
        tree = Tree()
        for name, (mode, hex_id) in entries.items():
            tree.add(name.encode("utf-8"), mode, ObjectID(hex_id))
        return self.write_object(b"tree", tree.as_raw_string())

    def write_commit(self, tree: bytes, parents: list[bytes], author: Person, committer: Person,
                     message: str, when: float | None = None) -> bytes:
        commit = Commit()
        commit.tree = tree
        commit.parents = [ObjectID(parent) for parent in parents]
        commit.author = author.ident()
        commit.committer = committer.ident()
        now = int(time.time() if when is None else when)
        commit.author_time = now
        commit.commit_time = int(time.time())
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.encode("utf-8")
        return self.write_object(b"commit", commit.as_raw_string())

    def read_raw(self, hex_id: bytes) -> bytes:
        """Content of an object; retried once because a concurrent repack may move it into a pack.

        One thread at a time per repository: dulwich's shared pack cache closes the packs a repack deleted
        while looking for a new one, and closing a pack that another thread is reading from raises
        `BufferError: cannot close exported pointers exist`.
        """
        store = self._dulwich.object_store
        with self._store_lock:
            found = self._read_packed_newest_first(hex_id)
            if found is not None:
                return found[1]
            try:
                return store.get_raw(ObjectID(hex_id))[1]
            except KeyError:
                pass
        time.sleep(0.01)
        with self._store_lock:
            return store.get_raw(ObjectID(hex_id))[1]

    def _read_packed_newest_first(self, hex_id: bytes) -> tuple[int, bytes] | None:
        """An object from the packs, newest pack first; None when it is in none of them (or a concurrent
        repack removed one), and the caller asks dulwich, which also sees loose objects.

        Dulwich probes its packs oldest first, and a commit reads mostly the newest objects (another
        worker's last commits, each in its own small pack): with the dozens of packs kept between two
        repacks, that probing was a third of a write that follows another process's write. After a miss
        the pack directory is listed again (also whenever its mtime changed), so another process's new packs
        are found, and probed first.
        """
        binary = bytes.fromhex(hex_id.decode("ascii"))
        try:
            listed = os.stat(self.objects_dir / "pack").st_mtime_ns  # changes when a pack arrives or goes
        except OSError:
            listed = None
        for attempt in range(2):
            if attempt or self._packs_newest_first is None or listed != self._packs_listed:
                try:
                    self._packs_newest_first = list(reversed(self._dulwich.object_store.packs))
                except (OSError, AttributeError):
                    self._packs_newest_first = []
                self._packs_listed = listed
            for pack in self._packs_newest_first:
                try:
                    found = pack.get_raw(RawObjectID(binary))
                except KeyError:
                    _keep_only_mappings(pack)  # (its index is loaded now)
                    continue
                except Exception:  # a pack deleted by a repack, closed by dulwich: start over next time
                    self._packs_newest_first = None
                    return None
                _keep_only_mappings(pack)
                return found
        return None

    def read_raw_type(self, hex_id: bytes) -> bytes:
        """The type of an object: b"commit", b"tree", b"blob" or b"tag"."""
        with self._store_lock:
            type_num = self._dulwich.object_store.get_raw(ObjectID(hex_id))[0]
        return {number: name for name, number in PACK_TYPES.items()}[type_num]

    def read_tree(self, hex_id: bytes) -> dict[str, tuple[int, bytes]]:
        tree = cast(Tree, Tree.from_raw_string(Tree.type_num, self.read_raw(hex_id)))
        return {entry.path.decode("utf-8"): (entry.mode, entry.sha) for entry in tree.iteritems()}

    def read_commit(self, hex_id: bytes) -> Commit:
        return cast(Commit, Commit.from_raw_string(Commit.type_num, self.read_raw(hex_id)))

    def read_tag_target(self, hex_id: bytes) -> bytes:
        """The id of the object an annotated tag object names."""
        return cast(Tag, Tag.from_raw_string(Tag.type_num, self.read_raw(hex_id))).object[1]

    def config_flag(self, name: str) -> bool:
        """A boolean of the repository's own Git config (`.git/config`: never part of the project's content)."""
        return self.git("config", "--type=bool", "--get", name, check=False).strip() == b"true"

    def set_config_flag(self, name: str, value: bool) -> None:
        self.git("config", "--type=bool", name, "true" if value else "false")

    # ----------------------------------------------------------------- the branch ref
    def head(self) -> bytes | None:
        """The commit `main` points at, read from the loose ref (never packed: gc.packRefs is off)."""
        try:
            with open(self.ref_path, "rb") as handle:
                value = handle.read().strip()
        except FileNotFoundError:
            return self._packed_head()
        return value or None

    def _packed_head(self) -> bytes | None:
        try:
            for line in (self.git_dir / "packed-refs").read_bytes().splitlines():
                if line.endswith(b" " + BRANCH):
                    return line.split(b" ", 1)[0]
        except FileNotFoundError:
            pass
        return None

    def move_head(self, commit: bytes, expected: bytes | None | object = ANY,
                  objects: dict[str, tuple[int, bytes]] | None = None,
                  paths: Sequence[str] = (), dirs: Sequence[str] = ()) -> bool:
        """Compare-and-swap `main` from `expected` (None: the branch must not exist yet) to `commit`, durably,
        for ONE concurrent round of fsync (see storage.journal).

        Follows git's own protocol, so `git receive-pack`, `git update-ref` and Gloss writers exclude each
        other: create `refs/heads/main.lock` exclusively and check the current value while holding it. Raises
        RefMoved when the branch moved (then nothing is written). Then: stage `objects` (the commit's own,
        from object_batch(store=False)) as a pack under temp names, record the move in the journal with the
        working-tree `paths` and `dirs` the caller writes next (pending), and flush all that together with
        the oldest pending paths of earlier commits. Only then rename the pack and the ref into place.
        Returns whether the journal lists `paths` and `dirs` as pending; when they are too many, the caller
        flushes them itself (update_worktree(flush=True)).
        """
        fd = self._create_ref_lock()
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
            journal_fd = self.journal.open(fsync, fsync_directory)
            latest, _ = self.journal.read()
            handles: list[BinaryIO] = []
            if objects:
                handles, entry = self._stage_pack(objects)
            try:
                seq = latest.seq + 1 if latest else 1
                pending, flush = pending_after(latest, seq, list(paths), list(dirs), PENDING_PATHS)
                written = Slot(seq=seq, base=_text(head), head=commit.decode(), packs=[entry] if entry else [],
                               paths=pending)
                Journal.write(journal_fd, written)
                self._flush_round(handles, journal_fd, flush)
            finally:
                for handle in handles:
                    handle.close()
            if entry:
                self._publish_pack(entry)
        except BaseException:
            try:
                if written is not None and journal_fd is not None:  # so that no recovery replays it
                    self._abort_slot(journal_fd, written, latest)
                if entry:
                    self._discard_pack(entry)
            finally:
                if journal_fd is not None:
                    os.close(journal_fd)
                os.close(fd)
                os.unlink(self._ref_lock_path)
            raise
        os.close(journal_fd)
        os.close(fd)
        os.replace(self._ref_lock_path, self.ref_path)  # the rename releases the lock
        return written.paths is not None

    def _flush_round(self, handles: list[BinaryIO], journal_fd: int, flush: list[str]) -> None:
        """The commit's one round: its staged pack, the pack directory (which holds their names), the journal,
        and the older working-tree paths that must stop being pending (see journal.pending_after)."""
        descriptors = [journal_fd]
        directories = [self.objects_dir / "pack"] if handles else []
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
            flush_all_to_disk(handles, directories, descriptors)
        finally:
            for descriptor in descriptors[1:]:
                os.close(descriptor)

    def _abort_slot(self, journal_fd: int, written: Slot, latest: Slot | None) -> None:
        """Replace a failed commit's slot by one where the branch stays put (with the previous slot's pending
        paths, whose flush may not have happened), flushed before the error is answered."""
        Journal.write(journal_fd, Slot(seq=written.seq, base=written.base, head=written.base,
                                       paths=dict(latest.paths or {}) if latest else {}))
        fsync(journal_fd)

    @property
    def _ref_lock_path(self) -> Path:
        return self.ref_path.with_name(self.ref_path.name + ".lock")

    @contextmanager
    def ref_lock(self) -> Iterator[None]:
        """Hold git's `refs/heads/main.lock` for the block without moving the branch (git is kept out)."""
        os.close(self._create_ref_lock())
        try:
            yield
        finally:
            os.unlink(self._ref_lock_path)

    def _create_ref_lock(self) -> int:
        """Create `refs/heads/main.lock` exclusively, waiting up to REF_LOCK_TIMEOUT for another holder.

        The lock is made as a private file whose inode is recorded as Gloss's before it is linked into place
        (atomically, failing if the lock exists): a writer killed at any moment leaves either no lock or one
        that the next writer knows for a dead Gloss writer's, never one that passes for git's.
        """
        lock = self._ref_lock_path
        deadline = time.monotonic() + REF_LOCK_TIMEOUT
        pause = 0.001
        temp = self.git_dir / f"gloss-ref-lock-{os.getpid()}-{threading.get_ident()}.tmp"  # swept if left
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while True:
                if os.path.lexists(lock):  # judged by the record of its maker, before ours replaces it
                    if self._remove_dead_ref_lock(lock):
                        continue
                    if time.monotonic() >= deadline:
                        raise Busy(f"The branch is locked by another git process ({lock.name} in refs/heads); "
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
            _unlink_quietly(temp)

    @staticmethod
    def _reopen_as(lock: Path, fd: int) -> int:
        """The lock opened by its own name (so the descriptor names the lock, as git's does), for `fd`'s file."""
        reopened = os.open(lock, os.O_WRONLY)
        os.close(fd)
        return reopened

    def _record_ref_lock_owner(self, inode: int) -> None:
        path = self.git_dir / REF_LOCK_OWNER
        with open(path, "r+b" if path.exists() else "wb") as handle:  # in place: no new file per write
            handle.write(b"%d\n" % inode)
            handle.truncate()

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

    # ----------------------------------------------------------------- working tree and index
    def checked_out_commit(self) -> bytes | None:
        """The commit the working tree and index were last brought to, or None when unknown.

        Written last, in place, after the files and the index: a writer killed after the ref moved leaves an
        older (or torn) value, so the next writer sees it differ from HEAD and resyncs.
        """
        try:
            with open(self.git_dir / CHECKOUT_FILE, "rb") as handle:
                return handle.read(41).strip() or None
        except FileNotFoundError:
            return None

    def _record_checkout(self, commit: bytes) -> None:
        path = self.git_dir / CHECKOUT_FILE
        with open(path, "r+b" if path.exists() else "wb") as handle:  # in place: no new file per write
            handle.write(commit + b"\n")
            handle.truncate()

    def worktree_changes(self, changed: Mapping[str, bytes | None],
                         removed_dirs: Iterable[str]) -> tuple[list[str], list[str]]:
        """What update_worktree will touch, for the journal: the files, and the directories whose entries
        change (a file created or deleted, a directory made or removed), relative to the working tree."""
        dirs: set[str] = set()
        for relative, data in changed.items():
            if data is not None and not os.path.lexists(self.path / relative):  # maybe in a new directory
                dirs.update((parent_dir(relative), parent_dir(parent_dir(relative))))
        for relative in [*(path for path, data in changed.items() if data is None), *removed_dirs]:
            while relative:  # a deletion, and the empty directories removed above it
                relative = parent_dir(relative)
                dirs.add(relative)
        return list(changed), sorted(dirs)

    def update_worktree(self, changed: Mapping[str, bytes | None], blob_ids: Mapping[str, bytes],
                        commit: bytes, removed_dirs: Iterable[str] = (), flush: bool = False) -> None:
        """Write changed files (path -> bytes, None = delete), record them in the index, mark it as `commit`.

        Files are rewritten in place: readers never use the working tree (they read Git objects). Nothing
        is flushed here: the next commit's round flushes the files the journal lists, and recovery repairs
        the index and those files after a crash. With `flush` (a write too big for the journal to list),
        everything is flushed now, in one round, and the journal records a settled state.
        """
        index = self._read_index()
        touched_dirs: set[Path] = {self.path}
        written: list[BinaryIO] = []
        try:
            for relative, data in changed.items():
                target = self.path / relative
                key = relative.encode("utf-8")
                if data is None:
                    try:
                        target.unlink()
                        touched_dirs.add(target.parent)
                    except FileNotFoundError:
                        pass
                    index.pop(key, None)
                    continue
                handle: BinaryIO
                try:
                    handle = open(target, "r+b")
                except FileNotFoundError:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    touched_dirs.update((target.parent, target.parent.parent))
                    handle = open(target, "wb")
                written.append(handle)
                handle.write(data)
                handle.truncate()
                handle.flush()
                index[key] = index_entry_from_stat(os.fstat(handle.fileno()), blob_ids[relative], FILE_MODE)
                if not flush:
                    written.pop().close()  # no need to keep it open
            for directory in removed_dirs:
                self._remove_empty_dirs(self.path / directory)
                touched_dirs.add((self.path / directory).parent)
            touched_dirs.add(self.git_dir)  # the index's rename
            self._publish_index(index, written if flush else None, touched_dirs)
        finally:
            for handle in written:
                handle.close()
        self._record_checkout(commit)  # the files and the index are written before the marker says so
        if flush:
            self.settle(commit)

    def settle(self, head: bytes | None) -> None:
        """Record in the journal that the branch, the working tree and the index are durable at `head`."""
        latest, _ = self.journal.read()
        fd = self.journal.open(fsync, fsync_directory)
        try:
            Journal.write(fd, Slot(seq=latest.seq + 1 if latest else 1, base=_text(head), head=_text(head),
                                   paths={}, settled=True))
            fsync(fd)
        finally:
            os.close(fd)

    # ----------------------------------------------------------------- recovery
    def needs_recovery(self, thorough: bool = False) -> bool:
        """Whether the branch, the working tree or the index may lag behind the journal (a writer killed, or
        a crash). `thorough` also checks what a power loss may have torn, which nothing else reveals: the
        index and the working-tree files of the last two commits (see storage.journal)."""
        latest, previous = self.journal.read()
        head = self._valid_head()
        if self.checked_out_commit() != head:
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
        written (see resync_worktree)."""
        latest, previous = self.journal.read()
        head = self._valid_head()
        target = head
        if latest is not None:
            for slot in (previous, latest):
                for entry in slot.packs if slot is not None else ():
                    self._restore_pack(entry)
            if _text(head) != latest.head and self._ref_lags(head, latest):
                whole = latest.head is not None and self._has_commit(latest.head.encode("ascii"))
                chosen = latest.head if whole else latest.base
                target = chosen.encode("ascii") if chosen is not None else head
                if target != head and target is not None:
                    self._write_ref_durably(target)
        if not self.needs_recovery(thorough):  # the ref was all that lagged
            return []
        skipped = self.resync_worktree(ours)
        self.settle(target)
        return skipped

    def _ref_lags(self, head: bytes | None, latest: Slot) -> bool:
        """Whether the ref shows a commit before the latest slot's base: its rename (or a few of them, which
        nothing flushes on their own) was lost, or it is torn. A ref elsewhere was moved by someone else."""
        if head is None or _text(head) == latest.base:
            return True
        return latest.base is not None and self.is_ancestor(head, latest.base.encode("ascii"))

    def _valid_head(self) -> bytes | None:
        """The branch's commit, or None when the ref is missing or not a commit id (torn by a crash)."""
        head = self.head()
        return head if head is not None and COMMIT_ID.fullmatch(head) else None

    def _has_commit(self, commit: bytes) -> bool:
        """Whether a commit and its root tree can be read (the objects of a pack whose round completed)."""
        try:
            self.read_raw(self.read_commit(commit).tree)
            return True
        except (KeyError, ValueError):
            return False

    def _write_ref_durably(self, commit: bytes) -> None:
        """Set the branch (recovery only, so two rounds of fsync are fine here)."""
        fd = self._create_ref_lock()
        try:
            os.write(fd, commit + b"\n")
            fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(self._ref_lock_path)
            raise
        os.close(fd)
        os.replace(self._ref_lock_path, self.ref_path)
        fsync_directory(self.ref_path.parent)

    def _worktree_matches(self, head: bytes | None, latest: Slot, previous: Slot | None) -> bool:
        """Whether the index (whole, with a good checksum) lists exactly HEAD's files, and the working-tree
        files that the last commits wrote without a completed flush hold HEAD's content."""
        wanted: dict[str, bytes] = {}
        if head is not None:
            self._collect_files(self.read_commit(head).tree, "", wanted)
        try:
            data = (self.git_dir / "index").read_bytes()
        except FileNotFoundError:
            data = b""
        entries = _index_v2_entries(data) if data[-20:] == sha1(data[:-20]).digest() else None
        if entries is None or {path.decode("utf-8", "replace"): entry[40:60].hex().encode("ascii")
                               for path, entry in entries.items()} != wanted:
            return False
        unflushed = [latest.paths] + ([] if latest.settled or previous is None else [previous.paths])
        for paths in unflushed:
            if paths is None:
                return False  # a big write that crashed before it settled: check everything
            if not all(self._file_holds(relative, wanted.get(relative)) for relative in paths
                       if not relative.endswith("/")):
                return False
        return True

    def _file_holds(self, relative: str, blob: bytes | None) -> bool:
        """Whether a working-tree file holds the blob `blob` (None: the file must not exist)."""
        try:
            data = (self.path / relative).read_bytes()
        except OSError:
            return blob is None
        return sha1(b"blob %d\0" % len(data) + data).hexdigest().encode("ascii") == blob

    def resync_worktree(self, ours: Callable[[str], bool] = lambda path: True) -> list[str]:
        """Make the working tree and the index equal to HEAD (after a crash, or for a fresh repository), and
        flush them.

        Never wedges: a path of HEAD that the file system refuses (too long, say) is left out of the working
        tree and the index (the commit still holds it, and a later write can delete it). Files HEAD does not
        hold are deleted only when `ours(path)` says they belong to the layout (someone else's file stays).
        Returns the paths that could not be written.
        """
        head = self.head()
        wanted: dict[str, bytes] = {}
        if head is not None:
            self._collect_files(self.read_commit(head).tree, "", wanted)
        present = {
            str(p.relative_to(self.path)) for p in self.path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.path).parts
        }
        stale = {path for path in present - wanted.keys() if ours(path)}
        index: dict[bytes, IndexEntry | bytes] = {}
        skipped: list[str] = []
        directories: set[Path] = {self.path, self.git_dir}
        for path in stale:
            _unlink_quietly(self.path / path)
            directories.add((self.path / path).parent)
        written: list[BinaryIO] = []
        try:
            for path, blob in wanted.items():
                try:
                    written.append(self._write_file(path, self.read_raw(blob)))
                    index[path.encode("utf-8")] = index_entry_from_stat(os.fstat(written[-1].fileno()), blob,
                                                                        FILE_MODE)
                    directories.update(((self.path / path).parent, (self.path / path).parent.parent))
                except OSError as error:
                    if error.errno not in UNWRITABLE_PATH:
                        raise  # disk full, read-only…: the marker stays stale and the next writer tries again
                    skipped.append(path)
                if len(written) >= RESYNC_FLUSH_BATCH:  # a bounded number of open files
                    self._flush_and_close(written)
            self._flush_and_close(written)
        finally:
            for handle in written:
                handle.close()
        for path in stale:
            self._remove_empty_dirs((self.path / path).parent)
        self._index_cache = None
        self._publish_index(index, [], directories)
        self._record_checkout(head or b"0" * 40)
        return skipped

    @staticmethod
    def _flush_and_close(handles: list[BinaryIO]) -> None:
        try:
            flush_all_to_disk(handles)
        finally:
            for handle in handles:
                handle.close()
            handles.clear()

    def _write_file(self, relative: str, data: bytes) -> BinaryIO:
        """Rewrite one working-tree file in place, creating its directory when needed; returns it open."""
        target = self.path / relative
        try:
            handle = open(target, "wb")
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = open(target, "wb")
        try:
            handle.write(data)
            handle.flush()
        except BaseException:
            handle.close()
            raise
        return handle

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
        ages.update((path, 0.0) for path in self.git_dir.glob("gloss-*.tmp"))
        ages.update((path, 0.0) for path in pack_dir.glob("tmp_*") if _is_own_pack_temp(path.name))
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

    def _collect_files(self, tree_id: bytes, prefix: str, out: dict[str, bytes]) -> None:
        for name, (mode, hex_id) in self.read_tree(tree_id).items():
            path = f"{prefix}{name}"
            if stat.S_ISDIR(mode):
                self._collect_files(hex_id, path + "/", out)
            else:
                out[path] = hex_id

    def _read_index(self) -> dict[bytes, IndexEntry | bytes]:
        """The index: path -> its entry, serialised as it is on disk (bytes) or new (IndexEntry). Parsed
        again only when the index file changed since this process wrote it, and then kept serialised, so
        that the next write re-serialises only what it changes (another worker's write used to cost a
        full parse and a full re-serialisation of the index: 601 entries at 100k assets)."""
        cached = self._index_cache
        stamp = self._index_stamp()
        if cached is not None and cached[0] == stamp:
            return dict(cached[1])
        try:
            data = (self.git_dir / "index").read_bytes()
        except FileNotFoundError:
            return {}
        entries = _index_v2_entries(data)
        if entries is None:  # another version or layout (git itself rewrote it): let dulwich read it
            with open(self.git_dir / "index", "rb") as handle:
                return dict(read_index_dict(handle))  # type: ignore[arg-type]  # no merge conflicts here
        self._index_cache = (stamp, entries)
        return dict(entries)

    def _index_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.git_dir / "index")
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _index_temp(self) -> Path:
        return self.git_dir / f"gloss-index-{os.getpid()}-{threading.get_ident()}.tmp"

    def _write_index(self, entries: dict[bytes, IndexEntry | bytes]) -> tuple[BinaryIO, dict[bytes, bytes]]:
        """Write the index (version 2) to a temp file and return it, open, for the caller to flush with its
        other files, with every entry serialised. Entries already serialised are written as they are: a
        commit serialises only the entries it changed (rewriting the whole index was ~45 % of a commit at
        100k assets)."""
        serialised: dict[bytes, bytes] = {}
        for path in sorted(entries):
            entry = entries[path]
            if not isinstance(entry, bytes):
                buffer = io.BytesIO()
                write_cache_entry(buffer, entry.serialize(path, Stage.NORMAL), version=2)
                entry = buffer.getvalue()
            serialised[path] = entry
        data = b"".join([b"DIRC", struct.pack(">LL", 2, len(serialised)), *serialised.values()])
        handle = open(self._index_temp(), "wb")
        try:
            handle.write(data)
            handle.write(sha1(data).digest())
        except BaseException:
            handle.close()
            raise
        return handle, serialised

    def _publish_index(self, entries: dict[bytes, IndexEntry | bytes], flush_with: Sequence[BinaryIO] | None,
                       directories: Iterable[Path]) -> None:
        """Rename the new index into place; with `flush_with` (else nothing is flushed: see update_worktree),
        then flush it, those files and the `directories` in ONE concurrent round.

        Renaming before flushing is safe: the checkout marker and the journal, written after, decide whether
        recovery must check the index again. On failure (a full disk) the temp index is removed.
        """
        try:
            index_file, serialised = self._write_index(entries)
        except BaseException:
            _unlink_quietly(self._index_temp())
            raise
        try:
            try:
                index_file.flush()  # whole in the kernel before its name is published
                os.replace(self._index_temp(), self.git_dir / "index")
            except BaseException:
                _unlink_quietly(self._index_temp())
                raise
            self._index_cache = None  # the file changed; the stamp is taken once it is written
            if flush_with is not None:  # (a directory removed meanwhile has nothing left to flush)
                flush_all_to_disk([*flush_with, index_file], [d for d in directories if d.is_dir()])
        finally:
            index_file.close()
        self._index_cache = (self._index_stamp(), serialised)

    def _remove_empty_dirs(self, directory: Path) -> None:
        try:
            while directory != self.path and directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
                directory = directory.parent
        except OSError:  # a name the file system refuses, or a file appeared: leave the directory
            pass

    # ----------------------------------------------------------------- maintenance
    def note_commit(self) -> None:
        """Count commits; every GC_EVERY, a repack becomes due: it runs in the background after a lull."""
        self._commits_since_gc += 1
        self._last_commit = time.monotonic()
        if self._commits_since_gc >= GC_EVERY and not self._maintenance_due:
            self._maintenance_due = True
            # a daemon while it only waits: a process that exits meanwhile leaves the repack to the next one
            threading.Thread(target=self._pack_after_lull, name="gloss-pack-wait", daemon=True).start()

    def _pack_after_lull(self) -> None:
        """Wait for MAINTENANCE_LULL seconds without a commit (or GC_FORCE_EVERY commits), then repack."""
        while True:
            quiet_for = time.monotonic() - self._last_commit
            if quiet_for >= MAINTENANCE_LULL or self._commits_since_gc >= GC_FORCE_EVERY:
                break
            time.sleep(min(MAINTENANCE_LULL - quiet_for, 0.25))
        self._commits_since_gc = 0
        # not a daemon: a process that exits waits for its repack instead of orphaning it
        threading.Thread(target=self._pack_in_background, args=(quiet_for < MAINTENANCE_LULL,),
                         name="gloss-pack").start()

    def _pack_in_background(self, busy: bool) -> None:
        try:
            with self._packing:
                self.pack_loose_objects(wait=False, busy=busy)
        finally:
            self._maintenance_due = False

    def pack_loose_objects(self, wait: bool = True, full: bool | None = None, busy: bool = False) -> None:
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
            for update in self.derived_data:
                update(self)
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
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self._git_environment())
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


def _index_v2_entries(data: bytes) -> dict[bytes, bytes] | None:
    """path -> serialised entry of a version-2 index without conflicts, or None for anything else.

    A v2 entry is 62 bytes of stat data, object id and flags, the path (its length in the flags' low 12
    bits), then 1 to 8 NULs up to a multiple of 8 bytes. Extensions after the entries are dropped, as
    dulwich's reader drops them too.
    """
    if len(data) < 32 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack_from(">LL", data, 4)
    if version != 2:
        return None
    entries: dict[bytes, bytes] = {}
    offset = 12
    for _ in range(count):
        if offset + 62 > len(data):
            return None
        (flags,) = struct.unpack_from(">H", data, offset + 60)
        length = flags & 0x0FFF
        if length == 0x0FFF or flags & 0x7000:  # a very long path, a merge stage, v3 flags: dulwich's job
            return None
        end = offset + ((62 + length + 8) & ~7)
        entries[data[offset + 62:offset + 62 + length]] = data[offset:end]
        offset = end
    return entries


def _read_counter(fd: int) -> int:
    try:
        return int(os.pread(fd, 32, 0).strip() or b"0")
    except ValueError:
        return 0


def _write_counter(fd: int, value: int) -> None:
    data = b"%d\n" % value
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))
