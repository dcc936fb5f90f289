"""The export API (spec §4.3; loco-compat §3.8): thin routes over app/exports.py."""
from __future__ import annotations

from flask import Blueprint, request

from ..auth import requires
from ..exports import all_locales_file, archive_file, locale_file, template_file

bp = Blueprint("exports", __name__)


@bp.get("/api/export/locale/<locale>.<ext>")
@requires("export")
def export_locale(locale: str, ext: str):
    return locale_file(locale, ext)


@bp.get("/api/export/template.<ext>")
@requires("export")
def export_template(ext: str):
    return template_file(ext)


@bp.get("/api/export/all.<ext>")
@requires("export")
def export_all(ext: str):
    return all_locales_file(ext)


@bp.get("/api/export/archive/<ext>.zip")
@bp.get("/api/export/archive/<ext>.tar")
@requires("export")
def export_archive(ext: str):
    return archive_file(ext, request.path.rsplit(".", 1)[1])
