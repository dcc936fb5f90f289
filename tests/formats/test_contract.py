"""The shared round-trip contract, generated over every registered readable and writable format."""
from __future__ import annotations

from typing import Callable

import pytest

from formats.registry import FORMATS, FormatSpec

from .contract import CHECKS, RoundTrip, round_trip_specs

CASES = [(spec, check) for spec in round_trip_specs() for check in CHECKS]


def case_id(case: tuple[FormatSpec, Callable]) -> str:
    spec, check = case
    return f"{spec.ext}-{spec.variant or 'default'}-{check.__name__}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(case) for case in CASES])
def test_round_trip_contract(case: tuple[FormatSpec, Callable[[RoundTrip], None]]) -> None:
    spec, check = case
    check(RoundTrip(spec))


def test_every_readable_and_writable_format_is_under_the_contract() -> None:
    covered = {(spec.ext, spec.variant) for spec, _ in CASES}
    both = {(spec.ext, spec.variant) for spec in FORMATS if spec.reader and spec.writer}
    assert covered == both and {("po", ""), ("mo", ""), ("json", "i18next4"), ("csv", "")} <= covered
