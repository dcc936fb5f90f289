"""Tags: list, create, tag many assets, rename, delete (spec §4.5, loco-compat §3.5). Tags are strings."""
from __future__ import annotations

from flask import Blueprint

from ..auth import requires
from ..context import current_snapshot, path_value
from ..errors import ApiError
from ..jsonio import render, success
from ..requests import form_fields, json_object, raw_text
from ..service import tags as service

bp = Blueprint("tags", __name__)


def find_tag(tag: str) -> str:
    found = path_value(tag, current_snapshot().tags().__contains__)
    if found is None:
        raise ApiError(404, "Tag not in project")
    return found


@bp.get("/api/tags")
@bp.get("/api/tags.json")
@requires("read")
def list_tags():
    return render(current_snapshot().tags())


@bp.post("/api/tags")
@bp.post("/api/tags.json")
@requires("write")
def create_tag():
    name = form_fields().get("name", "")
    if not name.strip():
        raise ApiError(400, "Form field name is required")
    service.create_tag(name)
    return success("Tag created", 201)


@bp.post("/api/tags/<path:tag>.json")
@bp.post("/api/tags/<path:tag>")
@requires("write")
def tag_assets(tag: str):
    tag = find_tag(tag)
    ids = [part.strip() for part in raw_text().split(",") if part.strip()]
    if not ids:
        raise ApiError(400, "Request body must list asset IDs, separated by commas")
    service.tag_assets(tag, ids)
    return success(f"Tagged {len(set(ids))} asset{'s' if len(set(ids)) != 1 else ''}")


@bp.patch("/api/tags/<path:tag>.json")
@bp.patch("/api/tags/<path:tag>")
@requires("write")
def rename_tag(tag: str):
    tag = find_tag(tag)
    changes = json_object()
    unknown = sorted(set(changes) - {"name"})
    if unknown or not isinstance(changes.get("name"), str):
        raise ApiError(422, "Body must be a JSON object with one string property: name")
    service.rename_tag(tag, changes["name"])
    return success("Tag renamed")


@bp.delete("/api/tags/<path:tag>.json")
@bp.delete("/api/tags/<path:tag>")
@requires("write")
def delete_tag(tag: str):
    tag = find_tag(tag)
    service.delete_tag(tag)
    return success("Tag deleted")
