"""Who is signed in to the web pages, and the form token that proves a post came from one of them.

The browser's cookie holds no API key: only a random session id (and the form token), in Flask's signed,
HttpOnly, SameSite=Lax cookie, `Secure` whenever the request came over HTTPS (directly, or as a trusted proxy's
X-Forwarded-Proto says) or when forced. The server keeps the session (storage.sessions, in the data directory)
and resolves it to the key's id on every request, so a sign-out, a revoked key or an idle lifetime ends it in
every worker process at once. Every POST must also carry the session's CSRF token.
"""
from __future__ import annotations

import hmac
import os
import secrets
import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from flask import Flask, current_app, g, redirect, request, session, url_for
from flask.sessions import SecureCookieSessionInterface

from limits import SESSION_IDLE_SECONDS, SESSION_MAX_SECONDS
from storage.keys import ApiKey
from storage.sessions import Lifetime, SessionStore

from ..auth import guarded
from ..errors import ApiError

SECRET_FILE = "web-secret"
CSRF_FIELD = "csrf"
SESSION_ID = "sid"
COOKIE_NAME = "gloss_session"
# Settings, each read from the app's config, else the environment of the same name (README "Configuration").
IDLE_HOURS = "GLOSS_SESSION_IDLE_HOURS"
MAX_HOURS = "GLOSS_SESSION_MAX_HOURS"
SECURE_COOKIES = "GLOSS_SECURE_COOKIES"
TRUE_WORDS = ("1", "true", "yes", "on")
# On a cluster, the node holding a browser's session names its key to the project's leader, which makes the
# dashboard's edits and has no such session (cluster.node, behind the cluster secret): the key's id, here.
TRUSTED_KEY = "gloss.web.trusted_key"


def load_secret(data_dir: Path) -> bytes:
    """The session-signing secret of this data directory, created on first use (0600, never rewritten).

    Worker processes start together: the first to create the file wins (O_EXCL) and the others read it.
    """
    path = Path(data_dir) / SECRET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        secret = b""
        for _ in range(50):  # the creator may not have written it yet
            secret = path.read_bytes().strip()
            if secret:
                return secret
            time.sleep(0.02)
        raise RuntimeError(f"{path} is empty: delete it to generate a new secret")
    secret = secrets.token_hex(32).encode()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret + b"\n")
    return secret


def csrf_token() -> str:
    """The session's form token (made on first use: the sign-in form carries one too)."""
    token = session.get(CSRF_FIELD)
    if not token:
        token = session[CSRF_FIELD] = secrets.token_urlsafe(32)
    return token


def check_csrf() -> None:
    """Refuse a POST whose form token is missing or is not this session's."""
    sent = request.form.get(CSRF_FIELD, "")
    expected = session.get(CSRF_FIELD, "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(400, "The form is out of date or did not come from this site: reload the page and retry")


def signed_in_key() -> ApiKey | None:
    """The key record of the session; None when signed out, the session expired or its key was revoked."""
    trusted = request.environ.get(TRUSTED_KEY)
    if trusted is not None:  # (checked by the node holding the session, and again here: revoked is revoked)
        return current_app.extensions["gloss.keys"].by_id(trusted)
    session_id = _session_id()
    if session_id is None:
        return None
    sessions, keys = _sessions(), current_app.extensions["gloss.keys"]
    key_id = sessions.resolve(session_id)
    record = keys.by_id(key_id) if key_id else None
    if key_id and record is None:
        sessions.end(session_id)  # its key was revoked
    return record


def sign_in(key: str) -> ApiKey | None:
    """Start a new server-side session for a valid key (a fresh id and form token: no session fixation)."""
    keys = current_app.extensions["gloss.keys"]
    record = keys.verify(key.strip()) if key.strip() else None
    if record is not None:
        sign_out()
        session[SESSION_ID] = _sessions().start(record.id)
        csrf_token()
        _sessions().sweep(keep=lambda key_id: keys.by_id(key_id) is not None)
    return record


def sign_out() -> None:
    """End the session on the server (a copy of the cookie stops working too) and clear the cookie."""
    session_id = _session_id()
    if session_id is not None:
        _sessions().end(session_id)
    session.clear()


def _session_id() -> str | None:
    value = session.get(SESSION_ID)
    return value if isinstance(value, str) and value else None


def _sessions() -> SessionStore:
    return current_app.extensions["gloss.sessions"]


def may(kind: str) -> bool:
    """Whether the signed-in key may do `kind` ("read", "export", "write"), as the API decides it."""
    key = g.get("key")
    return key is not None and key.may(kind)


def session_key() -> Any:
    """The signed-in session's key; signed out, a redirect to the sign-in page (GET) or 401."""
    record = signed_in_key()
    if record is None:
        if request.method == "GET":
            return redirect(url_for("web.home"))
        raise ApiError(401, "You are not signed in")
    return record


def web_requires(kind: str) -> Callable:
    """Page decorator: the session's key must allow `kind`; signed-out GETs go to the sign-in page."""
    return guarded(kind, session_key, "Your key does not allow this", "gloss_web_kind")


# ----------------------------------------------------------------------------- configuration
class SessionCookie(SecureCookieSessionInterface):
    """Flask's signed cookie, `Secure` when this request came over HTTPS or when SESSION_COOKIE_SECURE forces it.

    `request.is_secure` is true behind a trusted proxy that says X-Forwarded-Proto: https (the Waitress workers of
    `gloss serve` trust 127.0.0.1; gunicorn's own workers trust its --forwarded-allow-ips)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]) or request.is_secure


def setting(config: Mapping, environ: Mapping, name: str) -> str | None:
    """A setting from the app's config, else the environment; None when neither gives it."""
    value = config.get(name)
    return str(value) if value is not None else environ.get(name)


def parse_hours(value: str) -> float:
    """A positive, finite number of hours ("12", "0.5"); ValueError otherwise."""
    try:
        hours = float(value)
    except ValueError:
        hours = 0.0
    if not 0 < hours < float("inf"):
        raise ValueError(f"must be a positive number of hours, not {value!r}")
    return hours


def hours_setting(config: Mapping, environ: Mapping, name: str, default_seconds: float) -> float:
    """A setting given in hours, in seconds."""
    value = setting(config, environ, name)
    if value is None or value.strip() == "":
        return default_seconds
    try:
        return parse_hours(value) * 3600
    except ValueError as error:
        raise ValueError(f"{name} {error}") from None


def session_lifetime(config: Mapping, environ: Mapping) -> Lifetime:
    return Lifetime(idle=hours_setting(config, environ, IDLE_HOURS, SESSION_IDLE_SECONDS),
                    max=hours_setting(config, environ, MAX_HOURS, SESSION_MAX_SECONDS))


def register_sessions(app: Flask, data_dir: Path) -> None:
    """The session cookie and the server-side sessions of `data_dir`, configured from the app and environment."""
    lifetime = session_lifetime(app.config, os.environ)
    forced = (setting(app.config, os.environ, SECURE_COOKIES) or "").strip().lower() in TRUE_WORDS
    app.secret_key = load_secret(data_dir)
    # The cookie itself lasts the browser session; its signature is refused after the longest a session lives.
    app.config.update(SESSION_COOKIE_NAME=COOKIE_NAME, SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_SECURE=forced, PERMANENT_SESSION_LIFETIME=timedelta(seconds=lifetime.max))
    app.session_interface = SessionCookie()
    app.extensions["gloss.sessions"] = SessionStore(data_dir, lifetime)
