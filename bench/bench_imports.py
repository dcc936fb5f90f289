"""Import benchmark against a real `gloss serve --workers 2` (issue #21, "Imports").

Run: .venv/bin/python bench/bench_imports.py [--units 100000] [--small 10000]

Prints, for a PO file of `--small` and of `--units` units (bench_transfer.po_file's shape, one locale, into a
project that has none of its assets; index=text, PO's default):
  1. the import's wall time as the client sees it (parse, apply, commit, answer);
  2. the wall time of importing the same file again (nothing changes; no commit is made);
  3. during the big import, the wait of POST /api/translations/... to the same project, one started every
     100 ms whatever the others' fate (p50/p95/max, and how many were made while the import ran);
  4. the workers' resident memory before the big import, after it and after its re-import (the workers: the
     arbiter's children; their own children, formats' fork server and the big import's child, apart).
Targets (issue #21): 100k import <= 4 s, unchanged re-import <= 1 s, POST wait p95 <= 100 ms, worker RSS after
a 100k import within 50 MB of before.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_api import (Client, free_port, helpers_rss_mb, rss_mb, start_server, stop_server,  # noqa: E402
                       wait_for_ping, worker_pids)
from bench_storage import percentile, scratch_directory  # noqa: E402
from bench_transfer import po_file  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.gitrepo import Person  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

PROBE = "probe.asset"  # the asset the concurrent POSTs translate (not in the imported file)


def make_project(data: Path, name: str) -> str:
    """A project with the locale `fr` and one asset of its own; returns a full-access key."""
    store = Store(data)
    project = store.create_project(name, "en", "English")
    with project.transaction(Person("Bench", "bench@example.com"), "Seed", "create-asset") as tx:
        ops.add_locale(tx, "fr", "French")
        ops.create_asset(tx, PROBE, utc_now(), text="Probe")
    key, _ = KeyStore(data / "keys.json").create(project.id, "full", "Bench", "bench@example.com", utc_now())
    return key


def worker_of(client: Client, port: int, server_pid: int) -> int | None:
    """The pid of the worker that accepted the client's (open, keep-alive) connection: the worker process that
    holds the server side of that TCP connection (/proc/net/tcp names its socket inode)."""
    assert client.conn is not None and client.conn.sock is not None
    ours = client.conn.sock.getsockname()[1]
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].split(":"), fields[2].split(":")
        if int(local[1], 16) == port and int(remote[1], 16) == ours:
            inode = fields[9]
    for pid in worker_pids(server_pid):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


def importing_client(port: int, key: str, server_pid: int, data: Path, where: str) -> Client:
    """A client whose connection is held by the worker `where` names: "any" (the first accepted), "writer" (the
    elected writer, which also makes the other worker's POSTs: app.relay) or "other" (the worker that is not)."""
    writer = json.loads((data / "locks" / ".writer.json").read_text())["pid"]
    for _ in range(200):
        client = Client(port, key)
        client.request("GET", "/api/ping")
        if where == "any" or (worker_of(client, port, server_pid) == writer) == (where == "writer"):
            return client
        assert client.conn is not None
        client.conn.close()
    raise SystemExit(f"no connection to the {where} worker after 200 tries")


def timed_import(client: Client, data: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    status, body = client.request("POST", "/api/import/po?locale=fr", data)
    elapsed = time.perf_counter() - start
    assert status == 200, body[:300]
    return elapsed, body


POST_EVERY = 0.1  # s between two POSTs' starts, whether or not the earlier ones were answered


def posts_while(port: int, key: str, running: threading.Event, latencies: list[float]) -> None:
    """Start a POST of a translation to PROBE every POST_EVERY seconds until `running` is cleared (open loop:
    a POST that waits for the project does not hold back the next ones, so a long wait shows in every POST
    made meanwhile, not in one sample). Each in-flight POST has its own connection."""
    idle: list[Client] = []
    lock = threading.Lock()

    def post(n: int) -> None:
        with lock:
            client = idle.pop() if idle else Client(port, key)
        start = time.perf_counter()
        status, body = client.request("POST", f"/api/translations/{PROBE}/fr", f"during import {n}".encode())
        latencies.append((time.perf_counter() - start) * 1000)
        assert status == 200, body[:300]
        with lock:
            idle.append(client)

    with ThreadPoolExecutor(max_workers=256) as pool:
        n, next_start = 0, time.perf_counter()
        while running.is_set():
            pool.submit(post, n)
            n += 1
            next_start += POST_EVERY
            time.sleep(max(0.0, next_start - time.perf_counter()))


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--import-on", choices=("any", "writer", "other"), default="any",
                        help="the worker that makes the big import: the first to accept (default), the elected "
                             "writer (which makes every POST), or the other one")
    args = parser.parse_args()
    with scratch_directory() as tmp:
        data = Path(tmp) / "data"
        small_key, big_key = make_project(data, "Small"), make_project(data, "Big")
        port = free_port()
        server = start_server(data, port, args.workers, Path(tmp) / "server.log")
        try:
            wait_for_ping(server, port)
            small = Client(port, small_key)
            for _ in range(args.workers * 2):  # every worker opens both projects before anything is measured
                Client(port, big_key).request("GET", "/api/assets")
                small.request("GET", "/api/assets")
            file = po_file(args.small)
            first, _ = timed_import(small, file)
            again, body = timed_import(small, file)
            print(f"import PO {args.small} units: {first:.2f} s; unchanged re-import {again:.2f} s "
                  f"({body[:60].decode(errors='replace')}...)", flush=True)

            file = po_file(args.units)
            big = importing_client(port, big_key, server.pid, data, args.import_on)
            before = rss_mb(server.pid)
            latencies: list[float] = []
            running = threading.Event()
            running.set()
            poster = threading.Thread(target=posts_while, args=(port, big_key, running, latencies))
            poster.start()
            time.sleep(0.5)  # the POSTs are going before the import starts
            warm = len(latencies)
            try:
                first, _ = timed_import(big, file)
            finally:
                running.clear()
                poster.join()
            during = latencies[warm:]  # (answered after the warm-up: those still waiting are counted too)
            after, helpers = rss_mb(server.pid), helpers_rss_mb(server.pid)
            again, body = timed_import(big, file)
            after_again = rss_mb(server.pid)
            print(f"import PO {args.units} units: {first:.2f} s (target <= 4 s: {verdict(first <= 4)}); "
                  f"unchanged re-import {again:.2f} s (target <= 1 s: {verdict(again <= 1)})", flush=True)
            p95 = percentile(during, 0.95)
            print(f"POST to the same project during the {args.units}-unit import: {len(during)} POSTs, "
                  f"p50 {statistics.median(during):.0f} ms, p95 {p95:.0f} ms, max {max(during):.0f} ms "
                  f"(target p95 <= 100 ms: {verdict(p95 <= 100)})", flush=True)
            growth = max(a - b for a, b in zip(after, before))
            print("worker RSS before the big import: " + ", ".join(f"{mb:.0f} MB" for mb in before)
                  + "; after it: " + ", ".join(f"{mb:.0f} MB" for mb in after)
                  + "; after its re-import: " + ", ".join(f"{mb:.0f} MB" for mb in after_again)
                  + f" (largest growth {growth:.0f} MB; target <= 50 MB: {verdict(growth <= 50)})", flush=True)
            print(f"the workers' own children after the big import (formats' fork server, idle): {helpers:.0f} MB",
                  flush=True)
        finally:
            stop_server(server)


if __name__ == "__main__":
    try:
        main()
    except (OSError, http.client.HTTPException) as error:
        raise SystemExit(f"bench failed: {error}")
