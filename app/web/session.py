"""Who is signed in to the web pages, and the form token that proves a post came from one of them.

The API key is kept only in Flask's session cookie: signed with a secret generated once into the data
directory (never into a project repository), HttpOnly (page scripts cannot read it) and SameSite=Lax (other
sites' forms do not carry it). Every POST must also carry the session's CSRF token.
"""
from __future__ import annotations

import hmac
import os
import secrets
import time
from functools import wraps
from pathlib import Path
from typing import Callable

from flask import current_app, g, redirect, request, session, url_for

from storage.keys import ApiKey
from storage.operations import Actor

from ..auth import ACCESS_ALLOWS, KINDS
from ..errors import ApiError

SECRET_FILE = "web-secret"
CSRF_FIELD = "csrf"


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
    """The key record of the session's key; None when signed out or the key was revoked since."""
    key = session.get("key")
    return current_app.extensions["gloss.keys"].verify(key) if key else None


def sign_in(key: str) -> ApiKey | None:
    record = current_app.extensions["gloss.keys"].verify(key.strip()) if key.strip() else None
    if record is not None:
        session.clear()
        session["key"] = key.strip()
        csrf_token()  # a new token with the new identity
    return record


def sign_out() -> None:
    session.clear()


def may(kind: str) -> bool:
    """Whether the signed-in key may do `kind` ("read", "export", "write"), as the API decides it."""
    key = g.get("key")
    return key is not None and kind in ACCESS_ALLOWS.get(key.access, set())


def web_requires(kind: str) -> Callable:
    """Page decorator: the session's key must allow `kind`; signed-out GETs go to the sign-in page."""
    assert kind in KINDS

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(*args, **kwargs):
            record = signed_in_key()
            if record is None:
                if request.method == "GET":
                    return redirect(url_for("web.home"))
                raise ApiError(401, "You are not signed in")
            g.key = record
            g.actor = Actor(record.user_id, record.user_name, record.user_email)
            if not may(kind):
                raise ApiError(403, "Your key does not allow this")
            return view(*args, **kwargs)

        wrapper.gloss_web_kind = kind  # read by the web route table test
        return wrapper

    return decorate
