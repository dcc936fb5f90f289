"""The HTTP front of `gloss serve`: slow clients hold a socket, never a thread; bodies over a route's limit are
refused before they are read; the access log never shows a query string; two servers on one machine share
nothing (issue 19, items 1 and 10)."""
from __future__ import annotations

import socket

from limits import MAX_BODY_BYTES, MAX_CONVERT_BYTES
from tests.gitserver import run_git
from tests.reliability.harness import Server, SlowClients, convert_path
from tests.support import wait_until

SLOW_CLIENTS = 200


def clone_url(server: Server) -> str:
    return f"http://{server.key}:@127.0.0.1:{server.port}/git/acme-notes.git"


def test_two_hundred_slow_keyless_clients_leave_the_api_and_git_clone_working(server, tmp_path):
    with SlowClients(server, SLOW_CLIENTS) as clients:
        clients.trickled.wait(30)  # every slow client has sent at least a second piece
        # bounded: a starved server fails the first probe after its timeout
        answers = [server.request("GET", "/api/locales", timeout=15).status for _ in range(10)]
        clone = run_git(tmp_path, "clone", "-q", clone_url(server), str(tmp_path / "clone"))
        still_open = clients.still_open()
    assert answers == [200] * 10
    assert clone.returncode == 0, clone.stderr
    assert (tmp_path / "clone" / ".git").is_dir()
    assert still_open == SLOW_CLIENTS  # the answers came while every slow client was still being read


def test_a_declared_body_over_its_routes_limit_is_refused_before_it_is_read(server):
    for path, limit, name in ((convert_path("json"), MAX_CONVERT_BYTES, b"max_convert_bytes"),
                              ("/api/import/json?locale=en", MAX_BODY_BYTES, b"max_body_bytes")):
        # the body is never sent: the refusal must not wait for it
        answer = server.raw(f"POST {path} HTTP/1.1\r\nHost: x\r\n"
                            f"Content-Length: {limit + 1}\r\n\r\n".encode())
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413") and b"application/json" in head, answer
        assert b'"status": 413' in body and name in body


def read_until_closed(sock: socket.socket) -> bytes:
    pieces = []
    try:
        while piece := sock.recv(65536):
            pieces.append(piece)
    except ConnectionResetError:  # the rest of our body reached a closed connection
        pass
    return b"".join(pieces)


def test_a_chunked_body_is_refused_once_it_passes_its_routes_limit(server):
    chunk = b"x" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(f"POST {convert_path('json')} HTTP/1.1\r\nHost: x\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        try:
            for _ in range(MAX_CONVERT_BYTES // len(chunk) + 2):
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server answered and closed while we were still sending
        answer = read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b'"status": 413' in body and b"max_convert_bytes" in body


def test_the_access_log_names_each_request_without_its_query_string(server):
    assert server.request("GET", "/api/locales?key=not-for-the-log-7f3a&v=1").status == 200
    wait_until(lambda: '"GET /api/locales" 200' in server.log(), message="the request is not in the access log")
    assert "not-for-the-log-7f3a" not in server.log()


def test_two_servers_with_different_data_directories_do_not_interfere(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # where gunicorn would put its one shared control socket
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    first = Server(tmp_path / "first").start()
    try:
        second = Server(tmp_path / "second").start()
        second.stop()
        assert first.request("GET", "/api/locales").status == 200
        assert not (home / ".gunicorn").exists()  # nothing shared between instances
    finally:
        first.stop()
