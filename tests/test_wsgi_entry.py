"""The WSGI entry point other servers load (`gunicorn wsgi:app`) imports and serves the API."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest


def test_the_wsgi_module_imports_and_answers_with_the_data_directory_from_gloss_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLOSS_DATA", str(tmp_path / "data"))
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    sys.modules.pop("wsgi", None)
    wsgi = importlib.import_module("wsgi")
    response = wsgi.app.test_client().get("/api/auth/verify")
    assert response.status_code == 401 and response.get_json()["status"] == 401
