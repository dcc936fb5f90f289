"""Every readable format of the registry reads hostile bytes in linear time (Hostile input II §6): at most 10 ms
per KB, and no faster growth than the size's, on garbage and on valid files its own writer made from hostile
catalogues (tests/reliability/harness.py builds both for every registered reader; the reliability suite sends the
malformed ones to a real server)."""
from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from typing import Iterator

from formats import FormatsError, ReadOptions, read_file
from tests.reliability.harness import READABLE, hostile_corpus

SIZE = 256 * 1024
MS_PER_KB = 10.0
# A linear reader takes about as long per KB on a file four times larger; a quadratic one four times as long.
# Growth is judged only where a read takes long enough to measure (>= 1 ms per KB on the larger file).
GROWTH = 2.5
MEASURABLE_MS_PER_KB = 1.0


def ms_per_kb(ext: str, variant: str, data: bytes, runs: int = 1) -> float:
    """The best of `runs` reads, in CPU ms per KB of this thread (a refusal is an answer too, and must be as
    quick). CPU time, not wall time: the suite shares two cores, and a read preempted for other processes is
    no slower a reader."""
    best = float("inf")
    for _ in range(runs):
        # as timeit does: a collection of the test's own heap (the whole corpus is in memory) is no cost of the read
        # (cheap under frozen_heap: only what was made since is scanned)
        gc.collect()
        gc.disable()
        started = time.thread_time()
        try:
            read_file(ext, variant, data, ReadOptions(locale="fr"))
        except FormatsError:
            pass
        finally:
            elapsed = time.thread_time() - started
            gc.enable()
        best = min(best, elapsed)
    return best * 1000 / max(len(data) / 1024, 1)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move every live object out of the collector's reach for the block: in the full suite the heap holds
    every earlier test's objects, and a whole collection before each of the ~2,000 reads took minutes."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_the_hostile_corpus_covers_every_readable_format_of_the_registry() -> None:
    from formats.registry import FORMATS

    every = {(spec.ext, spec.variant) for spec in FORMATS if spec.readable}
    assert set(READABLE) == every and len(every) >= 30
    assert {(ext, variant) for _, ext, variant, _ in hostile_corpus(1024)} == every


def test_every_reader_reads_every_hostile_file_in_linear_time() -> None:
    with frozen_heap():
        check_every_reader_is_linear()


def check_every_reader_is_linear() -> None:
    small = {label: data for label, _, _, data in hostile_corpus(SIZE // 4)}
    slow = []
    for label, ext, variant, data in hostile_corpus(SIZE):
        large = ms_per_kb(ext, variant, data)
        if large > MS_PER_KB:
            slow.append((label, f"{large:.2f} ms/KB"))
        elif large >= MEASURABLE_MS_PER_KB and label in small:
            # best of five on both sizes: a few-KB read takes milliseconds, and one preempted run (the suite
            # shares two cores with other work) would otherwise look like quadratic growth
            smaller = ms_per_kb(ext, variant, small[label], runs=5)
            if large > GROWTH * smaller and ms_per_kb(ext, variant, data, runs=5) > GROWTH * smaller:
                slow.append((label, f"{smaller:.2f} -> {large:.2f} ms/KB on a file 4x larger"))
    assert slow == []
