"""Fixtures in the flaskr style: an app on a temporary data directory, its client, and a seeded project."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pytest

from app import create_app
from app.seed import seed_demo
from storage.keys import KeyStore
from storage.store import Store


@dataclass
class Keys:
    full: str
    readonly: str
    export: str


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def app(data_dir: Path):
    return create_app(data_dir, testing=True)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def store(app) -> Store:
    return app.extensions["gloss.store"]


@pytest.fixture
def keystore(app) -> KeyStore:
    return app.extensions["gloss.keys"]


@pytest.fixture
def demo(store: Store, keystore: KeyStore):
    """The demo project seeded from sample_repo/, with one key of each access type."""
    project, full = seed_demo(store, keystore)
    readonly, _ = keystore.create(project.id, "readonly", "Reader", "reader@example.com")
    export, _ = keystore.create(project.id, "export", "Pipeline", "ci@example.com")
    return project, Keys(full, readonly, export)


def auth(key: str, mode: str = "loco") -> dict:
    """Request kwargs that present `key` in one of the four accepted ways."""
    if mode == "service":
        return {"headers": {"Authorization": f"Service {key}"}}
    if mode == "loco":
        return {"headers": {"Authorization": f"Loco {key}"}}
    if mode == "basic":
        return {"headers": {"Authorization": "Basic " + base64.b64encode(f"{key}:".encode()).decode()}}
    if mode == "query":
        return {"query_string": {"key": key}}
    raise ValueError(mode)


AUTH_MODES = ("service", "loco", "basic", "query")


@pytest.fixture
def api(client, demo):
    """An API client with the demo project's full-access key."""
    from tests.api import Api

    return Api(client, demo[1].full)


@pytest.fixture
def readonly_api(client, demo):
    from tests.api import Api

    return Api(client, demo[1].readonly)


@pytest.fixture
def blank(client, store: Store, keystore: KeyStore):
    """A full-access API client on a new project with only its English source locale (`.project` is it)."""
    from tests.api import Api

    project = store.create_project("Blank", "en", "English")
    key, _ = keystore.create(project.id, "full", "Tester", "")
    api = Api(client, key)
    api.project = project
    return api
