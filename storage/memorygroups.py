"""Memory groups: which projects share their translation memory (storage.memory), opted into per project.

A project joins a group by name (`gloss project memory P GROUP`, an operator's decision: a project's key cannot
join, or it could read the memory of every project of the group); it reads the memory of the other members
and they read its. The group of each project is server-wide state beside the repositories,
`DATA/memory-groups.json`, since it relates projects to each other and a query needs the members of a group
without opening every repository.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from filelock import FileLock

from limits import MAX_MEMORY_GROUP_CHARS, describe

from .errors import Invalid
from .git.durable import replace_durably
from .watched import WatchedJson

FILE = "memory-groups.json"  # in the data directory
GROUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NO_GROUP = "none"  # what `gloss project memory P none` says to leave the group


def check_group(name: str) -> str:
    """A memory group's name: letters, digits, `.`, `_`, `-` (not first), at most MAX_MEMORY_GROUP_CHARS."""
    if not isinstance(name, str) or not GROUP_NAME.match(name) or name == NO_GROUP:
        raise Invalid("A memory group is named with letters, digits, '.', '_' and '-' (and is not 'none')")
    if len(name) > MAX_MEMORY_GROUP_CHARS:
        raise Invalid(f"A memory group name is longer than {MAX_MEMORY_GROUP_CHARS} characters "
                      f"{describe('max_memory_group_chars')}")
    return name


class MemoryGroups:
    """Which projects share their memory: DATA/memory-groups.json, `{"groups": {project: group}}`, re-read
    only when it changed on disk (another process may have written it), replaced whole under a file lock."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = FileLock(str(self.path) + ".lock", thread_local=False)
        self._file: WatchedJson[dict[str, str]] = WatchedJson(self.path, lambda data: data.get("groups", {}), {})

    def all(self) -> dict[str, str]:
        """project id -> its group."""
        return self._file.read()

    def group(self, project_id: str) -> str | None:
        return self.all().get(project_id)

    def members(self, project_id: str) -> list[str]:
        """The projects whose memory `project_id` reads: itself, then the others of its group (sorted)."""
        groups = self.all()
        group = groups.get(project_id)
        others = sorted(p for p, g in groups.items() if g == group and p != project_id) if group else []
        return [project_id, *others]

    def set(self, project_id: str, group: str | None) -> None:
        """Join `group` (None: leave any group)."""
        if group is not None:
            check_group(group)
        with self._lock:
            groups = dict(self.all())
            if group is None:
                groups.pop(project_id, None)
            else:
                groups[project_id] = group
            data = json.dumps({"groups": dict(sorted(groups.items()))}, indent=2) + "\n"
            replace_durably(self.path, data.encode("utf-8"))  # an operator's decision, not derived data
