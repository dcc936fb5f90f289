"""Git over HTTP: `git clone http://KEY:@host/git/<project>.git`, served by git's own `git http-backend`.

This is not an API route (it speaks Git's smart HTTP protocol, not JSON), so it is a WSGI application of its
own, mounted beside Flask under `/git` (see `create_app`), and absent from the API's route table and OpenAPI
description. It does three things around `git http-backend` (CGI):

- authentication: the key as HTTP Basic user name (empty password), or any other form the API accepts that
  git can send (`http.extraHeader=Authorization: Loco KEY`). `full` and `readonly` keys may clone and fetch
  their own project; only `full` keys may push; export keys may not clone (a clone shows the whole history
  and authors' e-mails). No key or an unknown key: 401 with `WWW-Authenticate: Basic`, so git asks for
  credentials; another project's key or too little access: 403.
- capacity: at most GIT_SLOTS Git requests per worker process at once (the server gives each worker that many
  threads on top of the API's), so clones never take the threads the API needs; beyond that, 503 with
  Retry-After. A Git request may run GIT_TIMEOUT seconds, far beyond gunicorn's default 30 s.
- pushes: the whole upload is read before git sees it; receive-pack runs with Gloss's hooks (app.githooks),
  which hand the ref updates back to this process over a private Unix socket (HookChannel): here, beside
  the project's cached snapshot, storage.receive checks the pushed commits in quarantine and moves `main`
  under the project's write lock, as an API write does. Received packs stay packs (`transfer.unpackLimit=1`).
"""
from __future__ import annotations

import gzip
import hmac
import io
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, cast
from urllib.parse import parse_qs

from limits import (GIT_REQUEST_SECONDS, HOOK_READ_SECONDS, MAX_FILE_BYTES, MAX_HOOK_REQUEST_BYTES, MAX_PUSH_BYTES,
                    describe)
from storage.errors import NotFound, StorageError
from storage.gitrepo import remove_stale_dirs
from storage.keys import ApiKey, KeyStore
from storage.project import Project
from storage.receive import HANDLED_REFS, apply_push, check_push, parse_command
from storage.store import Store

from .auth import key_from
from .errors import error_bytes

GIT_SLOTS = 4  # concurrent Git requests per worker process
GIT_TIMEOUT = GIT_REQUEST_SECONDS  # seconds one Git request (a clone of a large project on a slow link) may take
SPOOL_BYTES = 8 * 1024 * 1024  # pushes up to this size are held in memory, larger ones in a temporary file
PUSH_TOO_LARGE = f"Request body too large {describe('max_push_bytes')}; nothing was stored"
HOOK_SCRIPT = Path(__file__).resolve().parent / "githooks.py"
HOOK_POLL = 1.0  # seconds between the hook thread's looks at whether its push is over
REPO_PATH = re.compile(r"^/([a-z0-9][a-z0-9-]{0,62})\.git(/info/refs|/git-upload-pack|/git-receive-pack)$")
WANT_ID = re.compile(rb"^[0-9a-f]{40}$")
SERVICES = ("git-upload-pack", "git-receive-pack")
HOOKS = ("pre-receive", "proc-receive")
# Server-side configuration of every Git request (given to git through GIT_CONFIG_* variables).
GIT_CONFIG = [
    ("transfer.unpackLimit", "1"),  # small pushes stay one pack instead of loose objects
    ("receive.fsckObjects", "true"),  # malformed objects never enter a project
    ("receive.denyNonFastForwards", "true"),
    ("receive.autogc", "false"),  # maintenance is Gloss's geometric repack
    ("receive.maxInputSize", str(MAX_PUSH_BYTES)),
    # blobs larger than any file a project may hold are streamed, never inflated whole: index-pack held a
    # pushed 400 MB zero blob in memory (404 MB resident) before the checks refused it; now 37 MB
    ("core.bigFileThreshold", str(MAX_FILE_BYTES)),
    *(("receive.procReceiveRefs", ref) for ref in HANDLED_REFS),
    ("http.receivepack", "true"),
    ("uploadpack.allowFilter", "true"),  # partial clone
    ("core.hooksPath", ""),  # filled in with the data directory's hooks
]


