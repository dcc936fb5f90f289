"""The public operations: export a catalogue, read a file, convert between formats."""
from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

from limits import COLLECTOR_OFF_SECONDS, LIMITS, describe
from vocabulary import first_unencodable, unencodable_reason

from .budget import parse_budget
from .catalogue import Catalogue
from .errors import LimitExceeded, NothingExtracted, ParseError
from .options import ExportedFile, ExportOptions, ReadOptions
from .pipeline import finish, prepare
from .registry import FormatSpec, lookup, spec_for_all_locales

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from .segments import RenderCache

_TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/sql")


def export_file(
    catalogue: Catalogue, ext: str, variant: str = "", options: ExportOptions | None = None,
    cache: RenderCache | None = None,
) -> ExportedFile:
    """Render a catalogue as a file of (ext, variant); all_locales on plain json means json multi.

    With a cache, a catalogue that comes in segments reuses the rendering of unchanged runs of units where
    the format allows (formats/segments.py); the file is the same either way.
    """
    options = options or ExportOptions()
    spec, options = _export_spec(catalogue, ext, variant, options)
    with collector_paused():
        segmented = None
        if cache is not None:
            from .segments import render_segmented  # imported on first use: a conversion never caches

            segmented = render_segmented(catalogue, spec, options, cache)
        rendered: str | bytes
        if segmented is not None:
            document, rendered = segmented
        else:
            document = prepare(catalogue, spec, options)
            assert spec.writer is not None  # _export_spec only returns writable formats
            rendered = spec.writer(document)
        data = finish(document, rendered)
    return ExportedFile(data=data, content_type=_content_type(spec, document.charset_label))


def read_file(ext: str, variant: str, data: bytes, options: ReadOptions | None = None,
              budget: str = "parse_seconds") -> Catalogue:
    """Parse a file of (ext, variant) into a catalogue; ParseError when it is broken, LimitExceeded when it
    goes beyond the unit limit, the nesting limit or the time budget named by `budget` (see limits.py)."""
    spec = lookup(ext, variant, reading=True)
    assert spec.reader is not None  # lookup(reading=True) only returns readable formats
    with collector_paused(), parse_budget(float(LIMITS[budget]), budget):
        try:
            catalogue = spec.reader(data, options or ReadOptions())
        except RecursionError:
            raise LimitExceeded(f"the file is nested too deeply {describe('max_nesting_depth')}") from None
        except UnicodeEncodeError as error:  # a reader measured or hashed such a text on its way (asset IDs)
            if not isinstance(error.object, str) or first_unencodable([error.object]) is None:
                raise
            raise _unencodable(error.object) from None
    unencodable = first_unencodable(catalogue.texts())
    if unencodable is not None:
        raise _unencodable(unencodable)
    return catalogue


def _unencodable(text: str) -> ParseError:
    """A text of the file UTF-8 cannot encode: its escapes spell a lone surrogate (JSON `"\\ud800"`,
    `.strings` `\\UD800`, PHP `\\u{d800}`...). Refused for every reader at once: no file or repository
    could keep it."""
    return ParseError(f"the file holds a text that cannot be kept: {unencodable_reason(text)}")


def restore_keys(catalogue: Catalogue, ext: str, variant: str, known_ids: Iterable[str]) -> None:
    """Give back their IDs to units whose key is the format's rewriting (key filter) of a known ID: a file the
    format wrote imports into the assets it came from (`TEST_EXAMPLES` -> `examples` for PHP constants,
    `menu_open` -> `menu.open` for Chrome). A key that is an ID itself, or the rewriting of several, stays."""
    key_filter = lookup(ext, variant).key_filter
    if key_filter is None:
        return
    known: set[str] | None = None
    rewritten: dict[str, str | None] = {}
    for unit in catalogue.units:
        if known is None:  # built on the first unit: a file of nothing costs nothing
            known = set(known_ids)
            for unit_id in known:
                key = key_filter(unit_id)
                rewritten[key] = None if key in rewritten else unit_id  # None: the rewriting of several
        if unit.id not in known and rewritten.get(unit.id):
            unit.id = rewritten[unit.id]  # type: ignore[assignment]


_GC_LOCK = threading.Lock()
# Collect the youngest generation only after this many new objects instead of 700 while a file is built or
# parsed: readers and writers make tens of thousands of small acyclic objects, and the default threshold
# would scan them over and over (a third of a large PO import).
_BULK_THRESHOLD = 200_000


class _SharedSetting:
    """A process-wide collector setting that overlapping threads share: the first to enter applies it (saving
    what was there), the last to leave restores it."""

    def __init__(self, apply: Callable[[], Any], restore: Callable[[Any], None]):
        self._apply, self._restore = apply, restore
        self._users, self._saved = 0, None

    @property
    def in_use(self) -> bool:
        return self._users > 0

    @contextmanager
    def held(self) -> Iterator[None]:
        with _GC_LOCK:
            if self._users == 0:
                self._saved = self._apply()
            self._users += 1
        try:
            yield
        finally:
            with _GC_LOCK:
                self._users -= 1
                if self._users == 0:
                    self._restore(self._saved)


