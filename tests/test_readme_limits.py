"""README's "Limits" table says what limits.py enforces: every limit is documented, every documented value is right."""
from __future__ import annotations

import re
from pathlib import Path

import limits

_UNITS = {"GiB": 1024 * limits.MiB, "MiB": limits.MiB, "KiB": 1024, "s": 1}


def documented_limits() -> dict[str, float]:
    """limit name -> value, from the rows of README's Limits table (`a` / `b` cells pair names with values)."""
    section = Path(__file__).resolve().parent.parent.joinpath("README.md").read_text().split("\n## Limits", 1)[1]
    rows = re.findall(r"^\| (`.+?) \| (.+?) \|", section.split("\n## ", 1)[0], re.MULTILINE)
    documented: dict[str, float] = {}
    for names, values in rows:
        for name, value in zip(re.findall(r"`(\w+)`", names), values.split(" / "), strict=True):
            documented[name] = parse_value(value)
    return documented


def parse_value(cell: str) -> float:
    """`64 MiB` -> 67108864, `1,000` -> 1000, `10 s` -> 10, `1 per worker process` -> 1."""
    number, unit = re.match(r"([\d,.]+)\s*(\w*)", cell.strip()).groups()
    return float(number.replace(",", "")) * _UNITS.get(unit, 1)


def test_readme_limits_table_lists_every_limit_with_the_enforced_value() -> None:
    assert documented_limits() == {name: float(value) for name, value in limits.LIMITS.items()}
