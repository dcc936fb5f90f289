"""HTTP benchmark: `gloss serve --workers 2` on a 10k-asset x 5-locale project, loaded from separate processes.

Run: .venv/bin/python bench/bench_api.py [--assets 10000] [--seconds 10] [--connections 4]

Measures, each for --seconds with --connections keep-alive connections (one load-generator process each):
  1. GET one translation   GET /api/translations/{id}/fr          requests/s, latency
  2. GET the asset list    GET /api/assets                        requests/s, latency
  3. POST a translation    POST /api/translations/{id}/{locale}   requests/s sustained, p50/p95 latency
     (and again with a single connection, to show a write's latency without queueing for the project lock)
  4. the first GET /api/assets after a write (the serving worker refreshes its snapshot): median of 6, <= 100 ms
  5. GET /api/export/archive/po.zip (every locale): median of 3; target <= 1.2 s at 100k
  6. worker RSS after exporting fr.po, all.json and po.zip from both workers: target <= 600 MB at 100k,
     beside the RSS before those exports
  7-8. GET /api/assets after 50 writes between two reads, in the worker that wrote and in another: <= 100 ms
     at 10k (in-process, see measure_bursts; --bursts-only runs rows 7-9 alone)
  9. the warm GET /api/assets: <= 150 ms at 100k (in-process)
and compares POST with --connections clients to POST with one: throughput >= one client's, p95 <= 25 ms,
p99 <= 60 ms at 10k (p99 <= 100 ms at 100k). Then it checks that no update was lost: every POST answered 200 is in the project afterwards (each POST writes a
unique text to its own (asset, locale) pair, so each ends at revision 2), and the number of new commits equals
the number of successful POSTs.
Targets on the 2-core reference machine: >= 800 GET one translation/s; >= 100 POST translations/s sustained
with zero lost updates; POST p95 <= 25 ms.
All traffic goes to 127.0.0.1; the scratch data directory lives in bench/.work/ and is removed afterwards.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_storage import LOCALES, build_project, percentile  # noqa: E402
from tests.gitserver import children, memory_kb  # noqa: E402
from tests.reliability.harness import descendants  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

HOST = "127.0.0.1"
TARGET_GET_ONE = 800.0
TARGET_POST = 100.0
TARGET_POST_P95_MS = 25.0
PAIRS_PER_PHASE = 20_000  # (asset, locale) pairs reserved for each POST measurement (10k assets x 4 locales)


def pairs_per_phase(assets: int) -> int:
    """The pairs each of the two POST measurements may write: half of the project's own below 10k assets (a
    phase that ran out of pairs stops early rather than write a pair twice)."""
    return min(PAIRS_PER_PHASE, assets * len(LOCALES) // 2)


def asset_id(i: int) -> str:
    return f"screen{i // 50}.label{i}"  # the IDs bench_storage.build_project creates


# ----------------------------------------------------------------------------- load generator (child processes)
class Client:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closes it."""

    def __init__(self, port: int, key: str):
        self.port = port
        self.headers = {"Authorization": f"Loco {key}"}
        self.conn: http.client.HTTPConnection | None = None
        self.reconnects = 0

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "text/plain; charset=utf-8"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
                self.reconnects += 1
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return response.status, data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest):
                self.conn.close()
                self.conn = None
                if attempt == 2 or method != "GET":  # never replay a write: it may have been applied
                    raise
        raise AssertionError("unreachable")


