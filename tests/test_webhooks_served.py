"""Webhooks with a real `gloss serve --workers 2` and a real receiver process (tests/webhook_receiver.py, which
verifies every signature with the `standardwebhooks` package): a server SIGKILLed in the middle of a stream
of writes, and a receiver that is down for a while, still get every commit, in order."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.reliability.harness import CONNECTION_BROKEN, ROOT, Server, free_port, git
from tests.gitserver import run_git
from tests.support import edit_line, wait_until
from tests.webhook_receiver import read_records

pytestmark = pytest.mark.slow

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
PROJECT = "acme-notes"  # the demo project `gloss serve` seeds
ENV = {"GLOSS_WEBHOOK_ALLOW": "127.0.0.1/8", "GLOSS_WEBHOOK_FIRST_RETRY_SECONDS": "0.2"}


class ReceiverProcess:
    def __init__(self, directory: Path):
        self.port = free_port()
        self.records = directory / "deliveries.jsonl"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> "ReceiverProcess":
        self.process = subprocess.Popen([sys.executable, "-m", "tests.webhook_receiver", str(self.port), SECRET,
                                         str(self.records)], cwd=ROOT)
        wait_until(self.listening, 10, 0.05, "the receiver did not start")
        return self

    def listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def accepted(self) -> list[dict]:
        return [record for record in read_records(self.records) if record["answer"] < 300]


@pytest.fixture
def receiver(tmp_path):
    live = ReceiverProcess(tmp_path).start()
    yield live
    live.stop()


@pytest.fixture
def server(tmp_path):
    live = Server(tmp_path / "data", workers=2, env=ENV).start()
    yield live
    live.stop()


def make_hook(server: Server, url: str) -> dict:
    reply = server.request("POST", "/api/webhooks", f"url={url}&secret={SECRET}".encode(),
                           {"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 201, reply.body
    return reply.json()


def commits_after(server: Server, cursor: str) -> list[str]:
    return git(server.data_dir / "projects" / PROJECT, "rev-list", "--first-parent", "--reverse",
               f"{cursor}..HEAD").split()


def write(server: Server, text: str) -> bool:
    try:
        return server.request("POST", "/api/translations/home.title/fr", text.encode(), timeout=10).status == 200
    except CONNECTION_BROKEN:
        return False


def delivered_up_to(receiver: ReceiverProcess, server: Server, timeout: float = 60.0) -> list[dict]:
    """The accepted deliveries once the last of them is the head's commit."""
    head = server.head(PROJECT)
    return wait_until(lambda: receiver.accepted() if any(
        record["payload"]["data"]["commits"]["to"] == head for record in receiver.accepted()) else None,
        timeout, 0.1, "the head's commit was never delivered")


def assert_in_order(records: list[dict], commits: list[str], restarts: int) -> None:
    """Every commit delivered, signed, in order: runs of consecutive commits, each run after the first (one per
    restart at most) going back to a commit already delivered, and going on from there without a gap."""
    assert all(record["valid"] for record in records)
    positions = [commits.index(record["payload"]["data"]["commits"]["to"]) for record in records]
    runs: list[list[int]] = []
    for position in positions:
        if runs and position == runs[-1][-1] + 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    assert runs[0][0] == 0 and len(runs) <= 1 + restarts, f"out of order: {[(r[0], r[-1]) for r in runs]}"
    for before, after in zip(runs, runs[1:]):
        assert after[0] <= before[-1] + 1, "a commit was skipped"
    assert max(positions) == len(commits) - 1
    ids = {record["payload"]["data"]["commits"]["to"]: record["id"] for record in records}
    assert all(ids[record["payload"]["data"]["commits"]["to"]] == record["id"] for record in records), \
        "a delivery made again carries its first id"


