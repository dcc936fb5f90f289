"""Derived data persisted beside the repository, so that a process opening a big project need not recompute it.

A cold open of a 100k-asset project parsed every chunk (to know which chunk holds each asset) and counted
every locale's progress: seconds, in every worker. Those answers are functions of the chunk files' contents,
so they are kept keyed by the blob ids they were computed from, in files of the repository's `.git` (never in
its tree, so neither a clone nor `git fsck` sees them), one per part:

    .git/gloss-derived-<part>     b"gloss-derived <FORMAT> <python tag> <codec> <crc-32> <length>\\n" + body

where the body is `marshal(entries)`, compressed by zlib (codec `z`) when that is small enough to decompress
in a few milliseconds (the index: 3 MB at 100k assets), else as it is (codec `-`: decompressing the asset
lists' 40 MB took 200 ms, most of a cold list). `entries` maps a key `(kind, extra, blob ids)` to a value (anything `marshal` writes). A value keyed by
blob ids is right for every commit that has those blobs: a file written at an older commit still serves the
chunks that did not change since, and the others are computed from Git. Derived data only, never the truth:
a missing, torn, garbled (its CRC) or foreign (another Python's marshal) file is ignored and written again;
a value is read back only under the blob ids it was computed from. Files are replaced whole, through a temp
file and a rename, so a reader sees an old file or a new one; two processes saving at once each write a
correct file, and the last one stays.

Parts: `index` (small, read by the first snapshot load: asset IDs of each asset chunk, chunk counts) and the
larger ones that readers ask for by name (the asset list's renderings; `strings`, the contexts and texts an import
looks up), read on their first use.
"""
from __future__ import annotations

import marshal
import os
import sys
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable

FORMAT = b"1"
MAGIC = b"gloss-derived"
PYTHON = f"{sys.implementation.cache_tag}-{marshal.version}".encode()  # marshal's format follows Python's
PREFIX = "gloss-derived-"  # in .git
INDEX = "index"
COMPRESS_BELOW = 8 * 1024 * 1024  # bytes of marshalled entries

Key = tuple[str, Any, tuple[bytes | None, ...]]  # (kind, anything marshal-able and hashable, blob ids)
Stamp = tuple[int, int, int] | None  # a part file's (inode, mtime_ns, size); None: no file


def encode(entries: dict[Key, Any]) -> bytes:
    body = marshal.dumps(entries)
    codec = b"-"
    if len(body) < COMPRESS_BELOW:
        body, codec = zlib.compress(body, 1), b"z"
    return b" ".join([MAGIC, FORMAT, PYTHON, codec, b"%08x" % zlib.crc32(body), b"%d" % len(body)]) + b"\n" + body


def decode(data: bytes) -> dict[Key, Any]:
    """The entries of a file's bytes; {} for anything but a whole, intact file of this format and Python."""
    end = data.find(b"\n", 0, 200)
    fields = data[:end].split(b" ")
    body = memoryview(data)[end + 1:]  # not a copy: the asset lists' part is 40 MB at 100k assets
    if end < 0 or len(fields) != 6 or fields[:3] != [MAGIC, FORMAT, PYTHON] or fields[3] not in (b"z", b"-"):
        return {}
    if fields[5] != b"%d" % body.nbytes or fields[4] != b"%08x" % zlib.crc32(body):
        return {}
    try:
        entries = marshal.loads(zlib.decompress(body) if fields[3] == b"z" else body)
    except (ValueError, EOFError, TypeError, zlib.error):
        return {}
    return entries if isinstance(entries, dict) else {}


def pack_strings(strings: Iterable[str]) -> str | tuple[str, ...]:
    """Strings in the form marshal reads fastest: joined by newlines (one string, split in C: 100k asset IDs
    as a tuple took 100 ms to read), unless one holds a newline or is empty."""
    strings = tuple(strings)
    if all(strings) and not any("\n" in string for string in strings):
        return "\n".join(strings)
    return strings


def unpack_strings(packed: str | tuple[str, ...]) -> tuple[str, ...]:
    """The strings pack_strings was given (not interned: that tripled the cost of a cold open's index)."""
    if isinstance(packed, str):
        return tuple(packed.split("\n")) if packed else ()
    return tuple(packed)


