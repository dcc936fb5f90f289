"""Hostile-input and fault figures against `gloss serve --workers 2` (issue 12's "Must show").

Run: .venv/bin/python bench/bench_hostile.py [--size-kb 256] [--fuzz 1000] [--attack-seconds 10]

Prints:
  1. requests tried, how many answered 4xx, how many 5xx (target 0), over: the hostile-file corpus of every
     readable format at two sizes (import with a key, keyless convert), former-500 inputs on every endpoint
     (deep JSON, nplurals, formulas, non-text charsets, huge version), and a seeded random fuzz of every route;
  2. the slowest hostile request per KB of input (linear readers keep it flat as sizes grow);
  3. writes acknowledged vs present after SIGKILLs of workers and the master during concurrent writes and
     sync/async imports, half imports (target 0) and unsettled jobs (target 0);
  4. the success rate of authenticated probes while four keyless clients post hostile converts (target 100 %).
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

from tests.reliability.harness import Server, convert_path, import_path, malformed_corpus  # noqa: E402


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
    args = parser.parse_args()
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
