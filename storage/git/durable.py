"""Making files durable: fsync of files and directories, one concurrent round of fsync for many files, and the
quiet removals a failed write uses to leave nothing behind. Every flush of the Git store goes through this
module (one place, so tests and benchmarks can observe or replace every call)."""
from __future__ import annotations

import errno
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from functools import partial
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

# Errors that say a path itself can never be written here (rather than that the disk is full or read-only).
UNWRITABLE_PATH = (errno.ENAMETOOLONG, errno.EINVAL, errno.EISDIR, errno.ENOTDIR, errno.EILSEQ)


def unlink_quietly(path: Path) -> None:
    """Delete a file if it is there; a name the file system cannot even hold counts as absent."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        if error.errno not in UNWRITABLE_PATH:
            raise


def close_quietly(closable) -> None:
    try:
        closable.close()
    except Exception:  # closing at exit or at collection must never fail either
        pass


# Spare files: a durable step's temp files (ref lock, pack, index) made empty ahead, after the previous step and
# outside the project's lock, then moved to their temp names by a rename when used. Creating a file (a new
# inode) cost 0.1-0.8 ms on the reference machine's ext4 under load, a rename of one some 20 us: the creations
# leave the critical section. One spare per process and role (durable steps of a repository take turns under
# its lock): `.git/gloss-spare-<pid>-<role>.tmp`, swept as any `gloss-*.tmp`. A spare is always empty.
def _spare(git_dir: Path, role: str) -> Path:
    return git_dir / f"gloss-spare-{os.getpid()}-{role}.tmp"


def make_spare(git_dir: Path, role: str, mode: int = 0o644) -> None:
    """Create this process's empty spare for `role` unless it is there. Never raises: without a spare, the
    temp file is created when it is needed, as before."""
    try:
        os.close(os.open(_spare(git_dir, role), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
    except OSError:
        pass


def take_spare(git_dir: Path, role: str, temp: Path) -> None:
    """Give `temp` (a temp file about to be written whole) this process's spare for `role`; nothing when there
    is none (taken, swept, or never made)."""
    try:
        os.rename(_spare(git_dir, role), temp)
    except OSError:
        pass


def read_small(path: Path | str) -> bytes:
    """The whole content of a small file (a ref, a marker) by raw system calls: `open()` costs four more
    (fstat, ioctl, lseek) and a buffer, and the commit path reads such files several times per write."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def rewrite_small(path: Path | str, data: bytes) -> None:
    """Overwrite a small file in place (created when missing; no new inode per write), not flushed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def replace_durably(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace the file `path` with `data` atomically and durably: a temp file beside it, fsync, rename, fsync of
    the directory. A crash leaves the old file or the new one, whole (and at worst a stray temp file)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fsync(fd)
    except BaseException:
        os.close(fd)
        unlink_quietly(temp)
        raise
    os.close(fd)
    os.replace(temp, path)
    fsync_directory(path.parent)


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


def flush_and_close(handles: list[BinaryIO]) -> None:
    """Flush `handles` in one round, then close them all (even when the flush failed) and empty the list."""
    try:
        flush_all_to_disk(handles)
    finally:  # quietly: after a failed flush, closing retries it and fails the same way
        for handle in handles:
            close_quietly(handle)
        handles.clear()


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable (POSIX needs the directory itself flushed)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
