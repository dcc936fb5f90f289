"""A JSON file that other processes rewrite (the key file, the memory groups): parsed again only when it changed
on disk, told by its stamp (modification time, size, inode: a replacement by rename is a new inode)."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")
Stamp = tuple[int, int, int]


def file_stamp(path: Path) -> Stamp | None:
    """What changes whenever the file does; None when there is no file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class WatchedJson(Generic[T]):
    """`read()` is the file parsed by `parse` (`empty` when there is no file), cached until the file changes."""

    def __init__(self, path: Path, parse: Callable[[Any], T], empty: T):
        self.path = Path(path)
        self._parse = parse
        self._empty = empty
        self._cache: tuple[Stamp, T] | None = None
        self._lock = threading.Lock()

    def read(self) -> T:
        stamp = file_stamp(self.path)
        if stamp is None:
            return self._empty
        cached = self._cache
        if cached is not None and cached[0] == stamp:
            return cached[1]
        with self._lock:
            try:
                value = self._parse(json.loads(self.path.read_text("utf-8")))
            except FileNotFoundError:  # removed since its stamp was taken
                return self._empty
            self._cache = (stamp, value)
        return value
