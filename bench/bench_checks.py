"""Quality checks over one locale (issue 23): every check over 100k translations, cold, warm and after one write.

Run: .venv/bin/python bench/bench_checks.py [--assets 100000] [--terms 200] [--writes 5]

The project: `--assets` assets in 100 chunks, translated in `fr`; a third use php printf placeholders, a tenth
are HTML with tags and an entity, some carry a URL, numbers and ending punctuation, one in twenty fails a check
on purpose; a glossary of `--terms` terms (one in ten forbidden) that the source texts mention. What is timed is
app.qa.locale_errors, what GET /api/locales/fr/errors renders:
- cold: a new Store opening the project, so chunks are read from Git and no result is kept (a process's first:
  it starts the check pool, checkpool.pool, whose CPU is given apart);
- cold again: another new Store, in the same process (the pool started);
- checks only: the same snapshot again with the kept results dropped (the checks' own cost);
- warm: asked again, nothing changed (every chunk's kept results reused);
- after one write: one translation changed through a transaction, then the new snapshot checked (one chunk's
  results are recomputed: they are kept per chunk, keyed by the blobs they come from);
- another process's first request: a new Store after the results were persisted (storage.derived).
Target: cold <= 2 s for 100k translations. The machine is shared (2 cores, other benchmarks and test runs):
figures are under load.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.qa import _check_chunk as check_chunk  # noqa: E402
from app.qa import locale_errors  # noqa: E402
from checkpool.pool import worker_pids  # noqa: E402
from bench_storage import ACTOR, BENCH, scratch_directory  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402


def texts(i: int, terms: int) -> tuple[str, str, dict]:
    """(source, French translation, asset fields) of asset i."""
    term = f"widget{i % terms}"
    kind = i % 10
    if kind < 3:
        return f"Delete %d {term} files from %s?", f"Supprimer %d fichiers {term}fr de %s ?", {"printf": "php"}
    if kind == 3:
        return (f"<b>Save</b> the {term} &amp; quit.", f"<b>Enregistrer</b> le {term}fr &amp; quitter.",
                {"type": "html"})
    if kind == 4:
        return f"See https://example.com/help/{i} for {term}.", f"Voir https://example.com/help/{i} pour {term}fr.", {}
    if kind == 5 and i % 20 == 5:
        return f"Loading {term} {i}…", f"Chargement {term}fr {i + 1}", {}  # fails: numbers, end_ellipsis
    return f"The {term} number {i} is ready.", f"Le {term}fr numéro {i} est prêt.", {}


def build(root: Path, assets: int, terms: int):
    store = Store(root)
    project = store.create_project(f"Checks {assets}", "en", "English")
    now = utc_now()
    with project.transaction(BENCH, "Bulk load", "import") as tx:
        ops.add_locale(tx, "fr", "French")
        for i in range(assets):
            source, target, fields = texts(i, terms)
            asset_id = f"screen{i // 50}.label{i}"
            ops.create_asset(tx, asset_id, now, text=source, actor=ACTOR, **fields)
            ops.translate(tx, asset_id, "fr", target, ACTOR, now)
        for n in range(terms):
            ops.put_term(tx, f"widget{n}", {"translations": {"fr": f"widget{n}fr"}, "forbidden": n % 10 == 9})
    project.repo.pack_loose_objects()
    return store


def pool_cpu_ms() -> float:
    """CPU time of the check pool's live workers and of the fork server they come from, ms (they are not this
    process's children, so RUSAGE_CHILDREN does not see them: read from /proc)."""
    from multiprocessing import forkserver

    pids = [*worker_pids(), getattr(forkserver._forkserver, "_forkserver_pid", None)]
    ticks = 0
    for pid in filter(None, pids):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def records_digest(records: list) -> str:
    """A digest of the records as the API renders them: identical results, identical digest."""
    return hashlib.sha256(json.dumps(records, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


CPU: list[float] = []  # the process's CPU time of each timed call, ms (on a shared machine wall time waits)


def timed(function) -> tuple[float, object]:
    start, cpu = time.perf_counter(), time.process_time()
    result = function()
    CPU.append((time.process_time() - cpu) * 1000)
    return (time.perf_counter() - start) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assets", type=int, default=100_000)
    parser.add_argument("--terms", type=int, default=200)
    parser.add_argument("--writes", type=int, default=5)
    args = parser.parse_args()
    with scratch_directory("checks-") as scratch:
        root = Path(scratch)
        start = time.perf_counter()
        build(root, args.assets, args.terms)
        print(f"built {args.assets} assets, {args.terms} glossary terms in {time.perf_counter() - start:.1f} s")

        store = Store(root)
        project = store.project(store.project_ids()[0])
        snapshot = project.snapshot()
        cold, found = timed(lambda: locale_errors(snapshot, "fr"))
        print(f"cold (chunks read from Git, nothing kept): {cold:8.0f} ms (CPU {CPU[-1]:.0f} ms, pool and fork "
              f"server {pool_cpu_ms():.0f} ms, {len(worker_pids())} workers), {len(found)} translations fail a "
              f"check (digest {records_digest(found)})")
        before = pool_cpu_ms()
        again = Store(root).project(store.project_ids()[0]).snapshot()  # nothing persisted yet: cold again
        second, _ = timed(lambda: locale_errors(again, "fr"))
        print(f"cold again, this process's pool started: {second:8.0f} ms (CPU {CPU[-1]:.0f} ms, pool "
              f"{pool_cpu_ms() - before:.0f} ms)")
        checks_only, _ = timed(lambda: [check_chunk(snapshot, "fr", number) for number in snapshot.chunk_numbers()])
        print(f"checks only (chunks parsed, nothing kept used): {checks_only:8.0f} ms (CPU {CPU[-1]:.0f} ms)")
        warm = [timed(lambda: locale_errors(snapshot, "fr"))[0] for _ in range(3)]
        print(f"warm (nothing changed), median of 3: {statistics.median(warm):8.1f} ms")
        after = []
        ids = list(snapshot.asset_ids())
        for n in range(args.writes):
            asset_id = ids[(n * 7919) % len(ids)]
            with project.transaction(BENCH, f"Translate {asset_id}", "translate") as tx:
                ops.translate(tx, asset_id, "fr", f"Texte changé {n}", ACTOR, utc_now())
            after.append(timed(lambda: locale_errors(project.snapshot(), "fr"))[0])
        print(f"after one write (one chunk recomputed), median of {args.writes}: {statistics.median(after):8.1f} ms"
              f" (max {max(after):.1f}; CPU median {statistics.median(CPU[-args.writes:]):.1f} ms)")
        project.save_derived()
        fresh = Store(root).project(store.project_ids()[0])
        reopened, _ = timed(lambda: locale_errors(fresh.snapshot(), "fr"))
        print(f"another process's first request (results persisted): {reopened:8.0f} ms (CPU {CPU[-1]:.0f} ms)")
        print(f"load average while measuring: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 shared cores)")


if __name__ == "__main__":
    main()
