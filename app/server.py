"""Runs the app under gunicorn's arbiter with worker processes that serve HTTP with Waitress (app.waitress_worker)."""
from __future__ import annotations

from pathlib import Path

from gunicorn.app.base import BaseApplication


class GlossServer(BaseApplication):
    def __init__(self, data_dir: Path, options: dict, config: dict | None = None):
        self.data_dir = data_dir
        self.options = options
        self.config = config
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self):
        from . import create_app

        # in each worker (no preloading): the election is between workers
        app = create_app(self.data_dir, config=self.config)
        app.extensions["gloss.writer"].start_election()
        from .webhooks import start_delivery

        start_delivery(app)
        return app


API_THREADS = 4  # threads per worker for the API; Git requests get GIT_SLOTS more of their own


def gunicorn_options(host: str, port: int, workers: int) -> dict:
    """How `gloss serve` runs gunicorn: Waitress workers (requests read in an event loop, so slow clients hold
    no thread) with threads of their own for /git."""
    from .githttp import GIT_SLOTS, GIT_TIMEOUT

    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # The worker's loop beats gunicorn's heartbeat while threads stream a long clone; the timeout is set
    # beyond a Git request's own limit anyway.
    return {"bind": bind, "workers": max(1, workers), "worker_class": "app.waitress_worker.WaitressWorker",
            "threads": API_THREADS + GIT_SLOTS, "accesslog": "-", "timeout": GIT_TIMEOUT + 60,
            # path without the query string: `?key=` must never reach a log
            "access_log_format": '%(h)s %(t)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms',
            "graceful_timeout": 10,
            # gunicorn's control socket defaults to one path per user ($XDG_RUNTIME_DIR/gunicorn.ctl): a
            # second instance took it over and removed it on exit. Nothing of Gloss uses it.
            "control_socket_disable": True}


def run_gunicorn(data_dir: Path, host: str, port: int, workers: int, config: dict | None = None) -> None:
    """Serve until stopped; `config` overrides the app's settings from the environment (see create_app)."""
    GlossServer(data_dir, gunicorn_options(host, port, workers), config).run()
