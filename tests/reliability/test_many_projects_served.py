"""`gloss serve` under a low open-file limit (`ulimit -n`) with more projects than its workers may keep open: every
request is answered, none with a 5xx, including for projects served before (issue 21, "Many projects")."""
from __future__ import annotations

import pytest

from storage import operations as ops
from storage.gitrepo import Person
from storage.keys import KeyStore
from storage.store import Store, utc_now
from tests.reliability.harness import Server

OWNER = Person("Owner", "owner@example.com")
ACTOR = ops.Actor(1, "Owner", "owner@example.com")
OPEN_FILES = 256
PROJECTS = 48
COMMITS = 6  # each its own pack: ~24 descriptors a project without eviction and with each pack open twice


def make_projects(data_dir) -> list[tuple[str, str]]:
    """(project id, full-access key) of PROJECTS projects, each of COMMITS commits."""
    store, keys = Store(data_dir), KeyStore(data_dir / "keys.json")
    made = []
    for number in range(PROJECTS):
        project = store.create_project(f"Team {number}", "en", "English")
        with project.transaction(OWNER, "Add French", "add-locale") as tx:
            ops.add_locale(tx, "fr", "French")
        for asset in range(COMMITS - 2):
            with project.transaction(OWNER, f"Add a{asset}", "create-asset") as tx:
                ops.create_asset(tx, f"a{asset}", utc_now(), text=f"source {number}", actor=ACTOR)
                ops.translate(tx, f"a{asset}", "fr", f"texte {number}.{asset}", ACTOR, utc_now())
        project.repo.close()
        made.append((project.id, keys.create(project.id, "full", "Owner", "owner@example.com")[0]))
    return made


@pytest.fixture
def crowded(tmp_path):
    """A server whose workers may open OPEN_FILES files, on a data directory of PROJECTS projects."""
    data_dir = tmp_path / "data"
    projects = make_projects(data_dir)
    server = Server(data_dir, max_open_files=OPEN_FILES).start()
    yield server, projects
    server.stop()
    assert server.tracebacks() == [], server.log()[-5000:]


def test_a_server_with_more_projects_than_open_files_answers_every_request_without_a_5xx(crowded):
    server, projects = crowded
    failures = []
    for round_ in range(3):  # each project served again after its eviction, by either worker
        for number, (project_id, key) in enumerate(projects):
            read = server.request("GET", "/api/translations/a1/fr", key=key)
            if read.status != 200 or read.json()["translation"] != f"texte {number}.1":
                failures.append((project_id, "read", read.status, read.body[:200]))
            write = server.request("POST", "/api/translations/a2/fr", f"round {round_}".encode(), key=key)
            if write.status != 200:
                failures.append((project_id, "write", write.status, write.body[:200]))
    assert failures == []
