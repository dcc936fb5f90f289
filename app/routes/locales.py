"""Locales: list, create, read, rename/re-code, delete, QA errors, progress (spec §4.4, loco-compat §3.6)."""
from __future__ import annotations

from flask import Blueprint, request

from storage.progress import status_of
from vocabulary import tag_filter

from ..auth import requires
from ..context import current_snapshot
from ..errors import ApiError
from ..jsonio import render, success
from ..locales import parse_locale_code
from ..lookup import find_locale
from ..qa import locale_errors as checked_locale
from ..records import locale_progress_detail, locale_record
from ..requests import form_fields, json_object
from ..service import locales as service

bp = Blueprint("locales", __name__)


@bp.get("/api/locales")
@bp.get("/api/locales.json")
@requires("export")
def list_locales():
    snapshot = current_snapshot()
    return render([locale_record(snapshot, record["code"]) for record in snapshot.locales()])


@bp.post("/api/locales")
@bp.post("/api/locales.json")
@requires("write")
def create_locale():
    code = form_fields().get("code", "")
    if not code.strip():
        raise ApiError(400, "Form field code is required")
    code = parse_locale_code(code)
    return render(locale_record(service.add_locale(code), code), 201)


@bp.get("/api/locales/<locale>")
@bp.get("/api/locales/<locale>.json")
@requires("read")
def get_locale(locale: str):
    snapshot = current_snapshot()
    return render(locale_record(snapshot, find_locale(snapshot, locale)))


PATCHABLE_LOCALE_FIELDS = ("code", "name")


@bp.patch("/api/locales/<locale>")
@bp.patch("/api/locales/<locale>.json")
@requires("write")
def patch_locale(locale: str):
    locale = find_locale(current_snapshot(), locale)
    changes = json_object()
    unknown = sorted(set(changes) - set(PATCHABLE_LOCALE_FIELDS))
    if unknown:
        raise ApiError(422, f"Locale properties cannot be patched: {', '.join(unknown)}")
    if any(not isinstance(value, str) for value in changes.values()):
        raise ApiError(422, "code and name must be strings")
    new_code = parse_locale_code(changes["code"]) if "code" in changes else None
    name = changes.get("name")
    if name is not None and not name.strip():
        raise ApiError(422, "name must not be empty")
    committed, final = service.edit_locale(locale, new_code, name)
    return render(locale_record(committed, final))


@bp.delete("/api/locales/<locale>")
@bp.delete("/api/locales/<locale>.json")
@requires("write")
def delete_locale(locale: str):
    locale = find_locale(current_snapshot(), locale)
    service.delete_locale(locale)
    return success("Locale deleted")


@bp.get("/api/locales/<locale>/errors")
@bp.get("/api/locales/<locale>/errors.json")
@requires("read")
def locale_errors(locale: str):
    """Loco's TranslationError list; each record also names its failed checks (`checks`: name, message,
    severity), quality.checks."""
    snapshot = current_snapshot()
    return render(checked_locale(snapshot, find_locale(snapshot, locale)))


@bp.get("/api/locales/<locale>/progress")
@bp.get("/api/locales/<locale>/progress.json")
@requires("read")
def locale_progress(locale: str):
    snapshot = current_snapshot()
    locale = find_locale(snapshot, locale)
    expression = request.args.get("filter", "")
    if not expression:
        return render(locale_progress_detail(snapshot, locale))
    matches = tag_filter(expression)
    counts: dict[str, int] = {"translated": 0, "untranslated": 0}
    for asset_id, asset in snapshot.assets():
        if matches(asset.get("tags", [])):
            entry = snapshot.translation(asset_id, locale)
            status = status_of(entry)
            counts["translated" if entry is not None else "untranslated"] += 1
            if entry is not None and entry.get("flag"):
                counts["flagged"] = counts.get("flagged", 0) + 1
            if status not in ("translated", "untranslated"):
                counts[status] = counts.get(status, 0) + 1
    return render(counts)
