"""The pages. Each declares what the signed-in key must allow, as the API routes do (app.auth kinds)."""
from __future__ import annotations

from typing import Any, Mapping

from flask import Blueprint, current_app, flash, jsonify, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from formats.registry import supported
from limits import GRID_ROWS_PER_PAGE
from storage import TranslationRecord, branches, history
from storage.diff import translation_changes
from storage.git.refs import MAIN
from storage.errors import StorageError
from storage.operations import FLAGS
from storage.snapshot import Snapshot
from vocabulary import DEFAULT_FLAG, FLAG_LABELS

from ..context import branch, current_snapshot, project
from ..errors import ApiError, error_payload, status_of_error
from ..exports import all_locales_file, locale_file
from ..locales import text_direction
from ..lookup import find_asset, find_locale
from ..qa import glossary_segments, translation_checks
from ..records import asset_record, locale_record, revision_record, translation_record
from ..service import glossary as glossary_service
from ..service.translations import TextChanged, clear_flag, save_translation, set_flag
from .grid import STATES, Filters, grid_page, source_text
from .session import check_csrf, csrf_token, may, sign_in, sign_out, signed_in_key, web_requires
from .workbench import checks_for, suggestions_for
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
    # scripts and their requests only from the app itself: no inline script, no other origin
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
                               "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
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
            "flags": FLAGS, "branch_names": _branch_names, "current_branch": branch}


def _branch_names() -> list[str]:
    """The project's branches for the selector every page shows."""
    return branches.branch_names(project())


@bp.url_defaults
def _carry_branch(endpoint: str, values: dict[str, Any]) -> None:
    """Every link and form of a page viewed on a branch stays on it (`?branch=`), so its reads and its writes
    (app.context.branch) are that branch's."""
    name = request.args.get("branch") if request else None
    if name and name != MAIN and endpoint != "web.static" and "branch" not in values:
        values["branch"] = name


def wants_json() -> bool:
    """Whether the request is the grid's script asking for JSON (a browser's own navigation asks for HTML)."""
    return request.accept_mimetypes.best_match(("text/html", "application/json")) == "application/json"


def _error_page(status: int, message: str):
    if wants_json():
        return jsonify(error_payload(status, message)), status
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
        context["changes"], _ = history.log(project(), limit=LAST_CHANGES, start=snapshot.commit)
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
                                start=snapshot.commit, **filters)
    return render_template("changes.html", snapshot=snapshot, commits=commits, page=page, more=more, filters=filters,
                           active={name: value for name, value in filters.items() if value})


def _text(entry: TranslationRecord | None) -> str:
    return entry["text"] if entry is not None else ""


def _translation_view(snapshot: Snapshot, change: history.TranslationChange) -> dict[str, Any]:
    old, new = _text(change.old), _text(change.new)
    before, after = word_diff(old, new)
    record = snapshot.locale(change.locale)
    return {"asset": change.asset_id, "locale": change.locale,
            "locale_name": record["name"] if record else change.locale, "old": change.old, "new": change.new,
            "before": before, "after": after,
            "text_changed": (change.old and change.old["text"]) != (change.new and change.new["text"]),
            "exists": snapshot.has_asset(change.asset_id)}


