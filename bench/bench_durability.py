"""Durability benchmark (issue #10): what fsync costs a commit, beside its floors from the same run.

Run: .venv/bin/python bench/bench_durability.py [--assets 10000] [--writes 200] [--rounds 3]
Rows, each the median of `rounds` rounds of p50s:
  - a Gloss commit (one translation) with every fsync, and the same with fsync turned off: target +1 ms p50
  - the floor: writing one small file with fsync (and with fsync of its directory)
  - the peer: `git commit -a` of a one-line change with core.fsync=all and with core.fsync=none; their difference
    is what durability costs git itself on this disk (4 sequential fsyncs: blob, tree, commit, ref), the honest
    yardstick for Gloss's own cost when one fsync'd file write alone costs several ms here
  - the ref compare-and-swap, Gloss's own beside dulwich's refs.set_if_equals
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dulwich.repo import Repo  # noqa: E402

from bench.bench_storage import ACTOR, BENCH, LOCALES, build_project  # noqa: E402
from storage import gitrepo  # noqa: E402
from storage.git import durable  # noqa: E402
from storage import operations as ops  # noqa: E402
from storage.store import utc_now  # noqa: E402


def p50_ms(action: Callable[[int], object], count: int) -> float:
    timings = []
    for n in range(count):
        start = time.perf_counter()
        action(n)
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)


def gloss_commit(project, ids: list[str]) -> Callable[[int], object]:
    def write(n: int) -> None:
        asset_id, locale = ids[(n * 7919) % len(ids)], LOCALES[n % len(LOCALES)]
        with project.transaction(BENCH, f"Translate {asset_id}", "translate") as tx:
            ops.translate(tx, asset_id, locale, f"edit {n} {time.time()}", ACTOR, utc_now())
    return write


def without_fsync(action: Callable[[int], object]) -> Callable[[int], object]:
    def run(n: int) -> object:
        saved = durable.fsync, durable.fsync_directory
        durable.fsync = durable.fsync_directory = lambda _: None  # type: ignore[assignment]
        try:
            return action(n)
        finally:
            durable.fsync, durable.fsync_directory = saved
    return run


def fsynced_file_write(directory: Path, sync_dir: bool) -> Callable[[int], object]:
    def write(n: int) -> None:
        temp = directory / "floor.tmp"
        with open(temp, "wb") as handle:
            handle.write(b"x" * 4096 + str(n).encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, directory / "floor")
        if sync_dir:
            durable.fsync_directory(directory)
    return write


def git_cli_commit(repo: Path, fsync: str) -> Callable[[int], object]:
    def commit(n: int) -> None:
        (repo / "file.txt").write_text(f"line {n}\n")
        subprocess.run(["git", "-c", f"core.fsync={fsync}", "commit", "-q", "-a", "-m", f"edit {n}"], cwd=repo,
                       check=True)
    return commit


def make_git_repo(root: Path) -> Path:
    repo = root / "cli"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    (repo / "file.txt").write_text("start\n")
    subprocess.run(["git", "add", "file.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=repo, check=True)
    return repo


def ref_swaps(root: Path) -> tuple[Callable[[int], object], Callable[[int], object]]:
    repo_dir = make_git_repo(root / "refs")
    ours = gitrepo.GitRepo(repo_dir)
    theirs = Repo(str(repo_dir))
    shas = [b"%040x" % (n + 1) for n in range(100000)]
    state = {"head": ours.head()}

    def gloss(n: int) -> None:
        ours.move_head(shas[n], expected=state["head"])  # the same work as dulwich, plus the journal
        state["head"] = shas[n]

    def dulwich(n: int) -> None:
        assert theirs.refs.set_if_equals(b"refs/heads/main", state["head"], shas[n])
        state["head"] = shas[n]
    return gloss, dulwich


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assets", type=int, default=10000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=str(Path(__file__).resolve().parent / ".work"))
    args = parser.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        project = build_project(root / "gloss", args.assets)
        ids = list(project.snapshot().asset_ids())
        floor_dir = root / "floor"
        floor_dir.mkdir()
        cli, cli_unsynced = make_git_repo(root / "cli-root"), make_git_repo(root / "cli-root-2")
        gloss_ref, dulwich_ref = ref_swaps(root)
        rows: dict[str, list[float]] = {}
        actions = {
            "Gloss commit, durable": gloss_commit(project, ids),
            "Gloss commit, no fsync": without_fsync(gloss_commit(project, ids)),
            "floor: fsync'd file write": fsynced_file_write(floor_dir, False),
            "floor: + fsync of its dir": fsynced_file_write(floor_dir, True),
            "peer: git commit (fsync=all)": git_cli_commit(cli, "all"),
            "peer: git commit (fsync=none)": git_cli_commit(cli_unsynced, "none"),
            "ref CAS, Gloss": gloss_ref,
            "ref CAS, dulwich set_if_equals": dulwich_ref,
        }
        for _ in range(args.rounds):  # interleaved rounds: a noisy neighbour hurts every row alike
            for label, action in actions.items():
                count = args.writes if "commit" in label else args.writes * 2
                rows.setdefault(label, []).append(p50_ms(action, count))
        print(f"durability, {args.assets} assets x 5 locales, median of {args.rounds} rounds of p50 "
              f"({args.writes} writes each)")
        for label, values in rows.items():
            print(f"  {label:<32}{statistics.median(values):8.2f} ms   rounds: "
                  + ", ".join(f"{v:.2f}" for v in values))
        def cost(durable: str, unsynced: str) -> float:
            return statistics.median(rows[durable]) - statistics.median(rows[unsynced])
        ours = cost("Gloss commit, durable", "Gloss commit, no fsync")
        gits = cost("peer: git commit (fsync=all)", "peer: git commit (fsync=none)")
        one = statistics.median(rows["floor: fsync'd file write"])
        print(f"  fsync cost per commit: Gloss +{ours:.2f} ms p50, git's own +{gits:.2f} ms p50 "
              f"(one fsync'd file write: {one:.2f} ms)")
        print(f"  target +1 ms p50: {'OK' if ours <= 1 else 'MISSED'}; at most git's own cost: "
              f"{'OK' if ours <= gits else 'MISSED'}", flush=True)

if __name__ == "__main__":
    main()
