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
from typing import TYPE_CHECKING, Hashable, cast

from .catalogue import Catalogue, Unit
from .document import ExportDocument
from .options import ExportOptions
from .pipeline import document_of, key_identity, keyed_entries, nests_keys

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


def _without_head_facts(options: ExportOptions) -> ExportOptions:
    """The options with those that reach the file's head only (header and banner) blanked."""
    return replace(options, project_name="", exported_at=None, exported_by="")


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
    facts = (spec.ext, spec.variant, astuple(_without_head_facts(options)), catalogue.source_locale,
             tuple(catalogue.locales))
    bodies = [cast(str, spec.head_writer(head_document))]
    for run_key, units in _runs(catalogue):
        key = ("body", run_key, facts)
        body = cast("str | None", cache.get(key))
        if body is None:
            run = replace(frame, units=units)
            body = cast(str, spec.body_writer(document_of(run, spec, options, keyed_entries(run, spec, options),
                                                          True)))
            cache.put(key, body, sys.getsizeof(body))
        bodies.append(body)
    return head_document, "".join(bodies)


def _segmentable(catalogue: Catalogue, spec: FormatSpec, options: ExportOptions) -> bool:
    """Whether every unit's block is independent of the others in this export."""
    return (bool(catalogue.segments) and spec.head_writer is not None and spec.body_writer is not None
            and options.order == "created" and not options.printf
            and not nests_keys(spec, options, options.index or spec.default_index))


def _runs(catalogue: Catalogue) -> list[tuple[Hashable, list[Unit]]]:
    """The catalogue's runs as (key, units)."""
    runs: list[tuple[Hashable, list[Unit]]] = []
    start = 0
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
    keying = _without_head_facts(replace(options, locale=None, all_locales=False, filter="", status=""))
    facts = (spec.ext, spec.variant, astuple(keying), catalogue.source_locale, tuple(catalogue.locales))
    verdict_key = ("unique", tuple(key for key, _ in catalogue.segments), facts)
    verdict = cache.get(verdict_key)
    if verdict is None:
        verdict = _identities_disjoint([_run_identities(run_key, units, catalogue, spec, keying, facts, cache)
                                        for run_key, units in _runs(catalogue)])
        cache.put(verdict_key, verdict, sys.getsizeof(verdict_key[1]))
    return bool(verdict)


def _run_identities(run_key: Hashable, units: list[Unit], catalogue: Catalogue, spec: FormatSpec,
                    keying: ExportOptions, facts: tuple, cache: RenderCache) -> frozenset[int] | None:
    """The hashed key identities of a run's units (None when two of them collide), cached."""
    key = ("identities", run_key, facts)
    found = cache.get(key)
    if found is not None:
        return None if found is False else cast("frozenset[int]", found)
    run = replace(catalogue, units=units, segments=[])
    keyed = keyed_entries(run, spec, keying).entries
    # hashes, not the keys themselves: a shared hash only sends the export down the whole path
    identities = frozenset(hash(key_identity(entry, spec.context_in_key)) for entry in keyed)
    unique = len(identities) == len(keyed)
    cache.put(key, identities if unique else False, sys.getsizeof(identities) + 36 * len(identities))
    return identities if unique else None


def _identities_disjoint(runs: list[frozenset[int] | None]) -> bool:
    """Whether no run has a collision inside and no two runs share an identity."""
    seen: set[int] = set()
    total = 0
    for identities in runs:
        if identities is None:
            return False
        seen.update(identities)
        total += len(identities)
    return total == len(seen)
