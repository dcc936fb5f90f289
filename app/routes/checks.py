"""The quality checks of one translation: the stored one, or a text not saved yet (what a translator types)."""
from __future__ import annotations

from flask import Blueprint, request

from ..auth import requires
from ..context import current_snapshot
from ..errors import ApiError
from ..jsonio import render
from ..lookup import find_asset, find_locale
from ..qa import translation_checks

bp = Blueprint("checks", __name__)


@bp.get("/api/translations/<path:asset_id>/<locale>/checks")
@requires("read")
def translation_checks_route(asset_id: str, locale: str):
    """[{name, message, severity}] of `?text=` as the asset's translation in the locale, else of the stored one."""
    snapshot = current_snapshot()
    asset_id, locale = find_asset(snapshot, asset_id), find_locale(snapshot, locale)
    text = request.args.get("text")
    if text is None:
        entry = snapshot.translation(asset_id, locale)
        if entry is None:
            raise ApiError(404, "Asset not translated in this locale (give ?text= to check a text)")
        text = entry["text"]
    return render([result.as_json() for result in translation_checks(snapshot, asset_id, locale, text)])
