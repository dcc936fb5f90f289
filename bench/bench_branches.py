"""Branch benchmark (issue #25): creating a branch, and a key-level merge of a 10k-asset project where the
branch and main each changed 500 keys since the branch was made.

Run: .venv/bin/python bench/bench_branches.py [--assets 10000] [--changed 500] [--rounds 3] [--only create|list]
Targets: create <= 1 s, merge <= 1 s (the machine of the figures in bench/README.md is shared: say so).

The listing (`GET /api/branches`: every branch's head, revisions, ahead and behind main) is timed on a project
of `--list-assets` assets and `--history` commits on main, with 21 then 200 branches (every 10th with 2
commits of its own).

Each round makes a fresh branch from main, writes `changed` French translations on the branch and `changed`
other German ones on main (in commits of 10 keys, as API writes would), then merges the branch into main
(one merge commit). Create and merge are timed as the API runs them (storage.branches, under the project lock,
durable before they return); the merge is also checked to have brought every branch change.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_storage import ACTOR, BENCH, build_project, scratch_directory  # noqa: E402
from storage import branches  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.replay import Merge  # noqa: E402
from storage.store import utc_now  # noqa: E402

BATCH = 10  # keys per commit


def change_keys(project, branch: str, locale: str, ids: list[str], label: str) -> None:
    """Write one new text for each of `ids` on `branch`, BATCH keys per commit."""
    for start in range(0, len(ids), BATCH):
        with project.transaction(BENCH, f"{label} {start}", "translate", branch=branch) as tx:
            for asset_id in ids[start:start + BATCH]:
                ops.translate(tx, asset_id, locale, f"{label} {asset_id}", ACTOR, utc_now())


def list_branches(project) -> list:
    """What GET /api/branches answers."""
    return branches.list_branches(project)


def measure_listing(assets: int, history: int, rounds: int) -> None:
    with scratch_directory("branch-list-") as scratch:
        project = build_project(Path(scratch), assets)
        ids = [asset_id for asset_id, _ in project.snapshot().assets()]
        for start in range(0, history * BATCH, BATCH):
            change_keys(project, "main", "fr", ids[start % len(ids):start % len(ids) + BATCH], "history")
        made = 0
        for count in (21, 200):
            while made < count - 1:  # (main is one of them)
                name = f"feature/{made}"
                branches.create_branch(project, name)
                if made % 10 == 0:
                    change_keys(project, name, "de", ids[made:made + 2 * BATCH], name)
                made += 1
            timings = []
            for _ in range(rounds):
                started = time.perf_counter()
                listed = list_branches(project)
                timings.append(time.perf_counter() - started)
            assert len(listed) == count
            print(f"list of {count} branches ({history + 1} commits on main): median "
                  f"{statistics.median(timings) * 1000:.1f} ms, max {max(timings) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assets", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--list-assets", type=int, default=1_000)
    parser.add_argument("--history", type=int, default=300)
    parser.add_argument("--only", choices=("create", "list"))
    args = parser.parse_args()
    if args.only != "create":
        measure_listing(args.list_assets, args.history, max(args.rounds, 5))
    if args.only == "list":
        return
    with scratch_directory("branches-") as scratch:
        started = time.perf_counter()
        project = build_project(Path(scratch), args.assets)
        print(f"project of {args.assets} assets x 5 locales built in {time.perf_counter() - started:.1f} s")
        ids = [asset_id for asset_id, _ in project.snapshot().assets()]
        creates, merges = [], []
        for round_number in range(args.rounds):
            name = f"feature/{round_number}"
            started = time.perf_counter()
            branches.create_branch(project, name)
            creates.append(time.perf_counter() - started)
            offset = round_number * 2 * args.changed
            theirs = ids[offset:offset + args.changed]
            ours = ids[offset + args.changed:offset + 2 * args.changed]
            change_keys(project, name, "fr", theirs, f"branch {round_number}")
            change_keys(project, "main", "de", ours, f"main {round_number}")
            started = time.perf_counter()
            result = branches.merge_branch(project, name, "main", ACTOR, Merge(keep_authors=True))
            merges.append(time.perf_counter() - started)
            merged = project.snapshot()
            assert result["merged"] and result["changes"] == args.changed, result
            assert all(merged.translation(asset_id, "fr")["text"] == f"branch {round_number} {asset_id}"
                       for asset_id in theirs)
            assert all(merged.translation(asset_id, "de")["text"] == f"main {round_number} {asset_id}"
                       for asset_id in ours)
            print(f"round {round_number + 1}: create {creates[-1] * 1000:.1f} ms, merge of {args.changed} + "
                  f"{args.changed} changed keys {merges[-1] * 1000:.1f} ms")
        print(f"create: median {statistics.median(creates) * 1000:.1f} ms, max {max(creates) * 1000:.1f} ms "
              "(target <= 1000 ms)")
        print(f"merge:  median {statistics.median(merges) * 1000:.1f} ms, max {max(merges) * 1000:.1f} ms "
              "(target <= 1000 ms)")
        print("(measured on a shared machine: other processes ran meanwhile)")


if __name__ == "__main__":
    main()