def _shown(value: Any) -> str:
    """An asset property as text: lists joined, maps as name=value."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{key}={item}" for key, item in value.items())
    return "" if value is None else str(value)


def _asset_view(snapshot: Snapshot, change: history.AssetChange) -> dict[str, Any]:
    old: Mapping[str, Any] = change.old or {}  # (compared field by field, by name)
    new: Mapping[str, Any] = change.new or {}
    fields = [(name, _shown(old.get(name)), _shown(new.get(name))) for name in ASSET_FIELDS
              if old.get(name) != new.get(name) and (old.get(name) or new.get(name))]
    return {"asset": change.asset_id, "kind": _change_kind(change.old, change.new), "fields": fields,
            "exists": snapshot.has_asset(change.asset_id)}


def _change_kind(old: object, new: object) -> str:
    return "created" if old is None else "deleted" if new is None else "changed"


def _term_view(change: history.GlossaryChange) -> dict[str, Any]:
    """A glossary term a commit changed: its fields that differ (a translation per locale), before and after."""
    old, new = _term_fields(change.old), _term_fields(change.new)
    fields = [(name, old.get(name, ""), new.get(name, "")) for name in dict.fromkeys([*old, *new])
              if old.get(name, "") != new.get(name, "")]
    return {"term": change.term, "kind": _change_kind(change.old, change.new), "fields": fields}


def _term_fields(record: Mapping[str, Any] | None) -> dict[str, str]:
    record = record or {}
    fields = {f"translation ({locale})": text for locale, text in sorted(record.get("translations", {}).items())}
    return {**fields, "note": record.get("note", ""), "forbidden": "yes" if record.get("forbidden") else ""}


@bp.get("/changes/<commit_id>")
@web_requires("read")
def change(commit_id: str):
    snapshot = current_snapshot()
    found, total = history.commit_changes(project(), commit_id, limit=CHANGES_SHOWN)
    shown = len(found.translations) + len(found.assets) + len(found.glossary)
    return render_template("change.html", snapshot=snapshot, info=found.info, project_changed=found.project_changed,
                           hidden=total - shown,
                           translations=[_translation_view(snapshot, item) for item in found.translations],
                           assets=[_asset_view(snapshot, item) for item in found.assets],
                           glossary=[_term_view(item) for item in found.glossary])


# ----------------------------------------------------------------------------- branches
@bp.get("/compare")
@web_requires("read")
def compare():
    """What the request's branch changed since it left main (the translations /api/diff lists between their
    merge base and the branch), and what main changed meanwhile, counted."""
    name = branch()
    if name == MAIN:
        return render_template("compare.html", snapshot=current_snapshot(), branch=None, changes=[], behind=0)
    info = branches.branch_info(project(), name)
    snapshot = current_snapshot()
    common = project().repo.merge_base(project().branch_head(MAIN), project().branch_head(name))
    base = project().snapshot_at(common) if common else Snapshot.empty()
    found = translation_changes(project(), base, snapshot)
    return render_template("compare.html", snapshot=snapshot, branch=name, info=info, changes=found[:CHANGES_SHOWN],
                           hidden=max(0, len(found) - CHANGES_SHOWN))


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
        entry = snapshot.translation(asset_id, code)
        checks = translation_checks(snapshot, asset_id, code, entry["text"]) if entry is not None else []
        rows.append({"translation": translation_record(snapshot, asset_id, code), "checks": checks,
                     "history": [revision_record(entry) for entry in history.revisions(project(), asset_id, code,
                                                                                        snapshot=snapshot)]})
    return render_template("asset.html", snapshot=snapshot, asset=asset_record(snapshot, asset_id, stored),
                           plural_of=stored.get("plural_of"), members=stored.get("plurals", []), rows=rows,
                           max_length=stored.get("max_length"))


def _matches(snapshot: Snapshot, query: str, locale: str, tag: str):
    """(asset id, source text, [(locale, text)] that contain the query), in creation order."""
    wanted = query.casefold()
    codes = [locale] if locale else [record["code"] for record in snapshot.locales()]
    source = snapshot.source_locale
    for asset_id, stored in snapshot.assets():
        if tag and tag not in stored.get("tags", []):
            continue
        texts = [(code, _text(snapshot.translation(asset_id, code))) for code in codes]
        hits = [(code, text) for code, text in texts if wanted and wanted in text.casefold()]
        if not wanted or hits or wanted in asset_id.casefold():
            yield asset_id, _text(snapshot.translation(asset_id, source)), hits


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
def _edit_target() -> tuple[str, str, TranslationRecord | None]:
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
    text = _form_text("text") or ""
    if current is not None and current["text"] == text:
        flash("Nothing changed.")
    else:
        entry = save_translation(asset_id, locale, text).translation(asset_id, locale)
        flash(f"Saved {locale} (revision {entry['rev']})." if entry else f"Marked {locale} as untranslated.")
    return _back_to(asset_id, locale)


def _apply_flag(asset_id: str, locale: str, current: TranslationRecord | None, name: str) -> str:
    """Set the flag `name` ("": clear it) on a translation, one commit when it changes; what happened, in words."""
    if current is None:
        raise ApiError(404, "Asset not translated in this locale")
    if name and current.get("flag") != name:
        set_flag(asset_id, locale, name)
        return f"Flagged {asset_id} [{locale}] as {FLAG_LABELS.get(name, name)}."
    if not name and current.get("flag"):
        clear_flag(asset_id, locale)
        return f"Cleared the flag of {asset_id} [{locale}]."
    return "Nothing changed."


@bp.post("/edit/flag")
@web_requires("write")
def edit_flag():
    asset_id, locale, current = _edit_target()
    flash(_apply_flag(asset_id, locale, current, request.form.get("flag", "").strip().lower()))
    return _back_to(asset_id, locale)


# ----------------------------------------------------------------------------- glossary
@bp.get("/glossary")
@web_requires("read")
def glossary():
    snapshot = current_snapshot()
    editing = request.args.get("term", "")
    return render_template("glossary.html", snapshot=snapshot, terms=snapshot.glossary_terms(), editing=editing,
                           record=snapshot.glossary_term(editing) or {},
                           locales=[r for r in snapshot.locales() if r["code"] != snapshot.source_locale])


@bp.post("/glossary/save")
@web_requires("write")
def glossary_save():
    snapshot = current_snapshot()
    term = request.form.get("term", "").strip()
    if not term:
        raise ApiError(400, "Which term? The form has no term")
    translations = {r["code"]: text for r in snapshot.locales()
                    if (text := request.form.get(f"translation-{r['code']}", "").strip())}
    record = {"translations": translations, "note": request.form.get("note", "").replace("\r\n", "\n"),
              "forbidden": request.form.get("forbidden") == "on"}
    _, created = glossary_service.put_term(term, record)
    flash(f"Added {term}." if created else f"Saved {term}.")
    return redirect(url_for("web.glossary"))


@bp.post("/glossary/delete")
@web_requires("write")
def glossary_delete():
    term = request.form.get("term", "")
    glossary_service.delete_term(term)
    flash(f"Deleted {term}.")
    return redirect(url_for("web.glossary"))


# ----------------------------------------------------------------------------- the translator's grid
def _grid_filters() -> Filters:
    """The grid's filters from the query (a page) or the form (a save, which goes back to the same page)."""
    state = request.values.get("state", "").strip() or "all"
    if state not in STATES:
        raise ApiError(400, f"state must be one of {', '.join(STATES)}")
    return Filters(state, request.values.get("tag", "").strip(), request.values.get("q", "").strip())


