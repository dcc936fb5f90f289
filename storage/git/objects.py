"""Git objects and packs: writing blobs, trees and commits (loose, or a whole commit's as ONE pack staged under
temp names, so its flush can join the ref's round of fsync), reading them back through dulwich with the newest
packs probed first, and keeping the pack files' descriptors few. Knows nothing of refs or the working tree."""
from __future__ import annotations

import mmap
import os
import stat
import struct
import threading
import time
import weakref
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Mapping, Sequence, cast

from dulwich.object_store import DiskObjectStore, OverlayObjectStore
from dulwich.objects import Commit, ObjectID, RawObjectID, ShaFile, Tag, Tree
from dulwich.pack import Pack
from dulwich.repo import Repo

from . import durable

FILE_MODE = 0o100644
TREE_MODE = 0o040000
GITLINK_MODE = 0o160000  # a submodule's commit, which lives in another repository
# Compression of the objects a commit writes: level 1 is several times faster than the default, and the
# periodic full repack stores most of them as deltas anyway.
LOOSE_COMPRESSION = 1
DELTA_BASE_CACHE_BYTES = 8 * 1024 * 1024  # per pack; see ObjectStore.__init__


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


PACK_SPARES = ("pack", "pack-index")  # durable.make_spare's roles for stage_pack's two temp files


def is_own_pack_temp(name: str) -> bool:
    """`tmp_pack_<pid>_<thread>` / `tmp_idx_<pid>_<thread>`: a temp file of `stage_pack` (git's differ)."""
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


def parse_commit(raw: bytes) -> Commit:
    """A commit from its stored content."""
    return cast(Commit, Commit.from_raw_string(Commit.type_num, raw))


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


def _pack_with_entries(objects: Mapping[str, tuple[int, bytes]]) -> tuple[bytes, list[tuple[bytes, int, int]]]:
    """A version-2 pack of whole (undeltified) objects, and its index entries (binary sha, crc32, offset)."""
    body = [b"PACK", struct.pack(">II", 2, len(objects))]
    offset = 12
    entries = []
    for hex_id, (type_num, content) in objects.items():
        packed = _pack_header(type_num, len(content)) + zlib.compress(content, LOOSE_COMPRESSION)
        entries.append((bytes.fromhex(hex_id), zlib.crc32(packed), offset))
        body.append(packed)
        offset += len(packed)
    pack = b"".join(body)
    return pack + sha1(pack).digest(), entries


def pack_of(objects: Mapping[str, tuple[int, bytes]]) -> bytes:
    """Objects as one Git pack (version 2, whole objects: nothing in it leans on objects outside it)."""
    return _pack_with_entries(objects)[0]


class BadPack(ValueError):
    """A pack this reader does not take: torn, deltified, or an object that does not parse."""


def unpack(pack: bytes) -> dict[str, tuple[int, bytes]]:
    """The objects of a pack of whole objects (pack_of's), each checked as Git's fsck checks its format, by
    id; raises BadPack otherwise (a pack with deltas included: the caller fetches instead)."""
    if len(pack) < 32 or pack[:4] != b"PACK" or sha1(pack[:-20]).digest() != pack[-20:]:
        raise BadPack("not a whole pack")
    version, count = struct.unpack(">II", pack[4:12])
    if version != 2:
        raise BadPack(f"pack version {version}")
    objects: dict[str, tuple[int, bytes]] = {}
    offset, end = 12, len(pack) - 20
    names = {number: name for name, number in PACK_TYPES.items()}
    for _ in range(count):
        if offset >= end:
            raise BadPack("pack shorter than its count")
        byte = pack[offset]
        type_num, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
        offset += 1
        while byte & 0x80:
            if offset >= end:
                raise BadPack("torn object header")
            byte = pack[offset]
            size |= (byte & 0x7F) << shift
            shift += 7
            offset += 1
        if type_num not in names:
            raise BadPack(f"object type {type_num} (deltas are fetched instead)")
        content, offset = _inflate(pack, offset, end, size)
        hex_id = sha1(names[type_num] + b" " + str(size).encode() + b"\0" + content).hexdigest()
        try:
            ShaFile.from_raw_string(type_num, content).check()
        except Exception as error:  # dulwich's ObjectFormatException and the parse errors under it
            raise BadPack(f"object {hex_id}: {error}") from None
        objects[hex_id] = (type_num, content)
    if offset != end:
        raise BadPack("bytes after the last object")
    return objects


