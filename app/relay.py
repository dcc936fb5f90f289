"""One writing worker: the other workers of `gloss serve` hand their API writes to it.

Writes to a project are serialised anyway (one commit at a time, under the project's file lock). When every
worker writes, each write pays for what the other worker changed since its own last write (reading the
new commit and chunks), and only the writes that queue inside one process can share a durable ref update
(storage.project.CommitGroup). So one worker, elected with a `flock` that the kernel hands to another
worker when it dies, answers the others' writes over a private Unix socket: writes from every connection
queue in one process, and a burst of them becomes durable together.

Nothing depends on this for correctness: every write still takes the project's lock, and a worker that
cannot reach the writer (none elected yet, or it just died) makes its writes itself. A write is handed over
at most once and never replayed: once sent, a broken answer is a 503 that says the write may have been made.
"""
from __future__ import annotations

import fcntl
import hmac
import io
import json
import os
import secrets
import socket
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable

from limits import MAX_RELAY_HEADER_LINE_BYTES, MAX_RELAYED_BODY_BYTES, RELAY_ANSWER_SECONDS, RELAY_CONNECT_SECONDS

from .errors import error_bytes

FORWARDED_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# Imports can run for seconds (or as jobs of their own) and conversions write nothing: made where received.
NOT_FORWARDED = ("/api/import", "/api/convert")
ANSWER_THREADS = 32  # writes handed over at once (beyond them they queue); each worker has a few API threads
# The parts of a request's environment that describe it (headers are the HTTP_ ones).
ENVIRON_KEYS = ("REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE", "CONTENT_LENGTH",
                "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "REMOTE_ADDR", "wsgi.url_scheme",
                "gloss.body_limit", "gloss.method_override")

WsgiApp = Callable[[dict, Callable], Iterable[bytes]]


class WriterUnreachable(Exception):
    """The write was not handed over (no writer, or it refused the hand-over): make it here."""


