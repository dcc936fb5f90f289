"""Git over HTTP with the real `git` command line against a real `gloss serve`: who may clone and push, what a
push must be, and how pushes and API writes meet."""
from __future__ import annotations

import base64
import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from app.githttp import HOOK_SCRIPT, HookChannel
from storage.keys import digest_of
from tests.gitserver import REPO_ROOT, Server, git_env, gloss, run_git, serving_demo
from tests.support import assert_fsck_clean, edit_line, require_tool, wait_until

PROJECT = "acme-notes"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tool("git")
    data = tmp_path_factory.mktemp("githttp") / "data"
    with serving_demo(data, readonly=("readonly", "Rita Reader"), export=("export", "Pipeline")) as served:
        other = gloss(data, "project", "create", "Other Shop")
        served.keys["other"] = gloss(data, "key", "create", other, "--access", "full", "--user", "Stranger")
        yield served


def server_repo(server: Server) -> Path:
    return server.data / "projects" / PROJECT


def server_head(server: Server) -> str:
    return run_git(server_repo(server), "rev-parse", "HEAD").stdout.strip()


def clone(server: Server, tmp_path: Path, key: str | None, name: str = "clone", **url) -> subprocess.CompletedProcess:
    return run_git(tmp_path, "clone", "-q", server.url(key, **url), str(tmp_path / name))


def cloned(server: Server, tmp_path: Path, key: str, name: str = "clone") -> Path:
    result = clone(server, tmp_path, key, name)
    assert result.returncode == 0, result.stderr
    return tmp_path / name


def commit_all(repo: Path, message: str) -> None:
    assert run_git(repo, "add", "-A").returncode == 0
    result = run_git(repo, "commit", "-q", "-m", message)
    assert result.returncode == 0, result.stderr


def translation(server: Server, asset_id: str, locale: str) -> dict:
    status, body = server.api("GET", f"/api/translations/{asset_id}/{locale}", server.keys["full"])
    assert status == 200, body
    return body


def assert_server_clean(server: Server) -> None:
    """The served working tree equals HEAD and the repository is sound."""
    repo = server_repo(server)
    assert run_git(repo, "status", "--porcelain").stdout == ""
    assert_fsck_clean(repo)


# ----------------------------------------------------------------------------- who may clone
@pytest.mark.parametrize("access", ["full", "readonly"])
def test_full_and_readonly_keys_clone_the_project_with_its_history(server, tmp_path, access):
    repo = cloned(server, tmp_path, server.keys[access])
    assert run_git(repo, "rev-parse", "HEAD").stdout.strip() == server_head(server)
    authors = set(run_git(repo, "log", "--format=%an").stdout.splitlines())
    assert {"Demo Owner", "Alice Martin", "Jonas Becker"} <= authors
    assert (repo / "locales" / "fr" / "0000.json").is_file()


@pytest.mark.parametrize("version", ["0", "1"])
def test_clones_and_fetches_speak_the_older_protocols_too(server, tmp_path, version):
    env = dict(git_env(tmp_path / "home"), GIT_TRACE_PACKET=str(tmp_path / "packets"))
    result = run_git(tmp_path, "-c", f"protocol.version={version}", "clone", "-q",
                     server.url(server.keys["readonly"]), str(tmp_path / "old"), env=env)
    assert result.returncode == 0, result.stderr
    packets = (tmp_path / "packets").read_text()
    assert "version 2" not in packets and ("version 1" in packets) == (version == "1")
    fetched = run_git(tmp_path / "old", "-c", f"protocol.version={version}", "fetch", "-q", "origin")
    assert fetched.returncode == 0, fetched.stderr


def test_clones_speak_protocol_v2_and_may_be_partial(server, tmp_path):
    env = dict(git_env(tmp_path / "home"), GIT_TRACE_PACKET=str(tmp_path / "packets"))
    result = run_git(tmp_path, "-c", "protocol.version=2", "clone", "-q", "--filter=blob:none",
                     server.url(server.keys["readonly"]), str(tmp_path / "partial"), env=env)
    assert result.returncode == 0, result.stderr
    assert "version 2" in (tmp_path / "packets").read_text()
    assert run_git(tmp_path / "partial", "config", "remote.origin.promisor").stdout.strip() == "true"


def test_the_key_as_user_name_without_a_password_clones_too(server, tmp_path):
    result = clone(server, tmp_path, server.keys["readonly"], password=False)
    assert result.returncode == 0, result.stderr


