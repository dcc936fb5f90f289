"""A locale's checks shared with a pool of worker processes (checkpool.pool) answer what the process alone
answers, through GET /api/locales/{locale}/errors; a dead worker costs the pool, never the answer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import app.qa
from app import create_app
from checkpool import pool
from tests.api import Api
from tests.support import REPO_ROOT, wait_until

CHUNKS = 8  # of two assets each


@pytest.fixture(autouse=True)
def no_pool_left_behind():
    """Each test's pool ends with it: the test process's other tests see no workers of ours."""
    yield
    pool.stop()


def translation(i: int) -> str:
    """A French text for asset i, failing a different check for most i."""
    return [f"Fichier {i} prêt.", f"Fichier {i + 1} prêt.", f"  Fichier {i} prêt", f"Fichier %s {i} prêt.",
            f"Document {i} prêt.", "", f"Fichier {i} prêt"][i % 7]


@pytest.fixture
def api(client, store, keystore) -> Api:
    """A project of CHUNKS chunks, translated in French (most translations failing a check), with a glossary."""
    project = store.create_project("Pooled", "en", "English", chunk_size=2)
    key, _ = keystore.create(project.id, "full", "Tester", "tester@example.com")
    api = Api(client, key)
    assert api.post("/api/locales", data={"code": "fr"})[0] in (200, 201)
    assert api.post("/api/glossary", json={"term": "file", "translations": {"fr": "fichier"}})[0] in (200, 201)
    for i in range(2 * CHUNKS):
        assert api.post("/api/assets", data={"id": f"a{i}", "text": f"File {i} ready."})[0] == 201
        if translation(i):
            assert api.post(f"/api/translations/a{i}/fr", data=translation(i).encode())[0] == 200
    return api


def errors_in_a_new_app(data_dir, key: str) -> list[dict]:
    """The French errors as a new app over the same data answers them (a new Store: nothing kept)."""
    status, found = Api(create_app(data_dir, testing=True).test_client(), key).get("/api/locales/fr/errors")
    assert status == 200
    return found


@pytest.fixture
def chunks_checked_here(monkeypatch) -> list[int]:
    """The chunks this process checks itself (the pool's are the others), each slowed so that the pool takes
    some while this thread works from the other end."""
    numbers: list[int] = []
    check_here = app.qa._check_chunk

    def slowly(snapshot, locale: str, number: int):
        numbers.append(number)
        time.sleep(0.05)
        return check_here(snapshot, locale, number)

    monkeypatch.setattr(app.qa, "_check_chunk", slowly)
    return numbers


def test_the_pool_answers_the_errors_the_process_alone_answers(api, data_dir, monkeypatch, chunks_checked_here):
    monkeypatch.setattr(app.qa, "CHECK_POOL_MIN_TRANSLATIONS", 4)
    status, pooled = api.get("/api/locales/fr/errors")
    assert status == 200 and len(chunks_checked_here) < CHUNKS  # the pool checked some chunks
    assert pool.worker_pids()
    monkeypatch.setattr(app.qa, "CHECK_POOL_WORKERS", 0)
    alone = errors_in_a_new_app(data_dir, api.headers["Authorization"].split()[1])
    assert pooled == alone
    assert {check["name"] for record in alone for check in record["checks"]} >= {"numbers", "check_glossary"}


@pytest.fixture
def sent_to_the_pool(monkeypatch) -> list[list[int]]:
    """The chunk numbers of each check shared with the pool."""
    sent: list[list[int]] = []
    check_chunks = app.qa.check_chunks

    def spied(numbers, job, here):
        sent.append(list(numbers))
        return check_chunks(numbers, job, here)

    monkeypatch.setattr(app.qa, "check_chunks", spied)
    return sent


def test_a_locale_of_fewer_translations_than_the_limit_is_checked_in_the_process(api, sent_to_the_pool):
    status, found = api.get("/api/locales/fr/errors")
    assert status == 200 and found and sent_to_the_pool == []


def test_one_chunk_rewritten_by_a_write_is_checked_in_the_process(api, monkeypatch, sent_to_the_pool):
    sent = sent_to_the_pool
    monkeypatch.setattr(app.qa, "CHECK_POOL_MIN_TRANSLATIONS", 4)
    api.get("/api/locales/fr/errors")
    assert api.post("/api/translations/a0/fr", data="Fichier 99 prêt.".encode())[0] == 200
    status, found = api.get("/api/locales/fr/errors")
    assert status == 200 and any(record["id"] == "a0" and record["target"] == "Fichier 99 prêt." for record in found)
    assert sent == [list(range(CHUNKS))]


def test_a_killed_pool_worker_is_replaced_and_the_check_still_answers(api, data_dir, monkeypatch):
    monkeypatch.setattr(app.qa, "CHECK_POOL_MIN_TRANSLATIONS", 4)
    key = api.headers["Authorization"].split()[1]
    expected = api.get("/api/locales/fr/errors")[1]
    victims = wait_until(pool.worker_pids, message="the pool never started a worker")
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    assert errors_in_a_new_app(data_dir, key) == expected  # the broken pool's chunks checked here
    assert errors_in_a_new_app(data_dir, key) == expected  # with a new pool
    assert not set(pool.worker_pids()) & set(victims)


def test_the_pool_workers_end_with_a_process_killed_outright(api, data_dir):
    script = (
        "import os, sys\n"
        "import app.qa\n"
        "from app import create_app\n"
        "from checkpool import pool\n"
        "from tests.api import Api\n"
        "app.qa.CHECK_POOL_MIN_TRANSLATIONS = 4\n"
        f"client = Api(create_app({str(data_dir)!r}, testing=True).test_client(), sys.argv[1])\n"
        "assert client.get('/api/locales/fr/errors')[0] == 200\n"
        "print(*pool.worker_pids(), flush=True)\n"
        "os.kill(os.getpid(), 9)\n")
    run = subprocess.run([sys.executable, "-c", script, api.headers["Authorization"].split()[1]], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60)
    pids = [int(pid) for pid in run.stdout.split()]
    assert run.returncode == -signal.SIGKILL and pids, run.stderr
    wait_until(lambda: all(_state(pid) in ("", "Z") for pid in pids), message="a pool worker outlived its parent")


def _state(pid: int) -> str:
    """A process's state letter (Z: a zombie, ended and not reaped yet), "" when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""
