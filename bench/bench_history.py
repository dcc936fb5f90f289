"""History reads at 300 / 3,000 / 30,000 commits (issue 19, item 11): `/api/diff?from=HEAD~N` and one asset's
`/revisions`, through the Flask app in-process (what a worker does for the request, without the network).

Run: .venv/bin/python bench/bench_history.py [--commits 300,3000,30000] [--cache /tmp/gloss-bench-history]

The project: 500 assets translated in 4 locales by one bulk commit, then N single-translation commits of random
(asset, locale) pairs, as the API makes them, then the store's maintenance (repack, commit-graph, the
text-change index of storage.textchanges). Projects are built once through the storage layer and kept under
--cache between runs (30,000 commits take minutes); each run first does the maintenance again (nothing to
do when up to date; it builds what a project made by an older version lacks).
`/revisions` is asked of the translation the first of those commits changed, so the walk goes back through the
whole history to the bulk commit (the worst case); the diff from HEAD~N attributes every translation changed
since then (283 / 1,551 / 2,000 of them) to its newest commit. Each figure is the first request (the old
snapshot not cached yet; for the diff also the app's own first request: key check, HEAD snapshot), then the
median of three more. Target: <= 300 ms each at 3,000 commits, growing slower than the number of commits.

Measured, first request, at 300 / 3,000 / 30,000 commits (2 cores shared with the other helpers, load
average 6 to 9.5; two alternating runs of main and this version each, ranges):
- walking commits in Python (the original): diff 1,230 / 14,666 / 34,043 ms, revisions 167 / 1,291 / 14,035 ms
  (calmer machine);
- `git log -p` with Bloom filters (main before the index): diff 338-494 / 1,968-2,419 / 7,954-8,525 ms,
  revisions 76-82 / 781-787 / 3,517-4,015 ms. Every commit here rewrites one of 4 chunk files of 100 KB and
  git spends ~0.2 ms a commit hashing both versions' lines to diff them: linear in the history;
- the text-change index (maintenance records which entries each commit changed; a read walks those lines
  and reads no patch): diff 173-203 / 206-216 / 256-470 ms (the 300-commit figure is mostly the app's first
  request; the attribution itself is ~20 ms at 3,000 commits), revisions 3 / 12-25 / 119-259 ms. What is
  left grows with the commits a read walks (all of them for these revisions, 14,350 for the diff from
  HEAD~30000), at a few microseconds a commit: reading the index and checking one line each.
"""
from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app import create_app  # noqa: E402
from bench_storage import ACTOR, BENCH, LOCALES, build_project  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

ASSETS = 500
LAYOUT = "v2"  # bump when the project's shape changes, so that cached projects are rebuilt


def build(data: Path, commits: int) -> None:
    """The project (see the module docstring), its maintenance done, and a key in `data/bench-key`."""
    project = build_project(data, ASSETS)  # translated in 4 locales by one bulk commit
    pick = picker(commits)
    started = time.perf_counter()
    for n in range(commits):
        asset_id, code = next(pick)
        with project.transaction(BENCH, f"Translate {asset_id} [{code}]", "translate",
                                 [("Asset", asset_id), ("Locale", code)]) as tx:
            ops.translate(tx, asset_id, code, f"{code} text {n}", ACTOR, utc_now())
        if n and n % 5000 == 0:
            print(f"    built {n} commits in {time.perf_counter() - started:.0f} s", flush=True)
    project.repo.pack_loose_objects()  # what the store's maintenance does in the next lull
    key, _ = KeyStore(data / "keys.json").create(project.id, "readonly", "Bench", "bench@example.com")
    (data / "bench-key").write_text(key)


def picker(commits: int) -> Iterator[tuple[str, str]]:
    """The (asset, locale) of each single-translation commit, oldest first (the same for every run)."""
    rng = random.Random(commits)
    ids = [f"screen{i // 50}.label{i}" for i in range(ASSETS)]
    while True:
        yield rng.choice(ids), rng.choice(LOCALES)


def cached_project(cache: Path, commits: int) -> Path:
    data = cache / f"{LAYOUT}-{commits}"
    if not (data / "bench-key").exists():
        if data.exists():
            subprocess.run(["rm", "-rf", str(data)], check=True)  # a build that was interrupted
        print(f"building the {commits}-commit project in {data} …", flush=True)
        build(data, commits)
    maintain(data)
    return data


def maintain(data: Path) -> None:
    """The store's maintenance, as after the next lull (a project built by an older version lacks what it
    derives since; an up-to-date one costs nothing)."""
    store = Store(data)
    for project_id in store.project_ids():
        store.project(project_id).repo.pack_loose_objects()


def timed(client, path: str, key: str) -> float:
    started = time.perf_counter()
    response = client.get(path, headers={"Authorization": f"Loco {key}"})
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.get_data(as_text=True)[:200]}")
    return elapsed


def measure(data: Path, commits: int) -> dict[str, tuple[float, float]]:
    key = (data / "bench-key").read_text()
    client = create_app(data).test_client()
    asset, locale = next(picker(commits))
    figures = {}
    for label, path in ((f"diff from HEAD~{commits}", f"/api/diff?from=HEAD~{commits}"),
                        ("one asset's revisions", f"/api/translations/{asset}/{locale}/revisions")):
        first = timed(client, path, key)
        figures[label] = (first, statistics.median(timed(client, path, key) for _ in range(3)))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", default="300,3000,30000")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/gloss-bench-history"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"{'commits':>8}  {'read':<28} {'first ms':>9} {'median ms':>10}")
    for commits in (int(n) for n in args.commits.split(",")):
        data = cached_project(args.cache, commits)
        for label, (first, median) in measure(data, commits).items():
            print(f"{commits:>8}  {label:<28} {first:>9.0f} {median:>10.0f}", flush=True)
    print("target: <= 300 ms each at 3,000 commits, growing slower than the number of commits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
