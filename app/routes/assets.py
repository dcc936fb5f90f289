"""Assets, plural forms and asset tagging (spec §4.1, loco-compat §3.2–3.4)."""
from __future__ import annotations

from flask import Blueprint, request

from vocabulary import tag_filter

from ..auth import requires
from ..context import current_snapshot, path_value
from ..errors import ApiError
from ..jsonio import render, render_list, success
from ..lookup import find_asset
from ..records import SEPARATOR, asset_list, asset_record
from ..requests import form_fields, json_object
from ..service import assets as service

bp = Blueprint("assets", __name__)


@bp.get("/api/assets")
@bp.get("/api/assets.json")
@requires("read")
def list_assets():
    expression = request.args.get("filter", "")
    snapshot = current_snapshot()
    ids, parts = asset_list(snapshot, tag_filter(expression) if expression.strip() else None)
    if "ugly" in request.args:  # rare: the records are built again rather than kept beside their renderings
        return render([asset_record(snapshot, asset_id) for asset_id in ids])
    return render_list(parts, SEPARATOR)


@bp.post("/api/assets")
@bp.post("/api/assets.json")
@requires("write")
def create_asset():
    fields = form_fields()
    asset_id = fields.get("id", "").strip()
    text = fields.get("text")  # absent (None) is not the blank text ""
    if not asset_id and not text:
        raise ApiError(400, "Either id or text is required")
    committed, asset_id = service.create_asset(asset_id, text, fields)
    return render(asset_record(committed, asset_id), 201)


@bp.get("/api/assets/<path:asset_id>.json")
@bp.get("/api/assets/<path:asset_id>")
@requires("read")
def get_asset(asset_id: str):
    snapshot = current_snapshot()
    return render(asset_record(snapshot, find_asset(snapshot, asset_id)))


@bp.patch("/api/assets/<path:asset_id>.json")
@bp.patch("/api/assets/<path:asset_id>")
@requires("write")
def patch_asset(asset_id: str):
    asset_id = find_asset(current_snapshot(), asset_id)
    committed, final_id = service.edit_asset(asset_id, json_object())
    return render(asset_record(committed, final_id))


@bp.delete("/api/assets/<path:asset_id>.json")
@bp.delete("/api/assets/<path:asset_id>")
@requires("write")
def delete_asset(asset_id: str):
    asset_id = find_asset(current_snapshot(), asset_id)
    service.delete_asset(asset_id)
    return success("Asset deleted")


# ----------------------------------------------------------------------------- plurals
@bp.get("/api/assets/<path:asset_id>/plurals")
@bp.get("/api/assets/<path:asset_id>/plurals.json")
@requires("read")
def list_plurals(asset_id: str):
    snapshot = current_snapshot()
    asset = snapshot.existing_asset(find_asset(snapshot, asset_id))
    return render([asset_record(snapshot, member) for member in asset.get("plurals", [])])


@bp.post("/api/assets/<path:asset_id>/plurals")
@bp.post("/api/assets/<path:asset_id>/plurals.json")
@requires("write")
def create_plural(asset_id: str):
    asset_id = find_asset(current_snapshot(), asset_id)
    fields = form_fields()
    committed, pid = service.add_plural(asset_id, fields.get("pid", "").strip(), fields.get("text"))
    return render(asset_record(committed, pid))


@bp.delete("/api/assets/<path:asset_id>/plurals/<path:pid>.json")
@bp.delete("/api/assets/<path:asset_id>/plurals/<path:pid>")
@requires("write")
def unlink_plural(asset_id: str, pid: str):
    snapshot = current_snapshot()
    asset_id = find_asset(snapshot, asset_id)
    pid = path_value(pid, snapshot.existing_asset(asset_id).get("plurals", []).__contains__) or pid
    service.unlink_plural(asset_id, pid)
    return success("Plural form unlinked")


# ----------------------------------------------------------------------------- tagging
@bp.post("/api/assets/<path:asset_id>/tags")
@bp.post("/api/assets/<path:asset_id>/tags.json")
@requires("write")
def tag_asset(asset_id: str):
    asset_id = find_asset(current_snapshot(), asset_id)
    name = form_fields().get("name", "")
    if not name.strip():
        raise ApiError(400, "Form field name (the tag) is required")
    return render(asset_record(service.tag_asset(asset_id, name), asset_id))


@bp.delete("/api/assets/<path:asset_id>/tags/<path:tag>.json")
@bp.delete("/api/assets/<path:asset_id>/tags/<path:tag>")
@requires("write")
def untag_asset(asset_id: str, tag: str):
    snapshot = current_snapshot()
    asset_id = find_asset(snapshot, asset_id)
    tag = path_value(tag, snapshot.existing_asset(asset_id).get("tags", []).__contains__) or tag
    service.untag_asset(asset_id, tag)
    return success(f'Tag "{tag}" removed')
