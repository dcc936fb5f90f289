"""Kills and a full disk: SIGKILL workers and the master during concurrent writes and sync/async imports, then
check that every acknowledged write is there, no import is half there, every job is settled, `git fsck
--strict` is clean and the service answers; and a full disk answers 507 with nothing changed."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.reliability.harness import CONNECTION_BROKEN, Server, git, kill_quietly
from tests.support import wait_until

IMPORT_UNITS = 150


class Load:
    """Concurrent writers, each owning one asset, and importers, each import adding its own block of keys."""

    def __init__(self, server: Server, assets: list[str]):
        self.server = server
        self.assets = assets
        self.stop = threading.Event()
        self.acknowledged: dict[str, int] = {}  # asset -> last sequence number answered 200
        self.answered: list[tuple[str, str]] = []  # every (asset, text) answered 200
        self.imports: dict[str, str] = {}  # import name -> "ok" (200) or "unknown"
        self.jobs: dict[str, str] = {}  # job id -> import name
        self.failures: list[str] = []
        self._counter = 0
        self._lock = threading.Lock()

    def writer(self, asset: str) -> None:
        sequence = 0
        while not self.stop.is_set():
            sequence += 1
            try:
                reply = self.server.request("POST", f"/api/translations/{asset}/fr", f"seq {sequence}".encode(),
                                            timeout=15)
            except CONNECTION_BROKEN:
                self.stop.wait(0.05)  # the worker died under us: unknown outcome, back off, try the next one
                continue
            if reply.status == 200:
                self.acknowledged[asset] = sequence
                self.answered.append((asset, f"seq {sequence}"))
            elif reply.status == 503 and b"stopped before answering" in reply.body:
                # the worker that writes for the others died with this write: unknown outcome, as above
                self.stop.wait(0.05)
            elif reply.status >= 500:
                self.failures.append(f"{asset} {reply.status} {reply.body[:200]!r}")

    def importer(self, asynchronous: bool) -> None:
        while not self.stop.is_set():
            with self._lock:
                self._counter += 1
                name = f"imp{self._counter}"
            body = json.dumps({f"{name}.k{i}": f"v{i}" for i in range(IMPORT_UNITS)}).encode()
            path = "/api/import/json?locale=fr&index=id" + ("&async" if asynchronous else "")
            self.imports[name] = "unknown"
            try:
                reply = self.server.request("POST", path, body, timeout=30)
            except CONNECTION_BROKEN:
                self.stop.wait(0.05)  # a back-off while workers restart, cut short when the load stops
                continue
            if reply.status == 200:
                self.imports[name] = "ok"
            elif reply.status == 201:
                self.jobs[reply.json()["id"]] = name
                self.await_job(reply.json()["id"])
            elif reply.status >= 500:
                self.failures.append(f"{name} {reply.status} {reply.body[:200]!r}")

    def await_job(self, job_id: str) -> None:
        """Poll an async import until it finishes (or the load stops), so jobs do not pile up unboundedly."""
        while not self.stop.is_set():
            try:
                progress = self.server.request("GET", f"/api/import/progress/{job_id}", timeout=15).json()
            except (OSError, ValueError):
                return
            if progress.get("success") or progress.get("error"):
                return
            self.stop.wait(0.1)

    def run(self, action, seconds: float) -> None:
        threads = [threading.Thread(target=self.writer, args=(asset,)) for asset in self.assets]
        threads += [threading.Thread(target=self.importer, args=(flag,)) for flag in (False, True)]
        for thread in threads:
            thread.start()
        try:
            action()
            time.sleep(seconds)  # the behaviour under test: the load runs this long, a wait on nothing
        finally:
            self.stop.set()
            for thread in threads:
                thread.join()


def missing_writes(server: Server, answered: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The acknowledged writes that are not in the history (GET …/revisions lists every revision's text)."""
    history: dict[str, set[str]] = {}
    for asset, _ in answered:
        if asset not in history:
            reply = server.request("GET", f"/api/translations/{asset}/fr/revisions?ugly")
            history[asset] = {record["translation"] for record in reply.json()}
    return [(asset, text) for asset, text in answered if text not in history[asset]]


def kill_workers_then_master(server: Server, load: Load, writes: int = 20) -> None:
    """Under load: SIGKILL every worker once `writes` writes were answered (gunicorn starts fresh ones), then the
    master and its workers once the fresh workers answered `writes` more. (Waiting on answers, not on the clock:
    on a loaded machine two seconds could pass before the first answer, and the kills struck no load at all.)"""
    def answered(count: int) -> None:
        wait_until(lambda: len(load.answered) >= count, timeout=120, message=f"{count} writes were never answered")

    answered(writes)
    for pid in server.worker_pids():
        kill_quietly(pid)
    answered(len(load.answered) + writes)
    server.kill_master()


