"""Request-scoped access to the store, the key's project and the current time."""
from __future__ import annotations

from flask import current_app, g, request

from storage.project import Project
from storage.store import Store, utc_now


def store() -> Store:
    return current_app.extensions["gloss.store"]


def project() -> Project:
    """The project of the authenticated key."""
    return store().project(g.key.project)


def now() -> str:
    return utc_now()


def base_url() -> str:
    return request.host_url.rstrip("/")
