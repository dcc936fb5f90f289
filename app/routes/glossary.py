"""The glossary: list, add, read, replace, delete terms; terms found in a text; TBX import and export."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from formats.xml.tbx import TBX_VERSIONS, write_tbx

from ..auth import requires
from ..context import current_snapshot
from ..errors import ApiError
from ..jsonio import render, success
from ..qa import glossary_terms_in
from ..requests import json_object
from ..service import glossary as service

bp = Blueprint("glossary", __name__)
TBX_TYPE = "application/x-tbx+xml; charset=utf-8"


def term_json(term: str, record: dict[str, Any]) -> dict[str, Any]:
    """A term as the API answers it: every field present."""
    return {"term": term, "translations": dict(record.get("translations", {})), "note": record.get("note", ""),
            "forbidden": bool(record.get("forbidden", False))}


def _body_record(body: dict[str, Any]) -> dict[str, Any]:
    """The term fields of a JSON body (`term` itself is the URL's or POST's own)."""
    return {name: body[name] for name in ("translations", "note", "forbidden") if name in body}


@bp.get("/api/glossary")
@requires("read")
def list_terms():
    """Every term; with `text` (and `locale`), the terms found in that text instead, with their spans."""
    snapshot = current_snapshot()
    if "text" in request.args:
        return render(glossary_terms_in(snapshot, request.args["text"], request.args.get("locale", "")))
    return render([term_json(term, record) for term, record in snapshot.glossary_terms().items()])


@bp.post("/api/glossary")
@requires("write")
def add_term():
    body = json_object()
    term = body.get("term")
    if not isinstance(term, str) or not term.strip():
        raise ApiError(400, "Field term is required")
    unknown = sorted(set(body) - {"term", "translations", "note", "forbidden"})
    if unknown:
        raise ApiError(422, f"Unknown term field {unknown[0]!r}")
    term = term.strip()
    snapshot = service.add_term(term, _body_record(body))
    return render(term_json(term, snapshot.glossary_term(term) or {}), 201)


@bp.get("/api/glossary/<path:term>")
@requires("read")
def get_term(term: str):
    record = current_snapshot().glossary_term(term)
    if record is None:
        raise ApiError(404, "Term not in glossary")
    return render(term_json(term, record))


@bp.put("/api/glossary/<path:term>")
@requires("write")
def put_term(term: str):
    body = json_object()
    if "term" in body and body["term"] != term:
        raise ApiError(422, "The term of the body differs from the URL's (a term is renamed by DELETE and POST)")
    unknown = sorted(set(body) - {"term", "translations", "note", "forbidden"})
    if unknown:
        raise ApiError(422, f"Unknown term field {unknown[0]!r}")
    snapshot, created = service.put_term(term, _body_record(body))
    return render(term_json(term, snapshot.glossary_term(term) or {}), 201 if created else 200)


@bp.delete("/api/glossary/<path:term>")
@requires("write")
def delete_term(term: str):
    service.delete_term(term)
    return success("Term deleted")


@bp.get("/api/glossary.tbx")
@requires("export")
def export_tbx():
    version = request.args.get("version", "2")
    if version not in TBX_VERSIONS:
        raise ApiError(400, f"Unknown TBX version {version!r}: {' or '.join(TBX_VERSIONS)}")
    snapshot = current_snapshot()
    terms = snapshot.glossary_terms()
    if not terms:  # TBX's <body> holds one entry at least: no valid file says "no terms"
        raise ApiError(409, "The glossary has no terms: a TBX file holds at least one")
    data = write_tbx(terms, snapshot.source_locale, f"{snapshot.name} glossary", version)
    return Response(data, content_type=TBX_TYPE,
                    headers={"Content-Disposition": 'attachment; filename="glossary.tbx"'})


@bp.post("/api/glossary.tbx")
@requires("write")
def import_tbx():
    snapshot = current_snapshot()
    written, skipped = service.import_tbx(request.get_data(cache=True), snapshot.source_locale,
                                          [record["code"] for record in snapshot.locales()])
    return render({"status": 200, "message": f"Imported {written} terms", "terms": written, "skipped": skipped})
