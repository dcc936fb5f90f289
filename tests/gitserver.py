"""A real `gloss serve` and the real `git` command line, for the Git-over-HTTP tests and benchmark."""
from __future__ import annotations

import hashlib
import json
import os
import threading
import zlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import answers, wait_until

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
    keys: dict[str, str] = field(default_factory=dict)  # name -> API key, for the tests' convenience

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


DEMO = "acme-notes"


@contextmanager
def serving_demo(data: Path, **keys: tuple[str, str]) -> Iterator[Server]:
    """The seeded demo served, with its full-access key as keys["full"] and one more key per keyword
    (name=(access, user))."""
    served, full = start_server(data)
    served.keys = {"full": full or "", **{name: gloss(data, "key", "create", DEMO, "--access", access, "--user", user)
                                          for name, (access, user) in keys.items()}}
    try:
        yield served
    finally:
        served.stop()


def start_server(data: Path, workers: int = 2, cwd: Path = REPO_ROOT) -> tuple[Server, str | None]:
    """`gloss serve` on a free port in its own process group; the seeded demo's key when it seeded one.

    `data` may be relative to `cwd`, the server's working directory."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # `-m app.cli` from any working directory
    process = subprocess.Popen([*GLOSS, "--data", str(data), "serve", "--port", str(port), "--workers",
                                str(workers)], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
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
    wait_until(lambda: answers(server.base + "/api/ping"), max(deadline - time.time(), 0), 0.1,
               "gloss serve did not answer")
    return server, key


def _drain(process: subprocess.Popen) -> None:
    """Keep reading the server's log so that a full pipe never blocks it."""
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


# ----------------------------------------------------------------------------- memory of the server's processes
def children(pid: int) -> list[int]:
    """The child processes of every thread of `pid` (a worker starts git from its request threads)."""
    found = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # the process ended meanwhile
        return found
    for task in tasks:
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            pass
    return found


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (the peak resident size so far) of a process, in KiB; {} once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {name: int(rest.split()[0]) for name, _, rest in (line.partition(":") for line in lines)
            if name in ("VmRSS", "VmHWM")}


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


class PeakMemory:
    """While open, the peak resident size (VmHWM) of every process below the server's master: its workers
    (before: their VmRSS when it opened) and the git processes they start, sampled every few milliseconds."""

    def __init__(self, master: int, interval: float = 0.005):
        self.master, self.interval = master, interval
        self.workers = {pid: memory_kb(pid).get("VmRSS", 0) for pid in children(master)}
        self.peaks: dict[int, tuple[str, int]] = {}  # pid -> (command, latest VmHWM seen)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._look()

    def _sample(self) -> None:
        self._look()
        while not self._stop.wait(self.interval):  # wakes at once when the block ends
            self._look()

    def _look(self) -> None:
        pending = children(self.master)
        while pending:
            pid = pending.pop()
            pending.extend(children(pid))
            peak = memory_kb(pid).get("VmHWM")
            if peak is not None:
                self.peaks[pid] = (self.peaks.get(pid, (command_name(pid), 0))[0], peak)

    def worker_growth_mb(self) -> float:
        """The most any worker's peak rose above its resident size at the start (an upper bound of its growth)."""
        return max((self.peaks.get(pid, ("", before))[1] - before) / 1024 for pid, before in self.workers.items())

    def largest_child_mb(self) -> tuple[str, float]:
        """The largest peak of a process the workers started (git http-backend, receive-pack, index-pack...)."""
        found = [(name, peak / 1024) for pid, (name, peak) in self.peaks.items()
                 if pid not in self.workers]
        return max(found, key=lambda item: item[1], default=("none", 0.0))


# ----------------------------------------------------------------------------- a zero-blob bomb
def write_zero_blob(repo: Path, size: int) -> str:
    """A blob of `size` zero bytes written straight into a clone's object store as a loose object (a few hundred
    KB compressed), never held whole in memory; returns its id."""
    header = f"blob {size}\0".encode()
    digest, packer = hashlib.sha1(header), zlib.compressobj(9)
    block = bytes(1 << 20)
    temp = repo / ".git" / "objects" / "tmp_zero_blob"
    with open(temp, "wb") as out:
        out.write(packer.compress(header))
        for start in range(0, size, len(block)):
            piece = block[:min(len(block), size - start)]
            digest.update(piece)
            out.write(packer.compress(piece))
        out.write(packer.flush())
    object_id = digest.hexdigest()
    target = repo / ".git" / "objects" / object_id[:2] / object_id[2:]
    target.parent.mkdir(exist_ok=True)
    os.replace(temp, target)
    return object_id


def commit_zero_blob_bomb(repo: Path, path: str, size: int) -> str:
    """Commit, in a clone, a zero blob of `size` bytes as `path` (the working tree is left alone); the blob's id."""
    blob = write_zero_blob(repo, size)
    for args in (("update-index", "--cacheinfo", f"100644,{blob},{path}"), ("commit", "-q", "-m", "a zero blob")):
        result = run_git(repo, *args)
        assert result.returncode == 0, result.stderr
    return blob


def push_streaming_large_blobs(repo: Path) -> subprocess.CompletedProcess:
    """`git push origin main`, with the client streaming large blobs (it would inflate them whole otherwise)."""
    return run_git(repo, "-c", "core.bigFileThreshold=1m", "push", "origin", "main")
