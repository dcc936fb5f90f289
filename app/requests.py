"""Reading request data the way Loco clients send it."""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from flask import request

from formats.jsoncodec import nesting_depth
from limits import MAX_NESTING_DEPTH, describe
from vocabulary import first_unencodable, strings_in, unencodable_reason

from .errors import ApiError

TRUE_WORDS = ("", "1", "true", "yes", "on")


def form_fields() -> dict[str, str]:
    """Form fields from urlencoded or multipart bodies (a JSON object body is accepted too).

    Field values are text: bytes that are not UTF-8 are a 400 (never silently replaced or dropped), and
    JSON values must be strings, as PATCH requires.
    """
    if request.mimetype == "application/json":
        payload = json_object()
        for key, value in payload.items():
            if not isinstance(value, str):
                raise ApiError(422, f"Field {key!r} must be a string, not {type(value).__name__}")
        return payload
    return {key: value for key, value in _form_items() if key != "REQUEST_METHOD"}


def _form_items() -> list[tuple[str, str]]:
    """(name, value) pairs of the form body, decoded strictly as UTF-8 (first occurrence of a name wins)."""
    if request.mimetype == "application/x-www-form-urlencoded":
        text = decode(request.get_data(cache=True), "Form body")
        try:
            pairs = parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict")
        except UnicodeDecodeError:
            raise ApiError(400, "A form field is not valid UTF-8 once percent-decoded") from None
        return list({key: value for key, value in reversed(pairs)}.items())[::-1]
    raw = request.get_data(cache=True) if request.mimetype == "multipart/form-data" else b""
    items = []
    if None in request.form or None in request.files:  # werkzeug keeps a part whose Content-Disposition has no name
        raise ApiError(400, "A multipart part has no name (Content-Disposition: form-data; name=\"...\")")
    for key, value in request.form.items():
        # werkzeug replaces undecodable bytes with U+FFFD: a value whose UTF-8 is not in the body was lossy
        if any("\ufffd" in text and text.encode("utf-8") not in raw for text in (key, value)):
            raise ApiError(400, f"Form field {key!r} is not valid UTF-8")
        items.append((key, value))
    for key, upload in request.files.items():  # a multipart part sent as a file still carries a field value
        items.append((key, decode(upload.read(), f"field {key!r}")))
    return list(dict(reversed(items)).items())[::-1]


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
        return {key: value for key, value in _form_items() if key != "REQUEST_METHOD"}
    data = request.get_data(cache=True)
    if not data.strip():
        raise ApiError(400, "Request body must be a JSON object")
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError(400, f"Request body is not valid JSON: {error}") from None
    except RecursionError:
        raise ApiError(400, f"Request body is nested too deeply {describe('max_nesting_depth')}") from None
    if not isinstance(payload, dict):
        raise ApiError(400, "Request body must be a JSON object")
    if nesting_depth(payload) > MAX_NESTING_DEPTH:
        raise ApiError(400, f"Request body is nested too deeply {describe('max_nesting_depth')}")
    unencodable = first_unencodable(strings_in(payload))
    if unencodable is not None:  # JSON may spell one (`"\\ud800"`); nothing downstream could store it
        raise ApiError(400, f"Request body is not valid: {unencodable_reason(unencodable)}")
    return payload


def flag_arg(name: str, default: bool = False) -> bool:
    """A boolean query parameter: present-and-empty, 1, true, yes mean true; false and 0 mean false."""
    if name not in request.args:
        return default
    return request.args.get(name, "").strip().lower() in TRUE_WORDS
