"""Benchmark of the format layer on 10,000 units x 1 locale, compared with translate-toolkit's po2json and po2xliff.

Run: .venv/bin/python bench/formats/bench_formats.py [--units N] [--repeat R]
Prints the best wall-clock and CPU time of R runs for: read PO, write PO, write JSON, write XLIFF,
convert PO -> JSON, convert PO -> XLIFF, and translate-toolkit's po2json (Python API, given the source
JSON as its template, which it needs) and po2xliff (Python API, no template) on the same PO file, then
our speed ratio to each. CPU time is shown because the machine may be shared. Then PO -> PO as a whole
process (start-up, imports, read, write), ours beside translate-toolkit's (target >= 2x), both run from
bytecode as installed packages are. translate-toolkit comes with the `bench` extra (make bench installs it).
"""
from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from formats import (  # noqa: E402 - needs the repository on sys.path first
    Catalogue, ExportOptions, ReadOptions, Translation, Unit, convert, export_file, read_file,
)

TARGETS_MS = {"write PO": 200.0, "write JSON": 50.0, "convert PO -> JSON": 500.0}
TARGET_RATIOS = {"po2json": 10.0, "po2xliff": 10.0}  # issue #10: >= 10x po2json
OPTIONS = ExportOptions(locale="fr", project_name="Bench", exported_by="bench",
                        exported_at=datetime(2024, 1, 1, tzinfo=timezone.utc))


def make_catalogue(count: int) -> Catalogue:
    """A realistic catalogue: dotted IDs, notes every 5th unit, context every 7th, plurals every 20th."""
    units = []
    for number in range(count):
        unit_id = f"section{number % 50}.item{number}"
        if number % 20 == 0:
            translations = {
                "en": Translation(f"{number} file", {"one": f"{number} file", "other": f"%d files {number}"}),
                "fr": Translation(f"{number} fichier", {"one": f"{number} fichier", "other": f"%d fichiers {number}"}),
            }
            units.append(Unit(id=unit_id, plural=True, translations=translations, references=[f".{unit_id}"]))
            continue
        units.append(Unit(
            id=unit_id,
            context=f"screen {number % 9}" if number % 7 == 0 else "",
            notes=f"Shown in section {number % 50}" if number % 5 == 0 else "",
            # translate-toolkit matches PO units to JSON template units by this location.
            references=[f".{unit_id}"],
            translations={
                "en": Translation(f"Source text number {number}, with \"quotes\" and %s"),
                "fr": Translation(f"Texte source numéro {number}, avec « guillemets » et %s"),
            },
        ))
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units, project="Bench")


def best_ms(function: Callable[[], object], repeat: int) -> float:
    """Best wall time of `repeat` runs, in milliseconds (the best run is the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()  # start each run without garbage left by the previous one
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def best_cpu_ms(function: Callable[[], object], repeat: int) -> float:
    """Best CPU time of this process over `repeat` runs, in milliseconds (insensitive to other processes)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.process_time()
        function()
        best = min(best, time.process_time() - started)
    return best * 1000


def po2json_runner(po_bytes: bytes, template: bytes) -> Callable[[], object] | None:
    """translate-toolkit's po2json (Python API) on the same PO file, with the source JSON as its template."""
    try:
        from translate.convert import po2json
    except ImportError:
        return None

    def run() -> None:
        po2json.convertjson(io.BytesIO(po_bytes), io.BytesIO(), io.BytesIO(template))

    return run


def po2xliff_runner(po_bytes: bytes) -> Callable[[], object] | None:
    """translate-toolkit's po2xliff (Python API) on the same PO file."""
    try:
        from translate.convert import po2xliff
    except ImportError:
        return None

    def run() -> None:
        po2xliff.convertpo(io.BytesIO(po_bytes), io.BytesIO(), None)

    return run


