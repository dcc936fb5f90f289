"""WSGI middleware: `POST` with form field `REQUEST_METHOD=DELETE|PATCH` acts as that method (spec §1)."""
from __future__ import annotations

import io
from typing import Callable, Iterable

from werkzeug.formparser import parse_form_data

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
OVERRIDABLE = ("DELETE", "PATCH")


class MethodOverride:
    """Reads a form POST once, switches the method when asked, and hands the body on untouched."""

    def __init__(self, app: Callable, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        content_type = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if environ.get("REQUEST_METHOD") == "POST" and content_type in FORM_TYPES:
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if 0 < length <= self.max_bytes:
                body = environ["wsgi.input"].read(length)
                environ["wsgi.input"] = io.BytesIO(body)
                try:
                    _, form, _ = parse_form_data(dict(environ, **{"wsgi.input": io.BytesIO(body)}),
                                                 silent=True)
                    override = (form.get("REQUEST_METHOD") or "").upper()
                except Exception:  # an unreadable form is the route's problem, not the override's
                    override = ""
                if override in OVERRIDABLE:
                    environ["REQUEST_METHOD"] = override
                    environ["gloss.method_override"] = True
        return self.app(environ, start_response)
