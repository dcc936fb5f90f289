"""Pushes against a real `gloss serve`: a zero-blob bomb costs no process more than 100 MB, a relative data
directory still takes pushes, and data the API wrote never blocks a later push."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from limits import MAX_FILE_BYTES
from tests.gitserver import (PeakMemory, Server, commit_zero_blob_bomb, push_streaming_large_blobs, run_git,
                             start_server)
from tests.support import edit_line, require_tool

PROJECT = "acme-notes"
BOMB_BYTES = 400 * 1024 * 1024  # issue 19's bomb: a 388 KB pack that took a worker from 50 to 845 MB
GROWTH_LIMIT_MB = 100  # issue 19: worker RSS grows <= 100 MB for any push


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tool("git")
    served, _ = start_server(tmp_path_factory.mktemp("pushlimits") / "data")
    yield served
    served.stop()


def cloned(server: Server, tmp_path: Path) -> Path:
    key = server.output[[line.startswith("Full-access API key: ") for line in server.output].index(True)]
    result = run_git(tmp_path, "clone", "-q", server.url(key.split(": ", 1)[1].strip()), str(tmp_path / "clone"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "clone"


@pytest.mark.parametrize("size", [BOMB_BYTES, MAX_FILE_BYTES + 1])
def test_a_zero_blob_bomb_is_refused_and_no_server_process_grows_by_more_than_100_mb(server, tmp_path, size):
    repo = cloned(server, tmp_path)
    bomb = commit_zero_blob_bomb(repo, "locales/fr/0000.json", size)
    with PeakMemory(server.process.pid) as memory:
        refused = push_streaming_large_blobs(repo)
    assert refused.returncode != 0
    assert f"blob {bomb[:12]} is {size} bytes (limit max_file_bytes" in refused.stderr, refused.stderr
    assert memory.worker_growth_mb() <= GROWTH_LIMIT_MB, memory.peaks
    name, peak = memory.largest_child_mb()  # git's own processes are bounded too (core.bigFileThreshold)
    assert peak <= GROWTH_LIMIT_MB, (name, peak, memory.peaks)


def test_a_server_started_with_a_relative_data_directory_accepts_pushes(tmp_path):
    require_tool("git")
    (tmp_path / "run").mkdir()
    served, key = start_server(Path("data"), cwd=tmp_path / "run")
    try:
        assert key is not None
        repo = tmp_path / "clone"
        assert run_git(tmp_path, "clone", "-q", served.url(key), str(repo)).returncode == 0
        edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (relatif)")
        assert run_git(repo, "commit", "-qam", "relative").returncode == 0
        pushed = run_git(repo, "push", "origin", "main")
        assert pushed.returncode == 0, pushed.stderr
        status, record = served.api("GET", "/api/translations/home.title/fr", key)
        assert status == 200 and record["translation"] == "Accueil (relatif)"
    finally:
        served.stop()
        shutil.rmtree(tmp_path / "run", ignore_errors=True)
