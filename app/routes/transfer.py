"""Import (sync and async) and convert (spec §4.7, §4.8; loco-compat §3.9–3.11)."""
from __future__ import annotations

import threading

from flask import Blueprint, Response, current_app, g, request

import formats
from formats.registry import lookup
from limits import CONVERT_CONCURRENCY, describe
from storage.errors import StorageError, storage_fault
from storage.history import commit_with_trailer
from storage.jobs import JobStore
from storage.project import release_free_memory
from storage.trailers import Trailer

from ..auth import requires
from ..context import branch, committer_identity, data_and_keys, project, store
from ..errors import ApiError
from ..exchange import ImportOptions
from ..exports import attachment, format_variant
from ..jsonio import render
from ..locales import parse_locale_code
from ..records import locale_record
from ..requests import flag_arg, form_fields
from ..service.imports import run_import

bp = Blueprint("transfer", __name__)


# ----------------------------------------------------------------------------- import
def _tag_list(name: str) -> list[str]:
    return [tag.strip() for tag in request.args.get(name, "").split(",") if tag.strip()]


def import_options(ext: str, variant: str) -> tuple[ImportOptions, formats.ReadOptions]:
    args = request.args
    index = (args.get("index") or "").strip().lower() or lookup(ext, variant, reading=True).default_index
    if index not in ("id", "text"):
        raise ApiError(400, "index must be id or text")
    locale = (args.get("locale") or "").strip()
    if args.get("index") == "id" and not locale:
        raise ApiError(400, "locale is required when index=id")
    locale_code = None if locale.lower() in ("", "auto") else parse_locale_code(locale)
    flags = {name: (args.get(name) or "").strip().lower() for name in ("flag-new", "flag-updated")}
    for name, value in flags.items():
        if value and value not in formats.FLAGS:
            raise ApiError(400, f"{name} must be one of {', '.join(formats.FLAGS)}")
    options = ImportOptions(
        index=index, ignore_new=flag_arg("ignore-new"), ignore_existing=flag_arg("ignore-existing"),
        ignore_blank=flag_arg("ignore-blank"), tag_new=_tag_list("tag-new"), tag_all=_tag_list("tag-all"),
        untag_all=_tag_list("untag-all"), tag_updated=_tag_list("tag-updated"),
        untag_updated=_tag_list("untag-updated"), tag_absent=_tag_list("tag-absent"),
        untag_absent=_tag_list("untag-absent"), delete_absent=flag_arg("delete-absent"),
        flag_new=flags["flag-new"], flag_updated=flags["flag-updated"])
    return options, formats.ReadOptions(locale=locale_code, index=index, namespace=args.get("namespace", "").strip())


@bp.post("/api/import/<ext>")
@requires("write")
def import_file(ext: str):
    variant = format_variant(ext)
    options, read_options = import_options(ext, variant)
    data = request.get_data(cache=False)
    if not data.strip():
        raise ApiError(422, "Empty or invalid source data")
    if flag_arg("async"):
        return _start_async_import(ext, variant, data, options, read_options)
    report, result = run_import(project(), ext, variant, data, options, read_options, committer_identity(),
                                g.actor, branch=branch(), apart_in=data_and_keys())
    body = {"status": 200, "message": report.message(),
            "locales": [locale_record(result, code) for code in sorted(report.locales) if result.locale(code)]}
    if report.warnings:  # only when the file held something the project cannot keep
        body["warnings"] = report.warnings
    return render(body)


def jobs() -> JobStore:
    return JobStore(store().jobs_dir)


def _start_async_import(ext, variant, data, options, read_options):
    target, author, actor, on, apart_in = project(), committer_identity(), g.actor, branch(), data_and_keys()
    target.branch_head(on)  # an unknown branch is the request's 404, not the job's failure
    job_store = jobs()
    job = job_store.create(g.key.project)
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # the app behind the proxy

    def work() -> None:
        with app.app_context():
            try:
                report, _ = run_import(target, ext, variant, data, options, read_options, author, actor,
                                       lambda fraction: _note_progress(job_store, job, fraction), job.id, on,
                                       apart_in)
            except Exception as error:  # the job record is the only place left to report it
                report_failure(job_store, job, error)
                return
            finally:
                release_free_memory()  # as after a synchronous import (routes.release_memory_after)
            try:
                job_store.update(job, progress=100, success=report.message())
            except OSError:  # committed all the same: the record settles as finished once this process ends
                app.logger.warning("could not record the success of import job %s", job.id)

    threading.Thread(target=work, name=f"import-{job.id}", daemon=False).start()
    location = f"{request.host_url.rstrip('/')}/api/import/progress/{job.id}"
    return render({"status": 201, "message": "Asynchronous import job created", "id": job.id, "locales": []},
                  201, {"Location": location})


