"""Translation memory: suggestions for a translation, from the project's memory and its memory group's
(storage.memory, storage.memorygroups); the API and the translator's grid both call `suggestions`."""
from __future__ import annotations

from typing import Any, Iterator

from flask import g

import formats
from limits import DEFAULT_SUGGESTIONS
from storage.errors import NotFound
from storage.gitrepo import MAIN
from storage.memory import best_matches, group_memories, import_units, suggestion
from storage.project import Project
from storage.snapshot import Snapshot
from storage.store import Store
from storage.trailers import Action, Trailer

from ..context import current_snapshot, write


def suggestions(store: Store, project_id: str, asset_id: str, locale: str,
                limit: int = DEFAULT_SUGGESTIONS, branch: str = MAIN) -> list[dict[str, Any]]:
    """Up to `limit` suggestions for the translation of `asset_id` into `locale`, best first: each
    {"text", "score" (0-100, 100 = the same source text), "source", "origin", "project", "asset", "author",
    "commit"}, and "file" (the TMX file of an imported unit, whose "asset" is None). `branch`: the project's
    branch whose translations are read (the other projects of its group give their main's). None for the source locale, nor for an asset without a source text; never the asset itself."""
    project = store.project(project_id)
    snapshot = project.snapshot(branch)
    entry = snapshot.peek_translation(asset_id, snapshot.source_locale)
    if entry is None or not entry.get("text") or locale == snapshot.source_locale:
        return []
    memories = group_memories(_members(store, project_id, project, snapshot), snapshot.source_locale, locale)
    # building a memory or its word index makes hundreds of thousands of lists: with the collector at its usual
    # pace, its full collections over a worker's big heap were 3/4 of a cold first answer (bench_workbench)
    with formats.collector_paused():
        matches = best_matches(entry["text"], memories, limit, (project_id, asset_id))
    return [suggestion(match) for match in matches]


def _members(store: Store, project_id: str, project: Project, snapshot: Snapshot
             ) -> Iterator[tuple[str, Project, Snapshot]]:
    """The project at `snapshot`, then the other projects of its memory group that still exist, at their main."""
    for member in store.memory_groups.members(project_id):
        if member == project_id:
            yield member, project, snapshot
            continue
        try:
            other = store.project(member)
            yield member, other, other.snapshot()
        except NotFound:  # deleted since it joined
            continue


def import_tmx(data: bytes, file: str) -> dict[str, int]:
    """Add the units of a TMX file to the key's project's translation memory (memory.json), in one commit (none
    when every unit is there already): {"units": units read, "added": units new to the memory}."""
    source_locale = current_snapshot().source_locale
    catalogue = formats.read_file("tmx", "", data, formats.ReadOptions(source_locale=source_locale))
    units = [{code: translation.text or "" for code, translation in unit.translations.items()}
             for unit in catalogue.units]
    with write(f"Import translation memory from {file}", Action.IMPORT_MEMORY, [(Trailer.FORMAT, "tmx")]) as tx:
        added = import_units(tx, units, file, g.actor)
    return {"units": len(units), "added": added}
