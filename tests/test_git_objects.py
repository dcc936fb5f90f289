"""Only reachable objects are kept and served, and object sizes are bounded before memory is spent (a real
`gloss serve`, driven by the git command line or by Git's smart-HTTP protocol spoken directly)."""
from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from limits import MAX_FILE_BYTES, MAX_PUSH_BYTES
from tests.gitserver import Server, run_git, serving_demo
from tests.support import edit_line, require_tool

PROJECT = "acme-notes"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tool("git")
    data = tmp_path_factory.mktemp("gitobjects") / "data"
    with serving_demo(data, readonly=("readonly", "Rita")) as served:
        yield served


def server_repo(server: Server) -> Path:
    return server.data / "projects" / PROJECT


def holds(repo: Path, object_id: str) -> bool:
    return run_git(repo, "cat-file", "-e", object_id).returncode == 0


def cloned(server: Server, tmp_path: Path, key: str, *options: str) -> Path:
    result = run_git(tmp_path, "clone", "-q", *options, server.url(key), str(tmp_path / "clone"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "clone"


def commit_french_title(repo: Path, text: str) -> str:
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text=text)
    assert run_git(repo, "commit", "-qam", text).returncode == 0
    return run_git(repo, "rev-parse", "HEAD").stdout.strip()


def pkt(payload: bytes) -> bytes:
    return b"%04x" % (len(payload) + 4) + payload


def post(server: Server, service: str, body: bytes, key: str, headers: dict | None = None) -> tuple[int, bytes]:
    """One smart-HTTP POST, as git would send it."""
    request = urllib.request.Request(
        f"{server.base}/git/{PROJECT}.git/{service}", data=body, method="POST",
        headers={"Authorization": "Basic " + base64.b64encode(f"{key}:".encode()).decode(),
                 "Content-Type": f"application/x-{service}-request", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def push_with_extra_objects(server: Server, repo: Path, extra: list[str]) -> bytes:
    """Push HEAD to main in a pack that also carries `extra` objects (git itself sends only what refs need)."""
    old = run_git(repo, "rev-parse", "origin/main").stdout.strip()
    new = run_git(repo, "rev-parse", "HEAD").stdout.strip()
    needed = run_git(repo, "rev-list", "--objects", "--no-object-names", "HEAD", "--not", "origin/main").stdout
    pack = subprocess.run(["git", "pack-objects", "--stdout", "-q"], cwd=repo, capture_output=True, check=True,
                          input=(needed + "".join(f"{object_id}\n" for object_id in extra)).encode()).stdout
    # side-band-64k: the hook's message (why a push is refused) comes back in the answer
    command = pkt(f"{old} {new} refs/heads/main\0report-status side-band-64k\n".encode())
    status, answer = post(server, "git-receive-pack", command + b"0000" + pack, server.keys["full"])
    assert status == 200, answer
    return answer


# ----------------------------------------------------------------------------- what a push may leave behind
def test_a_push_carrying_an_object_no_ref_reaches_is_refused_and_leaves_nothing(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    stray = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, capture_output=True, text=True,
                           input="a stowaway " * 1000, check=True).stdout.strip()
    pushed = commit_french_title(repo, "Accueil (avec passager)")
    head = run_git(server_repo(server), "rev-parse", "HEAD").stdout.strip()
    answer = push_with_extra_objects(server, repo, [stray])
    assert b"ng refs/heads/main pre-receive hook declined" in answer
    assert b"object(s) that no pushed ref reaches" in answer, answer
    assert not holds(server_repo(server), stray) and not holds(server_repo(server), pushed)
    assert run_git(server_repo(server), "rev-parse", "HEAD").stdout.strip() == head


def test_the_same_push_without_the_stray_object_is_accepted(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    pushed = commit_french_title(repo, "Accueil (sans passager)")
    answer = push_with_extra_objects(server, repo, [])
    assert b"ok refs/heads/main" in answer, answer
    assert holds(server_repo(server), pushed)


def test_objects_of_a_non_fast_forward_push_never_reach_the_store(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    status, _ = server.api("POST", "/api/translations/home.greeting/fr", server.keys["full"], b"Salut (API)")
    assert status == 200
    pushed = commit_french_title(repo, "Accueil (en retard)")
    # forced, so that git sends its objects (unforced, it stops at "fetch first" before sending anything)
    refused = run_git(repo, "push", "--force", "origin", "main")
    assert refused.returncode != 0 and "non-fast-forward" in refused.stderr, refused.stderr
    assert not holds(server_repo(server), pushed)
    assert not list((server_repo(server) / ".git" / "objects").glob("tmp_objdir-incoming-*"))


def test_a_file_over_the_size_limit_is_refused_from_its_header(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    path = repo / "locales" / "fr" / "0000.json"
    path.write_bytes(b" " * (MAX_FILE_BYTES + 1))  # compresses to a few kilobytes
    assert run_git(repo, "commit", "-qam", "a bomb").returncode == 0
    bomb = run_git(repo, "rev-parse", "HEAD:locales/fr/0000.json").stdout.strip()
    refused = run_git(repo, "push", "origin", "main")
    assert refused.returncode != 0
    assert f"blob {bomb[:12]} is {MAX_FILE_BYTES + 1} bytes (limit max_file_bytes" in refused.stderr
    assert not holds(server_repo(server), bomb)


def test_a_push_declaring_more_than_the_push_limit_is_refused_before_its_body_is_sent(server):
    host, port = server.base.rsplit("/", 1)[1].rsplit(":", 1)
    authorization = "Basic " + base64.b64encode(f"{server.keys['full']}:".encode()).decode()
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall((f"POST /git/{PROJECT}.git/git-receive-pack HTTP/1.1\r\nHost: localhost\r\n"
                            f"Authorization: {authorization}\r\n"
                            "Content-Type: application/x-git-receive-pack-request\r\n"
                            f"Content-Length: {MAX_PUSH_BYTES + 1}\r\n\r\n").encode())
        answer = http_answer(connection)  # not one byte of the body was sent
    assert answer.startswith("HTTP/1.1 413"), answer
    assert "limit max_push_bytes" in json.loads(answer.split("\r\n\r\n", 1)[1])["error"]


def http_answer(connection: socket.socket) -> str:
    """One HTTP answer, headers and body (the server may send them in separate segments)."""
    received = b""
    while True:
        head, _, body = received.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length: *(\d+)", head) if _ else None
        if length and len(body) >= int(length.group(1)):
            return received.decode("latin-1")
        chunk = connection.recv(65536)
        if not chunk:
            return received.decode("latin-1")
        received += chunk


# ----------------------------------------------------------------------------- what a fetch may obtain
@pytest.mark.parametrize("version", ["0", "2"])
def test_no_fetch_obtains_an_object_that_neither_main_nor_a_tag_reaches(server, tmp_path, version):
    stray = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=server_repo(server), capture_output=True,
                           text=True, input=f"left behind, v{version}", check=True).stdout.strip()
    repo = cloned(server, tmp_path, server.keys["readonly"])
    fetched = run_git(repo, "-c", f"protocol.version={version}", "fetch", "origin", stray)
    assert fetched.returncode != 0
    assert not holds(repo, stray)


def test_an_old_reachable_commit_may_still_be_fetched_by_id_over_protocol_v2(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["readonly"], "--depth=1")
    first = run_git(server_repo(server), "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    fetched = run_git(repo, "-c", "protocol.version=2", "fetch", "--depth=1", "origin", first)
    assert fetched.returncode == 0, fetched.stderr
    assert holds(repo, first)


def test_a_partial_clone_fetches_the_blobs_it_lacks_on_checkout(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["readonly"], "--filter=blob:none")
    assert (repo / "locales" / "fr" / "0000.json").read_text("utf-8").startswith("{")
