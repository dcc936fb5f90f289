"""Time and unit budgets: how many units one file may hold, and how long reading or converting it may take.

Two ways to hold a time limit, one per kind of caller:
- cooperative (`parse_budget`, `check_time`): readers report each unit through `CatalogueBuilder`, which calls
  `spend()`, and look at the clock in loops that add none; `read_file` opens the budget. Cheap, and the
  catalogue stays in the process (imports, `parse_seconds`). Every reader is linear in its input, so this
  is a backstop, not the main defence;
- enforced (`run_within`): the work runs in a child process that is killed when its time is up, wherever it
  is, reading or writing (the keyless convert, `convert_seconds`): the caller's thread is free at the limit,
  and nothing keeps burning CPU after the refusal.
Both refuse with LimitExceeded (422) naming the limit.
"""
from __future__ import annotations

import io
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from limits import LIMITS, MAX_UNITS_PER_FILE, describe

from .errors import FormatsError, LimitExceeded

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


# ----------------------------------------------------------------------------- enforced: a child process
# Children come from a fork server: a single-threaded process that imported `formats` once, so a child starts
# in milliseconds with every reader loaded, and never inherits a lock another thread of a server held (as a
# plain fork of a threaded worker would).
_CHILDREN = multiprocessing.get_context("forkserver")
Result = TypeVar("Result")
_EXIT_SECONDS = 5.0  # for a child that has answered to exit


_ALSO_PRELOADED: list[str] = []  # modules of other layers the fork server imports too (preload_in_children)


def preload_in_children(*modules: str) -> None:
    """Have the fork server import `modules` too when it starts, so that children that use them start warm (a
    big import's child imports the store and the importer: 0.16 s). Called at import time, before any child."""
    _ALSO_PRELOADED.extend(module for module in modules if module not in _ALSO_PRELOADED)


def _start_fork_server() -> None:
    """Start this process's fork server (once) with every format module imported: children start warm (a
    child that imported the PO reader itself spent 0.15 s of its budget on that)."""
    from .registry import format_modules  # here: the registry's modules import this one

    _CHILDREN.set_forkserver_preload(["formats", *format_modules(), *_ALSO_PRELOADED])
    forkserver.ensure_running()


class _ForkServerPopen(popen_forkserver.Popen):
    """The fork server's launcher, minus the parent's main module.

    multiprocessing runs the parent's entry script again in every child (`gloss` or `gunicorn`: app.cli, Flask
    and all, a second per child), which a call into `formats` never needs. This is `Popen._launch` of
    Python 3.11 with the `init_main_from_*` entries left out of the preparation data.
    """

    def _launch(self, process_obj: Any) -> None:
        prep_data = {name: value for name, value in spawn.get_preparation_data(process_obj._name).items()
                     if not name.startswith("init_main_from_")}
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        # (typeshed does not declare `_fds` nor `util.close_fds`, which the original uses the same way)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        parent_w = os.dup(w)  # the child's sentinel of its parent, as in the original
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))  # type: ignore[attr-defined]
        with open(w, "wb", closefd=True) as pipe:
            pipe.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Child(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _ForkServerPopen:
        return _ForkServerPopen(process_obj)


class _ChildContext(context.ForkServerContext):
    """The fork server's context whose processes are _Child: for long-lived pools (concurrent.futures)."""

    Process = _Child


def child_context() -> multiprocessing.context.BaseContext:
    """A multiprocessing context whose children come from this process's warm fork server, without the
    parent's main module (see _Child): for a pool of workers that a threaded server may start safely."""
    _start_fork_server()
    return _ChildContext()


def run_within(limit_name: str, what: str, function: Callable[..., Result], *args: Any) -> Result:
    """function(*args) in a child process, killed once the limit's seconds are up: LimitExceeded naming the
    limit ("{what} took longer than its time budget (limit ...)").

    `function` and `args` travel to the child by pickle (a module-level function, plain data); a FormatsError
    it raises is raised here, any other exception is a RuntimeError carrying the child's traceback. Starting
    the child is not counted: the time is the work's.
    """
    seconds = float(LIMITS[limit_name])
    _start_fork_server()
    ours, theirs = _CHILDREN.Pipe()
    child = _Child(target=_run_child, args=(theirs,), name=f"gloss-{limit_name}", daemon=True)
    child.start()
    theirs.close()
    try:
        ours.send((function, args))
        if not ours.poll(max(seconds, 0.0)):
            child.kill()  # at once, wherever it is: nothing burns on after the refusal
            raise LimitExceeded(f"{what} took longer than its time budget {describe(limit_name)}")
        outcome, value = ours.recv()
    except (EOFError, ConnectionError) as error:  # the child died (killed from outside, out of memory)
        raise RuntimeError(f"the {limit_name} child process ended without an answer: {error!r}") from None
    finally:
        _reap(child)
        ours.close()
    if outcome == "crash":
        raise RuntimeError(f"the {limit_name} child process failed:\n{value}")
    if outcome == "error":
        raise value
    return value


def _reap(child: _Child) -> None:
    """Wait for a child that answered to exit (killed if it lingers: its pid is only ours until reaped)."""
    child.join(_EXIT_SECONDS)
    if child.exitcode is None:
        child.kill()
        child.join()
    child.close()


def _run_child(connection: Connection) -> None:
    """The child's side: one call, then its result, its FormatsError, or the traceback of anything else."""
    function, args = connection.recv()
    answer: tuple[str, Any]
    try:
        answer = ("ok", function(*args))
    except FormatsError as error:  # a refusal: raised again in the parent, as if the call had been made there
        answer = ("error", error)
    except Exception:  # a fault: its traceback goes to the parent's log
        answer = ("crash", traceback.format_exc())
    connection.send(answer)
    connection.close()
