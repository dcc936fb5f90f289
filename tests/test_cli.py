"""The `gloss` command line, exactly as DESIGN §7 fixes it, and `gloss serve` as a real server."""
from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support import assert_fsck_clean, REPO_ROOT, git

GLOSS = [sys.executable, "-m", "app.cli"]


def gloss(data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([*GLOSS, "--data", str(data), *args], cwd=REPO_ROOT, capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def last_line(result: subprocess.CompletedProcess) -> str:
    return result.stdout.strip().splitlines()[-1]


def test_project_create_prints_the_id_last_and_list_shows_it(tmp_path):
    project_id = last_line(gloss(tmp_path, "project", "create", "Web Shop", "--source", "fr_FR"))
    assert project_id == "web-shop"
    listing = gloss(tmp_path, "project", "list").stdout
    assert "web-shop\tWeb Shop\t0 assets\tfr-FR" in listing
    assert last_line(gloss(tmp_path, "project", "create", "Web Shop")) == "web-shop-2"


def test_project_create_rejects_an_invalid_source_locale(tmp_path):
    result = gloss(tmp_path, "project", "create", "X", "--source", "not a locale", check=False)
    assert result.returncode == 1 and "locale" in result.stderr


def test_key_create_list_and_revoke(tmp_path):
    project_id = last_line(gloss(tmp_path, "project", "create", "Keys"))
    key = last_line(gloss(tmp_path, "key", "create", project_id, "--access", "readonly", "--user", "Ann",
                          "--email", "ann@example.com"))
    assert len(key) >= 32
    listing = gloss(tmp_path, "key", "list", project_id).stdout
    assert "readonly\tAnn\tann@example.com" in listing and key not in listing
    key_id = listing.split("\t")[0]
    assert "Revoked" in gloss(tmp_path, "key", "revoke", key_id).stdout
    assert gloss(tmp_path, "key", "list", project_id).stdout == ""
    assert gloss(tmp_path, "key", "revoke", key, check=False).returncode == 1


def test_key_create_for_a_missing_project_fails(tmp_path):
    result = gloss(tmp_path, "key", "create", "nope", check=False)
    assert result.returncode == 1 and "No project" in result.stderr


def test_data_directory_defaults_to_gloss_data(tmp_path):
    env = dict(os.environ, GLOSS_DATA=str(tmp_path / "env-data"))
    result = subprocess.run([*GLOSS, "project", "create", "Env"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0
    assert (tmp_path / "env-data" / "projects" / "env" / ".git").is_dir()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http(url: str, method: str = "GET", headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def served(tmp_path):
    """`gloss serve` on an empty data directory, in its own process group (gunicorn forks workers)."""
    port = free_port()
    process = subprocess.Popen([*GLOSS, "--data", str(tmp_path / "data"), "serve", "--port", str(port),
                                "--workers", "2"], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines = []
    key = None
    deadline = time.time() + 60
    while not (lines and lines[-1].startswith("Try: ")) and time.time() < deadline:
        line = process.stdout.readline()
        assert line, "gloss serve exited: " + "".join(lines)
        lines.append(line)
        if line.startswith("Full-access API key: "):
            key = line.split(": ", 1)[1].strip()
    base = f"http://127.0.0.1:{port}"
    while time.time() < deadline:
        try:
            if http(base + "/api/ping")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    yield base, key, tmp_path / "data", "".join(lines)
    os.killpg(process.pid, 15)
    process.wait(20)


def test_serve_on_an_empty_data_dir_seeds_the_demo_and_prints_a_working_key(served):
    base, key, data, output = served
    assert key, output
    assert f'curl -H "Authorization: Loco {key}"' in output
    assert f"Dashboard: http://localhost:{base.rsplit(':', 1)[1]}/" in output
    basic = base64.b64encode(f"{key}:".encode()).decode()
    for url, headers in [(base + "/api/auth/verify", {"Authorization": f"Service {key}"}),
                         (base + "/api/auth/verify", {"Authorization": f"Loco {key}"}),
                         (base + "/api/auth/verify", {"Authorization": f"Basic {basic}"}),
                         (base + f"/api/auth/verify?key={key}", {})]:
        status, body = http(url, headers=headers)
        assert status == 200 and body["project"]["name"] == "Acme Notes"
    status, body = http(base + "/api/auth/verify", headers={"Authorization": "Loco wrong"})
    assert status == 401 and body == {"status": 401, "error": "Invalid API key"}
    readonly = last_line(gloss(data, "key", "create", "acme-notes", "--access", "readonly"))
    status, body = http(base + "/api/auth/verify", "POST", {"Authorization": f"Loco {readonly}"})
    assert status == 403 and body["status"] == 403


def test_seeded_project_clones_with_a_readable_history(served, tmp_path):
    _, _, data, _ = served
    repo = data / "projects" / "acme-notes"
    git(tmp_path, "clone", "-q", str(repo), str(tmp_path / "clone"))
    log = git(tmp_path / "clone", "log", "--format=%an|%s")
    authors = {line.split("|")[0] for line in log.splitlines()}
    assert {"Demo Owner", "Alice Martin", "Jonas Becker", "Yuki Tanaka", "Layla Haddad"} <= authors
    assert len(log.splitlines()) >= 12
    assert_fsck_clean(repo)
    assert git(repo, "status", "--porcelain") == ""