def _raise_threshold() -> tuple[int, int, int]:
    saved = gc.get_threshold()
    gc.set_threshold(_BULK_THRESHOLD, saved[1], saved[2])
    return saved


_PAUSED = _SharedSetting(_raise_threshold, lambda saved: gc.set_threshold(*saved))


def collector_paused() -> AbstractContextManager[None]:
    """Make Python's cyclic garbage collector run rarely during a bulk read or write.

    Raising the gen-0 threshold beats disabling the collector for a read or an export: disabling defers one
    big collection to the moment it is enabled again, which the caller's own thread then pays.
    """
    return _PAUSED.held()


def _disable_for(seconds: float) -> tuple[bool, threading.Timer]:
    was_enabled = gc.isenabled()
    gc.disable()
    # the bound: a job that outlives it (a stuck client's upload, a huge file) gets the collector back, so
    # cyclic garbage made meanwhile by the other threads cannot pile up without end
    timer = threading.Timer(seconds, _enable_if_still_off)
    timer.daemon = True
    timer.start()
    return was_enabled, timer


def _enable_if_still_off() -> None:
    with _GC_LOCK:
        if _OFF.in_use:
            gc.enable()


def _enable_again(saved: tuple[bool, threading.Timer]) -> None:
    was_enabled, timer = saved
    timer.cancel()
    if was_enabled:
        gc.enable()


_OFF = _SharedSetting(lambda: _disable_for(COLLECTOR_OFF_SECONDS), _enable_again)


def collector_off() -> AbstractContextManager[None]:
    """Keep Python's cyclic collector from running at all during a big import, for COLLECTOR_OFF_SECONDS at most.

    With the threshold merely raised (collector_paused), a 100k-unit import still ran 40 passes, one over the
    parsed catalogue's survivors of 323 ms: every thread of the worker, a POST to another project included,
    waits for the GIL that long. The import's objects are acyclic: reference counting frees them when it ends,
    so the pass that follows finds only what is still alive.
    """
    return _OFF.held()


def convert(
    from_ext: str,
    to_ext: str,
    variant: str,
    data: bytes,
    read_options: ReadOptions | None = None,
    export_options: ExportOptions | None = None,
    from_variant: str = "",
    budget: str = "parse_seconds",
) -> ExportedFile:
    """Read a file then write it in another format (variant applies to the target).

    The target locale defaults to the file's own (its first non-source locale, else the source).
    NothingExtracted when the source parsed but held no units.
    """
    # One collector pause for both halves, left only once the catalogue is gone: the collector then has no
    # reason to scan the tens of thousands of objects the conversion made (as it would if each half restored
    # the threshold while they were alive).
    with collector_paused():
        return _convert(from_ext, to_ext, variant, data, read_options, export_options, from_variant, budget)


def _convert(from_ext: str, to_ext: str, variant: str, data: bytes, read_options: ReadOptions | None,
             export_options: ExportOptions | None, from_variant: str, budget: str) -> ExportedFile:
    """convert(), whose catalogue is freed when it returns."""
    read_options = read_options or ReadOptions()
    export_options = export_options or ExportOptions()
    lookup(to_ext, variant, writing=True)  # fail on the target before parsing anything
    source_spec = lookup(from_ext, from_variant, reading=True)
    catalogue = read_file(from_ext, from_variant, data, read_options, budget)
    if not catalogue.units:
        raise NothingExtracted(f"no messages could be extracted from the {from_ext} source")
    if (read_options.index or source_spec.default_index) == "text" and export_options.index is None:
        # keys made from sentences ("Open the file. Then save.") are not paths: never nest them on dots
        export_options = replace(export_options, no_expand=True)
    if export_options.locale is None and not export_options.template and not export_options.all_locales:
        targets = catalogue.target_locales
        export_options = replace(export_options, locale=targets[0] if targets else catalogue.source_locale)
    return export_file(catalogue, to_ext, variant, export_options)


def _export_spec(catalogue: Catalogue, ext: str, variant: str, options: ExportOptions
                 ) -> tuple[FormatSpec, ExportOptions]:
    """The spec and options to export with: an all-locales export goes to the spec that can hold them."""
    spec = lookup(ext, variant, writing=True)
    if not options.all_locales:
        return spec, options
    spec, every_locale = spec_for_all_locales(spec, len(catalogue.locales))
    if every_locale:
        return spec, options
    return spec, replace(options, all_locales=False, locale=catalogue.locales[0])


def _content_type(spec: FormatSpec, charset: str) -> str:
    """The spec's content type, with the output charset for text formats."""
    if "charset=" in spec.content_type:
        return spec.content_type.split(";")[0] + f"; charset={charset}"
    if spec.content_type.startswith(_TEXT_TYPES):
        return f"{spec.content_type}; charset={charset}"
    return spec.content_type