def _note_progress(job_store: JobStore, job, fraction: float) -> None:
    """Progress is informative: failing to record it (disk full) must not abort the import."""
    try:
        job_store.update(job, progress=int(fraction * 100))
    except OSError:
        pass


def report_failure(job_store: JobStore, job, error: Exception) -> None:
    """Record an async import's failure (logged, not raised, when even that write fails)."""
    fault = storage_fault(error) if isinstance(error, OSError) else None
    message = (fault.message if fault else None) or getattr(error, "message", None) or str(error) \
        or type(error).__name__
    if fault is None and not isinstance(error, (ApiError, formats.FormatsError, StorageError)):
        current_app.logger.exception("async import failed")
    try:
        job_store.update(job, progress=100, error=message)
    except OSError:
        current_app.logger.warning("could not record the failure of import job %s", job.id)


@bp.get("/api/import/progress/<job_id>")
@bp.get("/api/import/progress/")
@requires("read")
def import_progress(job_id: str = ""):
    target = project()
    job = jobs().get(job_id, g.key.project,
                     lambda wanted: commit_with_trailer(target, Trailer.JOB, wanted) is not None)
    return render({"progress": job.progress, "success": job.success, "error": job.error})


# ----------------------------------------------------------------------------- convert
def _name_locale(name: str) -> tuple[str, str | None]:
    """`messages-fr_FR` -> ("messages", "fr-FR"); the last `-`/`_`-separated part that is a locale wins."""
    for separator in ("-", "_", "."):
        stem, sep, tail = name.partition(separator)
        while sep:
            try:
                return stem, parse_locale_code(tail)
            except ApiError:
                more_stem, sep, tail = tail.partition(separator)
                stem = f"{stem}{separator}{more_stem}"
    return name, None


# Keyless converts at once in this process: the rest of the threads stay free for the project API.
_CONVERT_SLOTS = threading.BoundedSemaphore(CONVERT_CONCURRENCY)


@bp.post("/api/convert/<from_ext>/<name>.<ext>")
def convert(from_ext: str, name: str, ext: str):
    if not _CONVERT_SLOTS.acquire(blocking=False):
        raise ApiError(429, f"Too many conversions at once; retry shortly {describe('convert_concurrency')}",
                       {"Retry-After": "1"})
    try:
        return _convert(from_ext, name, ext)
    finally:
        _CONVERT_SLOTS.release()


def _convert(from_ext: str, name: str, ext: str) -> Response:
    """Read the posted file, write it in the target format (no project, no key)."""
    args = request.args
    data = request.get_data(cache=True)  # kept, so that the form parser below reads the same bytes
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        source = form_fields().get("src")
        if source is not None:  # the `src` form field; otherwise the raw body is the file itself
            data = source.encode("utf-8")
    if not data.strip():
        raise ApiError(422, "Empty or invalid source data")
    stem, named_locale = _name_locale(name)
    locale = parse_locale_code(args["locale"]) if args.get("locale") else named_locale
    native = parse_locale_code(args["native"]) if args.get("native") else None
    index = (args.get("index") or "").strip().lower() or None
    if index not in (None, "id", "text"):
        raise ApiError(400, "index must be id or text")
    read_options = formats.ReadOptions(locale=locale, source_locale=native, index=index,
                                       namespace=args.get("namespace") or stem)
    export = formats.ExportOptions(locale=locale, source_locale=native, index=index,
                                   printf=args.get("printf", ""), no_comments=flag_arg("no-comments"),
                                   no_expand=flag_arg("no-expand") or flag_arg("no-folding"),
                                   charset=args.get("charset") or "", breaks=args.get("breaks") or "Unix",
                                   collisions=args.get("collisions") or "auto", project_name=stem,
                                   escape_formulas=flag_arg("escape-formulas"),
                                   all_locales=format_variant(ext) == "multi")
    try:  # in a child process killed at convert_seconds: past it, this thread is free and nothing burns on
        converted = formats.run_within("convert_seconds", "converting the file", formats.convert, from_ext, ext,
                                       format_variant(ext), data, read_options, export, "", "convert_seconds")
    except formats.NothingExtracted:
        return Response(status=204)
    response = Response(converted.data, status=200, content_type=converted.content_type)
    response.headers["Content-Disposition"] = attachment(f"{name}.{ext}")
    return response
