"""The pages. Each declares what the signed-in key must allow, as the API routes do (app.auth kinds)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from formats.registry import supported
from storage import history
from storage.errors import StorageError
from storage.operations import FLAGS
from storage.snapshot import Snapshot
from vocabulary import FLAG_LABELS

from ..context import current_snapshot, project
from ..errors import ApiError, status_of_error
from ..exports import all_locales_file, locale_file
from ..locales import text_direction
from ..lookup import find_asset, find_locale
from ..records import asset_record, locale_record, revision_record, translation_record
from ..service.translations import clear_flag, save_translation, set_flag
from .session import check_csrf, csrf_token, may, sign_in, sign_out, signed_in_key, web_requires
from .worddiff import word_diff

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static",
               static_url_path="/ui/static")
CHANGES_PER_PAGE = 25
RESULTS_PER_PAGE = 50
CHANGES_SHOWN = 500  # entries detailed on one change page (a bulk import can change tens of thousands)
LAST_CHANGES = 5
# Asset properties a change page shows (bookkeeping such as `n` and `modified` is left out).
ASSET_FIELDS = ("type", "context", "notes", "printf", "tags", "plurals", "plural_of", "aliases")
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


# ----------------------------------------------------------------------------- plumbing
@bp.before_request
def _check_form_token():
    if request.method == "POST":
        check_csrf()


@bp.after_request
def _security_headers(response):
    if not request.path.startswith("/ui/static/"):
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
    return response


@bp.context_processor
def _page_helpers() -> dict[str, Any]:
    return {"csrf_token": csrf_token, "may": may, "direction": text_direction, "flag_labels": FLAG_LABELS,
            "flags": FLAGS}


def _error_page(status: int, message: str):
    return render_template("error.html", status=status, message=message), status


@bp.errorhandler(ApiError)
def _api_error(error: ApiError):
    return _error_page(error.status, error.message)


@bp.errorhandler(StorageError)
def _storage_error(error: StorageError):
    return _error_page(status_of_error(error), error.message)


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException):
    return _error_page(error.code or 500, error.description or error.name)


def _page_number() -> int:
    value = request.args.get("page", "1")
    if not value.isdigit() or int(value) < 1:
        raise ApiError(400, "page must be a positive whole number")
    return int(value)


def _locale_arg(snapshot: Snapshot, value: str) -> str:
    """A locale filter: empty, or a project locale in any spelling (`fr_FR` finds `fr-FR`)."""
    if not value:
        return ""
    return find_locale(snapshot, value)


def _asset_arg(snapshot: Snapshot, value: str) -> str:
    return find_asset(snapshot, value, exact=True)


# ----------------------------------------------------------------------------- sign-in
@bp.get("/")
def home():
    """The overview when signed in, else the sign-in form."""
    record = signed_in_key()
    if record is None:
        return render_template("signin.html")
    return overview()


@bp.post("/sign-in")
def sign_in_post():
    if sign_in(request.form.get("key", "")) is None:
        return render_template("signin.html", error="That key is not valid."), 401
    return redirect(url_for("web.home"))


@bp.post("/sign-out")
def sign_out_post():
    sign_out()
    flash("You are signed out.")
    return redirect(url_for("web.home"))


# ----------------------------------------------------------------------------- overview
def _download_formats() -> list[dict[str, Any]]:
    """The formats the registry can write, as (ext, variant, label, multi_locale)."""
    return [spec for spec in supported() if spec["writable"]]


@web_requires("export")
def overview():
    snapshot = current_snapshot()
    locales = []
    for record in snapshot.locales():
        info = locale_record(snapshot, record["code"])
        progress, total = info["progress"], max(len(snapshot), 1)
        info["bars"] = {
            "done": 100 * (progress["translated"] - progress["flagged"]) / total,
            "flagged": 100 * progress["flagged"] / total,
            "untranslated": 100 * progress["untranslated"] / total,
        }
        locales.append(info)
    context: dict[str, Any] = {"snapshot": snapshot, "locales": locales, "formats": _download_formats()}
    if may("read"):
        counts: dict[str, int] = {tag: 0 for tag in snapshot.tags()}
        for _, asset in snapshot.assets():
            for tag in asset.get("tags", []):
                counts[tag] = counts.get(tag, 0) + 1
        context["tags"] = counts
        context["changes"], _ = history.log(project(), limit=LAST_CHANGES)
    if may("write"):  # a hook's URL and state are for the project's administrators, as on the API
        context["webhooks"] = [hook.public() for hook in current_app.extensions["gloss.webhooks"].hooks(project().id)]
    return render_template("overview.html", **context)


@bp.get("/download/locale/<locale>.<ext>")
@web_requires("export")
def download_locale(locale: str, ext: str):
    """The API's export, authenticated by the session (the key never goes into a link)."""
    return locale_file(locale, ext)


@bp.get("/download/all.<ext>")
@web_requires("export")
def download_all(ext: str):
    return all_locales_file(ext)


# ----------------------------------------------------------------------------- changes
@bp.get("/changes")
@web_requires("read")
def changes():
    snapshot = current_snapshot()
    page = _page_number()
    filters = {"locale": _locale_arg(snapshot, request.args.get("locale", "").strip()),
               "author": request.args.get("author", "").strip(), "tag": request.args.get("tag", "").strip()}
    commits, more = history.log(project(), offset=(page - 1) * CHANGES_PER_PAGE, limit=CHANGES_PER_PAGE,
                                **filters)
    return render_template("changes.html", snapshot=snapshot, commits=commits, page=page, more=more, filters=filters,
                           active={name: value for name, value in filters.items() if value})


