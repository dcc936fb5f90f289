"""Request-scoped access to the store, the key's project and branch, writes and the current time."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from flask import current_app, g, request

from storage.gitrepo import MAIN, Person
from storage.project import Project
from storage.snapshot import Snapshot
from storage.store import Store, utc_now
from storage.transaction import Transaction

from .errors import ApiError


def store() -> Store:
    return current_app.extensions["gloss.store"]


def data_and_keys() -> tuple[Path, Path]:
    """The data directory and the key file: what a child process needs to work on a project as a worker would
    (app.service.imports)."""
    return store().data_dir, current_app.extensions["gloss.keys"].path


def is_live_key(candidate: str) -> bool:
    """Whether a text holds a key in force: API writes refuse it as pushes do (storage.fields.refuse_keys)."""
    return current_app.extensions["gloss.keys"].is_live(candidate)


def project() -> Project:
    """The project of the authenticated key."""
    return store().project(g.key.project)


def branch() -> str:
    """The branch the request reads and writes: `?branch=NAME`, else main. Every route gets it from here (the
    snapshot it reads, the transaction it writes); a branch that does not exist is a 404 when it is used."""
    return request.args.get("branch") or MAIN


def current_snapshot() -> Snapshot:
    """The project as the request sees it: at `?ref=` (time travel, reads only), else at the latest commit of
    the request's branch."""
    ref = request.args.get("ref")
    if ref is None:
        return project().snapshot(branch())
    return snapshot_at(ref)


def snapshot_at(ref: str) -> Snapshot:
    """The project at a commit id, a tag or `HEAD~N`; 404 when the ref names no commit of the project."""
    found = project().repo.resolve(ref)
    if found is None:
        raise ApiError(404, f"Unknown ref {ref!r}: give a commit id, a tag or HEAD~N")
    return project().snapshot_at(found)


def register_time_travel(app) -> None:
    """`?ref=` reads the past; a write always applies to the latest version, so there it is a 400."""

    @app.before_request
    def _refuse_ref_on_writes():
        if "ref" in request.args and request.method not in ("GET", "HEAD") and request.path.startswith("/api/"):
            raise ApiError(400, "ref= is for reads; writes always apply to the latest version")


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
    """The key's user, the author and the committer of the commits the key's requests make."""
    return g.actor.person()


@contextmanager
def write(summary: str, action: str, trailers: list[tuple[str, str]] | None = None) -> Iterator[Transaction]:
    """One request, one commit: a transaction on the key's project, authored and committed by the key's user."""
    identity = committer_identity()
    with project().transaction(identity, summary, action, trailers, committer=identity,
                               is_live_key=is_live_key, branch=branch()) as tx:
        yield tx