class GitHttp:
    """The WSGI application under /git (PATH_INFO is `/<project>.git/...`)."""

    def __init__(self, store: Store, keys: KeyStore, slots: int = GIT_SLOTS, timeout: float = GIT_TIMEOUT):
        self.store = store
        self.keys = keys
        self.timeout = timeout
        self.slots = threading.BoundedSemaphore(slots)
        self.hooks_dir = install_hooks(store.data_dir / "hooks")
        sweep_hook_dirs()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        match = REPO_PATH.match(environ.get("PATH_INFO", ""))
        if not match:
            return _error(start_response, 404, "Not a Git smart-HTTP path: use /git/<project>.git")
        project_id, action = match.groups()
        service = self._service(environ, action)
        if service is None:
            return _error(start_response, 403, "Only Git's smart HTTP protocol is served")
        try:
            declared = _declared_length(environ)
        except ValueError as error:
            return _error(start_response, 400, str(error))
        if declared > MAX_PUSH_BYTES:  # refused before a byte of the body is read (or spooled)
            return _error(start_response, 413, PUSH_TOO_LARGE)
        key = self._key(environ)
        if key is None:
            return _error(start_response, 401, "Invalid API key",
                          [("WWW-Authenticate", 'Basic realm="Gloss Git"')])
        refusal = self._refusal(key, project_id, service)
        if refusal:
            return _error(start_response, 403, refusal)
        try:
            project = self.store.project(project_id)
        except NotFound:
            return _error(start_response, 404, f"No project {project_id!r}")
        if not self.slots.acquire(blocking=False):
            return _error(start_response, 503, "Too many Git requests at once; try again", [("Retry-After", "2")])
        try:
            body, length = self._read_body(environ)
        except (ValueError, OSError) as error:
            self.slots.release()
            return _error(start_response, 413 if isinstance(error, ValueError) else 400, str(error))
        if body is not None and service == "git-upload-pack":
            refusal = _unreachable_want(project, body, environ.get("HTTP_CONTENT_ENCODING", ""))
            if refusal:
                body.close()
                self.slots.release()
                return _error(start_response, 403, refusal)
        return self._run_backend(environ, start_response, project, key, body, length)

    # ----------------------------------------------------------------- checks
    @staticmethod
    def _service(environ: dict, action: str) -> str | None:
        method = environ.get("REQUEST_METHOD", "GET")
        if action == "/info/refs" and method in ("GET", "HEAD"):
            wanted = parse_qs(environ.get("QUERY_STRING", "")).get("service", [""])[0]
            return wanted if wanted in SERVICES else None  # the dumb protocol is not served
        if method == "POST" and action[1:] in SERVICES:
            return action[1:]
        return None

    def _key(self, environ: dict) -> ApiKey | None:
        query = parse_qs(environ.get("QUERY_STRING", "")).get("key", [None])[0]
        presented = key_from(environ.get("HTTP_AUTHORIZATION", ""), query)
        return self.keys.verify(presented) if presented else None

    @staticmethod
    def _refusal(key: ApiKey, project_id: str, service: str) -> str | None:
        """Why this key may not use this service on this project, or None when it may."""
        if key.project != project_id:
            return "This key belongs to another project"
        if service == "git-receive-pack" and not key.may("write"):
            return f"A {key.access} key may not push; pushing needs a full-access key"
        if not key.may("read"):
            return f"A {key.access} key may not clone or fetch; that needs a full or readonly key"
        return None

    @staticmethod
    def _read_body(environ: dict) -> tuple[IO[bytes] | None, int]:
        """The whole request body, read before git (and the project lock) sees any of it."""
        if environ.get("REQUEST_METHOD") != "POST":
            return None, 0
        stream = environ["wsgi.input"]
        remaining = _declared_length(environ) if environ.get("CONTENT_LENGTH") else None
        body = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
        length = 0
        while remaining is None or remaining > 0:
            block = stream.read(65536 if remaining is None else min(65536, remaining))
            if not block:
                break
            length += len(block)
            if remaining is not None:
                remaining -= len(block)
            if length > MAX_PUSH_BYTES:
                body.close()
                raise ValueError(PUSH_TOO_LARGE)
            body.write(block)
        body.seek(0)
        return body, length

    # ----------------------------------------------------------------- git http-backend
    def _environment(self, environ: dict, project_id: str, key: ApiKey, length: int,
                     hooks: "HookChannel | None") -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        config = [(name, str(self.hooks_dir) if name == "core.hooksPath" else value) for name, value in GIT_CONFIG]
        env.update({
            "GIT_PROJECT_ROOT": str(self.store.projects_dir),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{project_id}/.git{service_path(environ['PATH_INFO'])}",
            "REQUEST_METHOD": environ.get("REQUEST_METHOD", "GET"),
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "REMOTE_USER": key.user_name or key.id,
            "REMOTE_ADDR": environ.get("REMOTE_ADDR", ""),
            "GIT_CONFIG_COUNT": str(len(config)),
        })
        if hooks is not None:
            env.update(hooks.environment())
        if environ.get("REQUEST_METHOD") == "POST":
            env["CONTENT_LENGTH"] = str(length)
        for name in ("HTTP_GIT_PROTOCOL", "HTTP_CONTENT_ENCODING"):
            if environ.get(name):
                env[name] = environ[name]
        for index, (name, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = name, value
        return env

    def _run_backend(self, environ: dict, start_response: Callable, project: Project, key: ApiKey,
                     body: IO[bytes] | None, length: int) -> Iterable[bytes]:
        """Start `git http-backend` (a CGI program) and stream its answer back."""
        pushing = body is not None and environ["PATH_INFO"].endswith("/git-receive-pack")
        hooks = HookChannel(lambda request: self._answer_hook(project, key, request)) if pushing else None
        stderr = tempfile.TemporaryFile()
        try:
            process = subprocess.Popen(["git", "http-backend"], stdin=body if body is not None else subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=stderr,
                                       env=self._environment(environ, project.id, key, length, hooks))
        except OSError:
            stderr.close()
            if hooks is not None:
                hooks.close()
            self.slots.release()
            raise
        watchdog = threading.Timer(self.timeout, process.kill)
        watchdog.daemon = True
        watchdog.start()
        status, headers = _read_cgi_headers(process.stdout)
        start_response(status, headers)
        return self._stream(process, watchdog, body, stderr, hooks)

    def _stream(self, process: subprocess.Popen, watchdog: threading.Timer, body: IO[bytes] | None,
                stderr: IO[bytes], hooks: "HookChannel | None") -> Iterator[bytes]:
        """The backend's output as it comes; the slot is freed when the response ends or the client leaves."""
        stdout = cast(io.BufferedReader, process.stdout)  # started with stdout=PIPE: binary and buffered
        try:
            while True:
                block = stdout.read1(65536)
                if not block:
                    break
                yield block
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
            process.wait()
            stdout.close()
            if hooks is not None:
                hooks.close()
            if body is not None:
                body.close()
            stderr.seek(0)
            message = stderr.read().decode("utf-8", "replace").strip()
            stderr.close()
            if message and process.returncode:
                print(f"git http-backend: {message}", file=sys.stderr)
            self.slots.release()

    # ----------------------------------------------------------------- the hooks of a push
    def _answer_hook(self, project: Project, key: ApiKey, request: dict[str, Any]) -> dict[str, Any]:
        """Check (pre-receive) or apply (proc-receive) the ref updates a hook of this push relays."""
        commands = [parse_command(line) for line in request["commands"]]
        if request["hook"] == "pre-receive":
            quarantine = Path(request["quarantine"]) if request.get("quarantine") else None
            try:
                check_push(project, commands, quarantine, self.keys.is_live)
            except StorageError as error:
                return {"status": 1, "message": f"Gloss refused the push: {error.message}"}
            return {"status": 0}
        if request["hook"] == "proc-receive":
            return {"results": [asdict(result) for result in apply_push(project, commands, key.actor())]}
        raise ValueError(f"unknown hook {request['hook']!r}")


HOOK_DIR_PREFIX = "gloss-hooks-"


def sweep_hook_dirs() -> int:
    """Remove the socket directories of pushes whose process was killed (a live one is younger than a Git
    request may run: the watchdog stops it by then, and its channel removes its own directory)."""
    return remove_stale_dirs(Path(tempfile.gettempdir()).glob(HOOK_DIR_PREFIX + "*"), GIT_REQUEST_SECONDS)


class HookChannel:
    """A Unix socket on which the hooks of one receive-pack ask this process to check and apply the push.

    It lives in a fresh private directory (mode 0700) for the length of one push request, and a request must
    carry the channel's random token; one thread answers the hooks, which receive-pack runs one at a time.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any]]):
        self.answer = answer
        self.directory = tempfile.mkdtemp(prefix=HOOK_DIR_PREFIX)
        self.path = os.path.join(self.directory, "socket")
        self.token = secrets.token_urlsafe(24)
        self.closed = threading.Event()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)
        self.listener.settimeout(HOOK_POLL)
        threading.Thread(target=self._serve, name="gloss-git-hooks", daemon=True).start()

    def environment(self) -> dict[str, str]:
        return {"GLOSS_HOOK_SOCKET": self.path, "GLOSS_HOOK_TOKEN": self.token}

    def close(self) -> None:
        """Stop answering; a connection of our own wakes the waiting thread, which cleans up."""
        self.closed.set()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                wake.settimeout(1)
                wake.connect(self.path)
        except OSError:
            pass  # the thread notices within HOOK_POLL seconds anyway

    def _serve(self) -> None:
        try:
            while not self.closed.is_set():
                try:
                    connection, _ = self.listener.accept()
                except socket.timeout:
                    continue
                with connection:
                    if not self.closed.is_set():
                        self._reply(connection)
        finally:
            self.listener.close()
            shutil.rmtree(self.directory, ignore_errors=True)

    def _reply(self, connection: socket.socket) -> None:
        try:
            connection.settimeout(HOOK_READ_SECONDS)
            request = json.loads(_read_line(connection))
            if not hmac.compare_digest(str(request.pop("token", "")).encode(), self.token.encode()):
                raise PermissionError("wrong hook token")
            answer = self.answer(request)
        except Exception:  # a hook must always get an answer: an error refuses the push
            traceback.print_exc(file=sys.stderr)
            answer = {"status": 1, "message": "Gloss could not handle the push (server error)"}
        try:
            connection.sendall(json.dumps(answer).encode("utf-8") + b"\n")
        except OSError:
            pass  # the hook is gone (the client left): receive-pack is being stopped anyway


def _read_line(connection: socket.socket) -> bytes:
    data = bytearray()
    while not data.endswith(b"\n"):
        if len(data) > MAX_HOOK_REQUEST_BYTES:
            raise ValueError("hook request too large")
        block = connection.recv(65536)
        if not block:
            break
        data += block
    return bytes(data)


def _read_cgi_headers(stdout) -> tuple[str, list[tuple[str, str]]]:
    """The CGI header block (`Status:` and response headers, up to a blank line)."""
    status, headers = "200 OK", []
    while True:
        line = stdout.readline()
        if not line or line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").rstrip("\r\n").partition(":")
        if name.lower() == "status":
            status = value.strip()
        else:
            headers.append((name.strip(), value.strip()))
    return status, headers


def service_path(path: str) -> str:
    """The Git service part of a path the router accepted (`/info/refs`, `/git-upload-pack` …)."""
    match = REPO_PATH.match(path)
    assert match is not None  # the request was routed by this pattern
    return match.group(2)


def _wanted_ids(body: IO[bytes], encoding: str) -> set[bytes]:
    """The object ids a fetch request (protocol v0 or v2) asks for: its `want <id>` pkt-lines."""
    stream: IO[bytes] | gzip.GzipFile = gzip.GzipFile(fileobj=body) if encoding.strip().lower() in ("gzip", "x-gzip") else body
    wanted = set()
    try:
        while len(header := stream.read(4)) == 4:
            length = int(header, 16)
            words = stream.read(length - 4).split() if length > 4 else []
            if len(words) >= 2 and words[0] == b"want":
                wanted.add(words[1])
    except (ValueError, OSError, EOFError):
        pass  # not pkt-lines (or torn): git refuses it itself
    finally:
        body.seek(0)
    return {object_id for object_id in wanted if WANT_ID.match(object_id)}


def _unreachable_want(project: Project, body: IO[bytes], encoding: str) -> str | None:
    """Why this fetch may not be served (it wants an object neither main nor a tag reaches), or None.

    Protocol v2 serves any object id a client names (git's uploadpack.allow*SHA1InWant apply to v0 only),
    and a store may hold objects no ref reaches (a push refused after its objects arrived)."""
    unreachable = project.repo.unreachable_objects(_wanted_ids(body, encoding))
    if not unreachable:
        return None
    return f"{min(unreachable).decode()} is not reachable from main or a tag; only those may be fetched"


def _declared_length(environ: dict) -> int:
    """The request's Content-Length, 0 when absent (chunked); ValueError when it is not a number."""
    declared = environ.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit():
        raise ValueError(f"Invalid Content-Length {declared!r}")
    return int(declared)


def _error(start_response: Callable, status: int, message: str,
           headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    reasons = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 413: "Payload Too Large",
               503: "Service Unavailable"}
    body = error_bytes(status, message)
    start_response(f"{status} {reasons[status]}", [("Content-Type", "application/json"),
                                                   ("Content-Length", str(len(body))), *(headers or [])])
    return [body]


def install_hooks(directory: Path) -> Path:
    """The hook scripts receive-pack runs (core.hooksPath); they live in the data directory, never in a project."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        # -I -S: the relay needs only the standard library, so neither environment nor site-packages load
        script = f'#!/bin/sh\nexec "{sys.executable}" -I -S "{HOOK_SCRIPT}" {name}\n'
        path = directory / name
        if not path.exists() or path.read_text() != script:
            temp = directory / f".{name}.{os.getpid()}.tmp"
            temp.write_text(script)
            os.chmod(temp, 0o755)
            os.replace(temp, path)
    return directory
