"""Translator's workbench benchmark (issue #23): translation memory suggestions.

Run: .venv/bin/python bench/bench_workbench.py [--assets 100000] [--queries 300] [--writes 50]

Two projects of `--assets` assets (English source, French target) in one memory group: 2 x assets segments.
Their source texts are sentences of 4-14 words drawn from a 6,000-word vocabulary; a third of the second
project's sentences are the first's, and a third are one of them with a word changed (fuzzy matches).
Target (issue #23): suggestions p95 <= 50 ms with 200,000 segments. Also printed: the memory built cold (from Git,
history walked for each pair's commit; then from the persisted derived data in a new process's store) and its
update after one write (in the writing process; and in another process that reloads the snapshot from Git).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.service.memory import suggestions  # noqa: E402
from formats import collector_paused  # noqa: E402
from bench.bench_storage import percentile, scratch_directory  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.gitrepo import Person  # noqa: E402
from storage.memory import locale_memory  # noqa: E402
from storage.project import SAVE_DERIVED_AFTER  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

BENCH = Person("Bench", "bench@example.com")
ACTOR = ops.Actor(1, "Bench", "bench@example.com")
GROUP = "bench"


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(size)]


def sentence(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choices(words, k=rng.randint(4, 14))).capitalize()


def varied(rng: random.Random, text: str, words: list[str]) -> str:
    parts = text.split(" ")
    parts[rng.randrange(len(parts))] = rng.choice(words)
    return " ".join(parts)


def build(store: Store, name: str, sources: list[str]):
    project = store.create_project(name, "en", "English")
    now = utc_now()
    with project.transaction(BENCH, "Bulk load", "import") as tx:
        ops.add_locale(tx, "fr", "French")
        for i, text in enumerate(sources):
            asset_id = f"screen{i // 50}.label{i}"
            ops.create_asset(tx, asset_id, now, text=text, actor=ACTOR)
            ops.translate(tx, asset_id, "fr", f"fr: {text[::-1]}", ACTOR, now)
    project.repo.pack_loose_objects()
    return project


def first_id(store: Store, project_id: str) -> str:
    return next(store.project(project_id).snapshot().asset_ids())


def timed(function, *args):
    start = time.perf_counter()
    with collector_paused():  # as app.service.memory.suggestions builds the memory
        value = function(*args)
    return (time.perf_counter() - start) * 1000, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assets", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--writes", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(23)
    words = vocabulary(rng)
    first = [sentence(rng, words) for _ in range(args.assets)]
    second = []
    for i in range(args.assets):
        kind = i % 3
        second.append(first[i] if kind == 0 else varied(rng, first[i], words) if kind == 1 else sentence(rng, words))
    print(f"load average {os.getloadavg()[0]:.1f} (the machine is shared: figures are under others' load)")
    with scratch_directory("workbench-") as scratch:
        data = Path(scratch)
        store = Store(data)
        start = time.perf_counter()
        one, two = build(store, "Memory one", first), build(store, "Memory two", second)
        print(f"built two projects of {args.assets:,} assets in {time.perf_counter() - start:.1f} s")
        for project in (one, two):
            store.memory_groups.set(project.id, GROUP)

        # cold, in a new process's store: from Git (each pair's commit from the history), then (another new
        # store) from the derived data the first one persisted
        fresh = Store(data)
        for project_id in (one.id, two.id):
            project = fresh.project(project_id)
            ms, memory = timed(locale_memory, project, project.snapshot(), "fr")
            print(f"memory of {project_id} built cold from Git: {ms:,.0f} ms "
                  f"({sum(len(m.ids) for m in memory):,} pairs)")
            ms, _ = timed(project.save_derived)
            size = sum(path.stat().st_size for path in project.repo.git_dir.glob("gloss-derived-memory-*"))
            print(f"  its derived data saved (the memory's and the rest): {ms:,.0f} ms; the memory's files: "
                  f"{size / 2**20:.1f} MB")
        cold = Store(data)
        for project_id in (one.id, two.id):
            project = cold.project(project_id)
            ms, _ = timed(locale_memory, project, project.snapshot(), "fr")
            print(f"memory of {project_id} read from the persisted derived data (a new process): {ms:,.0f} ms")
        ms, _ = timed(suggestions, cold, two.id, first_id(cold, two.id), "fr", 3)
        print(f"first suggestions in that process (each chunk's word index built): {ms:,.0f} ms")

        # suggestions: 200,000 segments (the warm memory of both projects)
        ids = list(two.snapshot().asset_ids())
        ms, _ = timed(suggestions, store, two.id, ids[0], "fr", 3)
        print(f"first suggestions in the process that built the projects (its snapshots keep no derived data: "
              f"both memories built from Git, then the word indexes): {ms:,.0f} ms")
        times, found, exact = [], 0, 0
        for _ in range(args.queries):
            ms, answer = timed(suggestions, store, two.id, rng.choice(ids), "fr", 3)
            times.append(ms)
            found += bool(answer)
            exact += bool(answer) and answer[0]["score"] == 100
        print(f"suggestions over {2 * args.assets:,} segments, {args.queries} queries: "
              f"p50 {percentile(times, 0.5):.1f} ms, p95 {percentile(times, 0.95):.1f} ms, "
              f"max {max(times):.1f} ms (target p95 <= 50 ms); {found} answered, {exact} with an exact match")

        # one write, then the memory's update: in the writing process, and in another one reloading from Git
        reader = Store(data)
        reader_two = reader.project(two.id)
        locale_memory(reader_two, reader_two.snapshot(), "fr")
        updates, reloads, remote, after = [], [], [], []
        for n in range(args.writes):
            asset_id = rng.choice(ids)
            with two.transaction(BENCH, f"Translate {asset_id}", "translate",
                                 [("Asset", asset_id), ("Locale", "fr")]) as tx:
                ops.translate(tx, asset_id, "fr", f"edit {n}", ACTOR, utc_now())
            ms, _ = timed(locale_memory, two, two.snapshot(), "fr")
            updates.append(ms)
            ms, answer = timed(suggestions, store, two.id, asset_id, "fr", 3)
            after.append(ms)
            ms, snapshot = timed(reader_two.snapshot)
            reloads.append(ms)
            ms, _ = timed(locale_memory, reader_two, snapshot, "fr")
            remote.append(ms)
        print(f"memory update after one write ({args.writes} writes): in the writer p50 "
              f"{percentile(updates, 0.5):.1f} / p95 {percentile(updates, 0.95):.1f} ms; in another process "
              f"p50 {percentile(remote, 0.5):.1f} / p95 {percentile(remote, 0.95):.1f} ms (after its snapshot's "
              f"reload from Git, p50 {percentile(reloads, 0.5):.1f} / p95 {percentile(reloads, 0.95):.1f} ms); "
              f"the next suggestions (word index of the changed chunk included) p95 {percentile(after, 0.95):.1f} ms")
        time.sleep(SAVE_DERIVED_AFTER + 2)  # the stores' background saves of derived data end before the removal


if __name__ == "__main__":
    main()
