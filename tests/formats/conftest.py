"""Assertion rewriting for the shared contract module, so its failures show the compared values."""
import pytest

pytest.register_assert_rewrite("tests.formats.contract", "tests.formats.samples")
