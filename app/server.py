"""Runs the app under gunicorn with worker processes (never Flask's development server)."""
from __future__ import annotations

from pathlib import Path

from gunicorn.app.base import BaseApplication


class GlossServer(BaseApplication):
    def __init__(self, data_dir: Path, options: dict):
        self.data_dir = data_dir
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self):
        from . import create_app

        return create_app(self.data_dir)


def run_gunicorn(data_dir: Path, host: str, port: int, workers: int) -> None:
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    GlossServer(data_dir, {"bind": bind, "workers": max(1, workers), "worker_class": "gthread", "threads": 4,
                           "accesslog": "-", "timeout": 120,
                           # path without the query string: `?key=` must never reach a log
                           "access_log_format": '%(h)s %(t)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms',
                           "graceful_timeout": 10}).run()
