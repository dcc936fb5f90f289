"""Request-scoped access to the store, the key's project, writes and the current time."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from flask import current_app, g, request

from storage.gitrepo import Person
from storage.project import Project
from storage.snapshot import Snapshot
from storage.store import Store, utc_now
from storage.transaction import Transaction


def store() -> Store:
    return current_app.extensions["gloss.store"]


def project() -> Project:
    """The project of the authenticated key."""
    return store().project(g.key.project)


def snapshot() -> Snapshot:
    return project().snapshot()


def now() -> str:
    return utc_now()


def base_url() -> str:
    return request.host_url.rstrip("/")


def path_value(value: str, exists) -> str | None:
    """What a path segment names: itself, or (for IDs ending in `.json`, which the optional `.json` suffix
    swallows) itself plus `.json`; None when neither exists."""
    for candidate in (value, value + ".json"):
        if exists(candidate):
            return candidate
    return None


def committer_identity() -> Person:
    """The key's user as the commit author."""
    actor = g.actor
    return Person(actor.name, actor.email or f"user-{actor.id}@users.gloss")


@contextmanager
def write(summary: str, action: str, trailers: list[tuple[str, str]] | None = None) -> Iterator[Transaction]:
    """One request, one commit: a transaction on the key's project, authored by the key's user."""
    with project().transaction(committer_identity(), summary, action, trailers) as tx:
        yield tx
