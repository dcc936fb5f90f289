"""Assets, plural forms and asset tagging (spec §4.1, loco-compat §3.2–3.4)."""
from __future__ import annotations

from flask import Blueprint, g, request

from storage import operations as ops
from storage.trailers import Action, Trailer, about
from vocabulary import tag_filter

from ..auth import requires
from ..context import current_snapshot, now, path_value, write
from ..errors import ApiError
from ..jsonio import render, render_list, success
from ..lookup import find_asset
from ..records import SEPARATOR, asset_list, asset_record
from ..requests import form_fields, json_object

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
    if asset_id:
        ops.check_addressable(asset_id)
    with write(f"Add asset {asset_id or (text or '')[:60]}", Action.CREATE_ASSET) as tx:
        if not asset_id:
            asset_id = ops.unique_asset_id(tx, text or "")
        tx.trailers.append((Trailer.ASSET, asset_id))
        ops.create_asset(tx, asset_id, now(), text=text, type=fields.get("type") or "text",
                         context=fields.get("context", ""), notes=fields.get("notes", ""),
                         default=fields.get("default") or "translated", actor=g.actor)
    return render(asset_record(tx.result, asset_id), 201)


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
    changes = json_object()
    if isinstance(changes.get("id"), str):
        ops.check_addressable(changes["id"])
    with write(f"Edit asset {asset_id}", Action.EDIT_ASSET, about(asset_id)) as tx:
        final_id = ops.patch_asset(tx, asset_id, changes, now())
    return render(asset_record(tx.result, final_id))


@bp.delete("/api/assets/<path:asset_id>.json")
@bp.delete("/api/assets/<path:asset_id>")
@requires("write")
def delete_asset(asset_id: str):
    asset_id = find_asset(current_snapshot(), asset_id)
    with write(f"Delete asset {asset_id}", Action.DELETE_ASSET, about(asset_id)) as tx:
        ops.delete_asset(tx, asset_id)
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
    pid = ops.check_addressable(fields.get("pid", "").strip()) if fields.get("pid", "").strip() else ""
    with write(f"Add plural form to {asset_id}", Action.ADD_PLURAL, about(asset_id)) as tx:
        pid = ops.add_plural(tx, asset_id, now(), pid=pid, text=fields.get("text"), actor=g.actor)
        tx.trailers.append((Trailer.PLURAL, pid))
    return render(asset_record(tx.result, pid))


@bp.delete("/api/assets/<path:asset_id>/plurals/<path:pid>.json")
@bp.delete("/api/assets/<path:asset_id>/plurals/<path:pid>")
@requires("write")
def unlink_plural(asset_id: str, pid: str):
    snapshot = current_snapshot()
    asset_id = find_asset(snapshot, asset_id)
    pid = path_value(pid, snapshot.existing_asset(asset_id).get("plurals", []).__contains__) or pid
    with write(f"Unlink plural {pid} from {asset_id}", Action.UNLINK_PLURAL, about(asset_id, plural=pid)) as tx:
        ops.unlink_plural(tx, asset_id, pid, now())
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
    with write(f"Tag {asset_id} {name}", Action.TAG_ASSET, about(asset_id, tag=name)) as tx:
        ops.tag_asset(tx, asset_id, name, now())
    return render(asset_record(tx.result, asset_id))


@bp.delete("/api/assets/<path:asset_id>/tags/<path:tag>.json")
@bp.delete("/api/assets/<path:asset_id>/tags/<path:tag>")
@requires("write")
def untag_asset(asset_id: str, tag: str):
    snapshot = current_snapshot()
    asset_id = find_asset(snapshot, asset_id)
    tag = path_value(tag, snapshot.existing_asset(asset_id).get("tags", []).__contains__) or tag
    with write(f"Untag {asset_id} {tag}", Action.UNTAG_ASSET, about(asset_id, tag=tag)) as tx:
        ops.untag_asset(tx, asset_id, tag, now())
    return success(f'Tag "{tag}" removed')
