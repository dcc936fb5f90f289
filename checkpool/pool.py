"""A small pool of worker processes for the checks of many chunks at once (a locale checked cold: 100 chunks at
100k translations, 2.4-3.4 s in one process), started on first use and kept for the life of the process.

The workers are children of formats' fork server (formats.child_context): a single-threaded process, so a
threaded server's worker (`gloss serve`) never forks itself with another thread's lock held, and a child starts
with `formats` imported, without the parent's main module (Flask). They receive plain data (each chunk file's
bytes and known keys, the glossary's terms) and answer checkpool.chunk.check_chunk's results, the same records
the parent would make. A pool whose worker died is dropped (the next big check starts another), and the chunks
it did not answer are checked in the parent: the answer never depends on the pool. The workers end with the
parent: at its normal exit the executor joins them, and each also watches its parent's sentinel (a parent
killed outright leaves no worker behind).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait
from typing import Any, Callable

from formats import child_context
from limits import CHECK_POOL_WORKERS
from quality import Glossary
from storage.canonical import Chunk

from .chunk import ChunkResults, check_chunk

ChunkFile = tuple[bytes, Any]  # Chunk.file_data(): the file's bytes, its known keys (None: read from the file)
# (asset chunk, source chunk or None, target chunk, locale, source locale, glossary key, glossary terms)
Job = tuple[ChunkFile, ChunkFile | None, ChunkFile, str, str, Any, dict[str, dict[str, Any]]]

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_owner: int | None = None  # the pid that started it: a process forked since must start its own


def check_chunks(numbers: list[int], job: Callable[[int], Job],
                 here: Callable[[int], ChunkResults]) -> dict[int, ChunkResults]:
    """The results of the chunks `numbers`: sent to the pool in order (`job(number)`: what a worker needs)
    while this thread checks chunks itself from the other end (`here(number)`) until it meets a chunk the pool
    has started, then waits for the pool's. So the parent's core is not idle, and the pool's start (on first
    use) and the reading of the files are not waited for."""
    pool = _executor()
    results: dict[int, ChunkResults] = {}
    sent: dict[int, Future[ChunkResults]] = {}
    try:
        for number in numbers:
            sent[number] = pool.submit(_check_in_worker, job(number))
    except BrokenProcessPool:  # a worker died since the last check: this one is made here
        _drop(pool)
    for number in reversed(numbers):
        future = sent.get(number)
        if future is not None and not future.cancel():
            break  # the pool has it: every earlier one too (they are taken in order)
        results[number] = here(number)
    for number, future in sent.items():
        if number not in results:
            results[number] = _answer(pool, future, number, here)
    return results


def _answer(pool: ProcessPoolExecutor, future: Future[ChunkResults], number: int,
            here: Callable[[int], ChunkResults]) -> ChunkResults:
    """The pool's results for a chunk; when the pool broke (a worker died), the chunk checked here."""
    try:
        return future.result()
    except BrokenProcessPool:
        _drop(pool)
        return here(number)


def _executor() -> ProcessPoolExecutor:
    """This process's pool, started on first use (its workers start as chunks are sent)."""
    global _pool, _pool_owner
    with _lock:
        if _pool is None or _pool_owner != os.getpid():
            _pool = ProcessPoolExecutor(CHECK_POOL_WORKERS, mp_context=child_context(), initializer=_watch_parent)
            _pool_owner = os.getpid()
        return _pool


def _drop(pool: ProcessPoolExecutor) -> None:
    """Forget a broken pool (its surviving workers are ended); the next check starts a new one."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def stop() -> None:
    """End this process's pool, if it has one (its workers exit once idle); the next parallel check starts
    another."""
    with _lock:
        pool = _pool if _pool_owner == os.getpid() else None
    if pool is not None:
        _drop(pool)


def worker_pids() -> list[int]:
    """The process ids of this process's pool workers (none before the first parallel check)."""
    with _lock:
        pool = _pool if _pool_owner == os.getpid() else None
    # (ProcessPoolExecutor keeps its processes by pid in _processes, and offers no public way to list them)
    return list(getattr(pool, "_processes", None) or {})


# ----------------------------------------------------------------------------- in a worker
_glossary: tuple[Any, Glossary] | None = None  # the last glossary compiled, by its key (a blob id)


def _check_in_worker(job: Job) -> ChunkResults:
    """check_chunk over the files a job carries."""
    assets, sources, targets, locale, source_locale, glossary_key, terms = job
    return check_chunk(_chunk(assets), _chunk(sources) if sources is not None else None, _chunk(targets),
                       locale, source_locale, _compiled(glossary_key, terms))


def _chunk(data: ChunkFile) -> Chunk[Any]:
    raw, keys = data
    return Chunk.lazy(lambda: raw, keys)


def _compiled(key: Any, terms: dict[str, dict[str, Any]]) -> Glossary:
    """The glossary of `terms`, compiled once per key (every chunk of a check has the same)."""
    global _glossary
    if _glossary is None or _glossary[0] != key:
        _glossary = key, Glossary(terms)
    return _glossary[1]


def _watch_parent() -> None:
    """End this worker when its parent ends, however it ends (a thread waiting for the parent's sentinel)."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        wait([sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="gloss-check-parent", daemon=True).start()
