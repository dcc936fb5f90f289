"""Hostile-input and fault figures against `gloss serve --workers 2` (issue 12's "Must show").

Run: .venv/bin/python bench/bench_hostile.py [--size-kb 256] [--fuzz 1000] [--attack-seconds 10]

Prints:
  1. requests tried, how many answered 4xx, how many 5xx (target 0), over: the hostile-file corpus of every
     readable format at two sizes (import with a key, keyless convert), former-500 inputs on every endpoint
     (deep JSON, nplurals, formulas, non-text charsets, huge version), and a seeded random fuzz of every route;
  2. the slowest hostile request per KB of input (linear readers keep it flat as sizes grow);
  3. writes acknowledged vs present after SIGKILLs of workers and the master during concurrent writes and
     sync/async imports, half imports (target 0) and unsettled jobs (target 0);
  4. the success rate of authenticated probes while four keyless clients post hostile converts (target 100 %);
  5. authenticated `GET /api/locales` p95 while 200 keyless slow clients trickle headers or bodies (target
     <= 50 ms; a probe that times out counts as its timeout). `--only-slow` prints this row alone;
  6. worker RSS growth per push of a zero-blob bomb (a 400 MB zero blob in a ~420 KB pack, refused; target
     <= 100 MB), and the largest peak of the git processes the push started. `--only-bomb` prints this row alone.
The other rows issue 19 asks for have benchmarks of their own, which `make bench` runs beside this one: the
slowest read per KB of every readable format, on its hostile files and on every real corpus file, is
bench/formats/bench_formats.py's (timed as tests/formats/test_hostile_readers.py times it); `/api/diff` and `/revisions` at 300 /
3,000 / 30,000 commits are bench/bench_history.py's.
Scratch data lives in a temporary directory, removed afterwards.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.gitserver import (PeakMemory, commit_zero_blob_bomb, push_streaming_large_blobs,  # noqa: E402
                             run_git)
from tests.reliability.harness import (Server, SlowClients, convert_path, import_path,  # noqa: E402
                                      malformed_corpus)


class Tally:
    def __init__(self) -> None:
        self.tried = self.client_errors = self.server_errors = 0
        self.worst_per_kb = (0.0, "")
        self.five_hundreds: list[str] = []
        self.not_refused: list[str] = []  # hostile files that were not answered 4xx

    def add(self, label: str, status: int, seconds: float, size: int) -> None:
        self.tried += 1
        if 400 <= status < 500:
            self.client_errors += 1
        elif status >= 500:
            self.server_errors += 1
            self.five_hundreds.append(f"{label}: {status}")
        if size >= 16 * 1024:
            per_kb = seconds * 1000 / (size / 1024)
            if per_kb > self.worst_per_kb[0]:
                self.worst_per_kb = (per_kb, f"{label} ({size // 1024} KB, {seconds:.2f} s)")


def corpus_run(server: Server, tally: Tally, size: int) -> None:
    for label, ext, variant, data in malformed_corpus(size):
        for kind, path, key in (("import", import_path(ext, variant), True), ("convert", convert_path(ext), False)):
            reply = server.request("POST", path, data, key=key)
            tally.add(f"{kind} {label}", reply.status, reply.seconds, len(data))
            if not 400 <= reply.status < 500:
                tally.not_refused.append(f"{kind} {label} ({len(data) // 1024} KB): {reply.status}")


def former_500s(server: Server, tally: Tally) -> None:
    """The inputs that answered 500 before (issue 12, item 5), on every endpoint they reached."""
    asset = server.request("GET", "/api/assets?ugly").json()[0]["id"]
    deep = b"[" * 100_000 + b"]" * 100_000
    json_routes = [("PATCH", f"/api/assets/{asset}"), ("POST", "/api/assets"), ("POST", "/api/locales"),
                   ("PATCH", "/api/locales/fr"), ("POST", "/api/tags"), ("POST", "/api/import/json?locale=fr"),
                   ("POST", "/api/import/arb?locale=fr"), ("POST", "/api/import/json?format=multi")]
    for method, path in json_routes:
        reply = server.request(method, path, deep, {"Content-Type": "application/json"})
        tally.add(f"deep {method} {path}", reply.status, reply.seconds, len(deep))
    for to in ("po", "json", "csv", "arb", "mo"):
        reply = server.request("POST", f"/api/convert/json/x-fr.{to}", deep, key=False)
        tally.add(f"deep convert to {to}", reply.status, reply.seconds, len(deep))
    for charset in ("rot13", "base64", "hex", "zlib", "idna", "undefined", "punycode", "bz2", "uu"):
        for method, path, key in (("GET", f"/api/export/locale/fr.po?charset={charset}", True),
                                  ("GET", f"/api/export/all.json?charset={charset}", True),
                                  ("POST", f"/api/convert/json/x-fr.po?charset={charset}", False)):
            reply = server.request(method, path, b'{"k": "v"}' if method == "POST" else None, key=key)
            tally.add(f"charset {charset} {path}", reply.status, reply.seconds, 0)
    for path in ("/api/ping", "/api/assets", "/api/locales"):
        reply = server.request("GET", path, headers={"X-Api-Version": "1" * 5000})
        tally.add(f"version {path}", reply.status, reply.seconds, 0)


def fuzz_run(server: Server, tally: Tally, count: int, seed: int = 12) -> None:
    from tests.reliability.test_fuzz import PARAMS, ROUTES

    rng = random.Random(seed)
    words = ["", "fr", "fr-FR", "pt_br", "x" * 300, "..", "%", "*", "rot13", "1.0", "9" * 50, "json", "\u202e"]
    bodies = [b"", b"{}", b"[]", b'{"id": 5}', b"[" * 5000, b"/*" * 2000, b"code=fr", b"id=a%FFb",
              b"REQUEST_METHOD=DELETE", b"\xff\xfe\x00", b'{"fr": {"k": "v"}}']
    types = [None, "application/json", "application/x-www-form-urlencoded", "text/plain",
             "multipart/form-data; boundary=B"]
    for _ in range(count):
        template = rng.choice(ROUTES)
        path = "".join(part if i % 2 == 0 else quote(rng.choice(words), safe="") or "x"
                       for i, part in enumerate(_split_placeholders(template)))
        query = {rng.choice(PARAMS): rng.choice(words) for _ in range(rng.randint(0, 3))}
        method = rng.choice(["GET", "POST", "PATCH", "DELETE"])
        body = rng.choice(bodies) if rng.random() < 0.7 else rng.randbytes(rng.randint(0, 2000))
        content_type = rng.choice(types)
        reply = server.request(method, path + ("?" + urlencode(query) if query else ""),
                               body if method != "GET" else None,
                               {"Content-Type": content_type} if content_type else {},
                               key=rng.choice([True, False]))
        tally.add(f"fuzz {method} {path}", reply.status, reply.seconds, 0)


def _split_placeholders(template: str) -> list[str]:
    import re

    return re.split(r"<(?:[a-z]+:)?[a-z_]+>", template)


def attack_run(server: Server, seconds: float, size: int) -> tuple[int, int, int]:
    """(probes, probes answered 200, attack requests) while four keyless clients post hostile converts."""
    attack = [data for _, ext, _, data in malformed_corpus(size) if ext == "json"]
    stop = threading.Event()
    attacked = [0]

    def attacker() -> None:
        while not stop.is_set():
            for data in attack:
                try:
                    server.request("POST", convert_path("json"), data, key=False, timeout=120)
                except OSError:
                    pass
                attacked[0] += 1

    threads = [threading.Thread(target=attacker) for _ in range(4)]
    for thread in threads:
        thread.start()
    probes = successes = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        probes += 1
        try:
            successes += server.request("GET", "/api/locales", timeout=10).status == 200
        except OSError:
            pass
        time.sleep(0.1)
    stop.set()
    for thread in threads:
        thread.join()
    return probes, successes, attacked[0]


def slow_clients_run(server: Server, slow: int, probes: int = 40, timeout: float = 5.0) -> tuple[float, int, int]:
    """(p95 ms, probes answered 200, slow connections still open) of authenticated GETs amid slow clients."""
    timings = []
    answered = 0
    with SlowClients(server, slow) as clients:
        time.sleep(3)  # the slow clients are in, and trickling
        for _ in range(probes):
            started = time.monotonic()
            try:
                answered += server.request("GET", "/api/locales", timeout=timeout).status == 200
            except OSError:
                pass
            timings.append(time.monotonic() - started)
            time.sleep(0.05)
        still_open = clients.still_open()
    timings.sort()
    return timings[int(0.95 * (len(timings) - 1))] * 1000, answered, still_open


def print_slow_clients(server: Server, slow: int) -> None:
    p95, answered, still_open = slow_clients_run(server, slow)
    print(f"GET p95 amid {slow} slow clients:      {p95:.1f} ms   ({answered}/40 answered 200, "
          f"{still_open} slow connections still open; target <= 50 ms)")


def zero_blob_bomb_run(server: Server, scratch: Path, pushes: int = 3,
                       size: int = 400 * 1024 * 1024) -> tuple[float, str, float, int]:
    """Push a zero-blob bomb `pushes` times: (worst worker growth MB, largest git process, its peak MB, refusals)."""
    worst, largest, refused = 0.0, ("none", 0.0), 0
    for attempt in range(pushes):
        repo = scratch / f"bomb-{attempt}"
        url = f"http://{server.key}:@127.0.0.1:{server.port}/git/acme-notes.git"
        assert run_git(scratch, "clone", "-q", url, str(repo)).returncode == 0
        commit_zero_blob_bomb(repo, "locales/fr/0000.json", size)
        with PeakMemory(server.process.pid) as memory:
            refused += push_streaming_large_blobs(repo).returncode != 0
        worst = max(worst, memory.worker_growth_mb())
        largest = max(largest, memory.largest_child_mb(), key=lambda item: item[1])
    return worst, largest[0], largest[1], refused


def print_zero_blob_bomb(server: Server, scratch: Path) -> None:
    growth, name, peak, refused = zero_blob_bomb_run(server, scratch)
    print(f"worker RSS growth per zero-blob bomb: {growth:.1f} MB   (400 MB zero blob, {refused}/3 refused; "
          f"largest git process {name} {peak:.1f} MB; target <= 100 MB)")


def kill_run(scratch: Path, seconds: float) -> dict[str, int]:
    from tests.reliability.test_faults import IMPORT_UNITS, Load, catalogue, kill_workers_then_master, missing_writes

    server = Server(scratch / "kills").start()
    assets = [record["id"] for record in server.request("GET", "/api/assets?ugly").json()[:4]]
    load = Load(server, assets)

    load.run(lambda: kill_workers_then_master(server, seconds / 2, seconds / 2), 0.5)
    server.start()
    texts = catalogue(server)
    present = sum(1 for asset, sequence in load.acknowledged.items() if int(texts[asset].split()[1]) >= sequence)
    halves = sum(1 for name in load.imports
                 if sum(1 for key in texts if key.startswith(name + ".")) not in (0, IMPORT_UNITS))
    acknowledged_imports = [name for name, outcome in load.imports.items() if outcome == "ok"]
    imports_present = sum(1 for name in acknowledged_imports
                          if sum(1 for key in texts if key.startswith(name + ".")) == IMPORT_UNITS)
    unsettled = 0
    for job_id in load.jobs:
        progress = server.request("GET", f"/api/import/progress/{job_id}").json()
        unsettled += not (progress["progress"] == 100 and (progress["success"] or progress["error"]))
    missing = missing_writes(server, load.answered)
    server.stop()
    return {"translation writes acknowledged (200)": len(load.answered),
            "acknowledged writes present in history": len(load.answered) - len(missing),
            "writers whose last acknowledged write holds": present,
            "sync imports acknowledged": len(acknowledged_imports), "acknowledged imports present": imports_present,
            "half imports": halves, "async jobs": len(load.jobs), "unsettled jobs": unsettled,
            "tracebacks in server log": len(server.tracebacks())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-kb", type=int, default=256)
    parser.add_argument("--fuzz", type=int, default=1000)
    parser.add_argument("--attack-seconds", type=float, default=10.0)
    parser.add_argument("--kill-seconds", type=float, default=12.0, help="load before the kills (half, half)")
    parser.add_argument("--slow-clients", type=int, default=200)
    parser.add_argument("--only-slow", action="store_true", help="only the slow-clients row")
    parser.add_argument("--only-bomb", action="store_true", help="only the zero-blob-bomb row")
    args = parser.parse_args()
    if args.only_slow or args.only_bomb:
        with tempfile.TemporaryDirectory(prefix="gloss-hostile-") as scratch_name:
            server = Server(Path(scratch_name) / "data").start()
            try:
                if args.only_slow:
                    print_slow_clients(server, args.slow_clients)
                if args.only_bomb:
                    print_zero_blob_bomb(server, Path(scratch_name))
            finally:
                server.stop()
        return 0
    with tempfile.TemporaryDirectory(prefix="gloss-hostile-") as scratch_name:
        scratch = Path(scratch_name)
        server = Server(scratch / "data").start()
        tally = Tally()
        try:
            before = server.head()
            for size in (args.size_kb * 1024 // 4, args.size_kb * 1024):
                corpus_run(server, tally, size)
            repository_unchanged = server.head() == before
            former_500s(server, tally)
            fuzz_run(server, tally, args.fuzz)
            probes, successes, attacks = attack_run(server, args.attack_seconds, args.size_kb * 1024)
            print_slow_clients(server, args.slow_clients)
            print_zero_blob_bomb(server, scratch)
        finally:
            server.stop()
        print(f"requests tried:                     {tally.tried}")
        print(f"answered 4xx:                       {tally.client_errors}")
        print(f"answered 5xx:                       {tally.server_errors}   (target 0)")
        for line in tally.five_hundreds[:20]:
            print(f"    5xx: {line}")
        print(f"slowest hostile request per KB:     {tally.worst_per_kb[0]:.2f} ms/KB  {tally.worst_per_kb[1]}")
        print(f"repository unchanged by the corpus: {repository_unchanged}")
        for line in tally.not_refused:
            print(f"    not refused: {line}")
        print(f"authenticated probes under attack:  {successes}/{probes} = {100 * successes / max(1, probes):.1f} %"
              f"   ({attacks} keyless hostile converts meanwhile; target 100 %)")
        print(f"tracebacks in server log:           {len(server.tracebacks())}")
        for name, value in kill_run(scratch, args.kill_seconds).items():
            print(f"after kills, {name + ':':<40} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
