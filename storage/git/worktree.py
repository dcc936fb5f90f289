"""The working tree and the index: files written in place after the branch moved (flushed by the next commit's
round, see storage.journal), the index kept serialised between writes so a commit re-serialises only what it
changed, the checkout marker that says which commit both were brought to, and the full resync that recovery
uses. Readers never use the working tree: it exists for people and tools that look at the repository."""
from __future__ import annotations

import io
import os
import struct
import threading
from hashlib import sha1
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Mapping, Sequence

from dulwich.index import IndexEntry, Stage, index_entry_from_stat, read_index_dict, write_cache_entry

from . import durable
from .objects import FILE_MODE, ObjectStore

CHECKOUT_FILE = "gloss-checkout"  # the commit the working tree and index were brought to
RESYNC_FLUSH_BATCH = 64  # files a resync keeps open to flush them in one round
STAGED_DIR = "gloss-staged"  # in .git: files of a commit to come, written before the project lock (WorkTree.stage)

# path -> (the blob id its content has, the flushed file that holds it): see WorkTree.stage
Staged = dict[str, tuple[bytes, Path]]


def parent_dir(path: str) -> str:
    """The directory of a repository path ("" for the top)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


class WorkTree:
    """The working tree and the index of one repository."""

    def __init__(self, path: Path, objects: ObjectStore):
        self.path = path
        self.git_dir = path / ".git"
        self.objects = objects
        # (the index file's stamp, path -> its serialised entry) as this process last wrote or read it
        self._index_cache: tuple[tuple[int, int, int] | None, dict[bytes, bytes]] | None = None

    def checked_out_commit(self) -> bytes | None:
        """The commit the working tree and index were last brought to, or None when unknown.

        Written last, in place, after the files and the index: a writer killed after the ref moved leaves an
        older (or torn) value, so the next writer sees it differ from HEAD and resyncs.
        """
        try:
            return durable.read_small(self.git_dir / CHECKOUT_FILE)[:41].strip() or None
        except FileNotFoundError:
            return None

    def _record_checkout(self, commit: bytes) -> None:
        durable.rewrite_small(self.git_dir / CHECKOUT_FILE, commit + b"\n")

    def changes(self, changed: Mapping[str, bytes | None],
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

    def stage(self, files: Mapping[str, tuple[bytes, bytes]]) -> Staged:
        """Write the files of a commit to come (path -> (data, blob id)) under temp names in .git and flush them
        in one round, before the project lock; `update` then renames each into place when the commit holds that
        blob. A 100k-unit import rewrites 50 MB of working tree: written and flushed inside the lock it held
        every other writer of the project for 280-340 ms."""
        directory = self.git_dir / STAGED_DIR
        directory.mkdir(exist_ok=True)
        staged: Staged = {}
        handles: list[BinaryIO] = []
        try:
            for relative, (data, blob) in files.items():
                # (random: a killed writer's leftovers stay an hour, and its pid may come back meanwhile)
                temp = directory / f"{os.getpid()}-{os.urandom(8).hex()}"
                staged[relative] = (blob, temp)
                handles.append(os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb"))
                handles[-1].write(data)
            durable.flush_all_to_disk(handles)
        except BaseException:
            self.discard(staged)
            raise
        finally:
            for written in handles:
                durable.close_quietly(written)
        return staged

    @staticmethod
    def discard(staged: Staged) -> None:
        """Remove the staged files `update` did not take."""
        for _, temp in staged.values():
            durable.unlink_quietly(temp)
        staged.clear()

    def update(self, changed: Mapping[str, bytes | None], blob_ids: Mapping[str, bytes],
               commit: bytes, removed_dirs: Iterable[str] = (), flush: bool = False,
               staged: Staged | None = None) -> None:
        """Write changed files (path -> bytes, None = delete), record them in the index, mark it as `commit`.

        Files are rewritten in place: readers never use the working tree (they read Git objects). Nothing
        is flushed here: the next commit's round flushes the files the journal lists, and recovery repairs
        the index and those files after a crash. With `flush` (a write too big for the journal to list),
        everything is flushed now, in one round, for the caller to record a settled state in the journal.
        A file `staged` with the blob the commit holds is renamed into place instead (taken out of `staged`):
        it was flushed before, only its directory's entry is new.
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
                ready = staged.pop(relative, None) if staged else None
                if ready is not None and ready[0] == blob_ids[relative]:
                    if not target.parent.is_dir():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        touched_dirs.add(target.parent.parent)
                    os.replace(ready[1], target)
                    touched_dirs.add(target.parent)
                    index[key] = index_entry_from_stat(os.stat(target), blob_ids[relative], FILE_MODE)
                    continue
                if ready is not None:  # (the commit holds other content: a write rebased onto others')
                    durable.unlink_quietly(ready[1])
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

    def index_lists(self, wanted: dict[str, bytes]) -> bool:
        """Whether the index is whole (a good checksum) and lists exactly `wanted` (path -> blob id)."""
        try:
            data = (self.git_dir / "index").read_bytes()
        except FileNotFoundError:
            data = b""
        entries = _index_v2_entries(data) if data[-20:] == sha1(data[:-20]).digest() else None
        return entries is not None and {path.decode("utf-8", "replace"): entry[40:60].hex().encode("ascii")
                                        for path, entry in entries.items()} == wanted

    def file_holds(self, relative: str, blob: bytes | None) -> bool:
        """Whether a working-tree file holds the blob `blob` (None: the file must not exist)."""
        try:
            data = (self.path / relative).read_bytes()
        except OSError:
            return blob is None
        return sha1(b"blob %d\0" % len(data) + data).hexdigest().encode("ascii") == blob

    def resync(self, head: bytes | None, ours: Callable[[str], bool] = lambda path: True) -> list[str]:
        """Make the working tree and the index equal to HEAD (after a crash, or for a fresh repository), and
        flush them.

        Never wedges: a path of HEAD that the file system refuses (too long, say) is left out of the working
        tree and the index (the commit still holds it, and a later write can delete it). Files HEAD does not
        hold are deleted only when `ours(path)` says they belong to the layout (someone else's file stays).
        Returns the paths that could not be written.
        """
        wanted: dict[str, bytes] = {}
        if head is not None:
            self.objects.collect_files(self.objects.read_commit(head).tree, "", wanted)
        present = {
            str(p.relative_to(self.path)) for p in self.path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.path).parts
        }
        stale = {path for path in present - wanted.keys() if ours(path)}
        index: dict[bytes, IndexEntry | bytes] = {}
        skipped: list[str] = []
        directories: set[Path] = {self.path, self.git_dir}
        for path in stale:
            durable.unlink_quietly(self.path / path)
            directories.add((self.path / path).parent)
        written: list[BinaryIO] = []
        try:
            for path, blob in wanted.items():
                try:
                    written.append(self._write_file(path, self.objects.read_raw(blob)))
                    index[path.encode("utf-8")] = index_entry_from_stat(os.fstat(written[-1].fileno()), blob,
                                                                        FILE_MODE)
                    directories.update(((self.path / path).parent, (self.path / path).parent.parent))
                except OSError as error:
                    if error.errno not in durable.UNWRITABLE_PATH:
                        raise  # disk full, read-only…: the marker stays stale and the next writer tries again
                    skipped.append(path)
                if len(written) >= RESYNC_FLUSH_BATCH:  # a bounded number of open files
                    durable.flush_and_close(written)
            durable.flush_and_close(written)
        finally:
            for handle in written:
                handle.close()
        for path in stale:
            self._remove_empty_dirs((self.path / path).parent)
        self._index_cache = None
        self._publish_index(index, [], directories)
        self._record_checkout(head or b"0" * 40)
        return skipped

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

    def make_spares(self) -> None:
        """This process's spare for the temp index (see durable.make_spare)."""
        durable.make_spare(self.git_dir, "index")

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
        durable.take_spare(self.git_dir, "index", self._index_temp())
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
            durable.unlink_quietly(self._index_temp())
            raise
        try:
            try:
                index_file.flush()  # whole in the kernel before its name is published
                os.replace(self._index_temp(), self.git_dir / "index")
            except BaseException:
                durable.unlink_quietly(self._index_temp())
                raise
            self._index_cache = None  # the file changed; the stamp is taken once it is written
            if flush_with is not None:  # (a directory removed meanwhile has nothing left to flush)
                durable.flush_all_to_disk([*flush_with, index_file], [d for d in directories if d.is_dir()])
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
