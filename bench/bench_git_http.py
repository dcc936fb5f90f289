"""Git over HTTP benchmark: clone a 10k-asset x 5-locale project with 1,000 commits through `gloss serve`,
against `git clone` of the same repository from the filesystem, in one run; then the latency of pushing a
one-line change, and the API's latency while clones run.

Run: .venv/bin/python bench/bench_git_http.py [--assets 10000] [--commits 1000] [--clones 3] [--pushes 10]

Figures:
  1. clone over HTTP (`git clone http://KEY:@127.0.0.1:PORT/git/<project>.git`, protocol v2)
     vs `git clone file://…` (the same upload-pack and pack-objects, no HTTP) and a plain path clone
     (hard links, no packing at all): median of --clones runs each, and the ratio HTTP / file://.
  2. push of a one-line translation change to main (`git push origin main`: quarantine checks, key-level
     replay, merge commit under the project lock): median, p95, min, max over --pushes pushes.
  3. GET one translation through the API while --clones clones run at once, vs idle: median and p95.
The scratch data directory lives in bench/.work/ and is removed afterwards.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_storage import ACTOR, BENCH, LOCALES, build_project, percentile  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import utc_now  # noqa: E402
from tests.gitserver import git_env, run_git, start_server  # noqa: E402


def add_history(project, commits: int) -> None:
    """One translation commit after another, as API writes make them."""
    ids = list(project.snapshot().asset_ids())
    for n in range(commits):
        asset_id, locale = ids[(n * 7919) % len(ids)], LOCALES[n % len(LOCALES)]
        with project.transaction(BENCH, f"Translate {asset_id} [{locale}]", "translate",
                                 [("Asset", asset_id), ("Locale", locale)]) as tx:
            ops.translate(tx, asset_id, locale, f"edit {n}", ACTOR, utc_now())
    project.repo.pack_loose_objects()


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def clone_once(source: str, target: Path, env: dict, *options: str) -> None:
    shutil.rmtree(target, ignore_errors=True)
    result = run_git(target.parent, "clone", "-q", *options, source, str(target), env=env)
    assert result.returncode == 0, result.stderr


def edit_first_french_line(repo: Path, text: str) -> None:
    path = repo / "locales" / "fr" / "0000.json"
    lines = path.read_text("utf-8").split("\n")
    key, _, rest = lines[1].partition(": ")
    comma = "," if rest.endswith(",") else ""
    value = json.loads(rest[:len(rest) - len(comma)])
    value["text"] = text
    lines[1] = f"{key}: {json.dumps(value, ensure_ascii=False)}{comma}"
    path.write_text("\n".join(lines), "utf-8")


def api_latencies(base: str, key: str, asset_id: str, seconds: float) -> list[float]:
    timings = []
    deadline = time.time() + seconds
    request = urllib.request.Request(f"{base}/api/translations/{asset_id}/fr", headers={"Authorization": f"Loco {key}"})
    while time.time() < deadline:
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assets", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--clones", type=int, default=3)
    parser.add_argument("--pushes", type=int, default=10)
    args = parser.parse_args()
    work = ROOT / "bench" / ".work"
    work.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="git-http-", dir=work))
    server = None
    try:
        data = scratch / "data"
        start = time.perf_counter()
        project = build_project(data, args.assets)
        add_history(project, args.commits - 2)  # project creation, the bulk load and these: --commits in all
        built = time.perf_counter() - start
        count = run_git(project.path, "rev-list", "--count", "HEAD").stdout.strip()
        size = sum(p.stat().st_size for p in (project.path / ".git").rglob("*") if p.is_file())
        print(f"project: {args.assets} assets x {len(LOCALES) + 1} locales, {count} commits, "
              f".git {size / 1e6:.1f} MB (built in {built:.0f} s)")
        key, _ = KeyStore(data / "keys.json").create(project.id, "full", "Bench Pusher", "bench@example.com")
        server, _ = start_server(data)
        env = git_env(scratch / "home")
        url = server.url(key, project.id)

        clone_once(url, scratch / "warm", env)  # first touch: page cache, worker imports
        http_times, file_times, path_times = [], [], []
        for n in range(args.clones):  # interleaved, so that machine load hits every kind alike
            http_times.append(timed(lambda: clone_once(url, scratch / "http", env)))
            file_times.append(timed(lambda: clone_once(f"file://{project.path}", scratch / "file", env)))
            path_times.append(timed(lambda: clone_once(str(project.path), scratch / "path", env)))
        http_median, file_median = statistics.median(http_times), statistics.median(file_times)
        print(f"clone over HTTP:          median {http_median:.2f} s  (runs: "
              f"{', '.join(f'{t:.2f}' for t in http_times)})")
        print(f"clone file:// (no HTTP):  median {file_median:.2f} s  (runs: "
              f"{', '.join(f'{t:.2f}' for t in file_times)})")
        print(f"clone of the path (hard links, no packing): median {statistics.median(path_times):.2f} s")
        print(f"ratio HTTP / file://:     {http_median / file_median:.2f}")

        repo = scratch / "http"
        push_times = []
        for n in range(args.pushes):
            edit_first_french_line(repo, f"pushed edit {n}")
            assert run_git(repo, "commit", "-q", "-am", f"edit {n}", env=env).returncode == 0
            result = None

            def push() -> None:
                nonlocal result
                result = run_git(repo, "push", "-q", "origin", "main", env=env)

            push_times.append(timed(push) * 1000)
            assert result.returncode == 0, result.stderr
            assert run_git(repo, "pull", "-q", "--ff-only", env=env).returncode == 0
        print(f"push of a one-line change: median {statistics.median(push_times):.0f} ms, "
              f"p95 {percentile(push_times, 0.95):.0f} ms, min {min(push_times):.0f} ms, "
              f"max {max(push_times):.0f} ms ({args.pushes} pushes)")

        asset_id = next(iter(project.snapshot().asset_ids()))
        api_latencies(server.base, key, asset_id, 3)  # every worker loads the pushed head first
        idle = api_latencies(server.base, key, asset_id, 5)
        stop = threading.Event()

        def clone_loop(n: int) -> None:
            while not stop.is_set():
                clone_once(url, scratch / f"busy{n}", env)

        cloners = [threading.Thread(target=clone_loop, args=(n,)) for n in range(args.clones)]
        for thread in cloners:
            thread.start()
        time.sleep(0.5)
        busy = api_latencies(server.base, key, asset_id, 6)
        stop.set()
        for thread in cloners:
            thread.join()
        print(f"API GET one translation, idle:                 median {statistics.median(idle):.1f} ms, "
              f"p95 {percentile(idle, 0.95):.1f} ms")
        print(f"API GET one translation, {args.clones} clones running: median {statistics.median(busy):.1f} ms, "
              f"p95 {percentile(busy, 0.95):.1f} ms")
        print("(2-core machine shared with other jobs: absolute times vary with its load; the ratio is the figure)")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
