"""A gunicorn worker that serves its sockets with Waitress, so slow clients cannot hold a thread.

gunicorn's threaded workers hand a connection to a thread as soon as it is accepted, and the thread then waits
for the request: sixteen clients sending a header line every two seconds took every thread of a default
server. Waitress reads requests in an event loop (its wasyncore) and hands a thread only a complete request,
its body spooled to a temporary file beyond `inbuf_overflow`. A slow client costs a socket, not a thread.

gunicorn's arbiter stays: it forks the workers (the writer election in app.relay is between them), restarts
dead ones and stops them gracefully. This worker runs Waitress's loop in its main thread, beating gunicorn's
heartbeat between turns.

Waitress's parser is narrowed to Gloss's limits at header time: a declared body over the route's limit is
refused before a byte of it is read (a chunked one as soon as it passes the limit), and the request line and
header lines are bounded as gunicorn bounded them. Its refusals answer in the service's JSON error shape.
"""
from __future__ import annotations

import logging
import os
import resource
import sys
import time
from datetime import datetime
from typing import Any, Callable, Iterable

from gunicorn.workers.base import Worker
from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import Error, RequestEntityTooLarge, RequestHeaderFieldsTooLarge

from limits import (IDLE_CONNECTION_SECONDS, LIMITS, MAX_CONNECTIONS, MAX_HEADER_BYTES, MAX_HEADER_LINE_BYTES, MAX_REQUEST_LINE_BYTES,
                    describe)

from .errors import error_bytes
from .middleware import body_limit

LOOP_TURN = 1.0  # seconds: the heartbeat and a SIGTERM are noticed within this
# Seconds a thread that wants the GIL waits before the thread running Python is made to drop it (Python's
# default: 5 ms). A write answered while an import's apply runs in the same worker drops the GIL at each of its
# file system and socket calls and waited up to 5 ms to get it back each time: POSTs during a 100k-unit import
# on the writer worker took p50 378-394 ms with 5 ms, 26-47 ms with 0.2-0.5 ms (bench_imports --import-on
# writer), the import itself no slower (5.0-6.2 s against 6.3-7.2 s, under the same load).
SWITCH_INTERVAL = 0.0005


class UriTooLong(Error):
    code = 414
    reason = "URI Too Long"


class BodyTooLarge(RequestEntityTooLarge):
    """413 worded as the application words it (its message is the whole error text)."""


def json_error(error: Error) -> bytes:
    """The service's error shape for a refusal made before the application sees the request."""
    text = str(error.body) if isinstance(error, BodyTooLarge) else f"{error.reason}: {error.body}"
    return error_bytes(error.code, text)


def route_body_limit(path: str) -> tuple[int, str]:
    """The body limit of a path in bytes, and how a refusal names it (Git pushes have their own)."""
    name = "max_push_bytes" if path.startswith("/git/") else body_limit(path)
    return int(LIMITS[name]), describe(name)


class RouteLimits:
    """Waitress's adjustments for one request, with its route's body limit (Waitress refuses at >= limit)."""

    def __init__(self, adj, body_bytes: int):
        self._adj = adj
        self.max_request_body_size = body_bytes + 1

    def __getattr__(self, name: str):
        return getattr(self._adj, name)


class GlossParser(HTTPRequestParser):
    """Waitress's request parser with gunicorn's line bounds and a body limit per route."""

    limit_named = ""
    adj: Any  # waitress's Adjustments, replaced by RouteLimits once the path is known

    def parse_header(self, header_plus: bytes) -> None:
        first, _, rest = header_plus.partition(b"\n")
        super().parse_header(header_plus)
        if len(first.rstrip(b"\r")) > MAX_REQUEST_LINE_BYTES:
            self.refuse(UriTooLong(
                f"request line longer than {MAX_REQUEST_LINE_BYTES} bytes {describe('max_request_line_bytes')}"))
        elif any(len(line.rstrip(b"\r")) > MAX_HEADER_LINE_BYTES for line in rest.split(b"\n")):
            self.refuse(RequestHeaderFieldsTooLarge(
                f"a header line is longer than {MAX_HEADER_LINE_BYTES} bytes {describe('max_header_line_bytes')}"))
        else:  # Waitress compares declared and chunked lengths with the limit itself, from here on
            limit, self.limit_named = route_body_limit(self.path or "")
            self.adj = RouteLimits(self.adj, limit)

    def refuse(self, error: Error) -> None:
        self.error = error
        self.content_length = 0
        self.body_rcv = None  # nothing more is read: the request is answered with the error
        self.completed = True

    def received(self, data: bytes) -> int:
        consumed = super().received(data)
        if type(self.error) is RequestEntityTooLarge and self.limit_named:
            self.error = BodyTooLarge(f"Request body too large {self.limit_named}; nothing was stored")
        return consumed


