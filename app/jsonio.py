"""JSON responses in Loco's style: pretty (4 spaces) by default, compact and ASCII-escaped with `?ugly`."""
from __future__ import annotations

import json
from typing import Any

from flask import Response, request

from formats.jsoncodec import dump_json


def render(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    if request and "ugly" in request.args:
        body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")
        body += "\n"
    else:
        body = dump_json(payload)  # json.dumps(indent=4)'s output, without its slow pure-Python encoder
    response = Response(body, status=status, mimetype="application/json")
    response.headers["Content-Type"] = "application/json; charset=UTF-8"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def render_list(parts: list[bytes], separator: bytes) -> Response:
    """A pretty JSON array from its elements already rendered (see `pretty_item`) and encoded, in parts (one or
    more elements each) joined by `separator`.

    The parts are the body as they are, without a copy of them into one string (a 100k-asset list is tens of MB).
    """
    if not parts:
        return render([])
    pieces = [b"[\n"]
    for part in parts:
        pieces += (part, separator)
    pieces[-1] = b"\n]\n"
    response = Response(pieces, status=200, mimetype="application/json")
    response.headers["Content-Type"] = "application/json; charset=UTF-8"
    response.headers["Content-Length"] = str(sum(map(len, pieces)))
    return response


def pretty_item(value: object) -> str:
    """A value rendered as an element of a pretty top-level array (indented one level)."""
    return "    " + dump_json(value)[:-1].replace("\n", "\n    ")


def success(message: str, status: int = 200) -> Response:
    """Loco's generic success record."""
    return render({"status": status, "message": message}, status)
