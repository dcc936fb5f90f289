"""Branch writes, shared by the API and the web pages: create, delete, merge (storage.branches does the work)."""
from __future__ import annotations

from typing import Any

from flask import g

from storage import branches
from storage.replay import Merge

from ..context import project


def create_branch(name: str, source: str) -> dict[str, Any]:
    return branches.create_branch(project(), name, source)


def delete_branch(name: str) -> None:
    branches.delete_branch(project(), name)


def merge_branch(name: str, into: str, merge: Merge) -> dict[str, Any]:
    """Merge `name` into `into` as the key's user (the merge commit's author and committer); translations keep
    the authors they had on the branch."""
    return branches.merge_branch(project(), name, into, g.actor, merge)
