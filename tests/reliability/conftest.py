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


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Server:
    """One server for the hostile-input and fuzz runs; its log must hold no traceback at the end."""
    live = Server(tmp_path_factory.mktemp("reliability") / "data").start()
    yield live
    live.stop()
    assert live.tracebacks() == [], live.log()[-5000:]
