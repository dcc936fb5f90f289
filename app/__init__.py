"""The Flask application: thin routes over `storage/` (projects in Git) and `formats/` (file readers/writers)."""
from __future__ import annotations

import os
from pathlib import Path

from flask import Flask, request

from storage.keys import KeyStore
from storage.store import Store

from .errors import ApiError, register_error_handlers
from .middleware import MethodOverride
from .versioning import register_versioning

API_VERSION = "1.0.29"
MAX_BODY_BYTES = 64 * 1024 * 1024


def default_data_dir() -> Path:
    return Path(os.environ.get("GLOSS_DATA") or "data")


def register_body_limit(app: Flask) -> None:
    """Refuse an oversized body before any route reads it (Flask alone checks only while reading)."""

    @app.before_request
    def _limit_body():
        limit = app.config.get("MAX_CONTENT_LENGTH")
        if limit and (request.content_length or 0) > limit:
            raise ApiError(413, f"Request body too large (limit {limit} bytes)")


def create_app(data_dir: str | Path | None = None, testing: bool = False) -> Flask:
    """Application factory; `data_dir` defaults to $GLOSS_DATA, else ./data."""
    app = Flask(__name__, static_folder=None)  # the web pages serve their own files (app.web)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=MAX_BODY_BYTES)
    app.json.ensure_ascii = False
    data = Path(data_dir) if data_dir is not None else default_data_dir()
    app.extensions["gloss.store"] = Store(data)
    app.extensions["gloss.keys"] = KeyStore(data / "keys.json")
    app.url_map.strict_slashes = False
    app.url_map.merge_slashes = False  # `//` must be a JSON 4xx, never a redirect to another resource
    register_error_handlers(app)
    register_body_limit(app)
    register_versioning(app, API_VERSION)
    from .routes import register_routes

    register_routes(app)
    from .web import register_web

    register_web(app, data)
    app.wsgi_app = MethodOverride(app.wsgi_app, MAX_BODY_BYTES)
    return app
