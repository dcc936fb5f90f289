"""Derived data that follows a chunk from one version to the next: the explicit registry of what a chunk's
`derived` values are and how a new version gets its own.

A chunk (storage.canonical.Chunk) keeps data computed from it in `derived`, by name. When a write makes a new
version of a chunk whose parent has a registered value, the new version gets its own at once, from the parent's
and the changed entries alone, so a chain of versions made before anyone reads them (a commit group) never needs
a full recount. Register once, at import, with `register`:

    register("progress", update=_updated_counts, persisted=1)   # storage.progress: counts, kept per blob id
    register("asset-list")                                       # app/records.py: handed on unchanged

`update(parent's value, parent, child, changed keys, values)` -> child's value; the last argument holds the
changed entries' new values when the chunk was made from them (None: read the child). Without `update`, the
value is handed on unchanged and its owner checks it against the chunk it finds it on (a cache that knows which
chunks it was built from). With `persisted` (a version: raise it when the function changes, older values are
then ignored), the value is a function of the chunk's bytes alone, written by `marshal`, and storage.derived
keeps it under the chunk's blob id: a snapshot loaded cold gets it without reading the chunk.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple

if TYPE_CHECKING:
    from .canonical import Chunk

Update = Callable[[Any, "Chunk", "Chunk", tuple[str, ...], "Mapping[str, Any] | None"], Any]


class Derivation(NamedTuple):
    name: str
    update: Update | None  # None: the value is handed on unchanged
    persisted: int | None  # the version under which storage.derived keeps it; None: kept in memory only


_REGISTERED: dict[str, Derivation] = {}


def register(name: str, update: Update | None = None, persisted: int | None = None) -> Derivation:
    """Make `name` a derivation that follows each chunk to its next versions (see the module's docstring)."""
    derivation = _REGISTERED[name] = Derivation(name, update, persisted)
    return derivation


def registered() -> Iterable[Derivation]:
    return _REGISTERED.values()


def persisted() -> list[Derivation]:
    """The derivations storage.derived keeps by blob id."""
    return [derivation for derivation in _REGISTERED.values() if derivation.persisted is not None]
