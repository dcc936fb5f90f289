"""Cluster benchmark (issue 22): a 3-node cluster on loopback (ZooKeeper, `gloss serve --cluster`, HAProxy) beside a
single `gloss serve`, one run, printed side by side.

Run: .venv/bin/python bench/bench_cluster.py [--writes 150] [--projects 30] [--seconds 10] [--kills 10]

  1. write latency: --writes sequential POST /api/assets, single node vs the cluster through HAProxy (p50, p95,
     and the overhead; targets p50 +5 ms, p95 +15 ms), both running, in alternating rounds of ROUND writes
  2. --projects projects x 4 clients through HAProxy for --seconds: writes/s, and CPU seconds per node (the
     projects' leaders spread over the nodes)
  3. --kills leader kills under 4 writing clients: failover time (kill -> a write acknowledged again) min/median/
     max, and acknowledged writes lost (read back at the end; must be 0)
  4. follower lag: a node down during 50 writes, restarted: seconds until its copy is at the recorded head
Figures come from a shared 2-core machine: read them as under load. Scratch data lives in bench/.work/.
"""
from __future__ import annotations

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_storage import percentile, scratch_directory  # noqa: E402
from cluster.demo import LocalCluster, status  # noqa: E402
from cluster.processes import free_port, signal_group, stop  # noqa: E402
from app.cli import seed_node_data  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import Store  # noqa: E402

PROJECT = "acme-notes"
ROUND = 25  # writes to one side before the other's turn (alternating_latencies)


