"""API keys on requests: `Authorization: Service|Loco KEY`, HTTP Basic (key as user, empty password), `?key=`.

Every project route declares what it needs: "read" (full and read-only keys), "export" (every key type, for
build pipelines) or "write" (full keys only). Missing or unknown keys get 401, insufficient ones 403.
"""
from __future__ import annotations

import base64
import binascii
from functools import wraps
from typing import Any, Callable

from flask import current_app, g, request

from storage.keys import KINDS, ApiKey

from .errors import ApiError

UNAUTHORIZED = {"WWW-Authenticate": 'Loco realm="Gloss API"'}


def presented_key() -> str | None:
    """The key the client sent, from the Authorization header or the `key` query parameter."""
    return key_in(request.headers, request.args)


def key_in(headers, args) -> str | None:
    """The key in these request headers or query arguments (nothing else of the request is read)."""
    return key_from(headers.get("Authorization", ""), args.get("key"))


def key_from(authorization: str, query_key: str | None) -> str | None:
    """The key in an Authorization header (Service, Loco, Bearer or Basic with the key as user name), else
    the `key` query parameter; shared by the API and the Git endpoint."""
    header = authorization.strip()
    if header:
        scheme, _, value = header.partition(" ")
        scheme, value = scheme.lower(), value.strip()
        if scheme in ("service", "loco", "bearer"):
            return value or None
        if scheme == "basic":
            try:
                decoded = base64.b64decode(value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
            return decoded.partition(":")[0] or None
        return None
    return query_key or None


def authenticate() -> ApiKey:
    key = presented_key()
    record = current_app.extensions["gloss.keys"].verify(key) if key else None
    if record is None:
        raise ApiError(401, "Invalid API key", UNAUTHORIZED)
    return record


def guarded(kind: str, key_of_request: Callable[[], Any], refusal: str, marker: str) -> Callable:
    """The core of `requires` (API routes) and `web_requires` (pages): the request's key, from
    `key_of_request` (which may answer instead, e.g. with a redirect to sign in), must be allowed `kind`
    (403 with `refusal`); the view then runs with g.key and g.actor set. `marker`: the attribute naming the
    kind on the view, which route table tests (and the OpenAPI description) read."""
    assert kind in KINDS

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(*args, **kwargs):
            found = key_of_request()
            if not isinstance(found, ApiKey):
                return found
            if not found.may(kind):
                raise ApiError(403, refusal)
            g.key = found
            g.actor = found.actor()
            return view(*args, **kwargs)

        setattr(wrapper, marker, kind)
        return wrapper

    return decorate


def requires(kind: str) -> Callable:
    """Route decorator: authenticate the API key, check its type against the route's kind."""
    return guarded(kind, authenticate, "Insufficient privileges", "gloss_kind")
