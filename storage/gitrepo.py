"""The only code that touches Git: objects, the branch ref, the working tree and the index.

Objects are written straight into the object store (blobs, trees, commit) and the branch ref is moved last,
so a reader that resolves the ref always sees a complete commit. The working tree and the index are brought in
line with HEAD after the ref moves; a marker file left by a crash in between makes the next writer resync them.
"""
from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
import zlib
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Iterable, Mapping

from dulwich.index import IndexChecksumWriter, IndexEntry, index_entry_from_stat, read_index_dict, write_index_dict
from dulwich.objects import Commit, Tree
from dulwich.repo import Repo

BRANCH = b"refs/heads/main"
FILE_MODE = 0o100644
TREE_MODE = 0o040000
# Loose-object compression: level 1 is several times faster than the default and the periodic repack
# recompresses everything with deltas anyway.
LOOSE_COMPRESSION = 1
PENDING_MARKER = "gloss-worktree-pending"
TEMP_DIR = "gloss-tmp"
# How many commits a process makes between two `git gc --auto` checks.
GC_EVERY = 50


@dataclass(frozen=True)
class Person:
    """A Git identity."""

    name: str
    email: str

    def ident(self) -> bytes:
        name = self.name.replace("<", "").replace(">", "").replace("\n", " ").strip() or "unknown"
        email = self.email.replace("<", "").replace(">", "").replace("\n", "").strip()
        return f"{name} <{email}>".encode("utf-8")


class GitRepo:
    """A non-bare repository whose branch `main` is written through plumbing."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.git_dir = self.path / ".git"
        self.objects_dir = self.git_dir / "objects"
        self.ref_path = self.git_dir / BRANCH.decode()
        self._dulwich = Repo(str(self.path))
        self._commits_since_gc = 0

    # ----------------------------------------------------------------- creation
    @classmethod
    def init(cls, path: Path) -> "GitRepo":
        """Create an empty repository whose HEAD points at `main`."""
        path.mkdir(parents=True, exist_ok=False)
        Repo.init(str(path))
        git_dir = path / ".git"
        (git_dir / "HEAD").write_bytes(b"ref: " + BRANCH + b"\n")
        config = git_dir / "config"
        # Refs stay loose (we read and replace the ref file ourselves); gc packs objects often enough that a
        # project stays small; receiving pushes into the served working tree is refused.
        config.write_text(
            config.read_text()
            + "[gc]\n\tauto = 1000\n\tautoPackLimit = 20\n\tpackRefs = false\n\tautoDetach = false\n"
            + "[receive]\n\tdenyCurrentBranch = refuse\n"
        )
        (git_dir / "description").write_text("Gloss translation project\n")
        return cls(path)

    # ----------------------------------------------------------------- objects
    def write_object(self, type_name: bytes, content: bytes) -> bytes:
        """Store one object loose (temp file then rename, so a crash never leaves a torn object)."""
        header = type_name + b" " + str(len(content)).encode() + b"\0"
        raw = header + content
        hex_id = sha1(raw).hexdigest()
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
        with handle:
            handle.write(compressed)
        os.chmod(temp, 0o444)
        os.replace(temp, target)
        return hex_id.encode()

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
        with open(temp, "wb") as handle:
            handle.write(commit + b"\n")
        self.ref_path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(temp, self.ref_path)

    # ----------------------------------------------------------------- working tree and index
    def mark_pending(self) -> None:
        (self.git_dir / PENDING_MARKER).touch()

    def clear_pending(self) -> None:
        try:
            (self.git_dir / PENDING_MARKER).unlink()
        except FileNotFoundError:
            pass

    def needs_resync(self) -> bool:
        return (self.git_dir / PENDING_MARKER).exists() or not (self.git_dir / "index").exists()

    def update_worktree(self, changed: Mapping[str, bytes | None], blob_ids: Mapping[str, bytes],
                        removed_dirs: Iterable[str] = ()) -> None:
        """Write changed files (path -> bytes, None = delete) and record them in the index."""
        index = self._read_index()
        temp_dir = self.git_dir / TEMP_DIR
        temp_dir.mkdir(exist_ok=True)
        for relative, data in changed.items():
            target = self.path / relative
            key = relative.encode("utf-8")
            if data is None:
                try:
                    target.unlink()
                except FileNotFoundError:
                    pass
                index.pop(key, None)
                continue
            if not target.parent.is_dir():
                target.parent.mkdir(parents=True, exist_ok=True)
            temp = temp_dir / f"{os.getpid()}-{threading.get_ident()}"
            with open(temp, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
            index[key] = index_entry_from_stat(os.stat(target), blob_ids[relative], FILE_MODE)
        for directory in removed_dirs:
            self._remove_empty_dirs(self.path / directory)
        self._write_index(index)

    def resync_worktree(self) -> None:
        """Make the working tree and the index equal to HEAD (after a crash, or for a fresh repository)."""
        head = self.head()
        wanted: dict[str, bytes] = {}
        if head is not None:
            self._collect_files(self.read_commit(head).tree, "", wanted)
        present = {
            str(p.relative_to(self.path)) for p in self.path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.path).parts
        }
        changed: dict[str, bytes | None] = {path: None for path in present - wanted.keys()}
        for path, blob in wanted.items():
            changed[path] = self.read_raw(blob)
        index_path = self.git_dir / "index"
        if index_path.exists():
            index_path.unlink()
        self.update_worktree(changed, wanted, removed_dirs=[str(Path(p).parent) for p in present - wanted.keys()])
        self.clear_pending()

    def _collect_files(self, tree_id: bytes, prefix: str, out: dict[str, bytes]) -> None:
        for name, (mode, hex_id) in self.read_tree(tree_id).items():
            path = f"{prefix}{name}"
            if stat.S_ISDIR(mode):
                self._collect_files(hex_id, path + "/", out)
            else:
                out[path] = hex_id

    def _read_index(self) -> dict[bytes, IndexEntry]:
        try:
            with open(self.git_dir / "index", "rb") as handle:
                return dict(read_index_dict(handle))
        except FileNotFoundError:
            return {}

    def _write_index(self, entries: dict[bytes, IndexEntry]) -> None:
        temp = self.git_dir / f"gloss-index-{os.getpid()}-{threading.get_ident()}.tmp"
        with open(temp, "wb") as handle:
            writer = IndexChecksumWriter(handle)
            write_index_dict(writer, entries)
            writer.write_checksum()
        os.replace(temp, self.git_dir / "index")

    def _remove_empty_dirs(self, directory: Path) -> None:
        while directory != self.path and directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent

    # ----------------------------------------------------------------- maintenance
    def note_commit(self) -> None:
        """Count commits and, every GC_EVERY, pack the loose objects in a background thread."""
        self._commits_since_gc += 1
        if self._commits_since_gc >= GC_EVERY:
            self._commits_since_gc = 0
            threading.Thread(target=self.pack_loose_objects, daemon=True).start()

    def pack_loose_objects(self) -> None:
        """Pack loose objects with deltas, then let `git gc --auto` merge packs when there are too many.

        Safe beside concurrent writers: repack only removes loose objects that are now in a pack, and gc never
        prunes recent unreachable objects (an in-flight write's objects are recent).
        """
        for command in (["git", "repack", "-d", "-q"], ["git", "gc", "--auto", "--quiet"]):
            subprocess.run(command, cwd=self.path, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
