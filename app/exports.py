"""Exports as the API answers them, for the export routes and the dashboard's downloads: the request's export
parameters read once, the file built from the snapshot's shared catalogue, `If-Modified-Since` answered."""
from __future__ import annotations

import io
import tarfile
import zipfile
from datetime import datetime, timezone
from email.utils import format_datetime, parsedate_to_datetime

from flask import Response, g, request

import formats
from formats.registry import archive_path, archive_per_locale, lookup
from storage.snapshot import Snapshot

from .context import current_snapshot, project
from .errors import ApiError
from .exchange import EXPORT_CACHE, snapshot_catalogue
from .locales import resolve_project_locale
from .requests import flag_arg


def format_variant(ext: str) -> str:
    """The `format` parameter; `format=json` on .json (or po on .po) means the default variant."""
    variant = request.args.get("format", "").strip()
    return "" if variant.lower() == ext.lower() else variant


def _project_locale(snapshot: Snapshot, code: str, what: str) -> str:
    found = resolve_project_locale(code, [record["code"] for record in snapshot.locales()])
    if found is None:
        raise ApiError(404 if what == "locale" else 400, f"{what.capitalize()} locale {code!r} not in project"
                       if what != "locale" else "Locale not in project")
    return found


def export_options(snapshot: Snapshot, **overrides) -> formats.ExportOptions:
    """Every export query parameter, read once for all formats."""
    args = request.args
    source = _project_locale(snapshot, args["source"], "source") if args.get("source") else None
    fallback = _project_locale(snapshot, args["fallback"], "fallback") if args.get("fallback") else ""
    options = formats.ExportOptions(
        source_locale=source, index=args.get("index") or None, namespace=args.get("namespace", ""),
        yaml_prefix=args.get("yaml-prefix", ""),
        order=args.get("order") or "created", status=args.get("status", ""), filter=args.get("filter", ""),
        fallback=fallback, printf=args.get("printf", ""), charset=args.get("charset") or "",
        breaks=args.get("breaks") or "Unix", no_comments=flag_arg("no-comments"),
        no_expand=flag_arg("no-expand") or flag_arg("no-folding"), collisions=args.get("collisions") or "auto",
        escape_formulas=flag_arg("escape-formulas"), project_name=snapshot.name, exported_at=_exported_at(snapshot),
        exported_by=g.key.user_name)
    for name, value in overrides.items():
        setattr(options, name, value)
    return options


def _exported_at(snapshot: Snapshot) -> datetime:
    """Now; for a time-travel export (`?ref=`), the time of its commit, so that it reads as made back then."""
    if "ref" in request.args:
        return _last_modified(snapshot)
    return datetime.now(timezone.utc).replace(microsecond=0)


def _last_modified(snapshot: Snapshot) -> datetime:
    assert snapshot.commit is not None  # a project's snapshot: it has at least its creation commit
    commit = project().repo.read_commit(snapshot.commit)
    return datetime.fromtimestamp(commit.commit_time, timezone.utc)


def _not_modified(snapshot: Snapshot) -> Response | None:
    """304 when the client's copy (If-Modified-Since) is as new as the project's last commit."""
    header = request.headers.get("If-Modified-Since")
    if not header:
        return None
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if since.tzinfo is None:
        since = since.replace(tzinfo=timezone.utc)
    if _last_modified(snapshot) <= since:
        response = Response(status=304)
        response.headers["Last-Modified"] = format_datetime(_last_modified(snapshot), usegmt=True)
        return response
    return None


def attachment(filename: str) -> str:
    """A Content-Disposition value; path segments may carry control characters or quotes (`JSON%0A`)."""
    safe = "".join(ch for ch in filename if ch.isprintable() and ch not in '"\\')
    return f'attachment; filename="{safe}"'


def _file_response(data: bytes, content_type: str, filename: str, snapshot: Snapshot) -> Response:
    response = Response(data, status=200, content_type=content_type)
    response.headers["Content-Disposition"] = attachment(filename)
    response.headers["Last-Modified"] = format_datetime(_last_modified(snapshot), usegmt=True)
    return response


