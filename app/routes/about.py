"""Unauthenticated utilities and key verification: ping, ping/not-found, auth/verify."""
from __future__ import annotations

import os

from flask import Blueprint, current_app, g

import formats

from ..auth import requires
from ..context import base_url, current_snapshot
from ..errors import ApiError
from ..jsonio import render
from ..versioning import API_VERSION

bp = Blueprint("about", __name__)
BUILD = os.environ.get("GLOSS_BUILD", "gloss-dev")


@bp.get("/api/ping")
@bp.get("/api/ping.json")
def ping():
    return render({"version": API_VERSION, "build": BUILD})


@bp.get("/api/ping/not-found")
@bp.get("/api/ping/not-found.json")
def ping_not_found():
    raise ApiError(404, "Not found")


def credentials() -> dict:
    key = g.key
    meta = current_snapshot().meta
    return {
        "user": {"id": key.user_id, "name": key.user_name, "email": key.user_email},
        "group": {"id": 1, "name": current_app.config.get("GLOSS_GROUP", "Gloss"), "url": base_url() + "/"},
        "project": {"id": meta.get("number", 1), "name": meta.get("name", ""), "slug": key.project,
                    "url": f"{base_url()}/git/{key.project}.git"},  # the clone URL
    }


@bp.get("/api/auth/verify")
@bp.get("/api/auth/verify.json")
@requires("export")
def verify():
    return render(credentials())


@bp.post("/api/auth/verify")
@bp.post("/api/auth/verify.json")
@requires("write")
def verify_write():
    return render(credentials())


@bp.get("/api/formats")
@bp.get("/api/formats.json")
def formats_list():
    """Every registered (extension, variant) with what it can do: public, like the converter."""
    return render(formats.supported())
