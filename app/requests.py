"""Reading request data the way Loco clients send it."""
from __future__ import annotations

import json
from typing import Any

from flask import request

from .errors import ApiError

TRUE_WORDS = ("", "1", "true", "yes", "on")


def form_fields() -> dict[str, str]:
    """Form fields from urlencoded or multipart bodies (a JSON object body is accepted too)."""
    if request.mimetype == "application/json":
        payload = json_object()
        return {key: value if isinstance(value, str) else json.dumps(value) for key, value in payload.items()}
    fields = {key: value for key, value in request.form.items() if key != "REQUEST_METHOD"}
    for key, upload in request.files.items():  # a multipart part sent as a file still carries a field value
        fields.setdefault(key, decode(upload.read(), f"field {key!r}"))
    return fields


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(400, f"{what} is not valid UTF-8 (byte {error.start})") from None


def raw_text() -> str:
    """The raw request body as text, whatever the Content-Type (translations, tag lists)."""
    return decode(request.get_data(cache=True), "Request body")


def json_object() -> dict[str, Any]:
    """A JSON object body (PATCH); with a form override, the form fields stand in for it."""
    if request.environ.get("gloss.method_override") and request.mimetype != "application/json":
        return {key: value for key, value in request.form.items() if key != "REQUEST_METHOD"}
    data = request.get_data(cache=True)
    if not data.strip():
        raise ApiError(400, "Request body must be a JSON object")
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError(400, f"Request body is not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise ApiError(400, "Request body must be a JSON object")
    return payload


def flag_arg(name: str, default: bool = False) -> bool:
    """A boolean query parameter: present-and-empty, 1, true, yes mean true; false and 0 mean false."""
    if name not in request.args:
        return default
    return request.args.get(name, "").strip().lower() in TRUE_WORDS
