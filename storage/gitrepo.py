"""The only code that touches Git: objects, the branch ref, the working tree and the index.

Objects are written straight into the object store (blobs, trees, commit) and the branch ref is moved last,
so a reader that resolves the ref always sees a complete commit. The working tree and the index are brought in
line with HEAD after the ref moves; a marker file left by a crash in between makes the next writer resync them.
"""
from __future__ import annotations

import atexit
import errno
import os
import stat
import struct
import subprocess
import threading
import time
import weakref
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from dulwich.index import IndexChecksumWriter, IndexEntry, index_entry_from_stat, read_index_dict, write_index_dict
from dulwich.objects import Commit, Tree
from dulwich.repo import Repo

BRANCH = b"refs/heads/main"
FILE_MODE = 0o100644
TREE_MODE = 0o040000
# Loose-object compression: level 1 is several times faster than the default and the periodic repack
# recompresses everything with deltas anyway.
LOOSE_COMPRESSION = 1
CHECKOUT_FILE = "gloss-checkout"  # the commit the working tree and index were brought to
# How many commits a process makes between two `git gc --auto` checks.
GC_EVERY = 50


def replace_with(temp: Path, target: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `temp` then rename it over `target`; a failure (disk full, say) leaves no temp file."""
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        _unlink_quietly(temp)
        raise


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

# Every open repository, closed at exit while the interpreter still works: packs left to the garbage
# collector at shutdown each print an "Exception ignored in __del__" traceback.
_OPEN_REPOS: "weakref.WeakSet[GitRepo]" = weakref.WeakSet()


@atexit.register
def _close_open_repos() -> None:
    for repo in list(_OPEN_REPOS):
        repo.close()


def _is_own_pack_temp(name: str) -> bool:
    """`tmp_pack_<pid>_<thread>` / `tmp_idx_<pid>_<thread>`: a temp file of `_write_pack` (git's differ)."""
    parts = name.split("_")
    return len(parts) == 4 and parts[1] in ("pack", "idx") and parts[2].isdigit() and parts[3].isdigit()


@dataclass(frozen=True)
class Person:
    """A Git identity."""

    name: str
    email: str

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


class GitRepo:
    """A non-bare repository whose branch `main` is written through plumbing."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.git_dir = self.path / ".git"
        self.objects_dir = self.git_dir / "objects"
        self.ref_path = self.git_dir / BRANCH.decode()
        self._dulwich = Repo(str(self.path))
        _OPEN_REPOS.add(self)
        self._commits_since_gc = 0
        self._batch: dict[str, tuple[int, bytes]] | None = None
        self._packing = threading.Lock()  # one background repack at a time per process
        self._index_cache: tuple[tuple[int, int, int] | None, dict[bytes, IndexEntry]] | None = None

    def close(self) -> None:
        """Release the open pack files."""
        try:
            self._dulwich.close()
        except Exception:  # closing at exit must never fail the exit
            pass

    # ----------------------------------------------------------------- creation
    @classmethod
    def init(cls, path: Path) -> "GitRepo":
        """Create an empty repository whose HEAD points at `main`."""
        path.mkdir(parents=True, exist_ok=False)
        Repo.init(str(path)).close()
        git_dir = path / ".git"
        (git_dir / "HEAD").write_bytes(b"ref: " + BRANCH + b"\n")
        config = git_dir / "config"
        # Refs stay loose (we read and replace the ref file ourselves); gc packs objects often enough that a
        # project stays small; receiving pushes into the served working tree is refused.
        config.write_text(
            config.read_text()
            + "[gc]\n\tauto = 1000\n\tautoPackLimit = 100\n\tpackRefs = false\n\tautoDetach = false\n"
            + "[receive]\n\tdenyCurrentBranch = refuse\n"
        )
        (git_dir / "description").write_text("Gloss translation project\n")
        return cls(path)

    # ----------------------------------------------------------------- objects
    @contextmanager
    def object_batch(self) -> Iterator[None]:
        """Collect the objects written inside the block and store them as ONE pack when it ends.

        A commit's blob, trees and commit then cost two new files (pack and index) instead of one file and
        often one fan-out directory each; file creation dominates a write's cost on slow disks. The many
        small packs are rolled up geometrically in the background (pack_loose_objects).
        """
        self._batch = {}
        try:
            yield
            if self._batch:
                self._write_pack(self._batch)
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
                replace_with(temp, target, compressed, 0o444)
                break
            except FileNotFoundError:
                # the fan-out directory is not there yet, or a concurrent repack just removed it as empty
                if attempt == 4:
                    raise
                directory.mkdir(exist_ok=True)
        return hex_id.encode()

    def _write_pack(self, objects: dict[str, tuple[int, bytes]]) -> None:
        """Write a version-2 pack and its version-2 index; the index goes last, so git and dulwich only
        ever see complete packs (temp names start with `tmp_`, which git ignores if a crash leaves one)."""
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
        pack_dir = self.objects_dir / "pack"
        name = f"pack-{pack_sha.hex()}"
        written: list[Path] = []
        try:
            for suffix, data in ((".pack", pack), (".idx", index)):
                temp = pack_dir / f"tmp_{suffix[1:]}_{os.getpid()}_{threading.get_ident()}"
                target = pack_dir / (name + suffix)
                replace_with(temp, target, data, 0o444)
                written.append(target)
        except OSError:
            for path in written:  # a pack without its index is of no use to anyone: take it back
                _unlink_quietly(path)
            raise

    def write_blob(self, data: bytes) -> bytes:
        return self.write_object(b"blob", data)

    def write_tree(self, entries: Mapping[str, tuple[int, bytes]]) -> bytes:
        """Write a tree from name -> (mode, hex id)."""
        tree = Tree()
        for name, (mode, hex_id) in entries.items():
            tree.add(name.encode("utf-8"), mode, hex_id)
        return self.write_object(b"tree", tree.as_raw_string())

    def write_commit(self, tree: bytes, parents: list[bytes], author: Person, committer: Person,
                     message: str, when: float | None = None) -> bytes:
        commit = Commit()
        commit.tree = tree
        commit.parents = parents
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
        """Content of an object; retried once because a concurrent repack may move it into a pack."""
        store = self._dulwich.object_store
        try:
            return store.get_raw(hex_id)[1]
        except KeyError:
            time.sleep(0.01)
            return store.get_raw(hex_id)[1]

    def read_tree(self, hex_id: bytes) -> dict[str, tuple[int, bytes]]:
        tree = Tree.from_raw_string(Tree.type_num, self.read_raw(hex_id))
        return {entry.path.decode("utf-8"): (entry.mode, entry.sha) for entry in tree.iteritems()}

    def read_commit(self, hex_id: bytes) -> Commit:
        return Commit.from_raw_string(Commit.type_num, self.read_raw(hex_id))

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

    def move_head(self, commit: bytes) -> None:
        """Point `main` at `commit` atomically; the temp file lives outside refs/ so a crash leaves no junk ref."""
        temp = self.git_dir / f"gloss-ref-{os.getpid()}-{threading.get_ident()}.tmp"
        self.ref_path.parent.mkdir(parents=True, exist_ok=True)
        replace_with(temp, self.ref_path, commit + b"\n")

    # ----------------------------------------------------------------- working tree and index
    def checked_out_commit(self) -> bytes | None:
        """The commit the working tree and index were last brought to, or None when unknown.

        Written last, in place, after the files and the index: a write interrupted after the ref moved
        leaves an older (or torn) value, so the next writer sees it differ from HEAD and resyncs.
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

    def update_worktree(self, changed: Mapping[str, bytes | None], blob_ids: Mapping[str, bytes],
                        commit: bytes, removed_dirs: Iterable[str] = ()) -> None:
        """Write changed files (path -> bytes, None = delete), record them in the index, mark it as `commit`.

        Files are rewritten in place: readers never use the working tree (they read Git objects), and a torn
        file after a crash is repaired by the resync that the index's stale commit triggers.
        """
        index = self._read_index()
        for relative, data in changed.items():
            target = self.path / relative
            key = relative.encode("utf-8")
            if data is None:
                _unlink_quietly(target)  # a path the file system never took (too long) is gone already
                index.pop(key, None)
                continue
            self._write_file(relative, data)
            index[key] = index_entry_from_stat(os.stat(target), blob_ids[relative], FILE_MODE)
        for directory in removed_dirs:
            self._remove_empty_dirs(self.path / directory)
        self._write_index(index)
        self._record_checkout(commit)

    def resync_worktree(self, ours: Callable[[str], bool] = lambda path: True) -> list[str]:
        """Make the working tree and the index equal to HEAD (after a crash, or for a fresh repository).

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
        index: dict[bytes, IndexEntry] = {}
        skipped: list[str] = []
        for path in stale:
            _unlink_quietly(self.path / path)
        for path, blob in wanted.items():
            try:
                self._write_file(path, self.read_raw(blob))
                index[path.encode("utf-8")] = index_entry_from_stat(os.stat(self.path / path), blob, FILE_MODE)
            except OSError as error:
                if error.errno not in UNWRITABLE_PATH:
                    raise  # disk full, read-only…: the marker stays stale and the next writer tries again
                skipped.append(path)
        for path in stale:
            self._remove_empty_dirs((self.path / path).parent)
        self._index_cache = None
        self._write_index(index)
        self._record_checkout(head or b"0" * 40)
        return skipped

    def _write_file(self, relative: str, data: bytes) -> None:
        """Rewrite one working-tree file in place, creating its directory when needed."""
        target = self.path / relative
        try:
            handle = open(target, "wb")
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = open(target, "wb")
        with handle:
            handle.write(data)

    def sweep_temp_files(self, older_than: float = 3600.0) -> int:
        """Delete temp files left by killed or failed writers; returns how many.

        Called under the project's write lock, so Gloss's own temp files (ref, index, per-commit pack, loose
        object) can only be leftovers; git's `tmp_pack_*` may belong to a running repack, so only old ones go.
        """
        removed = 0
        now = time.time()
        pack_dir = self.objects_dir / "pack"
        ages: dict[Path, float] = {path: older_than for path in pack_dir.glob("tmp_pack_*")}
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

    def _collect_files(self, tree_id: bytes, prefix: str, out: dict[str, bytes]) -> None:
        for name, (mode, hex_id) in self.read_tree(tree_id).items():
            path = f"{prefix}{name}"
            if stat.S_ISDIR(mode):
                self._collect_files(hex_id, path + "/", out)
            else:
                out[path] = hex_id

    def _read_index(self) -> dict[bytes, IndexEntry]:
        """The index entries; parsed again only when the index file changed since this process wrote it."""
        cached = self._index_cache
        if cached is not None and cached[0] == self._index_stamp():
            return dict(cached[1])
        try:
            with open(self.git_dir / "index", "rb") as handle:
                return dict(read_index_dict(handle))
        except FileNotFoundError:
            return {}

    def _index_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.git_dir / "index")
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _write_index(self, entries: dict[bytes, IndexEntry]) -> None:
        temp = self.git_dir / f"gloss-index-{os.getpid()}-{threading.get_ident()}.tmp"
        try:
            with open(temp, "wb") as handle:
                writer = IndexChecksumWriter(handle)
                write_index_dict(writer, entries)
                writer.write_checksum()
            os.replace(temp, self.git_dir / "index")
        except BaseException:
            _unlink_quietly(temp)
            raise
        self._index_cache = (self._index_stamp(), entries)

    def _remove_empty_dirs(self, directory: Path) -> None:
        try:
            while directory != self.path and directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
                directory = directory.parent
        except OSError:  # a name the file system refuses, or a file appeared: leave the directory
            pass

    # ----------------------------------------------------------------- maintenance
    def note_commit(self) -> None:
        """Count commits and, every GC_EVERY, pack the loose objects in a background thread."""
        self._commits_since_gc += 1
        if self._commits_since_gc >= GC_EVERY and not self._packing.locked():
            self._commits_since_gc = 0
            # not a daemon: a process that exits waits for its repack instead of orphaning it
            threading.Thread(target=self._pack_in_background, name="gloss-pack").start()

    def _pack_in_background(self) -> None:
        with self._packing:
            self.pack_loose_objects()

    def pack_loose_objects(self) -> None:
        """Roll the small per-commit packs (and any loose objects) up into fewer, delta-compressed ones.

        `--geometric=2` merges only the smallest packs, so each run costs little however big the project,
        and the number of packs stays logarithmic in the number of commits. Safe beside concurrent writers:
        it only deletes packs whose objects it has rewritten, and never prunes.
        """
        try:
            subprocess.run(["git", "repack", "-d", "-q", "--geometric=2"], cwd=self.path, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # the repository went away (deleted project, removed scratch dir): nothing to pack
            pass
