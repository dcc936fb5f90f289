"""Pushes against a real `gloss serve`: a zero-blob bomb costs no process more than 100 MB, a relative data
directory still takes pushes, and data the API wrote never blocks a later push."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from limits import MAX_FILE_BYTES, MAX_TAG_CHARS, MAX_TEXT_CHARS
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


def demo_key(server: Server) -> str:
    """The full-access key `gloss serve` printed when it seeded the demo."""
    line = next(line for line in server.output if line.startswith("Full-access API key: "))
    return line.split(": ", 1)[1].strip()


def cloned(server: Server, tmp_path: Path) -> Path:
    result = run_git(tmp_path, "clone", "-q", server.url(demo_key(server)), str(tmp_path / "clone"))
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


def test_a_catalogue_of_a_million_tiny_entries_is_refused_and_no_worker_grows_by_more_than_100_mb(server, tmp_path):
    repo = cloned(server, tmp_path)
    lines, size = [], 0
    while size < MAX_FILE_BYTES - 100:  # just under the file limit: only its entries can make it costly
        lines.append(f'"k{len(lines)}": {{"text": "t", "rev": 1}}')
        size += len(lines[-1]) + 2
    (repo / "locales" / "fr" / "0000.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", "utf-8")
    assert run_git(repo, "commit", "-qam", "a million entries").returncode == 0
    with PeakMemory(server.process.pid) as memory:
        refused = run_git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "more lines than a chunk holds entries" in refused.stderr, refused.stderr
    assert memory.worker_growth_mb() <= GROWTH_LIMIT_MB, memory.peaks  # 831 MB before the line count


@pytest.mark.parametrize("char", ["a", "\u4e2d"])
def test_an_accepted_catalogue_of_long_texts_at_the_file_limit_grows_no_worker_by_more_than_100_mb(
        server, tmp_path, char):
    """The costly accepted push: every entry of a chunk holds a text as long as the file limit allows (ASCII, and
    CJK, which Python stores two bytes a character); 32 MiB files grew a worker by 211-223 MB, 8 MiB by 18-55."""
    repo = cloned(server, tmp_path)
    path = repo / "locales" / "fr" / "0000.json"
    original = path.read_bytes()
    asset_ids = list(json.loads(original))
    length = min(MAX_TEXT_CHARS, (MAX_FILE_BYTES - 64 * 1024) // len(char.encode()) // len(asset_ids))
    lines = [json.dumps(asset_id) + ': {"text": "' + char * length + '", "rev": 1}' for asset_id in asset_ids]
    path.write_bytes(("{\n" + ",\n".join(lines) + "\n}\n").encode())
    assert run_git(repo, "commit", "-qam", "long texts").returncode == 0
    with PeakMemory(server.process.pid) as memory:
        pushed = run_git(repo, "push", "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
    assert memory.worker_growth_mb() <= GROWTH_LIMIT_MB, memory.peaks
    # the French texts back as they were: the module's later tests write to this full catalogue
    assert run_git(repo, "pull", "-q", "--no-rebase").returncode == 0
    path.write_bytes(original)
    assert run_git(repo, "commit", "-qam", "texts back").returncode == 0
    assert run_git(repo, "push", "-q", "origin", "main").returncode == 0


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


def test_data_the_api_wrote_never_blocks_a_later_push(server, tmp_path):
    key = demo_key(server)
    # the API refuses a key in any field, naming the field and never echoing the key
    for method, path, body in (("POST", "/api/translations/home.greeting/fr", f"see {key}".encode()),
                               ("PATCH", "/api/assets/home.greeting", json.dumps({"notes": key}).encode())):
        status, answer = server.api(method, path, key, body)
        assert status == 422 and "contains an API key" in answer["error"] and key not in json.dumps(answer)
    # what it accepts, up to every limit, is data a push may carry
    for method, path, body in (("POST", "/api/translations/home.greeting/fr", b"x" * MAX_TEXT_CHARS),
                               ("POST", "/api/assets/home.greeting/tags", f"name={'t' * MAX_TAG_CHARS}".encode()),
                               ("PATCH", "/api/assets/home.greeting",
                                json.dumps({"notes": "a note\nwith key-like words: " + "k" * 32}).encode())):
        status, answer = server.api(method, path, key, body)
        assert status < 300, answer
    repo = cloned(server, tmp_path)
    # an unrelated change in the same catalogues, plus a new locale: the push checks the project in full
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (après l'API)")
    meta = json.loads((repo / "project.json").read_text("utf-8"))
    meta["locales"].append({"code": "it", "name": "Italiano"})
    (repo / "project.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", "utf-8")
    assert run_git(repo, "commit", "-qam", "unrelated").returncode == 0
    pushed = run_git(repo, "push", "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
