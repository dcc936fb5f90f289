"""A worker serving more projects than it may keep open: least recently used projects are closed, never broken."""
from __future__ import annotations

import os

import pytest

from storage import operations as ops
from storage.gitrepo import Person
from storage.store import Store, utc_now
from tests.api import Api
from tests.support import wait_until

OWNER = Person("Owner", "owner@example.com")
ACTOR = ops.Actor(1, "Owner", "owner@example.com")
PROJECTS = 12


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def open_paths() -> list[str]:
    paths = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:  # the descriptor of the listing itself
            pass
    return paths


def make_project(store: Store, keystore, number: int) -> tuple[str, str]:
    """A project of three assets translated into French, written in three commits (three packs); its key."""
    project = store.create_project(f"Project {number}", "en", "English")
    with project.transaction(OWNER, "Add French", "add-locale") as tx:
        ops.add_locale(tx, "fr", "French")
    for asset in range(3):
        with project.transaction(OWNER, f"Add a{asset}", "create-asset") as tx:
            ops.create_asset(tx, f"a{asset}", utc_now(), text=f"source {number}.{asset}", actor=ACTOR)
            ops.translate(tx, f"a{asset}", "fr", f"texte {number}.{asset}", ACTOR, utc_now())
    key, _ = keystore.create(project.id, "full", "Owner", "owner@example.com")
    return project.id, key


@pytest.fixture
def projects(store, keystore) -> list[tuple[str, str]]:
    store.max_open_projects, store.max_open_pack_files = 3, 12
    return [make_project(store, keystore, number) for number in range(PROJECTS)]


def read_and_write(client, number: int, key: str) -> None:
    """Every project answers its own data, and takes a write, wherever it sits in the store's LRU."""
    api = Api(client, key)
    status, body = api.get("/api/translations/a1/fr")
    assert status == 200 and body["translation"] == f"texte {number}.1"
    status, body = api.post(f"/api/translations/a2/fr", data=f"neu {number}".encode())
    assert status == 200, body
    status, body = api.get("/api/translations/a2/fr")
    assert status == 200 and body["translation"] == f"neu {number}"


def test_more_projects_than_the_budget_all_answer_and_the_open_files_stay_bounded(client, store, projects):
    other_descriptors = open_descriptors() - store.open_files()  # the process's own, beside the projects'
    for _ in range(3):  # every project in turn, each evicted since its last turn and opened afresh
        for number, (project_id, key) in enumerate(projects):
            read_and_write(client, number, key)
            # the budget, plus what the project in use opened since the last look at it
            bound = other_descriptors + store.max_open_pack_files + store.project(project_id).open_files()
            assert open_descriptors() <= bound
    assert 1 <= len(store._projects) <= 3


def test_the_project_just_evicted_answers_again(client, store, projects):
    first_id, first_key = projects[0]
    read_and_write(client, 0, first_key)
    for number, (_, key) in list(enumerate(projects))[1:]:
        read_and_write(client, number, key)
    assert first_id not in store._projects
    read_and_write(client, 0, first_key)
    assert first_id in store._projects


def test_a_project_object_held_by_a_request_stays_valid_after_its_eviction(store, projects):
    held = store.project(projects[0][0])
    assert held.snapshot().translation("a0", "fr") is not None
    for project_id, _ in projects[1:]:
        store.project(project_id).snapshot()
    assert held.open_files() == 0  # evicted: its packs are closed
    held.close_files()  # (also after a write: the next read reopens what it needs)
    with held.transaction(OWNER, "Translate a0", "translate") as tx:
        ops.translate(tx, "a0", "fr", "encore", ACTOR, utc_now())
    assert held.snapshot().translation("a0", "fr")["text"] == "encore"
    assert store.project(projects[0][0]).snapshot().translation("a0", "fr")["text"] == "encore"


def test_each_pack_file_is_open_once(store, projects):
    store.project(projects[-1][0]).close_files()  # (the fixture's store has it open too)
    project = Store(store.data_dir).project(projects[-1][0])  # opened afresh: its snapshot is read from the packs
    project.snapshot()
    pack_paths = [path for path in open_paths() if str(project.path) in path and "/pack/" in path]
    assert pack_paths and len(pack_paths) == len(set(pack_paths))


def test_idle_projects_close_their_files(store, projects):
    store.max_open_projects, store.max_open_pack_files = PROJECTS, 1000
    store.idle_seconds = 0.0
    for project_id, _ in projects:
        store.project(project_id).snapshot()
    store._next_check = 0.0  # the next request looks at the idlers at once
    store.project(projects[-1][0])
    assert all(store.project(project_id).open_files() == 0 for project_id, _ in projects[:-1])


def test_the_cached_assets_budget_evicts_the_least_recently_used_snapshots(store, projects):
    store.max_open_projects, store.max_open_pack_files, store.max_open_assets = PROJECTS, 1000, 7
    for project_id, _ in projects:
        store.project(project_id).snapshot()  # three assets each: two projects fit, with the one in use
    assert list(store._projects) == [project_id for project_id, _ in projects[-3:]]


def test_a_project_whose_write_is_under_way_is_not_evicted(store, projects):
    writing_id = projects[0][0]
    writing = store.project(writing_id)
    with writing.transaction(OWNER, "Translate a0", "translate") as tx:
        ops.translate(tx, "a0", "fr", "pendant", ACTOR, utc_now())
        for project_id, _ in projects[1:]:
            store.project(project_id)
        assert writing_id in store._projects  # the least recently used, kept while its write is under way
    store.project(projects[1][0])  # the write done, the least recently used project goes
    assert writing_id not in store._projects and len(store._projects) == 3
    assert store.project(writing_id).snapshot().translation("a0", "fr")["text"] == "pendant"


def test_idle_projects_close_their_files_without_a_request(tmp_path, monkeypatch):
    from storage import store as store_module

    monkeypatch.setattr(store_module, "IDLE_CHECK_SECONDS", 0.05)
    store = Store(tmp_path / "data")
    store.idle_seconds = 0.2
    project = store.create_project("Quiet", "en", "English")
    store.project(project.id)
    with project.transaction(OWNER, "Add French", "add-locale") as tx:
        ops.add_locale(tx, "fr", "French")
    project.close_files()
    project.snapshot_at(project.repo.resolve("HEAD~1"))  # reads from the packs: they are open now
    assert project.open_files() > 0
    wait_until(lambda: project.open_files() == 0, message="the idle project kept its files open")