def test_a_server_killed_in_the_middle_of_writes_delivers_every_commit_in_order_after_its_restart(
        server, receiver):
    hook = make_hook(server, receiver.url)
    written = sum(write(server, f"Avant {i}") for i in range(30))
    wait_until(lambda: len(receiver.accepted()) >= 10, 30, 0.05, "nothing was delivered")
    stop = threading.Event()

    def keep_writing() -> None:
        i = 0
        while not stop.is_set() and i < 200:
            write(server, f"Pendant {i}")
            i += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    wait_until(lambda: len(receiver.accepted()) >= 35, 30, 0.01, "the writes were not delivered")
    server.kill_master()  # SIGKILL: master and workers, mid-stream of writes and deliveries
    stop.set()
    writer.join()
    server.start()
    written += sum(write(server, f"Après {i}") for i in range(20))
    assert written >= 50
    commits = commits_after(server, hook["cursor"])
    assert_in_order(delivered_up_to(receiver, server), commits, restarts=1)
    assert server.tracebacks() == []


def test_a_receiver_down_for_a_while_gets_the_backlog_in_order_when_it_returns(server, receiver):
    hook = make_hook(server, receiver.url)
    assert write(server, "Premier")
    delivered_up_to(receiver, server)
    receiver.stop()
    for i in range(15):
        assert write(server, f"Pendant la panne {i}")

    def failed_attempts() -> list[dict] | None:
        attempts = server.request("GET", f"/api/webhooks/{hook['id']}/deliveries").json()  # newest first
        since_last_success = [attempt["status"] for attempt in attempts].index("delivered")
        failed = attempts[:since_last_success]
        return failed if len(failed) >= 3 else None

    failed = wait_until(failed_attempts, 30, 0.1, "the deliveries to a receiver that is down did not fail")
    assert failed[0]["code"] is None and "Connection refused" in failed[0]["error"]
    listed = server.request("GET", "/api/webhooks").json()[0]
    assert listed["failures"] >= 3 and listed["failing"] is False
    receiver.start()
    commits = commits_after(server, hook["cursor"])
    assert_in_order(delivered_up_to(receiver, server), commits, restarts=0)

    def settled() -> dict | None:
        """The hook's record once the deliverer has recorded the last success (it does so after the receiver
        answered, so the receiver may hold the head's delivery a moment before the record says so)."""
        listed = server.request("GET", "/api/webhooks").json()[0]
        return listed if listed["cursor"] == commits[-1] else None

    listed = wait_until(settled, 10, 0.05, "the hook's cursor never reached the head")
    assert listed["failures"] == 0 and listed["failing"] is False


def test_a_git_push_to_main_is_delivered_as_push_applied_with_the_pushed_pairs(server, receiver, tmp_path):
    hook = make_hook(server, receiver.url)
    clone = tmp_path / "clone"
    url = f"http://{server.key}:@127.0.0.1:{server.port}/git/{PROJECT}.git"
    assert run_git(tmp_path, "clone", "-q", url, str(clone)).returncode == 0
    edit_line(clone / "locales" / "fr" / "0000.json", "home.title", text="Accueil (poussé)")
    assert run_git(clone, "commit", "-q", "-am", "push a title").returncode == 0
    pushed = run_git(clone, "push", "origin", "HEAD:refs/heads/main")
    assert pushed.returncode == 0, pushed.stderr
    (record,) = delivered_up_to(receiver, server)
    data = record["payload"]["data"]
    assert record["valid"] and data["events"] == ["translation.changed", "push.applied"]
    assert data["commits"] == {"from": hook["cursor"], "to": server.head(PROJECT), "count": 1}
    assert data["changes"] == [{"asset": "home.title", "locale": "fr"}]
    assert [author["name"] for author in data["authors"]] == ["Pat Pusher"]


def test_refused_urls_are_json_422s_on_the_server(server):
    for url in ("http://10.0.0.7/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]:8080/"):
        reply = server.request("POST", "/api/webhooks", f"url={url}".encode(),
                               {"Content-Type": "application/x-www-form-urlencoded"})
        assert reply.status == 422 and reply.json()["status"] == 422, reply.body