def _grid_url(locale: str, filters: Filters, after: str | None) -> str:
    arguments: dict[str, Any] = dict(filters.link(), locale=locale, **({"after": after} if after else {}))
    return url_for("web.grid", **arguments)


def _form_text(name: str) -> str | None:
    # browsers send a textarea's line breaks as CRLF; stored texts use LF
    value = request.form.get(name)
    return None if value is None else value.replace("\r\n", "\n")


@bp.get("/translate/<locale>")
@web_requires("read")
def grid(locale: str):
    snapshot = current_snapshot()
    code, filters = find_locale(snapshot, locale), _grid_filters()
    after = request.args.get("after", "").strip() or None
    progress = snapshot.locale_progress(code)  # first: counted per chunk, the page's scan skips chunks by them
    page = grid_page(snapshot, code, filters, after, GRID_ROWS_PER_PAGE)
    checks = {cell.asset_id: checks_for(snapshot, cell.asset_id, code, cell.text)
              for row in page.rows for cell in row.cells if cell.entry is not None}
    terms = {cell.asset_id: glossary_segments(snapshot, cell.source, code) for row in page.rows for cell in row.cells}
    counts = {"untranslated": progress["untranslated"], "flagged": progress["flagged"],
              "translated": progress["translated"] - progress["flagged"], "all": len(snapshot)}
    return render_template("grid.html", snapshot=snapshot, code=code, locale=snapshot.existing_locale(code),
                           source=snapshot.source_locale, rows=page.rows, checks=checks, terms=terms,
                           filters=filters,
                           states=STATES, counts=counts, after=after, review_flag=DEFAULT_FLAG,
                           next_url=_grid_url(code, filters, page.next_after) if page.next_after else None,
                           first_url=_grid_url(code, filters, None) if after else None)


