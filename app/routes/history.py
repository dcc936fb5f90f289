"""Differences between two versions of a project: GET /api/diff?from=REF&to=REF[&format=diff]."""
from __future__ import annotations

from flask import Blueprint, Response, request

from storage.diff import translation_changes
from storage.snapshot import Snapshot

from ..auth import requires
from ..context import current_snapshot, project, snapshot_at
from ..errors import ApiError
from ..jsonio import render

bp = Blueprint("history", __name__)
EMPTY_TREE = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree: what a first commit is compared with


def _parent_of(snapshot: Snapshot) -> Snapshot:
    """The version before `snapshot` (its first parent): the default `from`, so that a bare /api/diff shows the
    latest change."""
    assert snapshot.commit is not None  # a ref resolves to a commit
    parents = project().repo.read_commit(snapshot.commit).parents
    return project().snapshot_at(parents[0]) if parents else Snapshot.empty()
DIFF_FORMATS = ("", "json", "diff")


@bp.get("/api/diff")
@bp.get("/api/diff.json")
@requires("read")
def diff():
    """The translation changes from one ref to another (a list), or `format=diff`: `git diff` of the files.

    `to` defaults to the head of the request's branch (main, or `?branch=`) and `from` to the first parent of
    `to`.
    """
    kind = request.args.get("format", "").strip().lower()
    if kind not in DIFF_FORMATS:
        raise ApiError(400, "format must be json (the default) or diff")
    new = snapshot_at(request.args["to"]) if request.args.get("to") else current_snapshot()
    old = snapshot_at(request.args["from"]) if request.args.get("from") else _parent_of(new)
    if kind == "diff":
        assert new.commit is not None  # a ref resolves to a commit
        text = project().repo.unified_diff(old.commit or EMPTY_TREE, new.commit)
        return Response(text, status=200, content_type="text/x-diff; charset=utf-8")
    return render(translation_changes(project(), old, new))
