"""A real `gloss serve` and the real `git` command line, for the Git-over-HTTP tests and benchmark."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
GLOSS = [sys.executable, "-m", "app.cli"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gloss(data: Path, *args: str) -> str:
    """Run the gloss command; its last output line (a new id or key)."""
    result = subprocess.run([*GLOSS, "--data", str(data), *args], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@dataclass
class Server:
    base: str
    data: Path
    process: subprocess.Popen
    output: list[str] = field(default_factory=list)

    def url(self, key: str | None, project: str = "acme-notes", password: bool = True) -> str:
        """The clone URL, with the key as HTTP Basic user name (and an explicit empty password)."""
        host = self.base.split("://", 1)[1]
        credentials = "" if key is None else f"{key}:@" if password else f"{key}@"
        return f"http://{credentials}{host}/git/{project}.git"

    def api(self, method: str, path: str, key: str, body: bytes | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(self.base + path, data=body, method=method,
                                         headers={"Authorization": f"Loco {key}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, _decode(response.read(), response.headers.get_content_type())
        except urllib.error.HTTPError as error:
            return error.code, _decode(error.read(), error.headers.get_content_type())

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(30)


def _decode(data: bytes, content_type: str) -> Any:
    return json.loads(data) if content_type == "application/json" else data


def start_server(data: Path, workers: int = 2) -> tuple[Server, str | None]:
    """`gloss serve` on a free port in its own process group; the seeded demo's key when it seeded one."""
    port = free_port()
    process = subprocess.Popen([*GLOSS, "--data", str(data), "serve", "--port", str(port), "--workers",
                                str(workers)], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", data, process)
    key = None
    deadline = time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        assert line, "gloss serve exited: " + "".join(server.output)
        server.output.append(line)
        if line.startswith("Full-access API key: "):
            key = line.split(": ", 1)[1].strip()
        if line.startswith(("Try: ", "Serving ")):
            break
    _drain(process)
    while time.time() < deadline:
        try:
            urllib.request.urlopen(server.base + "/api/ping", timeout=5)
            return server, key
        except OSError:
            time.sleep(0.1)
    raise AssertionError("gloss serve did not answer")


def _drain(process: subprocess.Popen) -> None:
    """Keep reading the server's log so that a full pipe never blocks it."""
    import threading

    def read() -> None:
        for _ in process.stdout:
            pass

    threading.Thread(target=read, daemon=True).start()


def git_env(home: Path) -> dict[str, str]:
    """git with no user or system configuration and no prompting (a prompt would hang a test)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="",
               GIT_AUTHOR_NAME="Pat Pusher", GIT_AUTHOR_EMAIL="pat@example.com",
               GIT_COMMITTER_NAME="Pat Pusher", GIT_COMMITTER_EMAIL="pat@example.com")
    return env


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The git command line; returns the completed process (the caller checks the outcome)."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env=env or git_env(cwd.parent / "home"), timeout=600)