def _export(snapshot: Snapshot, ext: str, options: formats.ExportOptions, filename: str,
            variant: str | None = None) -> Response:
    cached = _not_modified(snapshot)
    if cached is not None:
        return cached
    variant = format_variant(ext) if variant is None else variant
    exported = formats.export_file(snapshot_catalogue(snapshot), ext, variant, options, EXPORT_CACHE)
    return _file_response(exported.data, exported.content_type, filename, snapshot)


def locale_file(locale: str, ext: str) -> Response:
    """One locale of the project (or of `?ref=`) as a file."""
    snapshot = current_snapshot()
    locale = _project_locale(snapshot, locale, "locale")
    options = export_options(snapshot, locale=locale)
    # the whole project's catalogue, shared by every export of this snapshot (the options pick the locale)
    return _export(snapshot, ext, options, f"{g.key.project}-{locale}.{ext}")


def template_file(ext: str) -> Response:
    """The source keys only (e.g. a POT)."""
    snapshot = current_snapshot()
    # the whole project's catalogue, as for every other export: a template reads its source texts only,
    # and a catalogue of its own would hold a second set of units (45 MB at 100k assets)
    return _export(snapshot, ext, export_options(snapshot, template=True), f"{g.key.project}.{ext}")


def all_locales_file(ext: str) -> Response:
    """Every locale in one file; the format decides what a single-locale project gets (Loco's flat all.json)."""
    snapshot = current_snapshot()
    return _export(snapshot, ext, export_options(snapshot, all_locales=True), f"{g.key.project}.{ext}")


def archive_file(ext: str, kind: str) -> Response:
    """Every locale as its own file in a `zip` or `tar` archive."""
    snapshot = current_snapshot()
    cached = _not_modified(snapshot)
    if cached is not None:
        return cached
    variant = format_variant(ext)
    spec = lookup(ext, variant, writing=True)
    files: list[tuple[str, bytes]] = []
    catalogue = snapshot_catalogue(snapshot)  # built once for every locale (and shared with the other exports)
    if spec.multi_locale and not archive_per_locale(spec):  # one file holds every locale (xcstrings)
        options = export_options(snapshot, all_locales=True)
        exported = formats.export_file(catalogue, ext, variant, options, EXPORT_CACHE)
        files.append((_member_path(spec, "", ext), exported.data))
    for record in snapshot.locales() if not files else ():
        code = record["code"]
        options = export_options(snapshot, locale=code)
        exported = formats.export_file(catalogue, ext, variant, options, EXPORT_CACHE)
        files.append((_member_path(spec, code, ext), exported.data))
    if len({name for name, _ in files}) != len(files):
        raise formats.OptionError("path must name the locale (e.g. {locale}): several locales would share a file")
    stamp = _exported_at(snapshot)
    comment = f"Exported from Gloss project {snapshot.name} at {stamp.isoformat()}"
    if kind == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.comment = comment.encode("utf-8")
            for name, data in files:
                archive.writestr(zipfile.ZipInfo(name, stamp.timetuple()[:6]), data, zipfile.ZIP_DEFLATED,
                                 _zip_level(len(data)))
        return _file_response(buffer.getvalue(), "application/zip", f"{g.key.project}-{ext}.zip", snapshot)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), int(stamp.timestamp())
            archive.addfile(info, io.BytesIO(data))
    return _file_response(buffer.getvalue(), "application/x-tar", f"{g.key.project}-{ext}.tar", snapshot)


def _member_path(spec, locale: str, ext: str) -> str:
    """A locale's file name in the archive: the request's `path` pattern ([doc DOCS-paths]), else the format's."""
    return archive_path(spec, locale, g.key.project, ext.lower(), request.args.get("path", ""),
                        request.args.get("namespace", ""))


def _zip_level(size: int) -> int:
    """zlib's level for an archive member: the fastest beyond 1 MB, where the default level 6 costs 80 ms
    per 9 MB PO file (400 ms of a 100k-asset po.zip) for a result about 15% smaller; 6 below."""
    return 1 if size > 1024 * 1024 else 6
