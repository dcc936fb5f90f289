"""Translation memory: TMX files imported into the project's memory (suggestions: routes/translations.py)."""
from __future__ import annotations

from flask import Blueprint, request

from limits import MAX_PATH_COMPONENT_BYTES, describe
from storage.fields import check_string

from ..auth import requires
from ..errors import ApiError
from ..jsonio import render
from ..service.memory import import_tmx

bp = Blueprint("memory", __name__)


@bp.post("/api/memory/import")
@requires("write")
def import_memory():
    """TMX 1.4b units (the raw body) into memory.json, one commit; `?filename=` names the file in suggestions."""
    data = request.get_data(cache=False)
    if not data.strip():
        raise ApiError(422, "Empty or invalid source data")
    name = request.args.get("filename", "").strip() or "memory.tmx"
    check_string("filename", name)
    if len(name.encode("utf-8")) > MAX_PATH_COMPONENT_BYTES:
        raise ApiError(400, f"filename is too long {describe('max_path_component_bytes')}")
    return render(import_tmx(data, name))
