"""A webhook receiver for tests: verifies each delivery's signature with the `standardwebhooks` package and
records it, one JSON line per request, in a file (or a list, in-process).

Run as a process (`python -m tests.webhook_receiver PORT SECRET RECORD_FILE`) for the tests that kill and
restart things; `Receiver` runs the same handler in a thread of the test.
"""
from __future__ import annotations

import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

from standardwebhooks import Webhook, WebhookVerificationError


def handler_for(secret: str, record: Callable[[dict[str, Any]], None], status: Callable[[], int] = lambda: 204):
    webhook = Webhook(secret)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                payload = webhook.verify(body, dict(self.headers.items()))
                valid = True
            except WebhookVerificationError:
                payload, valid = json.loads(body or b"null"), False
            answer = status() if valid else 400
            record({"received": time.time(), "id": self.headers.get("webhook-id"), "valid": valid,
                    "answer": answer, "payload": payload})
            self.send_response(answer)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class Receiver:
    """The receiver in a thread of the test: `deliveries` lists what it accepted and refused."""

    def __init__(self, secret: str, status: Callable[[], int] = lambda: 204, tls: ssl.SSLContext | None = None):
        self.deliveries: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(secret, self.deliveries.append, status))
        if tls is not None:  # HTTPS, with the context's certificate
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme, host = ("https", "localhost") if tls is not None else ("http", "127.0.0.1")
        self.url = f"{scheme}://{host}:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records a receiver process wrote (a line cut short by its kill left out)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def main() -> None:
    port, secret, path = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    lock = threading.Lock()

    def record(entry: dict[str, Any]) -> None:
        with lock, open(path, "a") as handle:
            handle.write(json.dumps(entry) + "\n")

    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(secret, record))
    server.serve_forever()


if __name__ == "__main__":
    main()
