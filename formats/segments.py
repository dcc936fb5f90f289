"""Exports rendered run by run, reusing the rendering of runs of units that have not changed.

A catalogue may come with `segments`: consecutive runs of units, each under a key that stands for the
run's content (the caller's promise: the same key always means the same units). A format whose file is a
head followed by one independent block per entry (`FormatSpec.head_writer` and `body_writer`) then has a
body that is the concatenation of its runs' bodies, provided that the export treats every unit on its own:
- the units keep catalogue order (order=created), keys are not nested, placeholders are not converted;
- no two units of the whole catalogue share a key identity, so collision handling changes nothing.
Each run's body is rendered by the same pipeline and writer as a whole export, from a catalogue holding
that run alone, and kept in a bounded cache under the run's key and every option that can change it.
Exports outside these conditions are rendered whole. Either way the file is byte for byte the same.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from dataclasses import astuple, replace
from typing import TYPE_CHECKING, Hashable

from .catalogue import Catalogue
from .options import ExportOptions
from .pipeline import ExportDocument, document_of, key_identity, keyed_entries, nests_keys

if TYPE_CHECKING:
    from .registry import FormatSpec


class RenderCache:
    """A thread-safe least-recently-used store of rendered runs, bounded by the bytes of what it holds."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: object, size: int) -> None:
        """Keep a value of `size` bytes, dropping the least recently used ones beyond the bound."""
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    @property
    def size(self) -> int:
        """The bytes held now."""
        return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


# ExportOptions fields that reach the file's head only (header and banner), never an entry's block
_HEAD_ONLY = {"project_name": "", "exported_at": None, "exported_by": ""}


def render_segmented(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions,
                     cache: RenderCache) -> tuple[ExportDocument, str] | None:
    """The document (its head's facts) and the text of the file, or None when it must be rendered whole."""
    if not _segmentable(catalogue, spec, options):
        return None
    assert spec.head_writer is not None and spec.body_writer is not None
    # the head first: it validates the options before any run is rendered, as a whole export does
    frame = replace(catalogue, units=[], segments=[])
    head_document = document_of(frame, spec, options, keyed_entries(frame, spec, options))
    if not _keys_unique(catalogue, spec, options, cache):
        return None
    facts = (spec.ext, spec.variant, astuple(replace(options, **_HEAD_ONLY)), catalogue.source_locale,
             tuple(catalogue.locales))
    bodies = [spec.head_writer(head_document)]
    for run_key, units in _runs(catalogue):
        key = ("body", run_key, facts)
        body = cache.get(key)
        if body is None:
            run = replace(frame, units=units)
            body = spec.body_writer(document_of(run, spec, options, keyed_entries(run, spec, options), True))
            cache.put(key, body, sys.getsizeof(body))
        bodies.append(body)
    return head_document, "".join(bodies)  # type: ignore[arg-type]


def _segmentable(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions) -> bool:
    """Whether every unit's block is independent of the others in this export."""
    return (bool(catalogue.segments) and spec.head_writer is not None and spec.body_writer is not None
            and options.order == "created" and not options.printf
            and not nests_keys(spec, options, options.index or spec.default_index))


def _runs(catalogue: Catalogue) -> list[tuple[Hashable, list]]:
    """The catalogue's runs as (key, units)."""
    runs, start = [], 0
    for key, count in catalogue.segments:
        runs.append((key, catalogue.units[start:start + count]))
        start += count
    return runs


def _keys_unique(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions, cache: RenderCache) -> bool:
    """Whether no two units of the catalogue (selected or not) share a key identity in this export.

    Keys depend on the index, the source locale, the fallback and the template switch, never on the
    target locale or the selection, so one answer serves every locale of an archive.
    """
    if sum(count for _, count in catalogue.segments) != len(catalogue.units):
        return False  # runs that do not cover the units exactly: trust nothing
    keying = replace(options, locale=None, all_locales=False, filter="", status="", **_HEAD_ONLY)
    facts = (spec.ext, spec.variant, astuple(keying), catalogue.source_locale, tuple(catalogue.locales))
    verdict_key = ("unique", tuple(key for key, _ in catalogue.segments), facts)
    verdict = cache.get(verdict_key)
    if verdict is None:
        seen: set[int] = set()
        total = 0
        for run_key, units in _runs(catalogue):
            key = ("identities", run_key, facts)
            identities = cache.get(key)
            if identities is None:
                run = replace(catalogue, units=units, segments=[])
                keyed = keyed_entries(run, spec, keying).entries
                # hashes, not the keys themselves: a shared hash only sends the export down the whole path
                identities = frozenset(hash(key_identity(entry, spec.context_in_key)) for entry in keyed)
                if len(identities) != len(keyed):
                    identities = frozenset()  # a collision inside the run
                    total = -1
                cache.put(key, identities, sys.getsizeof(identities) + 36 * len(identities))
            if total < 0 or not identities and units:
                verdict = False
                break
            seen.update(identities)  # type: ignore[arg-type]
            total += len(identities)  # type: ignore[arg-type]
        else:
            verdict = total == len(seen)
        cache.put(verdict_key, verdict, sys.getsizeof(verdict_key[1]))
    return bool(verdict)