class JsonErrorTask(ErrorTask):
    """Waitress's own refusals (400, 413, 414, 431, 501) in the service's JSON error shape."""

    def execute(self) -> None:
        error = self.request.error
        body = json_error(error)
        self.version = "1.1"  # our version, even when the request line was too garbled to give one
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json; charset=UTF-8"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class GlossChannel(HTTPChannel):
    parser_class = GlossParser
    error_task_class = JsonErrorTask


class AccessLog:
    """WSGI middleware writing gunicorn's access log line once a response is sent (path only: `?key=` never
    reaches a log)."""

    def __init__(self, app: Callable, write: Callable[[dict], None]):
        self.app = app
        self.write = write

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        started = time.monotonic()
        seen = {"status": "-"}

        def recording_start_response(status: str, headers, exc_info=None):
            seen["status"] = status.split(" ", 1)[0]
            return start_response(status, headers, exc_info)

        return self._logged(self.app(environ, recording_start_response), environ, seen, started)

    def _logged(self, body: Iterable[bytes], environ: dict, seen: dict, started: float) -> Iterable[bytes]:
        sent = 0
        try:
            for block in body:
                sent += len(block)
                yield block
        finally:
            if hasattr(body, "close"):
                body.close()
            self.write({"h": environ.get("REMOTE_ADDR", "-"),
                        "t": datetime.now().astimezone().strftime("[%d/%b/%Y:%H:%M:%S %z]"),
                        "m": environ.get("REQUEST_METHOD", "-"),
                        "U": environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""),
                        "s": seen["status"], "b": str(sent) if sent else "-",
                        "M": str(int((time.monotonic() - started) * 1000))})


def raise_descriptor_limit(needed: int) -> None:
    """Let the worker hold `needed` descriptors if the hard limit allows (the default soft 1024 may not)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class WaitressWorker(Worker):
    """gunicorn worker process serving the inherited listening sockets with Waitress (threads = cfg.threads)."""

    def run(self) -> None:
        sys.setswitchinterval(SWITCH_INTERVAL)
        raise_descriptor_limit(4 * MAX_CONNECTIONS)
        self._route_waitress_log()
        socket_map: dict = {}
        app = AccessLog(self.wsgi, self._log_access) if self.cfg.accesslog else self.wsgi
        server = create_server(
            app, map=socket_map, sockets=[listener.sock for listener in self.sockets],
            threads=self.cfg.threads, connection_limit=MAX_CONNECTIONS, channel_timeout=IDLE_CONNECTION_SECONDS,
            max_request_header_size=MAX_HEADER_BYTES, asyncore_use_poll=True,  # select() stops at 1024 fds
            ident="gloss", trusted_proxy="127.0.0.1", trusted_proxy_headers={"x-forwarded-proto"},
            clear_untrusted_proxy_headers=True)
        listeners = [d for d in socket_map.values() if isinstance(d, BaseWSGIServer)]
        for listener in listeners:
            listener.channel_class = GlossChannel
        while self.alive and self.ppid == os.getppid():
            self.notify()
            wasyncore.loop(timeout=LOOP_TURN, map=socket_map, use_poll=True, count=1)
        self._stop(socket_map, listeners, server.task_dispatcher)

    def _stop(self, socket_map: dict, listeners: list, dispatcher) -> None:
        """Graceful: accept no more, let requests in progress finish for graceful_timeout, then close."""
        for listener in listeners:
            listener.del_channel()  # out of the loop; gunicorn's master keeps the listening socket itself
            listener.socket.close()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline and any(
                isinstance(d, HTTPChannel) and (d.requests or d.total_outbufs_len) for d in socket_map.values()):
            self.notify()
            wasyncore.loop(timeout=0.2, map=socket_map, use_poll=True, count=1)
        dispatcher.shutdown(cancel_pending=True, timeout=1)
        wasyncore.close_all(socket_map)

    def _route_waitress_log(self) -> None:
        """Waitress's warnings (a deep task queue, a failed accept) into gunicorn's error log, timestamped."""
        waitress_log = logging.getLogger("waitress")
        waitress_log.handlers = list(self.log.error_log.handlers)
        waitress_log.propagate = False

    def _log_access(self, atoms: dict) -> None:
        self.log.access_log.info(self.cfg.access_log_format, atoms)
