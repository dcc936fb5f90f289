"""Branch benchmark (issue #25): creating a branch, and a key-level merge of a 10k-asset project where the
branch and main each changed 500 keys since the branch was made.

Run: .venv/bin/python bench/bench_branches.py [--assets 10000] [--changed 500] [--rounds 3]
Targets: create <= 1 s, merge <= 1 s (the machine of the figures in bench/README.md is shared: say so).

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assets", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
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
