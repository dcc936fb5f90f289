"""The per-file parse budget: how many units one file may hold and how long reading it may take.

Readers report each unit through `CatalogueBuilder`, which calls `spend()`; `read_file` opens the budget.
Every reader is linear in its input, so the time budget is a backstop, not the main defence.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from limits import MAX_UNITS_PER_FILE, describe

from .errors import LimitExceeded

_CHECK_EVERY = 1024  # units between two clock readings
_state = threading.local()


@contextmanager
def parse_budget(seconds: float, limit_name: str = "parse_seconds") -> Iterator[None]:
    """Allow the reads inside the block `seconds` of wall-clock time (nested budgets keep the outer one)."""
    if getattr(_state, "deadline", None) is not None:
        yield
        return
    _state.deadline, _state.limit_name = time.monotonic() + seconds, limit_name
    try:
        yield
    finally:
        _state.deadline = None


def check_time() -> None:
    """LimitExceeded once the open budget's time is up (for loops that do not add units, e.g. comment lines)."""
    deadline = getattr(_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise LimitExceeded(f"reading the file took longer than its time budget {describe(_state.limit_name)}")


def affordable(units: int) -> bool:
    """Whether a file may hold this many units (readers adding units in bulk ask before, then `check_time`)."""
    return units <= MAX_UNITS_PER_FILE


def spend(units: int) -> None:
    """Called with the running unit count: LimitExceeded past the unit limit or the time budget."""
    if units > MAX_UNITS_PER_FILE:
        raise LimitExceeded(f"the file holds more than {MAX_UNITS_PER_FILE} units {describe('max_units_per_file')}")
    if units % _CHECK_EVERY == 0:
        check_time()
