"""WSGI middleware: the body limit whatever the framing, and the `REQUEST_METHOD` form override (spec §1).

The limit holds for chunked bodies too: they have no Content-Length, so the input stream itself refuses to
hand out more than the limit (413), instead of being cut short silently. The method override reads a form
body only for a request that presents a valid key: an anonymous client never makes us parse anything.
"""
from __future__ import annotations

import io
from typing import Callable, Iterable

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import parse_form_data

from limits import LIMITS, describe

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
OVERRIDABLE = ("DELETE", "PATCH")
READ_PIECE = 64 * 1024


def body_limit(path: str) -> str:
    """The name of the limit that applies to a request body on this path (see limits.py)."""
    return "max_convert_bytes" if path.startswith("/api/convert/") else "max_body_bytes"


class BodyTooLarge(RequestEntityTooLarge):
    """413 naming the limit that was hit."""

    def __init__(self, limit_name: str):
        super().__init__()
        self.gloss_message = f"Request body too large {describe(limit_name)}; nothing was stored"


class CappedInput(io.RawIOBase):
    """A request stream that raises BodyTooLarge as soon as more than `limit` bytes come through."""

    def __init__(self, stream, limit_name: str):
        super().__init__()
        self.stream = stream
        self.limit_name = limit_name
        self.limit = int(LIMITS[limit_name])
        self.count = 0

    def readable(self) -> bool:
        return True

    def _counted(self, data: bytes) -> bytes:
        self.count += len(data)
        if self.count > self.limit:
            raise BodyTooLarge(self.limit_name)
        return data

    def read(self, size: int | None = -1) -> bytes:
        if size is not None and size >= 0:
            return self._counted(self.stream.read(size))
        pieces: list[bytes] = []
        while True:  # piece by piece, so that an endless body fails at the limit, not after
            piece = self._counted(self.stream.read(READ_PIECE))
            if not piece:
                return b"".join(pieces)
            pieces.append(piece)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = self.limit - self.count + 1
        return self._counted(self.stream.readline(size))


def content_length(environ: dict) -> int | None:
    try:
        return int(environ["CONTENT_LENGTH"]) if environ.get("CONTENT_LENGTH") else None
    except ValueError:
        return None


class BodyGuard:
    """Caps every request body at its limit and applies the method override for authenticated forms.

    `authorised(environ)` tells whether the request carries a valid key (checked without reading the body).
    """

    def __init__(self, app: Callable, authorised: Callable[[dict], bool]):
        self.app = app
        self.authorised = authorised

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        limit_name = body_limit(environ.get("PATH_INFO", ""))
        environ["gloss.body_limit"] = limit_name
        length = content_length(environ)
        if length is None:
            environ["wsgi.input"] = CappedInput(environ["wsgi.input"], limit_name)
        content_type = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if environ.get("REQUEST_METHOD") == "POST" and content_type in FORM_TYPES \
                and (length is None or length <= int(LIMITS[limit_name])) and self.authorised(environ):
            self._override(environ, length)
        return self.app(environ, start_response)

    @staticmethod
    def _override(environ: dict, length: int | None) -> None:
        """Read the (authenticated) form once, switch the method when asked, hand the body on untouched."""
        stream = environ["wsgi.input"]
        try:
            body = stream.read() if length is None else stream.read(length)
        except BodyTooLarge:
            environ["gloss.body_too_large"] = True
            environ["wsgi.input"] = io.BytesIO()
            return
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        try:
            _, form, _ = parse_form_data(dict(environ, **{"wsgi.input": io.BytesIO(body)}), silent=True)
            override = (form.get("REQUEST_METHOD") or "").upper()
        except Exception:  # an unreadable form is the route's problem, not the override's
            override = ""
        if override in OVERRIDABLE:
            environ["REQUEST_METHOD"] = override
            environ["gloss.method_override"] = True
