"""Webhook delivery (issue 25): the lag at 50 writes/s, and a backlog of 10,000 commits after an outage.

Run: .venv/bin/python bench/bench_webhooks.py [--rate 50] [--seconds 20] [--backlog 10000]

1. Lag: `gloss serve --workers 2` on the demo project, one hook (every event, no coalescing) to a receiver in
   this process that verifies each signature (the `standardwebhooks` package). Four client threads POST a
   translation of one asset every 1/rate s between them, for --seconds. Each answer names the revision the
   write made, and its commit the revision it replaced (a trailer), so a commit's lag is the time its delivery
   arrived minus the time its write was answered. Target: p95 <= 1 s.
2. Backlog: a project of 500 assets x 4 locales, then --backlog single-translation commits made while no
   server ran (built through the storage layer, with the maintenance that would have run meanwhile), and a hook
   whose cursor is the commit before them, coalescing (1 s window; max_commits_per_delivery a delivery). Timed
   from `gloss serve` starting (its boot included) until the head's commit is delivered. Target: <= 60 s.
   Then the same backlog again for a hook without a window: one POST a commit.

All traffic goes to 127.0.0.1 (GLOSS_WEBHOOK_ALLOW=127.0.0.1/8); scratch data lives in bench/.work/.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_history import build  # noqa: E402
from bench_storage import percentile, scratch_directory  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402
from storage.webhooks import HookStore  # noqa: E402
from tests.reliability.harness import Server  # noqa: E402
from tests.webhook_receiver import Receiver  # noqa: E402

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ENV = {"GLOSS_WEBHOOK_ALLOW": "127.0.0.1/8"}
TARGET_LAG_P95 = 1.0
WRITERS = 4  # client threads sharing the rate
TARGET_BACKLOG_SECONDS = 60.0


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def measure_lag(scratch: Path, rate: float, seconds: float) -> None:
    receiver = Receiver(SECRET)
    server = Server(scratch / "lag", workers=2, env=ENV).start()
    try:
        reply = server.request("POST", "/api/webhooks", f"url={receiver.url}&secret={SECRET}".encode(),
                               {"Content-Type": "application/x-www-form-urlencoded"})
        assert reply.status == 201, reply.body
        cursor = reply.json()["cursor"]
        answered: dict[int, float] = {}  # the revision a write made -> when it was answered
        slots = itertools.count()
        start = time.monotonic()

        def write() -> None:  # several clients, so that a slow answer does not hold the rate back
            for n in iter(lambda: next(slots), None):
                if n >= rate * seconds:
                    return
                time.sleep(max(0.0, start + n / rate - time.monotonic()))
                reply = server.request("POST", "/api/translations/home.title/fr", f"Texte {n}".encode())
                if reply.status == 200:
                    answered[reply.json()["revision"]] = time.time()

        with ThreadPoolExecutor(WRITERS) as pool:
            for _ in range(WRITERS):
                pool.submit(write)
        achieved = len(answered) / (time.monotonic() - start)
        repo = server.data_dir / "projects" / "acme-notes"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(receiver.deliveries) < len(answered):
            time.sleep(0.1)
        # each write's commit names the revision it replaced (its Revision trailer)
        log = git(repo, "log", "--first-parent", "--format=%H %(trailers:key=Revision,valueonly,separator=)",
                  f"{cursor}..HEAD").split("\n")
        made_by = {int(line.split()[1]) + 1: line.split()[0] for line in log if len(line.split()) == 2}
        received: dict[str, float] = {}
        for delivery in receiver.deliveries:
            received.setdefault(delivery["payload"]["data"]["commits"]["to"], delivery["received"])
        lags = sorted(received[made_by[revision]] - at for revision, at in answered.items()
                      if made_by.get(revision) in received)
        invalid = sum(not delivery["valid"] for delivery in receiver.deliveries)
        print(f"lag at {rate:g} writes/s for {seconds:g} s: {len(answered)} writes ({achieved:.1f}/s achieved), "
              f"{len(received)} commits delivered, {invalid} bad signatures, "
              f"{len(receiver.deliveries) - len(received)} duplicates")
        ms = {name: value * 1000 for name, value in (("p50", statistics.median(lags)), ("p95", percentile(
            lags, 0.95)), ("p99", percentile(lags, 0.99)), ("max", lags[-1]))}
        print(f"  {len(lags)} lags measured: " + ", ".join(f"{name} {value:.0f} ms" for name, value in ms.items())
              + f" (target p95 <= {TARGET_LAG_P95 * 1000:.0f} ms)")
    finally:
        server.stop()
        receiver.close()


def measure_backlog(scratch: Path, commits: int, windows: tuple[float, ...]) -> None:
    data = scratch / "backlog"
    started = time.perf_counter()
    build(data, commits)
    (project_id,) = Store(data).project_ids()
    repo = data / "projects" / project_id
    base = git(repo, "rev-parse", f"HEAD~{commits}").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    print(f"backlog: built {commits} commits in {time.perf_counter() - started:.0f} s")
    hooks = HookStore(data / "webhooks")
    for window in windows:
        receiver = Receiver(SECRET)
        hook = hooks.add(project_id, receiver.url, ["*"], SECRET, base, utc_now(), coalesce=window)
        started = time.monotonic()
        server = Server(data, workers=2, env=ENV).start()
        booted = time.monotonic() - started
        try:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and not any(
                    d["payload"]["data"]["commits"]["to"] == head for d in list(receiver.deliveries)):
                time.sleep(0.05)
            elapsed = time.monotonic() - started
            counted = sum(d["payload"]["data"]["commits"]["count"] for d in receiver.deliveries)
            first = min(d["received"] for d in receiver.deliveries) - (time.time() - (time.monotonic() - started))
            how = f"coalesced ({window:g} s window)" if window else "one commit a delivery"
            print(f"  {how}: {commits} commits delivered in {elapsed:.1f} s from `gloss serve` starting "
                  f"({booted:.1f} s to answer, first delivery at {first:.1f} s) in {len(receiver.deliveries)} "
                  f"deliveries carrying {counted} commits, {sum(not d['valid'] for d in receiver.deliveries)} bad "
                  f"signatures (target <= {TARGET_BACKLOG_SECONDS:.0f} s, coalesced)")
        finally:
            server.stop()
            receiver.close()
            hooks.remove(project_id, hook.id)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--backlog", type=int, default=10_000)
    parser.add_argument("--skip-backlog", action="store_true")
    parser.add_argument("--windows", default="1,0",
                        help="coalescing windows of the backlog's hooks, one after the other (0: none)")
    args = parser.parse_args()
    with scratch_directory("webhooks-") as name:
        scratch = Path(name)
        measure_lag(scratch, args.rate, args.seconds)
        if not args.skip_backlog:
            measure_backlog(scratch, args.backlog, tuple(float(w) for w in args.windows.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
