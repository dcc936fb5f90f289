"""One writing worker: the other workers hand their API writes to it (app.relay), and make them themselves
whenever it cannot take them."""
from __future__ import annotations

import io
import json
import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.relay import WriterRelay
from tests.reliability.harness import Server, git
from tests.support import assert_fsck_clean, wait_until


def recording_app(name: str, calls: list):
    """A WSGI application that answers with its name and records what it was asked."""

    def app(environ, start_response):
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        calls.append((name, environ["REQUEST_METHOD"], environ["PATH_INFO"], body))
        if environ["PATH_INFO"] == "/api/crash":
            raise RuntimeError("the writer dies while making the write")
        payload = json.dumps({"made by": name, "body": body.decode()}).encode()
        start_response("201 CREATED", [("Content-Type", "application/json"), ("X-Made-By", name)])
        return [payload]

    return app


def environ_for(method: str, path: str, body: bytes = b"", **extra) -> dict:
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "localhost",
               "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
               "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "HTTP_AUTHORIZATION": "Loco k"}
    environ.update(extra)
    return environ


def call(relay, environ) -> tuple[str, dict, bytes]:
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = status, dict(headers)

    body = b"".join(relay(environ, start_response))
    return answer["status"], answer["headers"], body


@pytest.fixture
def relays(tmp_path):
    """A writer and another worker of the same data directory (two relays in one process stand in for two)."""
    calls: list = []
    writer = WriterRelay(recording_app("writer", calls), tmp_path, authorised=lambda environ: True)
    writer.start_election()
    assert writer.is_writer.wait(10)
    other = WriterRelay(recording_app("other", calls), tmp_path,
                        authorised=lambda environ: "HTTP_AUTHORIZATION" in environ)
    return writer, other, calls


def test_a_write_received_by_another_worker_is_made_by_the_writer_with_its_body_and_answer(relays):
    writer, other, calls = relays
    status, headers, body = call(other, environ_for("POST", "/api/translations/a/fr", "Bonjour ✓".encode()))
    assert status == "201 CREATED" and headers["X-Made-By"] == "writer"
    assert json.loads(body) == {"made by": "writer", "body": "Bonjour ✓"}
    assert calls == [("writer", "POST", "/api/translations/a/fr", "Bonjour ✓".encode())]


@pytest.mark.parametrize("environ", [
    environ_for("GET", "/api/assets"),
    environ_for("POST", "/api/import/json", b"{}"),
    environ_for("POST", "/api/convert/po/json", b"x"),
    environ_for("POST", "/p/acme/edit", b"x"),
    environ_for("POST", "/api/assets", b"x", HTTP_TRANSFER_ENCODING="chunked"),
    {k: v for k, v in environ_for("POST", "/api/assets", b"x").items() if k != "HTTP_AUTHORIZATION"},
], ids=["read", "import", "convert", "web page", "chunked body", "no key"])
def test_reads_imports_conversions_pages_chunked_and_keyless_requests_are_answered_where_received(relays, environ):
    _, other, calls = relays
    status, headers, _ = call(other, environ)
    assert headers["X-Made-By"] == "other" and [name for name, *_ in calls] == ["other"]


def test_the_writer_makes_its_own_writes(relays):
    writer, _, calls = relays
    call(writer, environ_for("DELETE", "/api/assets/a"))
    assert [name for name, *_ in calls] == ["writer"]


def test_a_worker_makes_the_write_itself_when_no_writer_answers_or_the_writer_refuses_its_token(relays, tmp_path):
    writer, other, calls = relays
    info = json.loads((tmp_path / ".writer.json").read_text())
    (tmp_path / ".writer.json").write_text(json.dumps(dict(info, token="stolen")))
    assert call(other, environ_for("POST", "/api/tags", b"t"))[1]["X-Made-By"] == "other"
    (tmp_path / ".writer.json").write_text(json.dumps(dict(info, address="\0gloss-writer-gone")))
    assert call(other, environ_for("POST", "/api/tags", b"t"))[1]["X-Made-By"] == "other"
    (tmp_path / ".writer.json").unlink()
    assert call(other, environ_for("POST", "/api/tags", b"t"))[1]["X-Made-By"] == "other"
    assert [name for name, *_ in calls] == ["other"] * 3  # never both: a write is made once


def test_a_writer_that_breaks_off_after_taking_a_write_gives_a_503_that_says_it_may_have_been_made(relays):
    _, other, calls = relays
    status, headers, body = call(other, environ_for("POST", "/api/crash", b"x"))
    assert status.startswith("503") and headers["Content-Type"] == "application/json"
    assert json.loads(body)["status"] == 503 and "may or may not" in json.loads(body)["error"]
    assert [name for name, *_ in calls] == ["writer"]  # not made a second time by the other worker


# ----------------------------------------------------------------------------- with gloss serve
@pytest.fixture
def server(tmp_path):
    live = Server(tmp_path / "data", workers=2).start()
    yield live
    live.stop()


def writer_pid(server: Server, timeout: float = 20.0) -> int:
    """The elected writer: a live worker named in the data directory's writer file."""
    def elected() -> int | None:
        try:
            pid = json.loads((server.data_dir / "locks" / ".writer.json").read_text())["pid"]
        except (OSError, ValueError):
            return None
        return pid if pid in server.worker_pids() else None

    return wait_until(elected, timeout, 0.1, "no worker was elected writer")


def test_writes_through_both_workers_all_land_one_commit_each_and_read_back_at_once(server):
    writer_pid(server)
    assets = [asset["id"] for asset in server.request("GET", "/api/assets").json()][:24]
    head = server.head()

    def write_then_read(asset_id: str) -> str:
        assert server.request("POST", f"/api/translations/{asset_id}/fr", f"relayed {asset_id}".encode()).status == 200
        return server.request("GET", f"/api/translations/{asset_id}/fr").json()["translation"]

    with ThreadPoolExecutor(max_workers=6) as pool:  # new connections: the kernel spreads them over both workers
        texts = list(pool.map(write_then_read, assets))
    assert texts == [f"relayed {asset_id}" for asset_id in assets]
    project = server.data_dir / "projects" / "acme-notes"
    assert git(project, "rev-list", "--count", f"{head}..HEAD").strip() == str(len(assets))
    assert_fsck_clean(project)
    assert server.tracebacks() == []


def test_when_the_writer_dies_another_worker_is_elected_and_writes_go_on(server):
    first = writer_pid(server)
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: writer_pid(server) != first, 30, 0.1, "no other worker was elected writer")
    second = writer_pid(server)
    assert second != first
    asset_id = server.request("GET", "/api/assets").json()[0]["id"]
    for n in range(6):
        assert server.request("POST", f"/api/translations/{asset_id}/fr", f"after {n}".encode()).status == 200
    assert server.request("GET", f"/api/translations/{asset_id}/fr").json()["translation"] == "after 5"
