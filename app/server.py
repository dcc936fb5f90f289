"""Runs the app under gunicorn with worker processes (never Flask's development server)."""
from __future__ import annotations

import json
from pathlib import Path

from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own refusals (request line or header too long, malformed request) in our error shape."""
    body = json.dumps({"status": status_int, "error": f"{reason}: {mesg}" if mesg else reason}) + "\n"
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json; charset=UTF-8\r\nContent-Length: {len(body.encode())}\r\n\r\n")
    gunicorn_util.write_nonblock(sock, head.encode("latin-1") + body.encode("utf-8"))


def install_json_errors() -> None:
    """Make gunicorn answer its 400/414/431 refusals as JSON (it looks the writer up at each call)."""
    gunicorn_util.write_error = write_json_error


class GlossServer(BaseApplication):
    def __init__(self, data_dir: Path, options: dict):
        self.data_dir = data_dir
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        install_json_errors()
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self):
        from . import create_app

        app = create_app(self.data_dir)  # in each worker (no preloading): the election is between workers
        app.extensions["gloss.writer"].start_election()
        return app


API_THREADS = 4  # threads per worker for the API; Git requests get GIT_SLOTS more of their own


def gunicorn_options(host: str, port: int, workers: int) -> dict:
    """How `gloss serve` runs gunicorn: threaded workers with threads of their own for /git."""
    from .githttp import GIT_SLOTS, GIT_TIMEOUT

    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # gthread workers keep answering the arbiter while a thread streams a long clone; the timeout is set
    # beyond a Git request's own limit anyway, for deployments that switch to sync workers.
    return {"bind": bind, "workers": max(1, workers), "worker_class": "gthread",
            "threads": API_THREADS + GIT_SLOTS, "accesslog": "-", "timeout": GIT_TIMEOUT + 60,
            # path without the query string: `?key=` must never reach a log
            "access_log_format": '%(h)s %(t)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms',
            "graceful_timeout": 10}


def run_gunicorn(data_dir: Path, host: str, port: int, workers: int) -> None:
    GlossServer(data_dir, gunicorn_options(host, port, workers)).run()
