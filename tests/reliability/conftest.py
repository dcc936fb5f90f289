"""The reliability suite runs against a real `gloss serve --workers 2` (marker `reliability`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.harness import Server


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.reliability)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Server:
    """One server per test module (the fuzz deletes what it likes); its log must hold no traceback."""
    live = Server(tmp_path_factory.mktemp("reliability") / "data").start()
    yield live
    live.stop()
    assert live.tracebacks() == [], live.log()[-5000:]
