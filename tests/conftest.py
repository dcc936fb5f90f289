"""Fixtures in the flaskr style: an app on a temporary data directory, its client, and a seeded project."""
from __future__ import annotations

import base64
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from app import create_app
from app.seed import owner_key, seed_demo
from storage.keys import KeyStore
from storage.store import Store
from tests.support import maintenance_paused


# The fast loop (`make fast`, i.e. `pytest -m "not slow"`) leaves out the tests marked `slow`: those that start
# a real `gloss serve` or a browser, fuzz, sweep a whole matrix or corpus, run processes, or take seconds. This is
# the one place that says which (the figures: seconds on a loaded two-core machine, from --durations).
# Fixtures of these names start a real `gloss serve` (a test using one, even through another fixture, is slow):
SERVER_FIXTURES = {"server", "served"}
# Paths under tests/: a directory, a module, or one test (module::name, every parametrisation of it).
SLOW = (
    "reliability/",  # a real `gloss serve --workers 2` under hostile files, fuzz, kills and a full disk
    "test_web_browser.py",  # headless Chromium against `gloss serve`
    "test_push_limits.py",  # pushes against `gloss serve`, one on a server of its own
    "test_push_property.py",  # property-based pushes against `gloss serve` (35 s)
    "test_api_fuzz.py",  # property-based fuzz of every route (63 s)
    "test_api_export_matrix.py",  # every format x every option through the API (66 s; formats/test_*contract stay)
    "test_api_corpus.py",  # every real-world corpus file through the API and an independent validator (36 s)
    "test_lone_surrogates.py",  # a lone surrogate in every place of every route's request (18-35 s)
    "test_many_projects.py",  # more projects than the open-file and cache budgets, and idle timers (14 s)
    "test_durability.py",  # writer processes killed mid-write, eight processes writing at once (19 s)
    "test_cluster.py",  # ZooKeeper, HAProxy and `gloss serve --cluster` nodes on loopback (marked `cluster` too)
    "test_cli.py",  # each command is a new Python process (13 s)
    "test_asset_list_bursts.py",  # bursts of writes compared with lists built from scratch (13 s)
    "test_export_cache.py",  # exports after each of many writes against uncached ones (9 s)
    "test_typing.py",  # mypy over storage/ and formats/ (7 s)
    "test_concurrent_reads.py::test_reader_threads_never_fail_while_repacks_delete_the_packs_they_read",
    "test_storage.py::test_a_due_repack_waits_for_a_lull_in_the_writes",  # waits out a 2 s lull by design
    "test_history.py::test_a_diff_attributes_each_change_to_the_newest_commit_that_changed_its_text_or_flag",
    "test_history.py::test_history_reads_after_maintenance_read_the_index_and_no_patch_from_git",
    "test_api_transfer.py::test_async_import_progress_is_visible_from_another_worker_process",
    "test_api_formats.py::test_openapi_description_passes_the_openapi_spec_validator",
    "formats/test_hostile_readers.py::test_every_reader_reads_every_hostile_file_in_linear_time",  # minutes
    "formats/test_plurals.py::test_every_cldr_locale_equation_picks_the_cldr_category_for_0_to_1000",
    "formats/test_plurals.py::test_equations_are_accepted_by_msgfmt",
    "formats/test_plurals.py::test_built_in_table_has_every_locale_babel_knows_with_babels_rules_and_names",
    "formats/test_javaprops.py::test_java_reads_exactly_the_values_we_wrote",  # compiles and starts a JVM
    "formats/test_ini.py::test_every_key_and_text_reads_back_in_both_php_scanners_configparser_and_gloss",
    "formats/test_android_xml.py::test_java_properties_xml_loads_in_java",  # a JVM start
)


def is_slow(item: pytest.Item) -> bool:
    if SERVER_FIXTURES & set(item.fixturenames):
        return True
    name = item.nodeid.removeprefix("tests/").split("[")[0]
    return any(name == path or name.startswith(path if path.endswith("/") else path + "::") for path in SLOW)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """The demo project, seeded once a session: seeding replays its whole history (0.1 s, for 780 tests)."""
    data = tmp_path_factory.mktemp("demo-template") / "data"
    return seed_demo(Store(data), KeyStore(data / "keys.json"))[0].path


@pytest.fixture
def demo(store: Store, keystore: KeyStore, demo_template: Path):
    """The demo project seeded from sample_repo/ (a copy of the session's), with one key of each access type."""
    with maintenance_paused(demo_template):
        shutil.copytree(demo_template, store.projects_dir / demo_template.name, symlinks=True)
    project = store.project(demo_template.name)
    full = owner_key(keystore, project)
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