def compare(name: str, ours_task: Callable[[], object], ours_best: tuple[float, float],
            toolkit: Callable[[], object], repeat: int) -> None:
    """Alternate our converter and the toolkit's (load from other processes hits both alike); print the ratio."""
    ours_wall, ours_cpu, theirs_wall, theirs_cpu = [ours_best[0]], [ours_best[1]], [], []
    for _ in range(max(3, repeat // 2)):
        ours_wall.append(best_ms(ours_task, 1))
        ours_cpu.append(best_cpu_ms(ours_task, 1))
        theirs_wall.append(best_ms(toolkit, 1))
        theirs_cpu.append(best_cpu_ms(toolkit, 1))
    toolkit_ms = (min(theirs_wall), min(theirs_cpu))
    print(f"  {name + ' (toolkit)':<22}{toolkit_ms[0]:9.1f} ms{toolkit_ms[1]:9.1f} ms")
    wall_ratio, cpu_ratio = toolkit_ms[0] / min(ours_wall), toolkit_ms[1] / min(ours_cpu)
    target = TARGET_RATIOS[name]
    print(f"  speed ratio to {name}: {wall_ratio:.1f}x wall, {cpu_ratio:.1f}x cpu "
          f"(target >= {target:.0f}x: {'met' if min(wall_ratio, cpu_ratio) >= target else 'MISSED'})")


def main() -> None:
    """Run every measurement and print a small table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    catalogue = make_catalogue(args.units)
    po_bytes = export_file(catalogue, "po", "", OPTIONS).data
    read_options = ReadOptions(locale="fr")
    tasks = {
        "read PO": lambda: read_file("po", "", po_bytes, read_options),
        "write PO": lambda: export_file(catalogue, "po", "", OPTIONS),
        "write JSON": lambda: export_file(catalogue, "json", "", OPTIONS),
        "write XLIFF": lambda: export_file(catalogue, "xlf", "", OPTIONS),
        "convert PO -> JSON": lambda: convert("po", "json", "", po_bytes, read_options, ExportOptions(locale="fr")),
        "convert PO -> XLIFF": lambda: convert("po", "xlf", "", po_bytes, read_options, ExportOptions(locale="fr")),
    }
    print(f"{args.units} units x 1 locale, PO file {len(po_bytes) / 1024:.0f} KiB, best of {args.repeat} runs")
    print(f"  {'':<22}{'wall':>9}{'cpu':>12}")
    results = {}
    for name, task in tasks.items():
        results[name] = (best_ms(task, args.repeat), best_cpu_ms(task, args.repeat))
        target = TARGETS_MS.get(name)
        met = target is not None and results[name][0] <= target
        verdict = "" if target is None else f"  (target <= {target:.0f} ms: {'met' if met else 'MISSED'})"
        print(f"  {name:<22}{results[name][0]:9.1f} ms{results[name][1]:9.1f} ms{verdict}")
    template = export_file(catalogue, "json", "", ExportOptions(locale="en")).data
    comparisons = {
        "po2json": ("convert PO -> JSON", po2json_runner(po_bytes, template)),
        "po2xliff": ("convert PO -> XLIFF", po2xliff_runner(po_bytes)),
    }
    for name, (ours, toolkit) in comparisons.items():
        if toolkit is None:
            print(f"  translate-toolkit not installed: no {name} comparison")
            continue
        compare(name, tasks[ours], results[ours], toolkit, args.repeat)
    whole_process_po_to_po(po_bytes, max(3, args.repeat // 2))
    corpus_read_rates(args.repeat)
    hostile_read_rates()


def corpus_read_rates(repeat: int) -> None:
    """Every file of the shared corpus read by its reader: the slowest in ms per KB (target <= 10, Formats V)."""
    import json
    import os

    root = Path(os.environ.get("GLOSS_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "corpus"
    if not (root / "sources.json").exists():
        print(f"  corpus: {root} not found, no per-file reading rates")
        return
    rates = []
    for item in json.loads((root / "sources.json").read_text(encoding="utf-8")):
        data, ext = (root / item["file"]).read_bytes(), item["file"].rsplit(".", 1)[-1]
        variant = "java" if "properties.xml" in item["file"] else "tizen" if "Tizen" in item["file"] else ""

        def read() -> None:
            try:
                read_file(ext, variant, data, ReadOptions(locale="fr"))
            except Exception:  # noqa: BLE001 - a refused file is timed too: refusing must be quick as well
                pass

        rates.append((best_ms(read, repeat) / max(len(data) / 1024, 1.0), item["file"]))
    rates.sort(reverse=True)
    print(f"  corpus: {len(rates)} files, slowest reader {rates[0][0]:.2f} ms/KB ({rates[0][1].split('/')[0]}), "
          f"median {rates[len(rates) // 2][0]:.2f} ms/KB (target <= 10 ms/KB: "
          f"{'met' if rates[0][0] <= 10 else 'MISSED'})")


def hostile_read_rates() -> None:
    """The hostile corpus (garbage and writer-made hostile files for every readable format of the registry, at
    64 and 256 KB): the slowest read in ms per KB, timed as the linear-time test times it (Hostile input II)."""
    from tests.formats.test_hostile_readers import SIZE, ms_per_kb
    from tests.reliability.harness import hostile_corpus

    rates = sorted(((ms_per_kb(ext, variant, data, runs=3), label) for size in (SIZE // 4, SIZE)
                    for label, ext, variant, data in hostile_corpus(size)), reverse=True)
    formats_covered = len({label.split(":")[0] for _, label in rates})
    print(f"  hostile files: {len(rates)} reads over {formats_covered} formats, slowest {rates[0][0]:.2f} ms/KB "
          f"({rates[0][1]}) (target <= 10 ms/KB: {'met' if rates[0][0] <= 10 else 'MISSED'})")


OURS_PO_TO_PO = """
import sys
sys.path.insert(0, {root!r})
from formats import ExportOptions, ReadOptions, convert
data = open(sys.argv[1], "rb").read()
out = convert("po", "po", "", data, ReadOptions(locale="fr"), ExportOptions(locale="fr"))
open(sys.argv[2], "wb").write(out.data)
"""
TOOLKIT_PO_TO_PO = """
import sys
from translate.storage import po
store = po.pofile.parsestring(open(sys.argv[1], "rb").read())
open(sys.argv[2], "wb").write(bytes(store))
"""


def compile_like_an_install(root: Path) -> None:
    """Byte-compile Gloss's modules, as `pip install` does for translate-toolkit (and for Gloss when it is
    installed rather than checked out): with PYTHONDONTWRITEBYTECODE set, as on this machine, an editable
    checkout would otherwise be compiled from source in every process, and only ours would pay for it."""
    import compileall

    for package in ("formats", "app", "storage"):
        compileall.compile_dir(str(root / package), quiet=1)
    for module in ("vocabulary.py", "limits.py"):
        compileall.compile_file(str(root / module), quiet=1)


def whole_process_po_to_po(po_bytes: bytes, rounds: int) -> None:
    """Read a PO file and write it back as a fresh Python process would: what a command-line run costs."""
    import statistics
    import subprocess
    import tempfile

    root = str(Path(__file__).resolve().parents[2])
    compile_like_an_install(Path(root))
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.po"
        source.write_bytes(po_bytes)
        scripts = {"Gloss": OURS_PO_TO_PO.format(root=root), "translate-toolkit": TOOLKIT_PO_TO_PO}
        timings: dict[str, list[float]] = {name: [] for name in scripts}
        for _ in range(rounds):  # alternated, so that load from other processes hits both alike
            for name, script in scripts.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, "-c", script, str(source), str(Path(tmp) / "out.po")], check=True)
                timings[name].append((time.perf_counter() - start) * 1000)
        timings["python -c pass (floor)"] = []
        for _ in range(rounds):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            timings["python -c pass (floor)"].append((time.perf_counter() - start) * 1000)
        print(f"  interpreter start alone (median of {rounds}): "
              f"{statistics.median(timings['python -c pass (floor)']):.0f} ms")
        ours, theirs = statistics.median(timings["Gloss"]), statistics.median(timings["translate-toolkit"])
        print(f"  PO -> PO, whole process (median of {rounds}): Gloss {ours:.0f} ms, translate-toolkit "
              f"{theirs:.0f} ms: {theirs / ours:.1f}x (target >= 2x: {'met' if theirs >= 2 * ours else 'MISSED'})")


if __name__ == "__main__":
    main()
