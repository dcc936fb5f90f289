"""The `gloss` command line, exactly as DESIGN §7 fixes it, and `gloss serve` as a real server."""
from __future__ import annotations

import base64
from http.client import HTTPConnection
import json
import re
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from html import unescape
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from tests.support import answers, assert_fsck_clean, REPO_ROOT, git, wait_until

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
    wait_until(lambda: answers(base + "/api/ping"), max(deadline - time.time(), 0), 0.1, "gloss serve did not answer")
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


def page(base: str, method: str, path: str, cookie: str = "", form: dict | None = None,
         headers: dict | None = None) -> tuple[int, list[str], str]:
    """(status, Set-Cookie headers, body) of one dashboard request on a connection of its own."""
    url = urlsplit(base)
    connection = HTTPConnection(url.hostname, url.port, timeout=10)
    sent = dict(headers or {}, **({"Cookie": cookie} if cookie else {}))
    body = urlencode(form) if form is not None else None
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, response.headers.get_all("Set-Cookie") or [], response.read().decode()
    finally:
        connection.close()


def web_sign_in(base: str, key: str, headers: dict | None = None) -> tuple[str, str]:
    """Sign in as a browser does: the form's token, then the post; returns (raw Set-Cookie, cookie)."""
    _, cookies, body = page(base, "GET", "/")
    token = unescape(re.search(r'name="csrf" value="([^"]+)"', body).group(1))
    status, cookies, _ = page(base, "POST", "/sign-in", cookies[0].split(";")[0], {"key": key, "csrf": token},
                              headers)
    assert status == 302, status
    return cookies[0], cookies[0].split(";")[0]


def test_served_dashboard_sessions_hold_no_key_are_secure_behind_a_proxy_and_end_in_every_worker(served):
    from tests.test_web_sessions import payload_bytes

    base, key, data, _ = served
    header, cookie = web_sign_in(base, key)
    assert key not in header and key.encode() not in payload_bytes(header)
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" not in header
    proxied, _ = web_sign_in(base, key, {"X-Forwarded-Proto": "https"})  # a proxy on 127.0.0.1 is trusted
    assert "; Secure" in proxied
    status, _, body = page(base, "GET", "/changes", cookie)
    assert status == 200
    token = unescape(re.search(r'name="csrf" value="([^"]+)"', body).group(1))
    copy = cookie
    assert page(base, "POST", "/sign-out", cookie, {"csrf": token})[0] == 302
    # each request on a new connection: both worker processes answer some, and none knows the session
    assert {page(base, "GET", "/changes", copy)[0] for _ in range(8)} == {302}
    _, cookie = web_sign_in(base, key)
    assert page(base, "GET", "/changes", cookie)[0] == 200
    assert "ended 2 dashboard session(s)" in gloss(data, "key", "revoke", key).stdout  # this one and `proxied`
    assert {page(base, "GET", "/changes", cookie)[0] for _ in range(8)} == {302}


def test_serve_passes_session_settings_to_the_app_and_refuses_a_bad_lifetime(tmp_path):
    from app import create_app
    from app.cli import build_parser, web_settings

    args = build_parser().parse_args(["serve", "--session-idle-hours", "2", "--session-max-hours", "24",
                                      "--secure-cookies"])
    app = create_app(tmp_path / "data", testing=True, config=web_settings(args))
    lifetime = app.extensions["gloss.sessions"].lifetime
    assert (lifetime.idle, lifetime.max, app.config["SESSION_COOKIE_SECURE"]) == (7200, 86400, True)
    assert web_settings(build_parser().parse_args(["serve"])) == {}  # the environment's, else the defaults
    result = gloss(tmp_path, "serve", "--session-idle-hours", "0", check=False)
    assert result.returncode == 2 and "must be a positive number of hours" in result.stderr
