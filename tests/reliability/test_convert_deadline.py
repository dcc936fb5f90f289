"""`convert_seconds` holds on a real `gloss serve`: a keyless convert past it answers 422 naming the limit, and
its work is gone with the answer (no process left converting), so the worker serves the next request."""
from __future__ import annotations

import json

import pytest

from tests.reliability.harness import Server

LIMIT = "0.5"  # seconds; the file below takes several to read and write


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory) -> Server:
    """One worker, so that every request meets the one whose conversion was refused."""
    live = Server(tmp_path_factory.mktemp("deadline") / "data", workers=1,
                  env={"GLOSS_CONVERT_SECONDS": LIMIT}).start()
    yield live
    live.stop()
    assert live.tracebacks() == [], live.log()[-5000:]


def converting_processes(server: Server) -> list[int]:
    """Processes two levels below the worker: the children of its fork server (those doing a conversion)."""
    [worker] = server.worker_pids()
    return [pid for child in server.descendants(worker) for pid in server.descendants(child)]


def test_a_convert_past_convert_seconds_is_422_and_frees_its_worker(one_worker):
    small = one_worker.request("POST", "/api/convert/json/small-fr.po", b'{"k": "v"}', key=False)
    assert small.status == 200
    slow = json.dumps({f"key.{i}": f"Some text number {i}" for i in range(150_000)}).encode()
    reply = one_worker.request("POST", "/api/convert/json/slow-fr.xlf", slow, key=False)
    assert reply.status == 422 and reply.is_json_error
    assert reply.json()["error"] == f"converting the file took longer than its time budget " \
                                    f"(limit convert_seconds = {float(LIMIT)})"
    assert converting_processes(one_worker) == []  # killed with the refusal, not left burning CPU
    again = one_worker.request("POST", "/api/convert/json/small-fr.po", b'{"k": "v"}', key=False)
    assert again.status == 200 and b'msgstr "v"' in again.body  # not a 429: the convert slot is free
    assert one_worker.request("GET", "/api/locales").status == 200