def call(base: str, method: str, path: str, key: str, fields: dict | None = None, timeout: float = 60) -> int:
    """The status of one request (0: no answer), form fields for a POST."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    headers = {"Authorization": f"Loco {key}"}
    body = None
    if fields is not None:
        body = urllib.parse.urlencode(fields)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request(method, path, body, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        connection.close()


def post(base: str, path: str, fields: dict, key: str, timeout: float = 60) -> int:
    return call(base, "POST", path, key, fields, timeout)


def get(base: str, path: str, key: str) -> int:
    return call(base, "GET", path, key)


def latencies(base: str, key: str, count: int, prefix: str) -> list[float]:
    times = []
    for number in range(count):
        started = time.perf_counter()
        code = post(base, "/api/assets", {"id": f"{prefix}.{number}", "text": "x"}, key)
        if code == 201:
            times.append((time.perf_counter() - started) * 1000)
    return times


def seed(directory: Path, projects: int) -> dict[str, str]:
    """The demo project and `projects - 1` more, each with a full-access key: {project: key}."""
    keys = {PROJECT: seed_node_data(directory)}
    store, key_store = Store(directory), KeyStore(directory / "keys.json")
    for number in range(projects - 1):
        project = store.create_project(f"Bench {number}", "en", "English")
        keys[project.id] = key_store.create(project.id, "full", "Bench")[0]
    return keys


@contextmanager
def single_node(seeded: Path, scratch: Path, key: str) -> Iterator[str]:
    """A single `gloss serve` on a copy of the seeded data, warmed up: its base URL."""
    import shutil

    data = scratch / "single"
    shutil.copytree(seeded, data)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "app.cli", "--data", str(data), "serve", "--port", str(port)],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while get(base, "/api/ping", key) != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        latencies(base, key, 10, "warm")
        yield base
    finally:
        stop(process)


def alternating_latencies(single: str, cluster: str, key: str, writes: int) -> tuple[list[float], list[float]]:
    """`writes` sequential writes to each, in alternating rounds of ROUND: the machine's drift over the run
    (other work, the file system's recently freed inodes that each new file's allocation scans on this
    journal-less ext4) falls on both alike instead of on whichever ran second."""
    alone: list[float] = []
    clustered: list[float] = []
    for start in range(0, writes, ROUND):
        count = min(ROUND, writes - start)
        alone += latencies(single, key, count, f"single{start}")
        clustered += latencies(cluster, key, count, f"cluster{start}")
    return alone, clustered


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (a node's arbiter and worker)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for child in [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                         text=True).stdout.split()]:
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def spread_load(cluster: LocalCluster, keys: dict[str, str], seconds: float) -> None:
    assert cluster.balancer is not None
    projects = list(keys)
    before = {node: cpu_seconds(cluster.processes[node].pid) for node in cluster.ids}
    done = [0]
    stop_at = time.monotonic() + seconds

    def client(number: int) -> None:
        count = 0
        while time.monotonic() < stop_at:
            project = projects[(number + count * 4) % len(projects)]
            if post(cluster.balancer.url, "/api/assets", {"id": f"s{number}.{count}", "text": "x"},
                    keys[project]) == 201:
                done[0] += 1
            count += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    used = {node: cpu_seconds(cluster.processes[node].pid) - before[node] for node in cluster.ids}
    leaders = [p["leader"] for p in status(cluster.directory)["projects"]]
    print(f"  {len(projects)} projects x 4 clients: {done[0] / seconds:.1f} writes/s; CPU s per node: "
          + ", ".join(f"{node} {used[node]:.1f}" for node in cluster.ids)
          + "; leaders per node: " + ", ".join(f"{node} {leaders.count(node)}" for node in cluster.ids))


def placement(cluster: LocalCluster) -> dict:
    return next(p for p in status(cluster.directory)["projects"] if p["id"] == PROJECT)


def kills(cluster: LocalCluster, key: str, count: int) -> None:
    assert cluster.balancer is not None
    acknowledged: list[str] = []
    stopping = threading.Event()

    def writer(number: int) -> None:
        sequence = 0
        while not stopping.is_set():
            asset = f"k{number}.{sequence}"
            sequence += 1
            if post(cluster.balancer.url, "/api/assets", {"id": asset, "text": "x"}, key, timeout=30) == 201:
                acknowledged.append(asset)
            else:
                time.sleep(0.1)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    times = []
    try:
        for _ in range(count):
            leader = placement(cluster)["leader"]
            before = len(acknowledged)
            while len(acknowledged) < before + 4:
                time.sleep(0.05)
            cluster.kill(leader)
            killed = time.monotonic()
            seen = len(acknowledged)
            while placement(cluster)["leader"] == leader or len(acknowledged) <= seen:
                time.sleep(0.05)
            times.append(time.monotonic() - killed)
            cluster.start_node(leader)
            cluster.wait_ready(leader)
    finally:
        stopping.set()
        for thread in threads:
            thread.join()
    lost = [asset for asset in acknowledged if get(cluster.balancer.url, f"/api/assets/{asset}", key) != 200]
    print(f"  {count} leader kills: failover {min(times):.1f} / {statistics.median(times):.1f} / {max(times):.1f} s "
          f"(min/median/max, kill -> a write acknowledged again); {len(acknowledged)} writes acknowledged, "
          f"{len(lost)} lost (target 0)")


def lag(cluster: LocalCluster, key: str) -> None:
    assert cluster.balancer is not None
    follower = placement(cluster)["followers"][0]
    cluster.signal(follower, signal.SIGKILL)
    cluster.processes[follower].wait()
    for number in range(50):
        post(cluster.balancer.url, "/api/assets", {"id": f"lag.{number}", "text": "x"}, key)
    recorded = placement(cluster)["head"]
    started = time.monotonic()
    cluster.start_node(follower)
    cluster.wait_ready(follower)
    repository = cluster.data_dir(follower) / "projects" / PROJECT
    while subprocess.run(["git", "rev-parse", "main"], cwd=repository, capture_output=True,
                         text=True).stdout.strip() != recorded:
        time.sleep(0.05)
    print(f"  a follower down during 50 writes: at the recorded head {time.monotonic() - started:.1f} s after its "
          "restart began (process start included); a live follower never lags an acknowledged write (each is "
          "on its disk before the answer)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=150)
    parser.add_argument("--projects", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--kills", type=int, default=10)
    args = parser.parse_args()
    with scratch_directory("cluster-") as scratch_name:
        scratch = Path(scratch_name)
        seeded = scratch / "seed"
        keys = seed(seeded, args.projects)
        key = keys[PROJECT]
        cluster = LocalCluster(scratch / "cluster", 3)
        cluster.seed_from(seeded)
        try:
            cluster.start()
            while not all(p["leader"] and p["followers"] for p in status(cluster.directory)["projects"]):
                time.sleep(0.2)
            assert cluster.balancer is not None
            latencies(cluster.balancer.url, key, 10, "warm")
            with single_node(seeded, scratch, key) as alone:
                single, clustered = alternating_latencies(alone, cluster.balancer.url, key, args.writes)
            print("cluster benchmark (3 nodes + HAProxy on loopback; shared 2-core machine)")
            print(f"  write latency, {args.writes} sequential POST /api/assets: single node p50 "
                  f"{statistics.median(single):.1f} ms p95 {percentile(single, 0.95):.1f} ms; cluster via HAProxy "
                  f"p50 {statistics.median(clustered):.1f} ms p95 {percentile(clustered, 0.95):.1f} ms; overhead "
                  f"p50 +{statistics.median(clustered) - statistics.median(single):.1f} ms (target +5), p95 "
                  f"+{percentile(clustered, 0.95) - percentile(single, 0.95):.1f} ms (target +15)")
            spread_load(cluster, keys, args.seconds)
            kills(cluster, key, args.kills)
            lag(cluster, key)
        finally:
            cluster.stop()
            for node in cluster.ids:
                signal_group(cluster.processes[node], signal.SIGCONT)


if __name__ == "__main__":
    main()
