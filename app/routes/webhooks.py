"""Webhooks of the key's project (full keys only): list, create, delete, and each hook's recent attempts.

A hook is server-side state beside the repository (storage.webhooks), never a commit; app.webhooks delivers.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, g, request

from limits import MAX_WEBHOOK_COALESCE_SECONDS, describe
from storage.webhooks import HookStore, check_secret, new_secret, parse_events

from ..auth import requires
from ..context import now, project
from ..errors import ApiError
from ..jsonio import render, success
from ..requests import form_fields, json_object
from ..webhooks import UnsafeUrl, resolve

bp = Blueprint("webhooks", __name__)


def hooks() -> HookStore:
    return current_app.extensions["gloss.webhooks"]


def fields() -> dict[str, Any]:
    """The request's fields: a form, or a JSON object whose `events` may be a list of names."""
    if request.mimetype == "application/json":
        given = json_object()
        for name, value in given.items():
            if name == "events" and isinstance(value, list) and all(isinstance(item, str) for item in value):
                continue
            if name == "coalesce" and isinstance(value, (int, float)) and not isinstance(value, bool):
                continue
            if not isinstance(value, str):
                raise ApiError(422, f"Field {name!r} must be a string, not {type(value).__name__}")
        return given
    return dict(form_fields())


def coalesce_of(value: Any) -> float:
    """The coalescing window in seconds: 0 (every commit its own delivery) up to the limit."""
    try:
        seconds = float(value or 0)
    except (TypeError, ValueError):
        raise ApiError(422, "coalesce must be a number of seconds") from None
    if not 0 <= seconds <= MAX_WEBHOOK_COALESCE_SECONDS:  # (NaN fails both)
        raise ApiError(422, f"coalesce must be 0 to {MAX_WEBHOOK_COALESCE_SECONDS:g} seconds "
                            f"{describe('max_webhook_coalesce_seconds')}")
    return seconds


@bp.get("/api/webhooks")
@requires("write")
def list_webhooks():
    return render([hook.public() for hook in hooks().hooks(g.key.project)])


@bp.post("/api/webhooks")
@requires("write")
def create_webhook():
    given = fields()
    url = str(given.get("url", "")).strip()
    if not url:
        raise ApiError(400, "Field url is required")
    try:
        resolve(url)
    except UnsafeUrl as error:
        raise ApiError(422, str(error)) from None
    events = parse_events(given.get("events"))
    secret = check_secret(given["secret"]) if given.get("secret") else new_secret()
    head = project().repo.head()
    hook = hooks().add(g.key.project, url, events, secret, head.decode() if head else "", now(),
                       coalesce_of(given.get("coalesce")))
    # the secret is shown this once (the receiver needs it to verify the signatures), never again
    return render(dict(hook.public(), secret=secret), 201)


@bp.delete("/api/webhooks/<hook_id>")
@requires("write")
def delete_webhook(hook_id: str):
    hooks().remove(g.key.project, hook_id)
    return success("Webhook deleted")


@bp.get("/api/webhooks/<hook_id>/deliveries")
@requires("write")
def deliveries(hook_id: str):
    return render(hooks().hook(g.key.project, hook_id).deliveries)