def _inflate(pack: bytes, offset: int, end: int, size: int) -> tuple[bytes, int]:
    """The `size` bytes deflated at `offset`, and the offset after them. Deflate grows a stream by a few bytes
    per 64 KiB at worst, so a bounded slice is tried first (the whole rest copied per object was quadratic)."""
    view = memoryview(pack)
    for stop in (min(end, offset + size + size // 1000 + 64), end):
        inflater = zlib.decompressobj()
        try:
            content = inflater.decompress(view[offset:stop], size + 1)
        except zlib.error as error:
            raise BadPack(str(error)) from None
        if inflater.eof:
            if len(content) != size:
                raise BadPack("object size differs from its header")
            return content, stop - len(inflater.unused_data)
    raise BadPack("torn object")


# A pack whose index is at most this size (about 2,300 objects) is small: its object ids are read once into
# _PackListing's dict, and never probed in its own index (see ObjectStore._candidate_packs)
SMALL_PACK_INDEX_BYTES = 64 * 1024
_INDEX_V2_HEADER = b"\377tOc\x00\x00\x00\x02"
_FANOUT_END = 8 + 256 * 4  # the v2 index: header, fan-out table, then the sorted object ids


class _PackListing:
    """A repository's packs as listed at one pack-directory mtime: where each object of the small packs is,
    in one dict, and the large packs, newest first (dulwich lists them in the order it found them, and keeps
    the same Pack for a pack file from one listing to the next)."""

    def __init__(self, listed: int | None, packs: list[Pack], known: dict[str, list[bytes] | None],
                 previous: "_PackListing | None" = None):
        self.listed = listed
        self.small: dict[bytes, Pack]
        self.large: list[Pack]
        self.packs = packs  # (held: the ids below stay theirs)
        self.ids = {id(pack) for pack in packs}
        if previous is not None and previous.ids <= self.ids:  # packs only arrived: the new ones added
            self.small, self.large = previous.small, previous.large
            packs = [pack for pack in packs if id(pack) not in previous.ids]
        else:
            self.small, self.large = {}, []
            for path in set(known) - {_index_path(pack) for pack in packs}:  # (packs a repack removed)
                del known[path]
        for pack in packs:  # oldest first: a newer pack's entry replaces an older one's
            path = _index_path(pack)
            if path not in known:
                known[path] = _small_index_ids(path)
            ids = known[path]
            if ids is None:
                self.large.insert(0, pack)
            else:
                self.small.update(dict.fromkeys(ids, pack))


def _index_path(pack: Pack) -> str:
    return str(getattr(pack, "_idx_path", ""))


def _small_index_ids(path: str) -> list[bytes] | None:
    """The object ids (binary) of a small pack's v2 index; None for a large or unreadable one."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > SMALL_PACK_INDEX_BYTES:
                return None
            data = handle.read()
    except OSError:
        return None
    if len(data) < _FANOUT_END or not data.startswith(_INDEX_V2_HEADER):
        return None
    count = struct.unpack_from(">I", data, _FANOUT_END - 4)[0]
    if len(data) < _FANOUT_END + 20 * count:
        return None
    return [data[offset:offset + 20] for offset in range(_FANOUT_END, _FANOUT_END + 20 * count, 20)]


class ObjectStore:
    """The object database of one repository (`.git/objects`), read and written."""

    def __init__(self, path: Path):
        self.objects_dir = path / ".git" / "objects"
        self._dulwich = Repo(str(path))
        # dulwich keeps up to 96 MiB of resolved delta bases PER PACK (git's default for a short-lived
        # command); in a long-lived worker that was ~100 MB of a 100k project's memory, for no speed-up
        # on snapshot loads, which read each chunk once.
        self._dulwich.object_store.delta_base_cache_limit = DELTA_BASE_CACHE_BYTES
        self._store_lock = threading.Lock()  # guards dulwich's pack cache (see read_raw)
        self._batch: dict[str, tuple[int, bytes]] | None = None
        self._packs: _PackListing | None = None  # see _candidate_packs
        self._pack_ids: dict[str, list[bytes] | None] = {}  # a small pack's index path -> its object ids
        self._stores_to_close: list = []
        # The packs close when the repository goes away (a project the store evicted while a request still
        # used it: a worker serving thousands of projects would run out of files otherwise), or at exit while
        # the interpreter still works (packs left to the collector at shutdown each print an "Exception
        # ignored in __del__" traceback).
        weakref.finalize(self, durable.close_quietly, self._dulwich)

    def close(self) -> None:
        """Release the open pack files."""
        durable.close_quietly(self._dulwich)
        for store in self._stores_to_close:
            durable.close_quietly(store)

    def close_files(self) -> None:
        """Close the pack files (and their mappings) now; the next read opens the ones it needs again.

        Safe while other threads use the repository: reads hold the store lock, which this takes too.
        """
        with self._store_lock:
            self._dulwich.object_store.close()
            self._packs = None

    def open_files(self) -> int:
        """How many descriptors the repository's packs hold (an index and a data file per opened pack)."""
        with self._store_lock:
            packs = list(getattr(self._dulwich.object_store, "_pack_cache", {}).values())  # dulwich's open packs
        return sum(_descriptors(part) for pack in packs for part in _pack_parts(pack))

    def see_quarantine(self, quarantine: Path, base: "ObjectStore") -> None:
        """Read through `base` (its loaded pack indexes and the lock that guards them, see read_raw) and the
        objects of a push still in git's `quarantine` directory; the quarantine's packs stay open until close."""
        unused, quarantine_store = self._dulwich.object_store, DiskObjectStore(str(quarantine))
        self._dulwich.object_store = OverlayObjectStore(  # type: ignore[assignment]  # reads only
            [quarantine_store, base._dulwich.object_store])
        self._store_lock = base._store_lock
        self._stores_to_close = [quarantine_store, unused]  # the overlay's own close does nothing

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
                self.write_pack(batch)
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
                durable.flush_to_disk(handle)
            os.chmod(temp, 0o444)
            os.replace(temp, target)
        except BaseException:
            durable.unlink_quietly(temp)  # a full disk must not leave temp files behind
            raise
        durable.fsync_directory(directory)
        return hex_id.encode()

    def store_blobs(self, blobs: Iterable[bytes]) -> list[bytes]:
        """Store blobs as one pack of their own, durably, and return their ids. Shares no state with an open
        object_batch (another thread's, under the project lock): the blobs of an import are stored before its
        commit, outside the lock; a commit that never comes leaves them unreachable, as git's own do."""
        objects: dict[str, tuple[int, bytes]] = {}
        ids = []
        for data in blobs:
            hex_id = sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()
            objects[hex_id] = (PACK_TYPES[b"blob"], data)
            ids.append(hex_id.encode())
        if objects:
            self.write_pack(objects)
        return ids

    def write_pack(self, objects: dict[str, tuple[int, bytes]]) -> None:
        """Store `objects` as one pack, durable before it is visible (object_batch outside a commit)."""
        handles, entry = self.stage_pack(objects)
        try:
            durable.flush_and_close(handles)
            self.publish_pack(entry)
        except BaseException:
            self.discard_pack(entry)
            raise
        durable.fsync_directory(self.objects_dir / "pack")

    def stage_pack(self, objects: dict[str, tuple[int, bytes]]) -> tuple[list[BinaryIO], list[str]]:
        """Write a version-2 pack and its version-2 index under temp names (which git ignores, and which
        sweep_temp_files removes when a crash leaves them); returns the open files, for the caller to flush
        with the rest of its round, and [temp pack, temp index, final name] for publish_pack."""
        pack, entries = _pack_with_entries(objects)
        pack_sha = pack[-20:]
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
        entry = [*self._pack_temps(), f"pack-{pack_sha.hex()}"]
        handles: list[BinaryIO] = []
        try:
            for name, role, data in zip(entry, PACK_SPARES, (pack, index)):
                durable.take_spare(self.objects_dir.parent, role, self.objects_dir / "pack" / name)
                handles.append(open(self.objects_dir / "pack" / name, "wb"))
                handles[-1].write(data)
                handles[-1].flush()  # whole in the kernel: a killed process leaves complete files
        except BaseException:
            for handle in handles:  # quietly: closing flushes again what a full disk refused, and fails again
                durable.close_quietly(handle)
            self.discard_pack(entry)  # a full disk must leave nothing behind
            raise
        return handles, entry

    @staticmethod
    def _pack_temps() -> tuple[str, str]:
        """This thread's temp names for a staged pack and its index (is_own_pack_temp knows them)."""
        suffix = f"{os.getpid()}_{threading.get_ident()}"
        return f"tmp_pack_{suffix}", f"tmp_idx_{suffix}"

    def make_spares(self) -> None:
        """This process's spares for a staged pack's temp files (see durable.make_spare)."""
        for role in PACK_SPARES:
            durable.make_spare(self.objects_dir.parent, role)

    def publish_pack(self, entry: Sequence[str]) -> None:
        """Rename a staged pack into place, its index last: readers only look for packs that have one."""
        pack_dir = self.objects_dir / "pack"
        for temp, suffix in zip(entry[:2], (".pack", ".idx")):
            os.chmod(pack_dir / temp, 0o444)
            os.replace(pack_dir / temp, pack_dir / (entry[2] + suffix))

    def discard_pack(self, entry: Sequence[str]) -> None:
        """Remove a staged pack's temp files, and the pack itself unless its index made it visible."""
        pack_dir = self.objects_dir / "pack"
        for temp in entry[:2]:
            durable.unlink_quietly(pack_dir / temp)
        if not (pack_dir / (entry[2] + ".idx")).exists():
            durable.unlink_quietly(pack_dir / (entry[2] + ".pack"))

    def restore_pack(self, entry: Sequence[str]) -> None:
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
            self.publish_pack(entry)
            durable.fsync_directory(pack_dir)

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
        """An object from the packs (see _candidate_packs); None when it is in none of them (or a concurrent
        repack removed one), and the caller asks dulwich, which also sees loose objects."""
        binary = bytes.fromhex(hex_id.decode("ascii"))
        for pack, _ in self._candidate_packs(binary):
            try:
                return pack.get_raw(RawObjectID(binary))
            except KeyError:
                continue
            except Exception:  # a pack deleted by a repack, closed by dulwich: start over next time
                self._packs = None
                return None
            finally:
                _keep_only_mappings(pack)  # (its index is loaded now)
        return None

    def has(self, hex_id: bytes) -> bool:
        """Whether the object is here (packed or loose)."""
        binary = bytes.fromhex(hex_id.decode("ascii"))
        with self._store_lock:
            for pack, holds in self._candidate_packs(binary):
                try:
                    if holds or RawObjectID(binary) in pack:
                        return True
                except Exception:  # (as above; dulwich answers)
                    self._packs = None
                    break
                finally:
                    _keep_only_mappings(pack)
            return ObjectID(hex_id) in self._dulwich.object_store

    def _candidate_packs(self, binary: bytes) -> Iterator[tuple[Pack, bool]]:
        """The packs that may hold an object, as last listed (_PackListing): the small pack that holds it
        (True), then the large packs newest first; then the same again after listing the pack directory anew.

        Dulwich probes every pack's index in turn, oldest first; a writer or a follower adds a small pack per
        commit, hundreds between two repacks, and probing them all was most of a replicated write's check
        (3.2 ms at 400 packs). The directory is listed again whenever its mtime changed, so another process's
        new packs are found without a miss.
        """
        try:
            listed = os.stat(self.objects_dir / "pack").st_mtime_ns  # changes when a pack arrives or goes
        except OSError:
            listed = None
        for attempt in range(2):
            if attempt or self._packs is None or listed != self._packs.listed:
                try:
                    packs = list(self._dulwich.object_store.packs)
                except (OSError, AttributeError):  # (a push's quarantine overlay: dulwich alone reads it)
                    packs = []
                self._packs = _PackListing(listed, packs, self._pack_ids, self._packs)
            listing = self._packs
            small = listing.small.get(binary)
            if small is not None:
                yield small, True
            for pack in listing.large:
                yield pack, False

    def objects_since(self, heads: Iterable[bytes], bases: Iterable[bytes],
                      max_commits: int) -> dict[str, tuple[int, bytes]] | None:
        """The objects a copy holding `bases` (and everything they reach) lacks to hold `heads`: the commits
        after `bases` and the trees and blobs each changed from its parents (whole objects). None when more
        than `max_commits` commits lie between (a branch made from an old commit, a long absence): fetch."""
        known = set(bases)
        commits: dict[bytes, tuple[bytes, Commit]] = {}  # id -> (its raw bytes, as stored; parsed)
        todo = [head for head in heads if head not in known]
        while todo:
            commit_id = todo.pop()
            if commit_id in known or commit_id in commits:
                continue
            if len(commits) >= max_commits:
                return None
            raw = self.read_raw(commit_id)
            commits[commit_id] = (raw, parse_commit(raw))
            todo.extend(commits[commit_id][1].parents)
        found: dict[str, tuple[int, bytes]] = {}
        for commit_id, (raw, commit) in commits.items():
            found[commit_id.decode("ascii")] = (PACK_TYPES[b"commit"], raw)
            parent_trees = [commits[p][1].tree if p in commits else self.read_commit(p).tree for p in commit.parents]
            self._tree_changes(commit.tree, parent_trees, found)
        return found

    def _tree_changes(self, tree_id: bytes, olds: list[bytes], found: dict[str, tuple[int, bytes]]) -> None:
        """Into `found`: the tree and what it reaches that none of the `olds` trees (at the same path) has."""
        hex_id = tree_id.decode("ascii")
        if tree_id in olds or hex_id in found:
            return
        raw = self.read_raw(tree_id)
        found[hex_id] = (PACK_TYPES[b"tree"], raw)
        entries = cast(Tree, Tree.from_raw_string(Tree.type_num, raw))
        old_entries = [self.read_tree(old) for old in olds]
        for entry in entries.iteritems():
            name, mode, sha = entry.path.decode("utf-8"), entry.mode, entry.sha
            if mode == GITLINK_MODE:
                continue  # (a submodule's commit lives in another repository)
            same = [old[name] for old in old_entries if name in old]
            if any(old_sha == sha for _, old_sha in same):
                continue
            if stat.S_ISDIR(mode):
                self._tree_changes(sha, [old_sha for old_mode, old_sha in same if stat.S_ISDIR(old_mode)], found)
            elif sha.decode("ascii") not in found:
                found[sha.decode("ascii")] = (PACK_TYPES[b"blob"], self.read_raw(sha))

    def lacks_links(self, objects: Mapping[str, tuple[int, bytes]]) -> bool:
        """Whether an object of `objects` names one that is neither among them nor here (parents, trees,
        blobs, a tag's target): such objects are not stored (a copy never holds a commit it cannot read)."""
        def present(sha: bytes) -> bool:
            return sha.decode("ascii") in objects or self.has(sha)

        for type_num, content in objects.values():
            parsed = ShaFile.from_raw_string(type_num, content)
            if isinstance(parsed, Commit):
                links = [parsed.tree, *parsed.parents]
            elif isinstance(parsed, Tree):
                links = [entry.sha for entry in parsed.iteritems() if entry.mode != GITLINK_MODE]
            elif isinstance(parsed, Tag):
                links = [parsed.object[1]]
            else:
                links = []
            if not all(present(sha) for sha in links):
                return True
        return False

    def read_raw_type(self, hex_id: bytes) -> bytes:
        """The type of an object: b"commit", b"tree", b"blob" or b"tag"."""
        with self._store_lock:
            type_num = self._dulwich.object_store.get_raw(ObjectID(hex_id))[0]
        return {number: name for name, number in PACK_TYPES.items()}[type_num]

    def read_tree(self, hex_id: bytes) -> dict[str, tuple[int, bytes]]:
        tree = cast(Tree, Tree.from_raw_string(Tree.type_num, self.read_raw(hex_id)))
        return {entry.path.decode("utf-8"): (entry.mode, entry.sha) for entry in tree.iteritems()}

    def read_commit(self, hex_id: bytes) -> Commit:
        return parse_commit(self.read_raw(hex_id))

    def read_tag_target(self, hex_id: bytes) -> bytes:
        """The id of the object an annotated tag object names."""
        return cast(Tag, Tag.from_raw_string(Tag.type_num, self.read_raw(hex_id))).object[1]

    def collect_files(self, tree_id: bytes, prefix: str, out: dict[str, bytes]) -> None:
        for name, (mode, hex_id) in self.read_tree(tree_id).items():
            path = f"{prefix}{name}"
            if stat.S_ISDIR(mode):
                self.collect_files(hex_id, path + "/", out)
            else:
                out[path] = hex_id
