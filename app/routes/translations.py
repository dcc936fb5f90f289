"""Translations: read, translate (raw body), erase, flag, unflag, revisions (spec §4.6, loco-compat §3.7)."""
from __future__ import annotations

from flask import Blueprint, g, request

from limits import DEFAULT_SUGGESTIONS, MAX_SUGGESTIONS, describe
from storage.history import revisions
from storage.snapshot import Snapshot
from vocabulary import DEFAULT_FLAG, FLAG_LABELS

from ..auth import requires
from ..context import branch, current_snapshot, project, store
from ..errors import ApiError
from ..jsonio import render, success
from ..locales import resolve_project_locale
from ..lookup import find_asset, find_locale
from ..records import revision_record, translation_record
from ..requests import form_fields, raw_text
from ..service.memory import suggestions
from ..service.translations import clear_flag, erase_translation, save_translation, set_flag

bp = Blueprint("translations", __name__)


def split_legacy(snapshot: Snapshot, path: str) -> tuple[str, str] | None:
    """`{id}/{locale}.json` (the pre-1.0.5 spelling) as (asset, locale), when that reading fits the project."""
    asset_id, sep, code = path.rpartition("/")
    if sep and snapshot.has_asset(asset_id) and resolve_project_locale(code, [r["code"] for r in snapshot.locales()]):
        return asset_id, code
    return None


@bp.get("/api/translations/<path:asset_id>.json")
@bp.get("/api/translations/<path:asset_id>")
@requires("read")
def list_translations(asset_id: str):
    snapshot = current_snapshot()
    if not snapshot.has_asset(asset_id) and not snapshot.has_asset(asset_id + ".json"):
        legacy = split_legacy(snapshot, asset_id)
        if legacy:
            return render(translation_record(snapshot, legacy[0], find_locale(snapshot, legacy[1])))
    asset_id = find_asset(snapshot, asset_id)
    return render([translation_record(snapshot, asset_id, record["code"]) for record in snapshot.locales()])


@bp.get("/api/translations/<path:asset_id>/<locale>")
@requires("read")
def get_translation(asset_id: str, locale: str):
    snapshot = current_snapshot()
    asset_id, locale = find_asset(snapshot, asset_id), find_locale(snapshot, _strip_json(locale))
    return render(translation_record(snapshot, asset_id, locale))


def _strip_json(code: str) -> str:
    return code[:-5] if code.endswith(".json") else code


@bp.post("/api/translations/<path:asset_id>/<locale>")
@bp.post("/api/translations/<path:asset_id>.json")
@requires("write")
def translate(asset_id: str, locale: str | None = None):
    snapshot = current_snapshot()
    asset_id, locale = _target(snapshot, asset_id, locale)
    return render(translation_record(save_translation(asset_id, locale, raw_text()), asset_id, locale))


def _target(snapshot: Snapshot, asset_id: str, locale: str | None) -> tuple[str, str]:
    """(asset, locale) from `{id}/{locale}` or the legacy `{id}/{locale}.json` path."""
    if locale is None:
        legacy = split_legacy(snapshot, asset_id)
        if legacy is None:
            raise ApiError(404, "Not found: use /api/translations/{id}/{locale}")
        asset_id, locale = legacy
    return find_asset(snapshot, asset_id), find_locale(snapshot, _strip_json(locale))


@bp.delete("/api/translations/<path:asset_id>/<locale>")
@bp.delete("/api/translations/<path:asset_id>.json")
@requires("write")
def untranslate(asset_id: str, locale: str | None = None):
    asset_id, locale = _target(current_snapshot(), asset_id, locale)
    committed = erase_translation(asset_id, locale)
    return success(f"{committed.existing_locale(locale)['name']} translation deleted")


@bp.post("/api/translations/<path:asset_id>/<locale>/flag")
@bp.post("/api/translations/<path:asset_id>/<locale>/flag.json")
@requires("write")
def flag(asset_id: str, locale: str):
    asset_id, locale = _target(current_snapshot(), asset_id, locale)
    name = (form_fields().get("flag") or DEFAULT_FLAG).strip().lower()
    set_flag(asset_id, locale, name)
    return success(f'Flagged as "{FLAG_LABELS[name]}"')


@bp.delete("/api/translations/<path:asset_id>/<locale>/flag")
@bp.delete("/api/translations/<path:asset_id>/<locale>/flag.json")
@requires("write")
def unflag(asset_id: str, locale: str):
    asset_id, locale = _target(current_snapshot(), asset_id, locale)
    clear_flag(asset_id, locale)
    return success("Unflagged")


@bp.get("/api/translations/<path:asset_id>/<locale>/revisions")
@bp.get("/api/translations/<path:asset_id>/<locale>/revisions.json")
@requires("read")
def list_revisions(asset_id: str, locale: str):
    snapshot = current_snapshot()
    asset_id, locale = _target(snapshot, asset_id, locale)
    return render([revision_record(entry) for entry in revisions(project(), asset_id, locale, snapshot=snapshot)])


@bp.get("/api/translations/<path:asset_id>/<locale>/suggestions")
@bp.get("/api/translations/<path:asset_id>/<locale>/suggestions.json")
@requires("read")
def list_suggestions(asset_id: str, locale: str):
    """Translation memory: texts translated for similar source texts, best first (`?limit=`)."""
    if "ref" in request.args:
        raise ApiError(400, "Suggestions come from the latest version: ref= is not taken here")
    asset_id, locale = _target(current_snapshot(), asset_id, locale)
    return render(suggestions(store(), g.key.project, asset_id, locale, _limit(), branch()))


def _limit() -> int:
    given = request.args.get("limit", "").strip()
    if not given:
        return DEFAULT_SUGGESTIONS
    if not given.isascii() or not given.isdigit() or not 1 <= int(given) <= MAX_SUGGESTIONS:
        raise ApiError(400, f"limit must be a number from 1 to {MAX_SUGGESTIONS} {describe('max_suggestions')}")
    return int(given)