def catalogue(server: Server) -> dict[str, str]:
    """Asset id -> French text, read back through the API."""
    reply = server.request("GET", "/api/export/locale/fr.json?index=id&no-expand")
    assert reply.status == 200
    return {key: value for key, value in reply.json().items() if isinstance(value, str)}


def test_kills_during_writes_and_imports_lose_nothing_acknowledged(tmp_path):
    server = Server(tmp_path / "data").start()
    try:
        assets = [record["id"] for record in server.request("GET", "/api/assets?ugly").json()[:4]]
        load = Load(server, assets)

        load.run(lambda: kill_workers_then_master(server, load), 0.5)
    finally:
        server.stop()
    server.start()
    try:
        texts = catalogue(server)
        assert missing_writes(server, load.answered) == []
        for asset, sequence in load.acknowledged.items():
            found = int(texts[asset].split()[1])
            assert found >= sequence, (asset, found, sequence)  # a later, unanswered write may have landed
        for name, outcome in load.imports.items():
            present = sum(1 for key in texts if key.startswith(name + "."))
            assert present in (0, IMPORT_UNITS), (name, present)  # never half an import
            if outcome == "ok":
                assert present == IMPORT_UNITS
        for job_id, name in load.jobs.items():
            reply = server.request("GET", f"/api/import/progress/{job_id}")
            progress = reply.json()
            assert reply.status == 200 and progress["progress"] == 100, progress
            assert bool(progress["success"]) != bool(progress["error"]), progress
            present = sum(1 for key in texts if key.startswith(name + "."))
            assert present == (IMPORT_UNITS if progress["success"] else 0), (progress, present)
        assert load.acknowledged and load.failures == []
        repo = server.data_dir / "projects" / "acme-notes"
        subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=repo, check=True, capture_output=True)
        assert server.request("POST", f"/api/translations/{assets[0]}/fr", b"after").status == 200
        assert git(repo, "status", "--porcelain") == ""
    finally:
        server.stop()
    assert server.tracebacks() == [], server.log()[-5000:]


def mount_tmpfs(directory: Path, size: str) -> str | None:
    """Mount a small tmpfs; the reason it cannot be done, or None when mounted."""
    directory.mkdir(parents=True)
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                            capture_output=True, text=True)
    return None if result.returncode == 0 else f"cannot mount a tmpfs here: {result.stderr.strip()}"


def fill(directory: Path) -> Path:
    """Fill the file system holding `directory` to the last byte."""
    filler = directory / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    for size in (4096, 1):
        try:
            with open(filler, "ab") as handle:
                while True:
                    handle.write(b"\0" * size)
                    handle.flush()
        except OSError:
            pass
    return filler


def test_a_full_then_read_only_disk_answers_507_then_503_changes_nothing_and_recovers(tmp_path):
    mount_point = tmp_path / "small"
    reason = mount_tmpfs(mount_point, "48m")
    if reason:
        pytest.skip(reason)
    server = Server(mount_point / "data")
    try:
        server.start()
        asset = server.request("GET", "/api/assets?ugly").json()[0]["id"]
        before = server.head()
        filler = fill(mount_point)
        statuses = []
        for attempt in range(5):
            reply = server.request("POST", f"/api/translations/{asset}/fr", f"plein {attempt}".encode())
            statuses.append(reply.status)
            assert reply.is_json_error and reply.status == 507 and "full" in reply.json()["error"], reply.body
        reply = server.request("POST", "/api/import/json?locale=fr", json.dumps({"full.k": "v"}).encode())
        assert reply.status == 507
        assert server.head() == before
        assert server.request("GET", "/api/locales").status == 200  # reads still work
        filler.unlink()
        assert server.request("POST", f"/api/translations/{asset}/fr", b"de nouveau").status == 200
        # the repositories read-only (a read-only bind mount over them): 503 with the reason, reads answered
        projects = str(server.data_dir / "projects")
        subprocess.run(["mount", "--bind", projects, projects], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", projects], check=True)
            reply = server.request("POST", f"/api/translations/{asset}/fr", b"lecture seule")
            assert reply.status == 503 and reply.is_json_error and "read-only" in reply.json()["error"]
            assert server.request("GET", f"/api/translations/{asset}/fr").json()["translation"] == "de nouveau"
        finally:
            subprocess.run(["umount", "-l", projects], check=True)  # lazily: the server holds packs open
        assert server.request("POST", f"/api/translations/{asset}/fr", b"de nouveau").status == 200
        repo = server.data_dir / "projects" / "acme-notes"
        subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=repo, check=True, capture_output=True)
        # (the spares each process makes for its next commit are empty files it keeps on purpose)
        assert [p.name for p in (repo / ".git").rglob("*tmp*") if not p.name.startswith("gloss-spare-")] == []
    finally:
        server.stop()
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)
    assert server.tracebacks() == [], server.log()[-5000:]