def _translation_view(snapshot: Snapshot, change: history.TranslationChange) -> dict[str, Any]:
    old, new = change.old or {}, change.new or {}
    before, after = word_diff(old.get("text", ""), new.get("text", ""))
    record = snapshot.locale(change.locale)
    return {"asset": change.asset_id, "locale": change.locale,
            "locale_name": record["name"] if record else change.locale, "old": change.old, "new": change.new,
            "before": before, "after": after, "text_changed": old.get("text") != new.get("text"),
            "exists": snapshot.has_asset(change.asset_id)}


def _shown(value: Any) -> str:
    """An asset property as text: lists joined, maps as name=value."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{key}={item}" for key, item in value.items())
    return "" if value is None else str(value)


def _asset_view(snapshot: Snapshot, change: history.AssetChange) -> dict[str, Any]:
    old, new = change.old or {}, change.new or {}
    fields = [(name, _shown(old.get(name)), _shown(new.get(name))) for name in ASSET_FIELDS
              if old.get(name) != new.get(name) and (old.get(name) or new.get(name))]
    kind = "created" if change.old is None else "deleted" if change.new is None else "changed"
    return {"asset": change.asset_id, "kind": kind, "fields": fields, "exists": snapshot.has_asset(change.asset_id)}


@bp.get("/changes/<commit_id>")
@web_requires("read")
def change(commit_id: str):
    snapshot = current_snapshot()
    found, total = history.commit_changes(project(), commit_id, limit=CHANGES_SHOWN)
    shown = len(found.translations) + len(found.assets)
    return render_template("change.html", snapshot=snapshot, info=found.info, project_changed=found.project_changed,
                           hidden=total - shown,
                           translations=[_translation_view(snapshot, item) for item in found.translations],
                           assets=[_asset_view(snapshot, item) for item in found.assets])


# ----------------------------------------------------------------------------- assets and search
@bp.get("/asset")
@web_requires("read")
def asset():
    snapshot = current_snapshot()
    asset_id = _asset_arg(snapshot, request.args.get("id", ""))
    stored = snapshot.existing_asset(asset_id)
    rows = []
    for record in snapshot.locales():
        code = record["code"]
        rows.append({"translation": translation_record(snapshot, asset_id, code),
                     "history": [revision_record(entry) for entry in history.revisions(project(), asset_id, code)]})
    return render_template("asset.html", snapshot=snapshot, asset=asset_record(snapshot, asset_id, stored),
                           plural_of=stored.get("plural_of"), members=stored.get("plurals", []), rows=rows)


def _matches(snapshot: Snapshot, query: str, locale: str, tag: str):
    """(asset id, source text, [(locale, text)] that contain the query), in creation order."""
    wanted = query.casefold()
    codes = [locale] if locale else [record["code"] for record in snapshot.locales()]
    source = snapshot.source_locale
    for asset_id, stored in snapshot.assets():
        if tag and tag not in stored.get("tags", []):
            continue
        texts = [(code, (snapshot.translation(asset_id, code) or {}).get("text", "")) for code in codes]
        hits = [(code, text) for code, text in texts if wanted and wanted in text.casefold()]
        if not wanted or hits or wanted in asset_id.casefold():
            yield asset_id, (snapshot.translation(asset_id, source) or {}).get("text", ""), hits


@bp.get("/search")
@web_requires("read")
def search():
    snapshot = current_snapshot()
    page = _page_number()
    query, tag = request.args.get("q", "").strip(), request.args.get("tag", "").strip()
    locale = _locale_arg(snapshot, request.args.get("locale", "").strip())
    results = list(_matches(snapshot, query, locale, tag))
    start = (page - 1) * RESULTS_PER_PAGE
    return render_template("search.html", snapshot=snapshot, query=query, tag=tag, locale=locale, total=len(results),
                           results=results[start:start + RESULTS_PER_PAGE], page=page,
                           more=len(results) > start + RESULTS_PER_PAGE)


# ----------------------------------------------------------------------------- editing
def _edit_target() -> tuple[str, str, dict[str, Any] | None]:
    snapshot = current_snapshot()
    asset_id = _asset_arg(snapshot, request.form.get("asset", ""))
    locale = _locale_arg(snapshot, request.form.get("locale", "").strip())
    if not locale:
        raise ApiError(400, "Which locale? The form has no locale")
    return asset_id, locale, snapshot.translation(asset_id, locale)


def _back_to(asset_id: str, locale: str):
    return redirect(url_for("web.asset", id=asset_id) + f"#locale-{locale}")


@bp.post("/edit/translation")
@web_requires("write")
def edit_translation():
    asset_id, locale, current = _edit_target()
    # browsers send a textarea's line breaks as CRLF; stored texts use LF
    text = request.form.get("text", "").replace("\r\n", "\n")
    if current is not None and current["text"] == text:
        flash("Nothing changed.")
    else:
        entry = save_translation(asset_id, locale, text).translation(asset_id, locale)
        flash(f"Saved {locale} (revision {entry['rev']})." if entry else f"Marked {locale} as untranslated.")
    return _back_to(asset_id, locale)


@bp.post("/edit/flag")
@web_requires("write")
def edit_flag():
    asset_id, locale, current = _edit_target()
    name = request.form.get("flag", "").strip().lower()
    if current is None:
        raise ApiError(404, "Asset not translated in this locale")
    if name:
        set_flag(asset_id, locale, name)
        flash(f"Flagged {locale} as {FLAG_LABELS.get(name, name)}.")
    elif current.get("flag"):
        clear_flag(asset_id, locale)
        flash(f"Cleared the flag of {locale}.")
    else:
        flash("Nothing changed.")
    return _back_to(asset_id, locale)