def post_target(pair: int, assets: int) -> tuple[str, str]:
    """The (asset, locale) pair number `pair` of the assets x 4 target locales."""
    return asset_id(pair % assets), LOCALES[(pair // assets) % len(LOCALES)]


def run_load(kind: str, port: int, key: str, seconds: float, worker: int, workers: int, assets: int,
             run_tag: str, first_pair: int = 0, max_requests: int = 200_000) -> dict:
    """One connection's loop for `seconds` (or `max_requests`): returns latencies, statuses and, for POSTs,
    the (asset, locale, text) of every write that answered 200.

    POSTs: connection `worker` of `workers` writes pairs first_pair + worker, + workers, + 2 * workers ...:
    no two POSTs of a run touch the same (asset, locale) pair.
    """
    client = Client(port, key)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    written: list[tuple[str, str, str]] = []
    errors = 0
    started = time.perf_counter()
    deadline = started + seconds
    n = 0
    while n < max_requests and time.perf_counter() < deadline:
        if kind == "get-one":
            path, body, target = f"/api/translations/{asset_id((n * 7919 + worker * 104729) % assets)}/fr", None, None
        elif kind == "get-list":
            path, body, target = "/api/assets", None, None
        else:
            pair = first_pair + worker + n * workers
            if pair >= first_pair + pairs_per_phase(assets):
                break
            target = (*post_target(pair, assets), f"bench {run_tag} pair {pair} ✓")
            path, body = f"/api/translations/{target[0]}/{target[1]}", target[2].encode("utf-8")
        t0 = time.perf_counter()
        try:
            status, _ = client.request("POST" if body is not None else "GET", path, body)
        except (OSError, http.client.HTTPException):
            errors += 1
            n += 1
            continue
        latencies.append((time.perf_counter() - t0) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
        if target is not None and status == 200:
            written.append(target)
        n += 1
    return {"latencies": latencies, "statuses": statuses, "written": written, "errors": errors,
            "elapsed": time.perf_counter() - started, "reconnects": client.reconnects}


def measure(pool: ProcessPoolExecutor, kind: str, port: int, key: str, seconds: float, connections: int,
            assets: int, run_tag: str, first_pair: int = 0) -> dict:
    futures = [pool.submit(run_load, kind, port, key, seconds, w, connections, assets, run_tag, first_pair)
               for w in range(connections)]
    results = [future.result() for future in futures]
    latencies = [value for result in results for value in result["latencies"]]
    statuses: dict[int, int] = {}
    for result in results:
        for status, number in result["statuses"].items():
            statuses[status] = statuses.get(status, 0) + number
    elapsed = max(result["elapsed"] for result in results)
    return {
        "requests": len(latencies), "per_second": len(latencies) / elapsed if elapsed else 0.0,
        "ok": statuses.get(200, 0), "statuses": statuses, "errors": sum(r["errors"] for r in results),
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p95": percentile(latencies, 0.95) if latencies else float("nan"),
        "p99": percentile(latencies, 0.99) if latencies else float("nan"),
        "max": max(latencies) if latencies else float("nan"),
        "written": [target for result in results for target in result["written"]],
        "reconnects": sum(r["reconnects"] for r in results),
    }


def worker_pids(server_pid: int) -> list[int]:
    """The gunicorn workers: the children of the server process (the arbiter). A worker's own children (formats'
    fork server and the processes it starts: checks, converts, big imports) are not workers."""
    return children(server_pid)


def rss_mb(server_pid: int) -> list[float]:
    """Resident memory of each gunicorn worker."""
    return [memory_kb(pid).get("VmRSS", 0) / 1024 for pid in worker_pids(server_pid)]


def helpers_rss_mb(server_pid: int) -> float:
    """Resident memory of the workers' descendants together (fork servers and their children), in MB."""
    return sum(memory_kb(pid).get("VmRSS", 0) / 1024 for worker in worker_pids(server_pid)
               for pid in descendants(worker))


def measure_reads_after_writes(port: int, key: str, assets: int, run_tag: str, server_pid: int) -> dict:
    """Rows 4-6: first asset list after a write, the po.zip archive, and the workers' memory after exports."""
    client = Client(port, key)
    floor = rss_mb(server_pid)
    first_lists = []
    for n in range(6):
        # the source locale: the POST phases write target locales only, so the lost-update check is unaffected
        status, _ = client.request("POST", f"/api/translations/{asset_id(n)}/en", f"after-write {run_tag} {n}".encode())
        assert status == 200
        t0 = time.perf_counter()
        client.request("GET", "/api/assets")
        first_lists.append((time.perf_counter() - t0) * 1000)
    first = statistics.median(first_lists)
    # issue #10 sets this target at 10k; at other sizes the figure is shown beside it for reference
    target = f"target <= 100 ms: {verdict(first <= 100)}" if assets == 10000 else "(the 100 ms target is at 10k)"
    print(f"{'first GET /api/assets':<24} after a write: median {first:.0f} ms of {len(first_lists)} "
          f"(max {max(first_lists):.0f} ms); {target}", flush=True)
    archive = []
    for path in ("/api/export/locale/fr.po", "/api/export/all.json", "/api/export/archive/po.zip") * 2:
        t0 = time.perf_counter()
        status, _ = client.request("GET", path)
        if path.endswith(".zip"):
            archive.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    client.request("GET", "/api/export/archive/po.zip")
    archive.append((time.perf_counter() - t0) * 1000)
    zip_ms = statistics.median(archive)
    # each one shown: the first follows the writes above and renders the chunks they changed (and, in a worker
    # that never exported this project, every chunk of the four locales fr.po did not render)
    print(f"{'GET archive/po.zip':<24} median {zip_ms:.0f} ms of {len(archive)} ("
          + ", ".join(f"{ms:.0f}" for ms in archive) + f" ms in turn); target <= 1200 ms at 100k: "
          f"{verdict(zip_ms <= 1200)}", flush=True)
    after = rss_mb(server_pid)
    print(f"{'worker RSS':<24} after exporting fr.po, all.json, po.zip: "
          + ", ".join(f"{size:.0f} MB" for size in after) + "; before them: "
          + ", ".join(f"{size:.0f} MB" for size in floor)
          + f"; target <= 600 MB: {verdict(bool(after) and max(after) <= 600)}", flush=True)
    return {"commits": len(first_lists), "first_list_ms": first, "zip_ms": zip_ms, "rss_mb": after}


BURST = 50  # writes between two reads of the asset list (issue #21)
BURST_ROUNDS = 3


def measure_bursts(data: Path, key: str, assets: int) -> dict:
    """Rows 7-9, in this process: two apps on the data directory stand for two workers of `gloss serve` (each
    has its own Store and caches), so the worker that wrote and the one that did not are told apart. Both hold
    a warm asset list; the writer makes 50 writes (several to each chunk), then each lists the assets again.
    The times are the server's work (the Flask test client, no sockets); the HTTP rows above add the transfer."""
    from app import create_app

    headers = {"Authorization": f"Loco {key}"}
    writer, other = create_app(data).test_client(), create_app(data).test_client()

    def list_ms(client) -> float:
        t0 = time.perf_counter()
        response = client.get("/api/assets", headers=headers)
        assert response.status_code == 200 and response.data
        return (time.perf_counter() - t0) * 1000

    for client in (writer, other, writer, other):
        list_ms(client)
    warm = [list_ms(writer) for _ in range(5)]
    after = {"writer": [], "other": []}
    for round_ in range(BURST_ROUNDS):
        for n in range(BURST):
            # the source locale, as measure_reads_after_writes: the lost-update check's pairs are untouched
            target = asset_id((round_ * BURST + n) * 7919 % assets)
            response = writer.post(f"/api/translations/{target}/en", data=f"burst {round_} {n}".encode(),
                                   headers=headers)
            assert response.status_code == 200
        after["writer"].append(list_ms(writer))
        after["other"].append(list_ms(other))
    for name, times in after.items():
        ok = statistics.median(times) <= 100
        target = f"target <= 100 ms: {verdict(ok)}" if assets == 10000 else "(the 100 ms target is at 10k)"
        print(f"{'GET /api/assets':<24} after {BURST} writes, {name} worker: median {statistics.median(times):.0f} ms "
              f"of {len(times)} (max {max(times):.0f} ms, in-process); {target}", flush=True)
    warm_ms = statistics.median(warm)
    target = f"target <= 150 ms: {verdict(warm_ms <= 150)}" if assets == 100000 else "(the 150 ms target is at 100k)"
    print(f"{'GET /api/assets':<24} warm: median {warm_ms:.0f} ms of {len(warm)} (in-process); {target}", flush=True)
    return {"burst_writer_ms": statistics.median(after["writer"]), "burst_other_ms": statistics.median(after["other"]),
            "warm_list_ms": warm_ms}


def measure_warm_list_over_http(data: Path, key: str, assets: int, workers: int, log: Path) -> float:
    """Row 9 over HTTP (--bursts-only; a full run shows it as the GET /api/assets row): one connection per
    worker's worth, each warmed up, then the median of 5 lists on each."""
    port = free_port()
    server = start_server(data, port, workers, log)
    try:
        wait_for_ping(server, port)
        clients = [Client(port, key) for _ in range(workers)]
        for client in clients * 2:
            assert client.request("GET", "/api/assets")[0] == 200
        times = []
        for client in clients * 5:
            t0 = time.perf_counter()
            client.request("GET", "/api/assets")
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        stop_server(server)
    warm = statistics.median(times)
    target = f"target <= 150 ms: {verdict(warm <= 150)}" if assets == 100000 else "(the 150 ms target is at 100k)"
    print(f"{'GET /api/assets':<24} warm over HTTP: median {warm:.0f} ms of {len(times)} (max {max(times):.0f} ms); "
          f"{target}", flush=True)
    return warm


# ----------------------------------------------------------------------------- the server
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start_server(data: Path, port: int, workers: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", "--data", str(data), "serve", "--host", HOST, "--port", str(port),
             "--workers", str(workers)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for_ping(server: subprocess.Popen, port: int, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=2)
            conn.request("GET", "/api/ping")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not answer /api/ping in time")


def stop_server(server: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group (gunicorn master and workers), SIGKILL if it lingers."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def git_count(path: Path) -> int:
    out = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=path, capture_output=True, text=True,
                         check=True).stdout
    return int(out.strip())


# ----------------------------------------------------------------------------- main
def line(label: str, result: dict, target: str = "") -> str:
    text = (f"{label:<24} {result['per_second']:8.1f} req/s  p50 {result['p50']:7.2f} ms  p95 {result['p95']:7.2f} ms"
            f"  p99 {result['p99']:7.2f} ms  max {result['max']:7.1f} ms  ({result['requests']} requests, "
            f"statuses {dict(sorted(result['statuses'].items()))}, errors {result['errors']})")
    return text + (f"\n{'':<24} target: {target}" if target else "")


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assets", type=int, default=10000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--list-connections", type=int, default=2, help="connections for GET /api/assets")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dir", default=str(ROOT / "bench" / ".work"))
    parser.add_argument("--bursts-only", action="store_true", help="only rows 7-9 (no server, seconds per size)")
    args = parser.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    # (the in-process apps of measure_bursts may still repack or save derived data in the project as it is
    # removed: a leftover under bench/.work/ rather than a traceback after every figure was printed)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="api-", ignore_cleanup_errors=True) as tmp:
        data = Path(tmp) / "data"
        started = time.perf_counter()
        project = build_project(data, args.assets)
        key, _ = KeyStore(data / "keys.json").create(project.id, "full", "Bench", "bench@example.com", utc_now())
        print(f"built {args.assets} assets x 5 locales in {time.perf_counter() - started:.1f}s "
              f"({project.path})", flush=True)
        if args.bursts_only:
            measure_bursts(data, key, args.assets)
            measure_warm_list_over_http(data, key, args.assets, args.workers, Path(tmp) / "server.log")
            return 0
        port = free_port()
        log = Path(tmp) / "server.log"
        server = start_server(data, port, args.workers, log)
        try:
            wait_for_ping(server, port)
            print(f"gloss serve --workers {args.workers} on {HOST}:{port} is up; {args.connections} connections, "
                  f"{args.seconds:.0f}s per measurement", flush=True)
            run_tag = f"{os.getpid()}-{int(time.time())}"
            with ProcessPoolExecutor(max_workers=max(args.connections, args.list_connections)) as pool:
                # warm-up: every worker process loads the project snapshot on its first request
                measure(pool, "get-one", port, key, 1.0, args.connections, args.assets, run_tag)
                measure(pool, "get-list", port, key, 1.0, args.list_connections, args.assets, run_tag)
                get_one = measure(pool, "get-one", port, key, args.seconds, args.connections, args.assets, run_tag)
                print(line("GET one translation", get_one, f">= {TARGET_GET_ONE:.0f}/s: "
                           f"{verdict(get_one['per_second'] >= TARGET_GET_ONE and get_one['ok'] == get_one['requests'])}"),
                      flush=True)
                get_list = measure(pool, "get-list", port, key, args.seconds, args.list_connections, args.assets,
                                   run_tag)
                print(line("GET /api/assets", get_list, "(no target; 10k assets, pretty-printed JSON)"), flush=True)
                commits_before = git_count(project.path)
                post = measure(pool, "post", port, key, args.seconds, args.connections, args.assets, run_tag)
                post_ok = (post["per_second"] >= TARGET_POST and post["p95"] <= TARGET_POST_P95_MS)
                print(line("POST a translation", post, f">= {TARGET_POST:.0f}/s and p95 <= "
                           f"{TARGET_POST_P95_MS:.0f} ms: {verdict(post_ok)}"), flush=True)
                # the same with one connection: the latency of a write when nobody waits for the lock
                single = measure(pool, "post", port, key, args.seconds, 1, args.assets, run_tag,
                                 first_pair=pairs_per_phase(args.assets))
                print(line("POST, one connection", single, "(the peer: no queueing behind other writers)"),
                      flush=True)
                # issue #10's rows: at 10k throughput >= 1 client's, p95 <= 25 ms, p99 <= 60 ms; at 100k p99 <= 100 ms
                small = args.assets <= 10000
                p99_target = 60.0 if small else 100.0
                scaled_ok = (post["p99"] <= p99_target and (not small or (
                    post["per_second"] >= single["per_second"] and post["p95"] <= TARGET_POST_P95_MS)))
                wanted = (f">= 1 client's, p95 <= {TARGET_POST_P95_MS:.0f} ms, p99 <= {p99_target:.0f} ms" if small
                          else f"p99 <= {p99_target:.0f} ms")
                print(f"{'POST scaling':<24} {args.connections} clients {post['per_second']:.1f} req/s vs 1 client "
                      f"{single['per_second']:.1f} req/s; p95 {post['p95']:.1f} ms, p99 {post['p99']:.1f} ms\n"
                      f"{'':<24} target: {wanted}: {verdict(scaled_ok)}", flush=True)
            extra = measure_reads_after_writes(port, key, args.assets, run_tag, server.pid)
            commits_after = git_count(project.path) - extra["commits"]
        finally:
            stop_server(server)
        # lost updates, checked on the repository itself (a fresh Store, not the server)
        snapshot = Store(data).project(project.id).snapshot()
        written = post["written"] + single["written"]
        assert len(set((a, l) for a, l, _ in written)) == len(written), "a pair was written twice"
        lost = [target for target in written
                if (snapshot.translation(target[0], target[1]) or {}).get("text") != target[2]]
        wrong_rev = [target for target in written
                     if (snapshot.translation(target[0], target[1]) or {}).get("rev") != 2]
        new_commits = commits_after - commits_before
        print(f"{'lost updates':<24} {len(lost)} of {len(written)} POSTs answered 200 "
              f"(revision not 2: {len(wrong_rev)}); new commits {new_commits} (expected {len(written)}): "
              f"{verdict(not lost and not wrong_rev and new_commits == len(written))}", flush=True)
        for target in lost[:5]:
            print(f"    lost: {target}")
        bursts = measure_bursts(data, key, args.assets)
        summary = {
            "get_one_per_s": round(get_one["per_second"], 1), "get_one_p95_ms": round(get_one["p95"], 2),
            "get_list_per_s": round(get_list["per_second"], 2), "get_list_p50_ms": round(get_list["p50"], 1),
            "post_per_s": round(post["per_second"], 1), "post_p50_ms": round(post["p50"], 2),
            "post_p95_ms": round(post["p95"], 2), "post_1conn_per_s": round(single["per_second"], 1),
            "post_1conn_p50_ms": round(single["p50"], 2), "post_1conn_p95_ms": round(single["p95"], 2),
            "posts_ok": len(written), "lost_updates": len(lost), "new_commits": new_commits,
            **{name: round(value, 1) for name, value in bursts.items()},
        }
        print("summary " + json.dumps(summary), flush=True)
        met = (get_one["per_second"] >= TARGET_GET_ONE and post_ok and not lost and not wrong_rev
               and new_commits == len(written))
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