def test_the_api_header_forms_work_through_http_extra_header(server, tmp_path):
    for scheme in ("Loco", "Service"):
        result = run_git(tmp_path, "-c", f"http.extraHeader=Authorization: {scheme} {server.keys['full']}",
                         "clone", "-q", server.url(None), str(tmp_path / scheme))
        assert result.returncode == 0, result.stderr


def test_fetch_brings_new_api_writes(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["readonly"])
    status, _ = server.api("POST", "/api/translations/home.new_note/de", server.keys["full"], b"Neue Notiz (fetch)")
    assert status == 200
    assert run_git(repo, "pull", "-q", "--ff-only").returncode == 0
    assert "Neue Notiz (fetch)" in (repo / "locales" / "de" / "0000.json").read_text("utf-8")


def test_an_export_key_may_not_clone(server, tmp_path):
    result = clone(server, tmp_path, server.keys["export"])
    assert result.returncode != 0
    assert "403" in result.stderr
    assert not (tmp_path / "clone" / "project.json").exists()


def test_a_key_of_another_project_is_refused(server, tmp_path):
    result = clone(server, tmp_path, server.keys["other"])
    assert result.returncode != 0 and "403" in result.stderr


def test_a_wrong_key_gets_401(server, tmp_path):
    result = clone(server, tmp_path, "not-a-key-of-this-server")
    assert result.returncode != 0
    assert "Authentication failed" in result.stderr


def test_no_key_gets_401_with_www_authenticate_so_git_asks_for_credentials(server, tmp_path):
    try:
        urllib.request.urlopen(server.base + f"/git/{PROJECT}.git/info/refs?service=git-upload-pack", timeout=10)
        raise AssertionError("no 401")
    except urllib.error.HTTPError as error:
        assert error.code == 401
        assert error.headers["WWW-Authenticate"].startswith("Basic ")
        assert json.loads(error.read()) == {"status": 401, "error": "Invalid API key"}
    result = clone(server, tmp_path, None)
    assert result.returncode != 0
    assert "could not read Username" in result.stderr  # git asked (prompting is off in tests)


def test_the_dumb_protocol_and_unknown_projects_are_not_served(server):
    basic = "Basic " + base64.b64encode(f"{server.keys['full']}:".encode()).decode()
    for path, status in ((f"/git/{PROJECT}.git/info/refs", 403), (f"/git/{PROJECT}.git/HEAD", 404),
                         ("/git/no-such.git/info/refs?service=git-upload-pack", 403)):
        request = urllib.request.Request(server.base + path, headers={"Authorization": basic})
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=10)
        assert raised.value.code == status, path


def test_verify_names_the_clone_url(server, tmp_path):
    status, body = server.api("GET", "/api/auth/verify", server.keys["readonly"])
    assert status == 200
    url = body["project"]["url"]
    assert url == f"{server.base}/git/{PROJECT}.git"
    result = run_git(tmp_path, "-c", f"http.extraHeader=Authorization: Loco {server.keys['readonly']}",
                     "clone", "-q", url, str(tmp_path / "from-verify"))
    assert result.returncode == 0, result.stderr