def packed_count(packed: str | tuple[str, ...]) -> int:
    """How many strings pack_strings was given, without splitting them."""
    if isinstance(packed, str):
        return packed.count("\n") + 1 if packed else 0
    return len(packed)


class DerivedStore:
    """The persisted derived data of one repository: values read on demand, new ones saved by `save`."""

    def __init__(self, git_dir: Path, on_put: Callable[[], None] = lambda: None):
        self.git_dir = Path(git_dir)
        self.on_put = on_put  # told when a value was added (the owner schedules a save)
        self._parts: dict[str, dict[Key, Any]] = {}  # part -> its entries as read (then with what was added)
        self._added: dict[str, set[Key]] = {}  # part -> keys added since the part was read or saved
        self._read_as: dict[str, Stamp] = {}  # part -> its file's stamp when it was read or saved
        self._carried: dict[str, dict[Key, Any]] = {}  # part -> values added, not saved, while it is read again
        self._lock = threading.Lock()

    def path(self, part: str) -> Path:
        return self.git_dir / f"{PREFIX}{part}"

    def _stamp(self, part: str) -> Stamp:
        """What tells that another process replaced a part's file: its inode, time and size (None: no file)."""
        try:
            stat = os.stat(self.path(part))
        except OSError:
            return None
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def _part(self, part: str) -> dict[Key, Any]:
        entries = self._parts.get(part)
        if entries is None:
            stamp = self._stamp(part)  # (taken first: a file replaced meanwhile is read again at the next refresh)
            try:
                entries = decode(self.path(part).read_bytes())
            except OSError:
                entries = {}
            entries.update(self._carried.pop(part, {}))
            self._read_as[part] = stamp
            entries = self._parts.setdefault(part, entries)
        return entries

    def refresh(self) -> None:
        """Read again, at their next use, the parts that another process saved since this one read them: a
        commit made elsewhere comes with the derived data of its new chunks (Project.prepared_write saves them
        before its commit), and a part read once was otherwise kept for the life of the process, so that the
        first reads of another process's 100k-unit import counted every chunk again. A stat per part read."""
        with self._lock:
            for part in list(self._parts):
                if self._stamp(part) != self._read_as.get(part):
                    entries = self._parts.pop(part)
                    self._carried[part] = {key: entries[key] for key in self._added.get(part, ()) if key in entries}

    def get(self, part: str, key: Key) -> Any:
        """The value kept under `key`, or None."""
        return self._part(part).get(key)

    def has(self, part: str, key: Key) -> bool:
        return key in self._part(part)

    def put(self, part: str, key: Key, value: Any) -> None:
        """Keep `value` (it is written by the next save)."""
        with self._lock:
            entries = self._part(part)
            if key not in entries:
                entries[key] = value
                self._added.setdefault(part, set()).add(key)
            else:
                return
        self.on_put()

    def forget(self) -> None:
        """Drop the parts read into memory that hold nothing unsaved: each is read again from its file at its
        next use (after a big write saved its data ahead, so that what it made is not kept in memory)."""
        with self._lock:
            for part in [part for part in self._parts if not self._added.get(part)]:
                del self._parts[part]
                self._read_as.pop(part, None)

    def save(self, blobs: Iterable[bytes]) -> None:
        """Write each part that got new values, keeping only the entries whose blob ids are all among `blobs`
        (those of the head: the file does not grow with the history). Errors leave the old file."""
        live = set(blobs)
        with self._lock:
            parts = [part for part, added in self._added.items() if added]
            for part in parts:
                try:  # what other processes saved meanwhile, then ours
                    entries = {**decode(self.path(part).read_bytes()), **self._part(part)}
                except OSError:
                    entries = self._part(part)
                entries = {key: value for key, value in entries.items()
                           if all(blob is None or blob in live for blob in key[2])}
                self._parts[part] = entries
                self._added[part] = set()
                try:
                    write_atomically(self.path(part), encode(entries))
                    self._read_as[part] = self._stamp(part)  # our own file: nothing to read again
                except (OSError, ValueError):  # a full disk, an unmarshallable value: computed again next time
                    pass


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` through a temp file in the same directory and a rename."""
    fd, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # as git's own files (mkstemp makes it 0600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
