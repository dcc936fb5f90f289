"""Node-to-node HTTP calls (forwarded requests, replication) over kept-alive connections.

A new TCP connection per call (connect, then Waitress's accept on the other side) was paid twice by every
forwarded write: once to reach the leader, once more for each follower's copy. Idle connections are kept per
node, a few seconds at most (far below the other side's idle timeout, limits.IDLE_CONNECTION_SECONDS), with
TCP_NODELAY (http.client sets it: headers and body leave as two writes and must not wait for an ACK).
"""
from __future__ import annotations

import http.client
import threading
import time
import urllib.parse

IDLE_SECONDS = 5.0  # an idle connection older than this is closed rather than reused
IDLE_PER_NODE = 8
# What a reused connection that the other side had closed meanwhile (idle) raises before any answer arrived:
# sent again, once, on a new connection. (A node that died while answering raises the same; the second try
# then finds it gone, and the caller answers as for any unreachable node.)
STALE_ERRORS = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class Connections:
    """Idle HTTP connections per base URL, taken for one call and put back after a whole answer."""

    def __init__(self) -> None:
        self._idle: dict[str, list[tuple[float, http.client.HTTPConnection]]] = {}
        self._lock = threading.Lock()

    def call(self, base_url: str, method: str, target: str, body: bytes, headers: dict[str, str],
             timeout: float) -> http.client.HTTPResponse:
        """The answer of `base_url` to one request, its body read (response.read() returns it again: cached)."""
        reused = self._take(base_url)
        if reused is not None:
            reused.timeout = timeout
            if reused.sock is not None:
                reused.sock.settimeout(timeout)
            try:
                return self._exchange(base_url, reused, method, target, body, headers)
            except STALE_ERRORS:
                reused.close()
        return self._exchange(base_url, self._new(base_url, timeout), method, target, body, headers)

    def _exchange(self, base_url: str, connection: http.client.HTTPConnection, method: str, target: str,
                  body: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except BaseException:
            connection.close()
            raise
        response.read = lambda *args: payload  # type: ignore[method-assign]  # (read once, here)
        if response.will_close:
            connection.close()
        else:
            self._put(base_url, connection)
        return response

    def _new(self, base_url: str, timeout: float) -> http.client.HTTPConnection:
        parsed = urllib.parse.urlsplit(base_url)
        kind = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
        return kind(parsed.hostname or "127.0.0.1", parsed.port, timeout=timeout)

    def _take(self, base_url: str) -> http.client.HTTPConnection | None:
        now = time.monotonic()
        with self._lock:
            idle = self._idle.get(base_url, [])
            while idle:
                since, connection = idle.pop()
                if now - since <= IDLE_SECONDS:
                    return connection
                connection.close()
        return None

    def _put(self, base_url: str, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(base_url, [])
            if len(idle) < IDLE_PER_NODE:
                idle.append((time.monotonic(), connection))
                return
        connection.close()