# ----------------------------------------------------------------------------- pushing
def test_a_pushed_translation_gets_the_next_revision_with_the_pusher_as_author(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    before = translation(server, "home.title", "fr")
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Bienvenue (poussé)")
    commit_all(repo, "French title, edited in a clone")
    result = run_git(repo, "push", "origin", "main")
    assert result.returncode == 0, result.stderr
    assert "remote: Gloss merged your push" in result.stderr
    after = translation(server, "home.title", "fr")
    assert after["translation"] == "Bienvenue (poussé)"
    assert after["revision"] == before["revision"] + 1
    assert after["author"]["name"] == "Pat Pusher" and after["author"]["email"] == "pat@example.com"
    status, revisions = server.api("GET", "/api/translations/home.title/fr/revisions", server.keys["full"])
    assert status == 200
    assert [r["revision"] for r in revisions[:2]] == [before["revision"] + 1, before["revision"]]
    assert revisions[0]["author"]["name"] == "Pat Pusher" and revisions[1]["translation"] == before["translation"]
    # the push is in history as the second parent of the merge; the working tree followed
    pushed = run_git(repo, "rev-parse", "HEAD").stdout.strip()
    parents = run_git(server_repo(server), "rev-list", "--parents", "-n1", "HEAD").stdout.split()
    assert parents[2] == pushed
    assert "Bienvenue (poussé)" in (server_repo(server) / "locales" / "fr" / "0000.json").read_text("utf-8")
    assert_server_clean(server)
    assert run_git(repo, "pull", "-q", "--ff-only").returncode == 0  # the client fast-forwards to the merge
    # every worker's cache sees the push (requests spread over both), exports and history alike
    for _ in range(8):
        assert translation(server, "home.title", "fr")["translation"] == "Bienvenue (poussé)"
        status, exported = server.api("GET", "/api/export/locale/fr.json", server.keys["full"])
        assert status == 200 and "Bienvenue (poussé)" in json.dumps(exported, ensure_ascii=False)
    status, changes = server.api("GET", "/api/diff", server.keys["full"])
    assert status == 200
    assert [(c["asset"], c["locale"], c["new"], c["author"]["name"]) for c in changes] == [
        ("home.title", "fr", "Bienvenue (poussé)", "Pat Pusher")]


@pytest.mark.parametrize("access", ["readonly", "export"])
def test_only_full_keys_may_push(server, tmp_path, access):
    repo = cloned(server, tmp_path, server.keys["readonly"])
    head = server_head(server)
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Lecture seule")
    commit_all(repo, "should not arrive")
    assert run_git(repo, "remote", "set-url", "origin", server.url(server.keys[access])).returncode == 0
    result = run_git(repo, "push", "origin", "main")
    assert result.returncode != 0 and "403" in result.stderr
    assert server_head(server) == head


def break_json_line(repo: Path) -> str:
    path = repo / "locales" / "fr" / "0000.json"
    lines = path.read_text("utf-8").split("\n")
    lines[2] = lines[2].replace('"text": ', '"text" ', 1)
    path.write_text("\n".join(lines), "utf-8")
    return "locales/fr/0000.json line 3: invalid JSON"


def add_unknown_locale(repo: Path) -> str:
    (repo / "locales" / "xx").mkdir()
    (repo / "locales" / "xx" / "0000.json").write_bytes((repo / "locales" / "fr" / "0000.json").read_bytes())
    return "locale 'xx' is not in project.json"


def link_missing_plural(repo: Path) -> str:
    edit_line(repo / "assets" / "0000.json", "home.title", plurals=["home.title.many"])
    return "asset 'home.title' links plural form 'home.title.many', which is not an asset"


@pytest.mark.parametrize("breakage", [break_json_line, add_unknown_locale, link_missing_plural])
@pytest.mark.parametrize("ref", ["main", "refs/for/main"])
def test_a_push_breaking_a_catalogue_is_refused_with_the_reason_and_changes_nothing(server, tmp_path, breakage,
                                                                                    ref):
    repo = cloned(server, tmp_path, server.keys["full"])
    head, before = server_head(server), translation(server, "home.title", "fr")
    reason = breakage(repo)
    commit_all(repo, "a broken catalogue")
    broken = run_git(repo, "rev-parse", "HEAD").stdout.strip()
    result = run_git(repo, "push", "origin", f"HEAD:{ref}")
    assert result.returncode != 0
    assert f"remote: Gloss refused the push: commit {broken[:12]}: " in result.stderr
    assert reason in result.stderr
    assert "[remote rejected]" in result.stderr
    assert server_head(server) == head
    assert translation(server, "home.title", "fr") == before
    assert run_git(server_repo(server), "cat-file", "-e", broken).returncode != 0  # quarantine dropped it
    assert_server_clean(server)


def test_a_push_with_an_api_key_in_a_file_is_refused(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text=f"key {server.keys['readonly']}")
    commit_all(repo, "leak")
    result = run_git(repo, "push", "origin", "main")
    assert result.returncode != 0 and "contains an API key" in result.stderr


def test_a_push_based_on_an_old_commit_is_refused_and_refs_for_main_merges_it_key_by_key(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    status, _ = server.api("POST", "/api/translations/home.greeting/fr", server.keys["full"], b"Salut %s (API)")
    assert status == 200
    # the neighbouring line of the same file, edited on the old commit
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (revue)")
    commit_all(repo, "French title for review")
    refused = run_git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "rejected" in refused.stderr
    assert translation(server, "home.greeting", "fr")["translation"] == "Salut %s (API)"
    merged = run_git(repo, "push", "origin", "HEAD:refs/for/main")
    assert merged.returncode == 0, merged.stderr
    assert translation(server, "home.title", "fr")["translation"] == "Accueil (revue)"
    assert translation(server, "home.greeting", "fr")["translation"] == "Salut %s (API)"  # the API write kept
    assert run_git(server_repo(server), "show-ref", "refs/for/main").stdout == ""  # no such ref is kept
    assert_server_clean(server)


def test_a_pushed_new_asset_gets_a_new_number_from_gloss(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    meta = json.loads((repo / "project.json").read_text("utf-8"))
    path = repo / "assets" / "0000.json"
    lines = path.read_text("utf-8").rstrip("\n").split("\n")
    record = {"n": meta["next_seq"], "type": "text", "context": "", "notes": "from git", "printf": "", "tags": [],
              "aliases": {}}
    lines[-2] += ","
    lines.insert(-1, '"pushed.asset": ' + json.dumps(record))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    meta["next_seq"] += 1
    (repo / "project.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    french = repo / "locales" / "fr" / "0000.json"
    lines = french.read_text("utf-8").rstrip("\n").split("\n")
    lines[-2] += ","
    lines.insert(-1, '"pushed.asset": {"text": "Venu par git", "rev": 1}')
    french.write_text("\n".join(lines) + "\n", "utf-8")
    commit_all(repo, "a new asset")
    status, _ = server.api("POST", "/api/assets", server.keys["full"], b"id=api.asset.meanwhile")
    assert status == 201
    result = run_git(repo, "push", "origin", "HEAD:refs/for/main")
    assert result.returncode == 0, result.stderr
    status, asset = server.api("GET", "/api/assets/pushed.asset", server.keys["full"])
    assert status == 200 and asset["notes"] == "from git"
    assert translation(server, "pushed.asset", "fr")["translation"] == "Venu par git"
    numbers = [json.loads(line.split(": ", 1)[1].rstrip(","))["n"]
               for line in (server_repo(server) / "assets" / "0000.json").read_text("utf-8").split("\n")
               if line.startswith('"')]
    assert len(numbers) == len(set(numbers))  # the pushed number was taken by the API asset: Gloss renumbered
    assert_server_clean(server)


def test_full_keys_push_tags_and_refs_other_than_branches_are_refused(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    assert run_git(repo, "tag", "-a", "release-1", "-m", "release 1").returncode == 0
    tagged = run_git(repo, "push", "origin", "release-1")
    assert tagged.returncode == 0, tagged.stderr
    peeled = run_git(server_repo(server), "rev-parse", "release-1^{commit}").stdout.strip()
    assert peeled == run_git(repo, "rev-parse", "HEAD").stdout.strip()
    other = run_git(repo, "push", "origin", "HEAD:refs/notes/feature")
    assert other.returncode != 0
    assert "only branches (refs/heads/NAME, fast-forward), refs/for/NAME (key-level merge) and tags" in other.stderr
    assert run_git(server_repo(server), "show-ref", "refs/notes/feature").stdout == ""


# ----------------------------------------------------------------------------- racing
WRITER = """
import json, sys, urllib.request
base, key, asset, name, count = sys.argv[1:6]
for n in range(int(count)):
    text = f"{name}-{n}"
    request = urllib.request.Request(f"{base}/api/translations/{asset}/fr", data=text.encode(), method="POST",
                                     headers={"Authorization": f"Loco {key}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            if response.status == 200:
                print(text, flush=True)
    except Exception as error:
        print("failed", error, file=sys.stderr)
"""


def pusher(server: Server, workdir: Path, asset: str, name: str, count: int, ref: str, accepted: list) -> None:
    """Edit one French line and push, `count` times; on `main`, a refusal means: fetch, redo the edit, retry."""
    repo = workdir / name
    env = git_env(workdir / f"home-{name}")
    subprocess.run(["git", "clone", "-q", server.url(server.keys["full"]), str(repo)], env=env, check=True,
                   capture_output=True)
    for n in range(count):
        text = f"{name}-{n}"
        for _ in range(30):
            subprocess.run(["git", "fetch", "-q", "origin"], cwd=repo, env=env, check=True, capture_output=True)
            if ref == "main" or n == 0:
                subprocess.run(["git", "reset", "-q", "--hard", "origin/main"], cwd=repo, env=env, check=True)
            edit_line(repo / "locales" / "fr" / "0000.json", asset, text=text)
            subprocess.run(["git", "commit", "-q", "-am", text], cwd=repo, env=env, check=True)
            result = subprocess.run(["git", "push", "origin", f"HEAD:{ref}"], cwd=repo, env=env,
                                    capture_output=True, text=True)
            if result.returncode == 0:
                commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, capture_output=True,
                                        text=True).stdout.strip()
                accepted.append((asset, text, commit))
                break
            subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, env=env, check=True)


def test_api_writers_and_pushers_racing_lose_nothing(server, tmp_path):
    key = server.keys["full"]
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, server.base, key, asset, f"api{i}", "12"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
               for i, asset in enumerate(["home.search.placeholder", "home.new_note", "notes.count"])]
    accepted: list = []
    threads = [threading.Thread(target=pusher, args=(server, tmp_path, asset, name, 4, ref, accepted))
               for asset, name, ref in (("home.title", "pushmain", "main"),
                                        ("home.greeting", "pushreview", "refs/for/main"))]
    for thread in threads:
        thread.start()
    acknowledged = {}
    for writer, asset in zip(writers, ["home.search.placeholder", "home.new_note", "notes.count"]):
        out, err = writer.communicate(timeout=600)
        acknowledged[asset] = out.split()
    for thread in threads:
        thread.join(600)
    assert all(acknowledged.values()) and len(accepted) == 8
    repo = server_repo(server)
    for asset, texts in acknowledged.items():
        assert translation(server, asset, "fr")["translation"] == texts[-1]  # no push overwrote an API write
        status, revisions = server.api("GET", f"/api/translations/{asset}/fr/revisions", key)
        assert [r["translation"] for r in revisions][:len(texts)] == texts[::-1]
    for asset, text, commit in accepted:
        assert run_git(repo, "merge-base", "--is-ancestor", commit, "HEAD").returncode == 0
        status, revisions = server.api("GET", f"/api/translations/{asset}/fr/revisions", key)
        assert text in [r["translation"] for r in revisions]
    for asset in ("home.title", "home.greeting"):
        last = [text for a, text, _ in accepted if a == asset][-1]
        assert translation(server, asset, "fr")["translation"] == last
    assert_server_clean(server)


def test_a_push_of_several_mebibytes_arrives_whole(server, tmp_path):
    """git sends a body over http.postBuffer (1 MiB) chunked; the handler reads it all before receive-pack."""
    import random
    import string

    repo = cloned(server, tmp_path, server.keys["full"])
    rng = random.Random(13)
    texts = {asset: "".join(rng.choice(string.ascii_letters + " ") for _ in range(600_000))
             for asset in ("home.title", "home.greeting", "home.new_note", "home.search.placeholder")}
    for asset, text in texts.items():
        edit_line(repo / "locales" / "fr" / "0000.json", asset, text=text)
    commit_all(repo, "long French texts")
    result = run_git(repo, "-c", "http.postBuffer=65536", "push", "origin", "main")
    assert result.returncode == 0, result.stderr
    for asset, text in texts.items():
        assert translation(server, asset, "fr")["translation"] == text
    pushed = run_git(repo, "rev-parse", "HEAD").stdout.strip()
    objects = server_repo(server) / ".git" / "objects"
    assert not (objects / pushed[:2] / pushed[2:]).exists()  # received as a pack, not loose (unpackLimit=1)
    assert_server_clean(server)


# ----------------------------------------------------------------------------- the WSGI handler itself
def basic(key: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{key}:".encode()).decode()}


def test_git_is_mounted_beside_the_api_and_is_not_an_api_route(app, client, demo):
    _, keys = demo
    assert not [rule for rule in app.url_map.iter_rules() if rule.rule.startswith("/git")]
    response = client.get(f"/git/{PROJECT}.git/info/refs", query_string={"service": "git-upload-pack"},
                          headers=basic(keys.readonly))
    assert response.status_code == 200
    assert response.mimetype == "application/x-git-upload-pack-advertisement"
    assert b"refs/heads/main" in response.data
    refused = client.get(f"/git/{PROJECT}.git/info/refs", query_string={"service": "git-receive-pack"},
                         headers=basic(keys.readonly))
    assert refused.status_code == 403 and refused.get_json()["status"] == 403


def test_git_requests_beyond_their_slots_get_503_and_leave_the_api_alone(app, client, demo):
    _, keys = demo
    git_app = app.wsgi_app.mounts["/git"]
    git_app.slots = threading.BoundedSemaphore(1)
    url = f"/git/{PROJECT}.git/info/refs?service=git-upload-pack"
    streaming = client.get(url, headers=basic(keys.full), buffered=False)  # holds the only slot until closed
    assert streaming.status_code == 200
    busy = client.get(url, headers=basic(keys.full))
    assert busy.status_code == 503 and busy.headers["Retry-After"]
    assert client.get("/api/auth/verify", headers=basic(keys.full)).status_code == 200
    streaming.close()
    assert client.get(url, headers=basic(keys.full)).status_code == 200


def test_the_server_gives_git_threads_of_its_own_and_a_timeout_beyond_gunicorns_30_s():
    from app.githttp import GIT_SLOTS, GIT_TIMEOUT
    from app.server import API_THREADS, gunicorn_options

    options = gunicorn_options("127.0.0.1", 8000, 2)
    assert options["worker_class"] == "app.waitress_worker.WaitressWorker"  # threads get whole requests only
    assert options["threads"] == API_THREADS + GIT_SLOTS and API_THREADS >= 1
    assert GIT_TIMEOUT > 30 and options["timeout"] > GIT_TIMEOUT


def stalled_git_request(server: Server) -> socket.socket:
    """A fetch whose body never comes: the server reads it in its event loop, holding no thread or Git slot."""
    connection = socket.create_connection(("127.0.0.1", int(server.base.rsplit(":", 1)[1])), timeout=30)
    head = (f"POST /git/{PROJECT}.git/git-upload-pack HTTP/1.1\r\nHost: localhost\r\n"
            f"Authorization: {basic(server.keys['readonly'])['Authorization']}\r\n"
            "Content-Type: application/x-git-upload-pack-request\r\nContent-Length: 100000\r\n\r\n")
    connection.sendall(head.encode("ascii"))
    return connection


def test_stalled_git_requests_take_neither_the_apis_threads_nor_the_git_slots(server, tmp_path):
    from app.server import API_THREADS
    from app.githttp import GIT_SLOTS

    # as many stalled Git requests as both workers have threads: gthread workers gave each one a thread
    stalled = [stalled_git_request(server) for _ in range(2 * (API_THREADS + GIT_SLOTS))]
    try:
        for _ in range(10):
            status, body = server.api("GET", "/api/translations/home.title/fr", server.keys["full"])
            assert status == 200, body
        cloned(server, tmp_path, server.keys["readonly"])  # the Git slots are free for whole requests
        for connection in stalled:  # still being read: not answered, not turned away
            connection.settimeout(0.2)
            with pytest.raises(socket.timeout):
                connection.recv(64)
    finally:
        for connection in stalled:
            connection.close()


# ----------------------------------------------------------------------------- the hooks' channel
def test_a_hook_that_cannot_reach_the_server_refuses_the_push(tmp_path):
    env = {"GLOSS_HOOK_SOCKET": str(tmp_path / "no-socket"), "GLOSS_HOOK_TOKEN": "t", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-I", "-S", str(HOOK_SCRIPT), "pre-receive"], env=env,
                            input=b"0" * 40 + b" " + b"1" * 40 + b" refs/heads/main\n", capture_output=True)
    assert result.returncode == 1
    assert b"Gloss could not handle the push" in result.stderr


def test_the_hook_channel_answers_only_requests_with_its_token(tmp_path):
    asked = []
    channel = HookChannel(lambda request: asked.append(request) or {"status": 0})
    try:
        def ask(token: str) -> dict:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(channel.path)
                connection.sendall(json.dumps({"token": token, "hook": "pre-receive", "commands": []}).encode()
                                   + b"\n")
                return json.loads(connection.makefile("rb").readline())

        assert ask("forged")["status"] == 1 and asked == []
        assert ask(channel.token) == {"status": 0}
        assert asked == [{"hook": "pre-receive", "commands": []}]
        assert oct(os.stat(channel.directory).st_mode & 0o777) == "0o700"
    finally:
        channel.close()
    wait_until(lambda: not os.path.exists(channel.directory), timeout=5, message="the channel's directory is left")


# ----------------------------------------------------------------------------- key-level merge
def fr_file(repo: Path) -> Path:
    return repo / "locales" / "fr" / "0000.json"


def line_merge_conflicts(base: bytes, ours: bytes, theirs: bytes, workdir: Path) -> bool:
    """Would git's line-based three-way merge (`git merge-file`) conflict on these versions of a file?"""
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (workdir / name).write_bytes(data)
    result = run_git(workdir, "merge-file", "-p", "ours", "base", "theirs")
    return result.returncode != 0


# The API changes one entry, the push (based on the commit before) its neighbour: (API call, pushed entry, check)
NEIGHBOURS = {
    "API edits the next line": lambda keys: ("POST", f"/api/translations/{keys[2]}/fr", b"API text", keys[1]),
    "API edits the line before": lambda keys: ("POST", f"/api/translations/{keys[1]}/fr", b"API text", keys[2]),
    "API flags the next line": lambda keys: ("POST", f"/api/translations/{keys[2]}/fr/flag", b"flag=fuzzy", keys[1]),
    "API removes the next line": lambda keys: ("DELETE", f"/api/translations/{keys[2]}/fr", None, keys[1]),
    "API edits the last line": lambda keys: ("POST", f"/api/translations/{keys[-1]}/fr", b"API text", keys[-2]),
}


def test_neighbouring_changes_of_the_api_and_a_push_merge_key_by_key_where_lines_conflict(server, tmp_path):
    conflicts = 0
    for n, (name, case) in enumerate(NEIGHBOURS.items()):
        repo = cloned(server, tmp_path, server.keys["full"], f"clone{n}")
        base = fr_file(repo).read_bytes()
        keys = list(json.loads(base))
        method, path, body, pushed = case(keys)
        api_asset = path.split("/")[3]
        status, answer = server.api(method, path, server.keys["full"], body)
        assert status == 200, (name, answer)
        after_api = fr_file(server_repo(server)).read_bytes()
        expected_api_entry = json.loads(after_api).get(api_asset)
        edit_line(fr_file(repo), pushed, text=f"pushed {n}")
        commit_all(repo, name)
        conflicts += line_merge_conflicts(base, after_api, fr_file(repo).read_bytes(), tmp_path)
        result = run_git(repo, "push", "origin", "HEAD:refs/for/main")
        assert result.returncode == 0, (name, result.stderr)
        merged = json.loads(fr_file(server_repo(server)).read_bytes())
        assert merged[pushed]["text"] == f"pushed {n}", name
        if expected_api_entry is None:
            assert api_asset not in merged, name
        else:
            assert (merged[api_asset]["text"], merged[api_asset].get("flag")) == (
                expected_api_entry["text"], expected_api_entry.get("flag")), name
        assert_server_clean(server)
    assert conflicts >= 4  # a line-based merge would have stopped on these; the key-level merge never did


# ----------------------------------------------------------------------------- the README's loop
def readme_loop() -> list[str]:
    """The commands of the README's clone/edit/push example, comments dropped."""
    section = (REPO_ROOT / "README.md").read_text("utf-8").split("## Cloning, editing and pushing a project", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split(" #", 1)[0].strip() for line in block.splitlines()]
    return [command for command in commands if command]


def test_the_readme_clone_edit_push_loop_works_as_written(server, tmp_path):
    commands = readme_loop()
    assert commands[0].startswith("git clone ") and "git push origin main" in commands
    host = server.base.split("://", 1)[1]
    env = dict(git_env(tmp_path / "home"), KEY=server.keys["full"])
    cwd = tmp_path
    for command in commands:
        if command.startswith("cd "):
            cwd = cwd / command[3:]
            continue
        if command.startswith("git commit"):  # the README's "edit a text" step
            edit_line(cwd / "locales" / "fr" / "0000.json", "home.title", text="Bienvenue (README)")
        result = subprocess.run(command.replace("localhost:8000", host), shell=True, cwd=cwd, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (command, result.stderr)
    assert translation(server, "home.title", "fr")["translation"] == "Bienvenue (README)"
    assert run_git(cwd, "rev-parse", "HEAD").stdout == run_git(server_repo(server), "rev-parse", "HEAD").stdout


def test_tags_must_name_a_valid_commit_and_releases_cannot_move(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    (tmp_path / "leak.txt").write_text(server.keys["other"])
    leak = run_git(repo, "hash-object", "-w", str(tmp_path / "leak.txt")).stdout.strip()
    blob_tag = run_git(repo, "push", "origin", f"{leak}:refs/tags/leak")
    assert blob_tag.returncode != 0 and "a tag must name a commit" in blob_tag.stderr
    assert run_git(repo, "tag", "-a", "keyed", "-m", f"key {server.keys['readonly']}").returncode == 0
    keyed = run_git(repo, "push", "origin", "keyed")
    assert keyed.returncode != 0 and "contains an API key" in keyed.stderr
    assert run_git(repo, "tag", "v1").returncode == 0
    assert run_git(repo, "push", "origin", "v1").returncode == 0
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "later").returncode == 0
    moved = run_git(repo, "push", "-f", "origin", "HEAD:refs/tags/v1")
    assert moved.returncode != 0 and "refs/tags/v1 cannot be moved" in moved.stderr
    deleted = run_git(repo, "push", "origin", ":refs/tags/v1")
    assert deleted.returncode != 0 and "refs/tags/v1 cannot be deleted" in deleted.stderr
    assert gloss(server.data, "project", "tags", PROJECT, "movable").endswith("movable")
    assert run_git(repo, "push", "origin", ":refs/tags/v1").returncode == 0
    assert run_git(server_repo(server), "show-ref", "refs/tags/leak", "refs/tags/keyed", "refs/tags/v1").stdout == ""


# ----------------------------------------------------------------------------- who pushed
def dashboard_page(server: Server, key: str, path: str) -> str:
    """A dashboard page as a browser signed in with `key` sees it (session cookie, CSRF token from the form)."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    front = opener.open(server.base + "/", timeout=60).read().decode("utf-8")
    token = html.unescape(re.search(r'name="csrf" value="([^"]+)"', front).group(1))
    opener.open(server.base + "/sign-in", data=urlencode({"key": key, "csrf": token}).encode(), timeout=60)
    return opener.open(server.base + path, timeout=60).read().decode("utf-8")


def test_a_push_records_the_translator_as_author_and_the_keys_user_as_committer(server, tmp_path):
    kim = gloss(server.data, "key", "create", PROJECT, "--access", "full", "--user", "Kim Keyholder",
                "--email", "kim@example.com")
    repo = cloned(server, tmp_path, kim)
    edit_line(repo / "locales" / "fr" / "0000.json", "notes.empty", text="Aucune note (poussée par Kim)")
    assert run_git(repo, "add", "-A").returncode == 0
    impersonated = run_git(repo, "commit", "-q", "--author=Alice Martin <alice@example.com>", "-m", "as Alice")
    assert impersonated.returncode == 0, impersonated.stderr
    pushed = run_git(repo, "push", "origin", "main")
    assert pushed.returncode == 0, pushed.stderr
    fresh = cloned(server, tmp_path, server.keys["readonly"], "fresh")
    merge = run_git(fresh, "log", "-1", "--format=%H|%an|%ae|%cn|%ce").stdout.strip().split("|")
    assert merge[1:] == ["Alice Martin", "alice@example.com", "Kim Keyholder", "kim@example.com"]
    # /revisions: the pushed revision names both; the one before it, an API write or the seed, no pusher
    status, revisions = server.api("GET", "/api/translations/notes.empty/fr/revisions", server.keys["readonly"])
    assert status == 200
    assert revisions[0]["translation"] == "Aucune note (poussée par Kim)"
    assert revisions[0]["author"]["name"] == "Alice Martin"
    assert (revisions[0]["pushedBy"]["name"], revisions[0]["pushedBy"]["email"]) == ("Kim Keyholder", "kim@example.com")
    assert all("pushedBy" not in revision for revision in revisions[1:])
    status, changes = server.api("GET", f"/api/diff?to={merge[0]}", server.keys["readonly"])
    assert status == 200 and [(c["asset"], c["author"]["name"], c["pushedBy"]["name"]) for c in changes] == [
        ("notes.empty", "Alice Martin", "Kim Keyholder")]
    # the dashboard: the change page, the list of changes and the asset's revision list
    change = dashboard_page(server, server.keys["readonly"], f"/changes/{merge[0]}")
    assert re.search(r'class="author">Alice Martin</span>.*pushed by <span class="pusher">Kim Keyholder</span>',
                     change, re.S)
    listed = dashboard_page(server, server.keys["readonly"], "/changes")
    assert 'Alice Martin</span> · pushed by <span class="pusher">Kim Keyholder</span>' in listed
    asset = dashboard_page(server, server.keys["readonly"], "/asset?id=notes.empty")
    assert f'revision {revisions[0]["revision"]} · Alice Martin · pushed by' in asset
    # and the key itself (or its digest) is nowhere in the repository, whose every object a clone may read
    everything = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=server_repo(server),
                                capture_output=True, check=True).stdout
    assert kim.encode() not in everything and digest_of(kim).encode() not in everything
    assert kim not in run_git(fresh, "log", "--all", "--format=%an %ae %cn %ce %B").stdout
    assert run_git(fresh, "grep", "-F", kim, *run_git(fresh, "rev-list", "--all").stdout.split()).stdout == ""


def test_api_writes_are_committed_by_the_keys_user_and_name_no_pusher(server, tmp_path):
    status, _ = server.api("POST", "/api/translations/notes.empty/de", server.keys["full"], b"Keine Notizen (API)")
    assert status == 200
    author, committer = run_git(server_repo(server), "log", "-1", "--format=%an <%ae>|%cn <%ce>").stdout.strip() \
        .split("|")
    assert author == committer and "Gloss" not in committer
    status, revisions = server.api("GET", "/api/translations/notes.empty/de/revisions", server.keys["full"])
    assert status == 200 and revisions[0]["translation"] == "Keine Notizen (API)" and "pushedBy" not in revisions[0]
