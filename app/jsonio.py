"""JSON responses in Loco's style: pretty (4 spaces) by default, compact and ASCII-escaped with `?ugly`."""
from __future__ import annotations

import json
from typing import Any

from flask import Response, request


def render(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    if request and "ugly" in request.args:
        body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")
    else:
        body = json.dumps(payload, ensure_ascii=False, indent=4)
    response = Response(body + "\n", status=status, mimetype="application/json")
    response.headers["Content-Type"] = "application/json; charset=UTF-8"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def success(message: str, status: int = 200) -> Response:
    """Loco's generic success record."""
    return render({"status": status, "message": message}, status)
