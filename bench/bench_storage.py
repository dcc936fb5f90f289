"""Storage benchmark (issue #2): translation write latency, cached read latency, repository size.

Run: .venv/bin/python bench/bench_storage.py [--sizes 1000,10000,100000] [--writes 300]
Targets on the 2-core reference machine: write p95 <= 15 ms at 10k assets, <= 60 ms at 100k; cached read
<= 0.2 ms; `.git` after 10,000 single edits on the 10k project (as the background maintenance leaves it)
<= 1.5x what `git repack -a -d -f` makes of the same repository (the floor, measured on a copy).
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from storage import operations as ops  # noqa: E402
from storage.gitrepo import Person  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

LOCALES = ["fr", "de", "ja", "ar"]
BENCH = Person("Bench", "bench@example.com")
ACTOR = ops.Actor(1, "Bench", "bench@example.com")
SCRATCH = Path(__file__).resolve().parent / ".work"


def scratch_directory(prefix: str | None = None) -> tempfile.TemporaryDirectory:
    """A temporary directory under bench/.work/ for a benchmark's data, removed when the run ends."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(dir=SCRATCH, prefix=prefix)


def build_project(root: Path, assets: int):
    """A project of `assets` assets, each translated in the source and 4 target locales (5 locales)."""
    store = Store(root)
    project = store.create_project(f"Bench {assets}", "en", "English")
    now = utc_now()
    with project.transaction(BENCH, "Bulk load", "import") as tx:
        for code in LOCALES:
            ops.add_locale(tx, code, code)
        for i in range(assets):
            asset_id = f"screen{i // 50}.label{i}"
            ops.create_asset(tx, asset_id, now, text=f"Source text number {i} for the benchmark", actor=ACTOR)
            for code in LOCALES:
                ops.translate(tx, asset_id, code, f"{code} translation {i} of the text", ACTOR, now)
    project.repo.pack_loose_objects()
    return project


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure_writes(project, assets: int, count: int) -> list[float]:
    ids = list(project.snapshot().asset_ids())
    timings = []
    for n in range(count):
        asset_id = random.choice(ids)
        locale = random.choice(LOCALES)
        start = time.perf_counter()
        with project.transaction(BENCH, f"Translate {asset_id}", "translate",
                                 [("Asset", asset_id), ("Locale", locale)]) as tx:
            ops.translate(tx, asset_id, locale, f"edit {n}", ACTOR, utc_now())
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def measure_cached_reads(project, count: int = 20000) -> float:
    ids = list(project.snapshot().asset_ids())[:1000]
    project.snapshot()
    start = time.perf_counter()
    for n in range(count):
        project.snapshot().translation(ids[n % len(ids)], "fr")
    return (time.perf_counter() - start) * 1000 / count


def disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--edits", type=int, default=10000, help="single edits before measuring size (10k project)")
    parser.add_argument("--dir", default=str(Path(__file__).resolve().parent / ".work"),
                        help="where to build the projects (a scratch folder, removed afterwards)")
    args = parser.parse_args()
    random.seed(1)
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            started = time.perf_counter()
            project = build_project(Path(tmp) / f"p{size}", size)
            built = time.perf_counter() - started
            Store(project.repo.path.parent.parent).project(project.id).snapshot()  # cold load, other handle
            cold_start = time.perf_counter()
            Store(project.repo.path.parent.parent).project(project.id).snapshot()
            cold = (time.perf_counter() - cold_start) * 1000
            writes = measure_writes(project, size, args.writes)
            read = measure_cached_reads(project)
            print(f"{size:>7} assets x 5 locales: build {built:.1f}s, cold snapshot load {cold:.0f} ms; "
                  f"write p50 {statistics.median(writes):.2f} ms, p95 {percentile(writes, 0.95):.2f} ms, "
                  f"max {max(writes):.1f} ms; cached read {read * 1000:.1f} us", flush=True)
            if size == 10000:
                measure_writes(project, size, max(0, args.edits - args.writes))
                wait_for_maintenance()
                project.repo.pack_loose_objects(wait=True)  # the next background run, done now
                git_dir = disk_size(project.path / ".git")
                tree = disk_size(project.path) - git_dir
                commits = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=project.path,
                                         capture_output=True, text=True).stdout.strip()
                floor = repacked_size(project.path, Path(tmp) / "floor")
                print(f"        after {args.edits} single edits ({commits} commits): .git {git_dir / 1e6:.2f} MB, "
                      f"working tree {tree / 1e6:.2f} MB; floor `git repack -a -d -f` {floor / 1e6:.2f} MB: "
                      f"{git_dir / floor:.2f}x (target <= 1.5x) {'met' if git_dir <= 1.5 * floor else 'MISSED'}",
                      flush=True)


def wait_for_maintenance() -> None:
    for thread in threading.enumerate():
        if thread.name == "gloss-pack":
            thread.join()


def repacked_size(repo: Path, scratch: Path) -> int:
    """The size of `.git` once `git repack -a -d -f` has run on a copy of the repository."""
    shutil.copytree(repo / ".git", scratch / ".git")
    subprocess.run(["git", "repack", "-a", "-d", "-f", "-q"], cwd=scratch, check=True)
    return disk_size(scratch / ".git")


if __name__ == "__main__":
    main()
