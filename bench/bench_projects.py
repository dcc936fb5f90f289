"""Many projects on one server (issue 21, "Many projects"): `gloss serve --workers 2` under `ulimit -n 1024`.

Run: .venv/bin/python bench/bench_projects.py [--projects 300] [--assets 200] [--rounds 2]
     .venv/bin/python bench/bench_projects.py --full      (3,000 projects: the issue's figure; minutes)

Every project holds --assets assets in the source locale and French (2 locales), one pack, its own key. Each
round touches every project once (GET one translation) on a new connection, so both workers serve each
project over the rounds; a sampler reads each worker's open descriptors every 50 ms and its peak RSS (VmHWM).
Then the first projects, evicted since (there are more projects than a worker keeps open), are touched again
and timed.
Prints: projects touched, errors (5xx, wrong answers, refused connections; target 0), per-worker max RSS
(target <= 300 MB) and max open files (target <= 256), p95 of a touch after eviction (target <= 20 ms), beside
the same touch of a project still open.
The projects are copies of one built repository (building 3,000 through Git would take most of the run);
scratch data lives in a temporary directory, removed afterwards.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_storage import ACTOR, BENCH, percentile  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.keys import ApiKey, KeyStore, digest_of  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402
from tests.reliability.harness import Server  # noqa: E402

OPEN_FILES = 1024  # the common `ulimit -n`
TARGET_RSS_MB, TARGET_FILES, TARGET_P95_MS = 300, 256, 20.0
RETOUCHED = 200  # projects timed after their eviction


def build(data_dir: Path, projects: int, assets: int) -> list[tuple[str, str]]:
    """(project id, key) of `projects` copies of one project of `assets` assets x 2 locales."""
    store = Store(data_dir)
    template = store.create_project("Template", "en", "English", project_id="p00000")
    now = utc_now()
    with template.transaction(BENCH, "Bulk load", "import") as tx:
        ops.add_locale(tx, "fr", "French")
        for i in range(assets):
            ops.create_asset(tx, f"a{i}", now, text=f"Source text {i}", actor=ACTOR)
            ops.translate(tx, f"a{i}", "fr", f"Texte {i}", ACTOR, now)
    template.repo.pack_loose_objects()
    template.repo.close()
    ids = [f"p{n:05d}" for n in range(projects)]
    for project_id in ids[1:]:
        shutil.copytree(template.path, store.projects_dir / project_id, symlinks=True)
    return list(zip(ids, write_keys(data_dir / "keys.json", ids)))


def write_keys(path: Path, project_ids: list[str]) -> list[str]:
    """One full-access key per project, written in one go (KeyStore.create rewrites the file per key)."""
    keys = [secrets.token_urlsafe(24) for _ in project_ids]
    records = [asdict(ApiKey(id=f"k{n:07x}", digest=digest_of(key), access="full", project=project_id,
                             user_id=1, user_name="Bench", user_email="bench@example.com", created=utc_now()))
               for n, (project_id, key) in enumerate(zip(project_ids, keys))]
    KeyStore(path)._save_records(records)
    return keys


class Sampler(threading.Thread):
    """The largest number of open descriptors each worker held, sampled every 50 ms."""

    def __init__(self, server: Server):
        super().__init__(daemon=True)
        self.server = server
        self.max_files: dict[int, int] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.05):
            for pid in self.server.worker_pids():
                try:
                    count = len(os.listdir(f"/proc/{pid}/fd"))
                except OSError:
                    continue
                self.max_files[pid] = max(self.max_files.get(pid, 0), count)


def peak_rss_mb(pid: int) -> float:
    for field in Path(f"/proc/{pid}/status").read_text().splitlines():
        if field.startswith("VmHWM:"):
            return int(field.split()[1]) / 1024
    return 0.0


def touch(server: Server, project: tuple[str, str], asset: int, errors: list[str]) -> float:
    """GET one translation of a project; returns milliseconds, records a wrong answer or a failure."""
    started = time.perf_counter()
    try:
        reply = server.request("GET", f"/api/translations/a{asset}/fr", key=project[1], timeout=30,
                               headers={"Connection": "close"})
    except OSError as error:
        errors.append(f"{project[0]}: {error}")
        return (time.perf_counter() - started) * 1000
    elapsed = (time.perf_counter() - started) * 1000
    if reply.status != 200 or reply.json().get("translation") != f"Texte {asset}":
        errors.append(f"{project[0]}: {reply.status} {reply.body[:120]!r}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--projects", type=int, default=300)
    parser.add_argument("--assets", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="3,000 projects (the issue's figure)")
    args = parser.parse_args()
    projects = 3000 if args.full else args.projects
    with tempfile.TemporaryDirectory(prefix="gloss-bench-projects-") as scratch:
        data_dir = Path(scratch) / "data"
        started = time.perf_counter()
        made = build(data_dir, projects, args.assets)
        print(f"built {projects} projects of {args.assets} assets x 2 locales in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
        server = Server(data_dir, max_open_files=OPEN_FILES).start()
        sampler = Sampler(server)
        sampler.start()
        errors: list[str] = []
        try:
            started = time.perf_counter()
            for round_ in range(args.rounds):
                for n, project in enumerate(made):
                    touch(server, project, (n + round_) % args.assets, errors)
            touching = time.perf_counter() - started
            retouched = made[:min(RETOUCHED, len(made) // 4)]  # the least recently used: evicted since
            after_eviction = [touch(server, project, 7, errors) for project in retouched]
            warm = [touch(server, made[-1], 7, errors) for _ in range(len(retouched))]  # open in both workers
            workers = server.worker_pids()
            rss = {pid: peak_rss_mb(pid) for pid in workers}
        finally:
            sampler.stopped.set()
            sampler.join()
            server.stop()
        tracebacks = server.tracebacks()
    p95 = percentile(after_eviction, 0.95)
    max_rss = max(rss.values(), default=0.0)
    max_files = max(sampler.max_files.values(), default=0)
    print(f"projects touched         {projects} x {args.rounds} rounds ({projects * args.rounds} requests in "
          f"{touching:.0f} s), then {len(retouched)} again")
    print(f"errors                   {len(errors)} (5xx, wrong answers, failed connections); target 0: "
          f"{'PASS' if not errors else 'FAIL'}" + "".join(f"\n    {line}" for line in errors[:5]))
    print(f"worker max RSS           " + ", ".join(f"{size:.0f} MB" for size in rss.values())
          + f"; target <= {TARGET_RSS_MB} MB: {'PASS' if max_rss <= TARGET_RSS_MB else 'FAIL'}")
    print(f"worker max open files    " + ", ".join(str(count) for count in sampler.max_files.values())
          + f" (ulimit -n {OPEN_FILES}); target <= {TARGET_FILES}: {'PASS' if max_files <= TARGET_FILES else 'FAIL'}")
    print(f"touch after eviction     p95 {p95:.1f} ms, p50 {percentile(after_eviction, 0.5):.1f} ms "
          f"({args.assets} assets); target <= {TARGET_P95_MS:.0f} ms: {'PASS' if p95 <= TARGET_P95_MS else 'FAIL'}")
    print(f"touch of an open project p95 {percentile(warm, 0.95):.1f} ms, p50 {percentile(warm, 0.5):.1f} ms "
          "(the same requests' floor on this machine)")
    print(f"server tracebacks        {len(tracebacks)}")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
