"""String Catalog import over real HTTP: `gloss serve` on 127.0.0.1, POST /api/import/xcstrings.

Run: .venv/bin/python bench/bench_xcstrings.py [--keys 1500] [--locales 20] [--repeat 3]

Files imported, each into a fresh empty project (one commit per import):
  1. the real catalogue of ../shared/corpus/xcstrings/ (CubeTime, 289 keys, en + zh-Hans, 68 KB);
  2. a generated multi-megabyte catalogue shaped like a large app's: --keys keys in --locales locales (source
     included), one key in ten a plural (variations.plural with the locale's CLDR categories), one in five with a
     comment, a few needs_review / new states. The shared corpus holds no multi-megabyte String Catalog, so
     this one is generated; its shape follows what Xcode writes.
Then the same large file again into the now-filled project (nothing changes, no new assets) and
GET /api/export/all.xcstrings of it. Each figure is the median of --repeat runs (fresh project each time).
"""
from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_api import HOST, free_port, start_server, stop_server, wait_for_ping  # noqa: E402
from formats import plural_rules  # noqa: E402
from storage.keys import KeyStore  # noqa: E402
from storage.store import Store, utc_now  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "xcstrings" / "CubeTime__Localizable.xcstrings"
LOCALES = ["en", "fr", "de", "es", "it", "pt-BR", "nl", "sv", "da", "fi", "nb", "pl", "cs", "ru", "uk", "tr",
           "ja", "ko", "zh-Hans", "zh-Hant", "ar", "he", "el", "hu", "ro"]


def generated_catalog(keys: int, locales: list[str]) -> bytes:
    """A String Catalog of `keys` keys translated into every locale, laid out as Xcode writes it."""
    strings: dict[str, dict] = {}
    for n in range(keys):
        key = f"Settings screen {n // 40}: option number {n} is described here"
        record: dict = {"localizations": {}}
        if n % 5 == 0:
            record["comment"] = f"Shown below the switch of option {n}"
        for position, locale in enumerate(locales):
            state = "needs_review" if (n + position) % 37 == 0 else "new" if (n + position) % 53 == 0 else "translated"
            if n % 10 == 0:
                forms = plural_rules(locale).forms + ([] if "other" in plural_rules(locale).forms else ["other"])
                record["localizations"][locale] = {"variations": {"plural": {
                    form: {"stringUnit": {"state": state, "value": f"[{locale}] %lld item ({form}) of list {n}"}}
                    for form in forms}}}
            elif locale != locales[0]:
                record["localizations"][locale] = {
                    "stringUnit": {"state": state, "value": f"[{locale}] translated option number {n} text"}}
        strings[key] = record
    catalog = {"sourceLanguage": locales[0], "strings": strings, "version": "1.0"}
    return json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False, sort_keys=True).encode()


def request(port: int, key: str, method: str, path: str, body: bytes | None = None) -> tuple[float, int, bytes]:
    """(seconds, status, body) of one request on a new connection."""
    conn = http.client.HTTPConnection(HOST, port, timeout=600)
    started = time.perf_counter()
    conn.request(method, path, body=body, headers={"Authorization": f"Loco {key}"})
    response = conn.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed, response.status, data


def fresh_project(data: Path, name: str) -> str:
    """An empty project with an English source and a full-access key."""
    project = Store(data).create_project(name, "en", "English")
    key, _ = KeyStore(data / "keys.json").create(project.id, "full", "Bench", "bench@example.com", utc_now())
    return key


def import_seconds(port: int, data: Path, body: bytes, repeat: int, label: str) -> tuple[float, str, str]:
    """Median import time into fresh projects, the last answer's message, and the key of the last project."""
    timings, message, key = [], "", ""
    for run in range(repeat):
        key = fresh_project(data, f"{label} {run}")
        seconds, status, answer = request(port, key, "POST", "/api/import/xcstrings", body)
        if status != 200:
            raise SystemExit(f"import failed: {status} {answer[:300]!r}")
        timings.append(seconds)
        message = json.loads(answer)["message"]
    return statistics.median(timings), message, key


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=1500)
    parser.add_argument("--locales", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=str(ROOT / "bench" / ".work"))
    args = parser.parse_args()
    large = generated_catalog(args.keys, LOCALES[:args.locales])
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="xcstrings-") as tmp:
        data = Path(tmp) / "data"
        Store(data)
        port = free_port()
        server = start_server(data, port, 2, Path(tmp) / "server.log")
        try:
            wait_for_ping(server, port)
            if CORPUS.exists():
                corpus = CORPUS.read_bytes()
                seconds, message, _ = import_seconds(port, data, corpus, args.repeat, "corpus")
                print(f"real catalogue {CORPUS.name} ({len(corpus) / 1024:.0f} KB): import {seconds * 1000:.0f} ms"
                      f"  ({message})")
            seconds, message, key = import_seconds(port, data, large, args.repeat, "large")
            print(f"generated catalogue, {args.keys} keys x {args.locales} locales ({len(large) / 1e6:.1f} MB): "
                  f"import {seconds:.2f} s  ({message})")
            again, status, answer = request(port, key, "POST", "/api/import/xcstrings", large)
            print(f"same file again into the filled project: {again:.2f} s  ({json.loads(answer)['message']})")
            export, status, body = request(port, key, "GET", "/api/export/all.xcstrings")
            print(f"GET /api/export/all.xcstrings: {export:.2f} s, {len(body) / 1e6:.1f} MB, status {status}")
        finally:
            stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
