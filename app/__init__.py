"""The Flask application: thin routes over `storage/` (projects in Git) and `formats/` (file readers/writers)."""
from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Callable

from flask import Flask, request
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.wrappers import Request

from limits import LIMITS, MAX_BODY_BYTES, describe
from storage.keys import KeyStore
from storage.store import Store
from storage.webhooks import HookStore

from .datadir import data_path, default_data_dir
from .errors import ApiError, register_error_handlers
from .middleware import BodyGuard
from .relay import WriterRelay
from .routetable import RouteTable
from .versioning import API_VERSION, register_versioning


def register_body_limit(app: Flask) -> None:
    """Refuse an oversized body before any route reads it; chunked bodies are capped by BodyGuard.

    `MAX_CONTENT_LENGTH` in the config (unset by default) lowers the limit, for tests.
    """

    @app.before_request
    def _limit_body():
        name = request.environ.get("gloss.body_limit", "max_body_bytes")
        limit = min(int(LIMITS[name]), app.config.get("MAX_CONTENT_LENGTH") or MAX_BODY_BYTES)
        if request.environ.get("gloss.body_too_large") or (request.content_length or 0) > limit:
            raise ApiError(413, f"Request body too large {describe(name)}; nothing was stored")


def key_is_valid(keys: KeyStore) -> Callable[[dict], bool]:
    """Whether a raw WSGI request presents a valid key (headers and query only: the body stays unread)."""

    def check(environ: dict) -> bool:
        from .auth import key_in

        shallow = Request(environ, shallow=True)
        key = key_in(shallow.headers, shallow.args)
        return key is not None and key != "" and keys.verify(key) is not None

    return check


class Gloss(Flask):
    """Flask with the URL map that the apps of a process share (app.routetable)."""

    url_map_class = RouteTable
    url_map: RouteTable


def project_of_key(keys: KeyStore) -> Callable[[dict], str | None]:
    """The project whose valid key a raw WSGI request presents (headers and query only), else None."""

    def project(environ: dict) -> str | None:
        from .auth import key_in

        shallow = Request(environ, shallow=True)
        key = key_in(shallow.headers, shallow.args)
        record = keys.verify(key) if key else None
        return record.project if record is not None else None

    return project


def session_of(app: Flask) -> Callable[[dict], tuple[str, str] | None]:
    """The project and key id of the dashboard session a raw WSGI request carries (None: signed out)."""

    def signed_in(environ: dict) -> tuple[str, str] | None:
        from .web.session import signed_in_key

        with app.request_context(dict(environ)):  # (a copy: the request itself is served afterwards)
            record = signed_in_key()
        return (record.project, record.id) if record is not None else None

    return signed_in


def trust_session(environ: dict, key_id: str) -> None:
    """A dashboard request forwarded by the node holding its session: signed in with that key (app.web.session)."""
    from .web.session import TRUSTED_KEY

    environ[TRUSTED_KEY] = key_id


def wire_cluster(app: Flask, config_file: str, store: Store, keys: KeyStore) -> None:
    """Put a cluster node in front of everything (cluster.node); `gloss serve` starts it in the worker."""
    from cluster.config import ClusterConfig
    from cluster.node import ClusterNode, Hooks

    from .errors import error_bytes
    from .relay import call_application

    config = ClusterConfig.load(Path(config_file))
    # the dashboard's cookie is every node's: its form token and messages travel with an edit forwarded to the
    # project's leader, so it is signed with a key of the cluster secret's, not with each node's web-secret
    app.secret_key = hmac.new(config.secret.encode(), b"gloss dashboard sessions", hashlib.sha256).hexdigest()
    node = ClusterNode(config, store, Hooks(project_of_key(keys), call_application, error_bytes, session_of(app),
                                            trust_session), app.extensions["gloss.webhooks"])
    app.extensions["gloss.cluster"] = node
    app.wsgi_app = node.wrap(app.wsgi_app)  # type: ignore[method-assign]


def create_app(data_dir: str | Path | None = None, testing: bool = False, config: dict | None = None) -> Flask:
    """Application factory; `data_dir` defaults to $GLOSS_DATA, else ./data. `config` overrides settings that
    are otherwise read from the environment (e.g. GLOSS_SESSION_IDLE_HOURS, see app.web.session)."""
    app = Gloss(__name__, static_folder=None)  # the web pages serve their own files (app.web)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=None)
    app.config.update(config or {})
    app.json.ensure_ascii = False  # type: ignore[attr-defined]  # DefaultJSONProvider's setting
    data = data_path(data_dir) if data_dir is not None else default_data_dir()
    store, keys = Store(data), KeyStore(data / "keys.json")
    app.extensions["gloss.store"], app.extensions["gloss.keys"] = store, keys
    app.extensions["gloss.webhooks"] = HookStore(data / "webhooks")  # secrets beside keys, never in a repository
    app.url_map.strict_slashes = False
    app.url_map.merge_slashes = False  # `//` must be a JSON 4xx, never a redirect to another resource
    register_error_handlers(app)
    register_body_limit(app)
    register_versioning(app, API_VERSION)
    from .context import register_time_travel

    register_time_travel(app)
    from .routes import register_routes

    register_routes(app)
    from .githttp import GitHttp
    from .web import register_web

    register_web(app, data)
    app.url_map.share()  # the routes are all added: compile them, or take an earlier app's
    # API writes received by any worker of `gloss serve` are made by one of them (see app.relay)
    relay = app.extensions["gloss.writer"] = WriterRelay(app.wsgi_app, store.locks_dir, key_is_valid(keys))
    # Git's smart HTTP is a WSGI application beside the API, not an API route (see app.githttp)
    app.wsgi_app = DispatcherMiddleware(  # type: ignore[method-assign]  # Flask's documented way to wrap it
        BodyGuard(relay, key_is_valid(keys)), {"/git": GitHttp(store, keys)})
    if app.config.get("GLOSS_CLUSTER"):  # cluster mode only by configuration: a single node never loads it
        wire_cluster(app, app.config["GLOSS_CLUSTER"], store, keys)
    return app
