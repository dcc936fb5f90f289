"""What a push killed mid-way leaves behind (git's quarantine in the project, the hooks' socket directory in the
temp directory) is swept once older than a Git request may run; a live push's is never touched."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from app import create_app
from limits import GIT_REQUEST_SECONDS
from tests.conftest import auth

STALE = time.time() - GIT_REQUEST_SECONDS - 60


def leftover(directory: Path, age: float | None = None) -> Path:
    """A directory holding a file, as a killed push leaves it; `age`: its (and its file's) mtime."""
    (directory / "pack").mkdir(parents=True)
    (directory / "pack" / "tmp_pack_x").write_bytes(b"PACK" + bytes(1000))
    if age is not None:
        for path in (directory / "pack" / "tmp_pack_x", directory / "pack", directory):
            os.utime(path, (age, age))
    return directory


def test_an_old_push_quarantine_is_swept_at_the_next_process_first_write_and_a_fresh_one_stays(demo, data_dir):
    project, keys = demo
    objects = project.path / ".git" / "objects"
    old = leftover(objects / "tmp_objdir-incoming-killed", STALE)
    live = leftover(objects / "tmp_objdir-incoming-live")
    # one file still being written keeps a long push's quarantine: only the newest change counts
    long_running = leftover(objects / "tmp_objdir-incoming-long", STALE)
    (long_running / "pack" / "tmp_pack_x").touch()
    client = create_app(data_dir, testing=True).test_client()  # a new process opens the project
    response = client.post("/api/translations/home.title/fr", data="Accueil (balayé)".encode(), **auth(keys.full))
    assert response.status_code == 200
    assert not old.exists()
    assert live.exists() and long_running.exists()


def test_a_repack_sweeps_old_push_quarantines_too(demo):
    project, _ = demo
    old = leftover(project.path / ".git" / "objects" / "tmp_objdir-incoming-killed", STALE)
    project.repo.pack_loose_objects()
    assert not old.exists()


def test_old_hook_socket_directories_are_swept_when_the_git_service_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    old = leftover(tmp_path / "tmp" / "gloss-hooks-killed", STALE)
    live = leftover(tmp_path / "tmp" / "gloss-hooks-live")
    other = leftover(tmp_path / "tmp" / "not-ours", STALE)
    create_app(tmp_path / "data", testing=True)
    assert not old.exists()
    assert live.exists() and other.exists()
