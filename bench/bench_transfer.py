"""Export/import/convert benchmark through the HTTP layer (issue #4), on 10k units x 1 locale.

Run: .venv/bin/python bench/bench_transfer.py [--units 10000] [--repeat 5]
Targets on the 2-core reference machine: import a PO file (sync, with its commit) <= 1.5 s; export to PO
<= 200 ms and to JSON <= 50 ms; convert PO -> JSON <= 500 ms. The comparison with translate-toolkit's
po2json is in bench/formats/bench_formats.py (pure format layer, same file shape).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from bench_storage import scratch_directory  # noqa: E402


def po_file(units: int) -> bytes:
    lines = ['msgid ""', 'msgstr ""', '"Language: fr\\n"', '"Content-Type: text/plain; charset=UTF-8\\n"',
             '"Plural-Forms: nplurals=2; plural=(n > 1);\\n"', ""]
    for i in range(units):
        if i % 50 == 0:
            lines += [f'#. note {i}', f'msgid "%d file number {i}"', f'msgid_plural "%d files number {i}"',
                      f'msgstr[0] "%d fichier numéro {i}"', f'msgstr[1] "%d fichiers numéro {i}"', ""]
        else:
            lines += [f'msgctxt "screen {i % 7}"' if i % 10 == 0 else "", f'msgid "Source text {i} to translate"',
                      f'msgstr "Texte source {i} à traduire"', ""]
    return "\n".join(line for line in lines if line is not None).encode("utf-8")


def timed(function, repeat: int) -> tuple[float, object]:
    """Median wall time in ms over `repeat` runs, and the last result."""
    timings, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with scratch_directory() as tmp:
        app = create_app(Path(tmp) / "data")
        store, keys = app.extensions["gloss.store"], app.extensions["gloss.keys"]
        project = store.create_project("Bench", "en", "English")
        key, _ = keys.create(project.id, "full", "Bench", "bench@example.com")
        headers = {"Authorization": f"Loco {key}"}
        client = app.test_client()
        client.post("/api/locales", data={"code": "fr"}, headers=headers)
        data = po_file(args.units)

        start = time.perf_counter()
        response = client.post("/api/import/po?locale=fr", data=data, headers=headers)
        first_import = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, response.get_json()
        print(f"import PO, {args.units} units into an empty project (creates assets), sync + commit: "
              f"{first_import:.0f} ms  (target <= 1500 ms)")
        changed = data.replace("à traduire".encode(), "à traduire !".encode())
        start = time.perf_counter()
        response = client.post("/api/import/po?locale=fr", data=changed, headers=headers)
        update_import = (time.perf_counter() - start) * 1000
        print(f"import PO, {args.units} units all updated, sync + commit: {update_import:.0f} ms  (target <= 1500 ms)")
        print(f"  -> {response.get_json()['message']}")

        def export(path: str):
            response = client.get(path, headers=headers)
            assert response.status_code == 200
            return response.data

        po_ms, _ = timed(lambda: export("/api/export/locale/fr.po"), args.repeat)
        json_ms, _ = timed(lambda: export("/api/export/locale/fr.json"), args.repeat)
        print(f"export PO: {po_ms:.0f} ms  (target <= 200 ms)")
        print(f"export JSON: {json_ms:.0f} ms  (target <= 50 ms)")
        # the first export after a write builds the catalogue of the new commit (later ones reuse it)
        first_id = next(project.snapshot().asset_ids())
        cold = {}
        for ext in ("po", "json"):
            client.post(f"/api/translations/{first_id}/fr", data=f"changed for {ext}".encode(), headers=headers)
            cold[ext], _ = timed(lambda: export(f"/api/export/locale/fr.{ext}"), 1)
        print(f"first export after a write: PO {cold['po']:.0f} ms, JSON {cold['json']:.0f} ms")

        convert_ms, converted = timed(lambda: client.post("/api/convert/po/bench-fr.json", data=data).data,
                                      args.repeat)
        print(f"convert PO -> JSON: {convert_ms:.0f} ms  (target <= 500 ms)")
        print("(the ratio to translate-toolkit's po2json is measured by bench/formats/bench_formats.py)")

if __name__ == "__main__":
    main()
