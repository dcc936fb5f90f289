"""Benchmark of YAML, PHP, properties and INI on 10,000 units x 1 locale, and our YAML read vs PyYAML.

Run: .venv/bin/python bench/formats/bench_formats3.py [--units N] [--repeat R]
Prints the best wall-clock and CPU time of R runs for export and import of every family (import = the
full reader: bytes to exchange catalogue), then PyYAML's own `safe_load` of the same YAML bytes with the
C loader (CSafeLoader) when available and with the pure-Python SafeLoader, as a ratio to our reader
(which composes with the same C parser, then walks nodes instead of constructing objects).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_formats import OPTIONS, best_cpu_ms, best_ms, make_catalogue  # noqa: E402
from formats import ReadOptions, export_file, read_file  # noqa: E402

FAMILIES = [("yml", ""), ("yml", "nested"), ("yml", "rails"), ("yml", "symfony"), ("php", ""),
            ("php", "codeigniter"), ("php", "constants"), ("properties", ""), ("ini", "")]


def row(label: str, wall: float, cpu: float, extra: str = "") -> None:
    print(f"{label:<34} {wall:9.1f} ms wall {cpu:9.1f} ms cpu  {extra}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    catalogue = make_catalogue(args.units)
    read_options = ReadOptions(locale="fr", index="id")
    print(f"{args.units} units, best of {args.repeat}")
    files: dict[tuple[str, str], bytes] = {}
    for ext, variant in FAMILIES:
        name = f"{ext} {variant}".strip()
        write = lambda: export_file(catalogue, ext, variant, OPTIONS)  # noqa: E731
        data = write().data
        files[(ext, variant)] = data
        row(f"export {name}", best_ms(write, args.repeat), best_cpu_ms(write, args.repeat), f"{len(data) >> 10} KiB")
        read = lambda: read_file(ext, variant, data, read_options)  # noqa: E731
        units = len(read().units)
        row(f"import {name}", best_ms(read, args.repeat), best_cpu_ms(read, args.repeat), f"{units} units")
    data = files[("yml", "nested")]
    ours_read = lambda: read_file("yml", "nested", data, read_options)  # noqa: E731
    ours, ours_cpu = best_ms(ours_read, args.repeat), best_cpu_ms(ours_read, args.repeat)
    print()
    row("our YAML read (nested)", ours, ours_cpu)
    loaders = [("CSafeLoader", getattr(yaml, "CSafeLoader", None)), ("SafeLoader", yaml.SafeLoader)]
    for name, loader in loaders:
        if loader is None:
            print(f"PyYAML {name}: not available")
            continue
        load = lambda: yaml.load(data, Loader=loader)  # noqa: E731  (yaml.safe_load with that loader)
        wall, cpu = best_ms(load, args.repeat), best_cpu_ms(load, args.repeat)
        row(f"PyYAML safe_load ({name})", wall, cpu,
            f"ours / theirs: wall {ours / wall:.2f}, cpu {ours_cpu / cpu:.2f} (theirs only parses)")


if __name__ == "__main__":
    main()