def _cell_answer(snapshot: Snapshot, asset_id: str, locale: str, saved: bool) -> dict[str, Any]:
    """What the grid's script learns after a save or a flag: the cell as now stored, and its checks."""
    entry = snapshot.translation(asset_id, locale)
    text = entry["text"] if entry else ""
    state = "untranslated" if entry is None else "flagged" if entry.get("flag") else "translated"
    return {"asset": asset_id, "saved": saved, "state": state, "text": text,
            "revision": entry["rev"] if entry else 0, "flag": entry.get("flag", "") if entry else "",
            "checks": checks_for(snapshot, asset_id, locale, text) if entry else []}


def _grid_target() -> tuple[Snapshot, str, str, str]:
    """The snapshot, locale and asset a grid request names, and the page a post goes back to (its filters are
    checked first: a bad one refuses the post before anything is written)."""
    snapshot = current_snapshot()
    code = find_locale(snapshot, request.view_args["locale"])  # type: ignore[index]
    back = _grid_url(code, _grid_filters(), request.form.get("after") or None)
    return snapshot, code, _asset_arg(snapshot, request.values.get("asset", "")), back


@bp.post("/translate/<locale>/save")
@web_requires("write")
def grid_save(locale: str):
    """Save one cell: one commit, unless the stored text changed since the form was made (then both texts,
    and the translator chooses) or nothing changed."""
    snapshot, code, asset_id, back = _grid_target()
    text, base = _form_text("text"), _form_text("base")
    if text is None or base is None:
        raise ApiError(400, "The form needs the text and the text it started from (base)")
    current = snapshot.translation(asset_id, code)
    saved = current is None and text != "" or current is not None and current["text"] != text
    if saved:
        try:
            snapshot = save_translation(asset_id, code, text, started_from=base)
        except TextChanged as lost:
            return _lost_race(code, asset_id, text, lost.current, back)
    answer = _cell_answer(snapshot, asset_id, code, saved)
    if wants_json():
        return jsonify(answer)
    flash(f"Saved {asset_id} [{code}] (revision {answer['revision']})." if saved else "Nothing changed.")
    return redirect(back)


def _lost_race(code: str, asset_id: str, mine: str, theirs: TranslationRecord | None, back: str):
    """409: the text changed since the translator started; show both and ask (nothing was written)."""
    their_text, revision = (theirs["text"], theirs["rev"]) if theirs else ("", 0)
    who = theirs["author"]["name"] if theirs and "author" in theirs else ""
    if wants_json():
        return jsonify(dict(error_payload(409, "The translation changed since you started: nothing was saved"),
                            mine=mine, theirs={"text": their_text, "revision": revision, "author": who})), 409
    return render_template("grid_conflict.html", code=code, asset_id=asset_id, mine=mine, theirs=their_text,
                           who=who, filters=_grid_filters(), after=request.form.get("after", ""), back=back), 409


@bp.post("/translate/<locale>/flag")
@web_requires("write")
def grid_flag(locale: str):
    """Set (`flag`, the "needs review" flag by default) or clear (`flag` empty) a cell's flag."""
    snapshot, code, asset_id, back = _grid_target()
    message = _apply_flag(asset_id, code, snapshot.translation(asset_id, code),
                          request.form.get("flag", "").strip().lower())
    if wants_json():
        return jsonify(_cell_answer(current_snapshot(), asset_id, code, message != "Nothing changed."))
    flash(message)
    return redirect(back)


@bp.get("/translate/<locale>/suggestions")
@web_requires("read")
def grid_suggestions(locale: str):
    """The suggestions of a cell (translation memory, through workbench.suggestions_for), each with the words
    of its source that differ from this cell's marked."""
    snapshot, code, asset_id, _ = _grid_target()
    source = source_text(snapshot, asset_id)
    found = []
    for suggestion in suggestions_for(asset_id, code):
        _, theirs = word_diff(source, suggestion["source"])
        found.append(dict(suggestion, diff=theirs))
    return jsonify(found)


@bp.get("/translate/<locale>/checks")
@web_requires("read")
def grid_checks(locale: str):
    """The checks of a text as typed (not saved)."""
    snapshot, code, asset_id, _ = _grid_target()
    return jsonify({"checks": checks_for(snapshot, asset_id, code, request.args.get("text", ""))})