class WriterRelay:
    """WSGI middleware that sends this worker's writes to the elected writer, and the election itself."""

    def __init__(self, app: WsgiApp, locks_dir: Path, authorised: Callable[[dict], bool]):
        self.app = app  # the application that makes a write (here, or in the writer for the others)
        self.lock_path = locks_dir / ".writer.lock"  # a leading dot: never a project's lock file
        self.info_path = locks_dir / ".writer.json"
        self.authorised = authorised
        self.is_writer = threading.Event()
        self._target: tuple[tuple[int, int], dict[str, Any]] | None = None  # (info file stat, its content)

    # ----------------------------------------------------------------- the writer
    def start_election(self) -> None:
        """Stand for writer in the background: the first worker to lock the file is elected, and the next
        one when it dies (the kernel drops a dead process's lock)."""
        threading.Thread(target=self._stand, name="gloss-writer", daemon=True).start()

    def _stand(self) -> None:
        elect(self.lock_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # an abstract address (Linux): no file to clean up, gone with the process; a fresh one per election
        address = "\0gloss-writer-" + secrets.token_hex(16)
        listener.bind(address)
        listener.listen(64)
        token = secrets.token_urlsafe(24)  # only processes that can read the data directory may hand over
        self._publish({"address": address, "token": token, "pid": os.getpid()})
        self.is_writer.set()
        # threads kept from one write to the next: starting one per write costs a GIL hand-over each time
        answering = ThreadPoolExecutor(max_workers=ANSWER_THREADS, thread_name_prefix="gloss-writer-answer")
        while True:
            connection, _ = listener.accept()
            answering.submit(self._answer, connection, token)

    def _publish(self, info: dict[str, Any]) -> None:
        temp = self.info_path.with_name(f".writer-{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(info, handle)
        os.replace(temp, self.info_path)

    def _answer(self, connection: socket.socket, token: str) -> None:
        """Make one handed-over write with the application and send its answer back."""
        # closed explicitly, reader and socket: a frame kept alive by an exception's traceback must not
        # keep the connection open, or the other worker would wait for the end of the answer forever
        reader = connection.makefile("rb")
        try:
            connection.settimeout(RELAY_ANSWER_SECONDS)
            try:
                header = json.loads(reader.readline(MAX_RELAY_HEADER_LINE_BYTES))
                if not hmac.compare_digest(str(header.get("token", "")).encode(), token.encode()):
                    connection.sendall(b'{"refused": "token"}\n')
                    return
                environ = dict(header["environ"])
                body = reader.read(int(environ.get("CONTENT_LENGTH") or 0))
            except (OSError, ValueError, KeyError, TypeError):
                return  # a broken hand-over: the other worker answers 503 without our help
            try:
                status, headers, payload = call_application(self.app, environ, body)
            except Exception:  # the application answers its own errors: this is a bug, and the log says so
                traceback.print_exc(file=sys.stderr)
                return
            try:
                connection.sendall(json.dumps({"status": status, "headers": headers}).encode() + b"\n" + payload)
            except OSError:
                pass  # the other worker gave up on this write (its client left)
        finally:
            reader.close()
            connection.close()

    # ----------------------------------------------------------------- the other workers
    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if not self._should_forward(environ):
            return self.app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        try:
            status, headers, payload = self._forward(environ, body)
        except WriterUnreachable:
            return self.app(environ, start_response)
        except (OSError, ValueError, KeyError, TypeError):  # sent, then no (well-formed) answer
            status, headers, payload = writer_lost()
        start_response(status, headers)
        return [payload]

    def _should_forward(self, environ: dict) -> bool:
        path = environ.get("PATH_INFO", "")
        length = environ.get("CONTENT_LENGTH") or "0"
        return (environ.get("REQUEST_METHOD") in FORWARDED_METHODS and path.startswith("/api/")
                and not path.startswith(NOT_FORWARDED) and not self.is_writer.is_set()
                and "HTTP_TRANSFER_ENCODING" not in environ  # a chunked body: size unknown until read
                and length.isdigit() and int(length) <= MAX_RELAYED_BODY_BYTES
                and self.authorised(environ))  # keyless requests never cost the writer anything

    def _writer(self) -> dict[str, Any]:
        """The elected writer's address and token, read again whenever its file changes."""
        try:
            stat = os.stat(self.info_path)
        except OSError:
            raise WriterUnreachable() from None
        version = (stat.st_ino, stat.st_mtime_ns)
        if self._target is None or self._target[0] != version:
            try:
                self._target = (version, json.loads(self.info_path.read_bytes()))
            except (OSError, ValueError):
                raise WriterUnreachable() from None
        return self._target[1]

    def _forward(self, environ: dict, body: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
        info = self._writer()
        described = {key: value for key, value in environ.items()
                     if (key in ENVIRON_KEYS or key.startswith("HTTP_")) and isinstance(value, (str, bool))}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(RELAY_CONNECT_SECONDS)
            try:
                connection.connect(info["address"])
            except OSError:
                raise WriterUnreachable() from None  # nothing was sent: the write is made here
            connection.settimeout(RELAY_ANSWER_SECONDS)
            connection.sendall(json.dumps({"token": info["token"], "environ": described}).encode() + b"\n" + body)
            with connection.makefile("rb") as reader:
                line = reader.readline(MAX_RELAY_HEADER_LINE_BYTES)
                if not line:
                    raise ConnectionError("the writer closed the connection without an answer")
                header = json.loads(line)
                if "refused" in header:  # a writer of another data directory, or an outdated token
                    raise WriterUnreachable()
                return header["status"], [tuple(pair) for pair in header["headers"]], reader.read()


def elect(lock_path: Path) -> None:
    """Block until this process is elected: the first to lock the file is, and the next one when it dies (the
    kernel drops a dead process's lock). The lock is held for the life of the process. The writer (above) and
    the webhook deliverer (app.webhooks) are elected this way, each with its own file."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # never closed: the lock goes with the process


def call_application(app: WsgiApp, environ: dict, body: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
    """Run a WSGI application on a described request; its whole answer."""
    environ.update({"wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
                    "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False})
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        answer["status"], answer["headers"] = status, headers
        return lambda data: None

    chunks = app(environ, start_response)
    try:
        payload = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return answer["status"], list(answer["headers"]), payload


def writer_lost() -> tuple[str, list[tuple[str, str]], bytes]:
    """The answer when the writer broke off after the write was handed over: it may have been made."""
    body = error_bytes(503, "The worker making this write stopped before answering; the write may or may not "
                            "have been made: read it back before retrying")
    return "503 SERVICE UNAVAILABLE", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                       ("Retry-After", "1")], body
