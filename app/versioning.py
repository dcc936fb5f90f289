"""API version pinning (spec §9): `?v=` or `X-Api-Version`; every answer names the version that answered."""
from __future__ import annotations

import re

from flask import Flask, request

from limits import MAX_API_VERSION_CHARS, describe

from .errors import ApiError

# The Loco API version Gloss implements (its answers name it; older 1.x versions may be asked for).
API_VERSION = "1.0.29"
VERSION = re.compile(r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


def requested_version() -> str | None:
    return request.args.get("v") or request.headers.get("X-Api-Version") or None


def check_version(requested: str, current: str) -> None:
    """Major 1 up to the current version is served; malformed, other majors or future versions are 400."""
    if len(requested) > MAX_API_VERSION_CHARS:
        raise ApiError(400, f"API version longer than {MAX_API_VERSION_CHARS} characters "
                            f"{describe('max_api_version_chars')}")
    match = VERSION.match(requested.strip())
    if not match:
        raise ApiError(400, f"Malformed API version {requested[:40]!r}; expected major.minor.patch, e.g. 1.0")
    wanted = tuple(int(part or 0) for part in match.groups())
    have = tuple(int(part) for part in current.split("."))
    if wanted[0] != have[0]:
        raise ApiError(400, f"Unsupported API major version {wanted[0]}; this server speaks {have[0]}")
    if wanted > have:
        raise ApiError(400, f"API version {requested} is newer than this server's {current}")


def register_versioning(app: Flask, current: str) -> None:
    @app.before_request
    def _check_version():
        requested = requested_version()
        if requested is not None and request.path.startswith("/api/"):
            check_version(requested, current)

    @app.after_request
    def _announce_version(response):
        if request.path.startswith("/api/"):
            response.headers["X-Api-Version"] = current
        return response
