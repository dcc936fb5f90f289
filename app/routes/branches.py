"""Branches: list, create, read, delete, merge key by key (storage.branches). Every other route reads and writes
the branch `?branch=NAME` names (app.context.branch)."""
from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, request

from storage.git.refs import MAIN
from storage.replay import STRATEGIES, Merge, MergeConflict

from ..auth import requires
from ..context import project
from ..errors import ApiError, error_payload
from ..jsonio import render, success
from ..requests import form_fields, json_object
from ..service import branches as service
from storage import branches as stored

bp = Blueprint("branches", __name__)


@bp.get("/api/branches")
@bp.get("/api/branches.json")
@requires("read")
def list_branches():
    return render(stored.list_branches(project()))


@bp.post("/api/branches")
@bp.post("/api/branches.json")
@requires("write")
def create_branch():
    fields = form_fields()
    name = fields.get("name", "").strip()
    if not name:
        raise ApiError(400, "Form field name is required")
    return render(service.create_branch(name, fields.get("from", "").strip() or MAIN), 201)


@bp.get("/api/branches/<path:branch>")
@requires("read")
def get_branch(branch: str):
    return render(stored.branch_info(project(), branch))


@bp.delete("/api/branches/<path:branch>")
@requires("write")
def delete_branch(branch: str):
    service.delete_branch(branch)
    return success("Branch deleted")


@bp.post("/api/branches/<path:branch>/merge")
@requires("write")
def merge_branch(branch: str):
    """Merge `branch` into `?into=` (main by default); 409 with the conflicting keys when both sides changed one
    differently and neither `strategy` nor `resolve` says which side wins (then nothing is merged)."""
    into = request.args.get("into") or MAIN
    try:
        result = service.merge_branch(branch, into, merge_policy())
    except MergeConflict as conflict:
        return render(dict(error_payload(409, conflict.message), conflicts=conflict.conflicts), 409)
    return render(dict(result, branch=branch, into=into), 200)


def merge_policy() -> Merge:
    """The caller's resolution: `strategy=ours|theirs` (query, form or JSON field) for every conflicting key, and
    `resolve` for single keys: a JSON list of {"asset", "locale" (null or absent: the asset's own fields),
    "strategy"}, as a JSON body's field or a form field holding that list."""
    body: dict[str, Any] = {}
    if request.mimetype == "application/json" and request.get_data(cache=True).strip():
        body = json_object()
    elif request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        body = dict(form_fields())
    strategy = request.args.get("strategy") or body.get("strategy") or None
    if strategy is not None and strategy not in STRATEGIES:
        raise ApiError(400, "strategy must be ours or theirs")
    resolve = body.get("resolve", [])
    if isinstance(resolve, str):
        try:
            resolve = json.loads(resolve) if resolve.strip() else []
        except ValueError:
            raise ApiError(400, "resolve must be a JSON list of {asset, locale, strategy}") from None
    return Merge(strategy=strategy, keys=_resolutions(resolve), keep_authors=True)


def _resolutions(resolve: Any) -> dict[tuple[str, str | None], str]:
    if not isinstance(resolve, list):
        raise ApiError(400, "resolve must be a JSON list of {asset, locale, strategy}")
    keys: dict[tuple[str, str | None], str] = {}
    for item in resolve:
        if not (isinstance(item, dict) and isinstance(item.get("asset"), str)
                and isinstance(item.get("locale"), (str, type(None))) and item.get("strategy") in STRATEGIES):
            raise ApiError(400, "each resolve entry is {\"asset\": ID, \"locale\": CODE or null, "
                                "\"strategy\": \"ours\" or \"theirs\"}")
        keys[(item["asset"], item.get("locale"))] = item["strategy"]
    return keys
