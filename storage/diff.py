"""Translation changes between two commits: which (asset, locale) texts differ, who changed them and where.

Only the locale files whose blobs differ are read. Each change is then attributed to the newest commit on
the first-parent path from `to` back to `from` that changed that entry (the API commit, or the merge commit
of a push), whose author is the change's author unless the stored entry names its own.
"""
from __future__ import annotations

from typing import NotRequired, TypedDict

from . import textchanges
from .canonical import EMPTY
from .gitrepo import GitRepo, Person
from .project import Project
from .records import UserRef
from .snapshot import Snapshot, locale_path
from .textchanges import same_text



class Change(TypedDict):
    """One translation's change between two commits, as GET /api/diff answers it."""

    asset: str
    locale: str
    old: str | None  # the text before (None: untranslated)
    new: str | None  # the text after (None: erased)
    flag: str
    revision: int
    path: NotRequired[str]  # its chunk file, while the change is attributed (dropped before it is returned)
    author: UserRef | None  # the entry's own author, else the commit's (filled by _attribute)
    commit: str | None  # the newest commit that made it (filled by _attribute)
    pushedBy: NotRequired[UserRef]  # the pushing key's user, when a push made it


def translation_changes(project: Project, old: Snapshot, new: Snapshot) -> list[Change]:
    """Every translation whose text or flag differs from `old` to `new`, in locale then asset order."""
    codes = [record["code"] for record in new.locales()]
    codes += [record["code"] for record in old.locales() if record["code"] not in codes]
    changes: list[Change] = []
    for code in codes:
        numbers = sorted(set(old.locale_chunks.get(code, {})) | set(new.locale_chunks.get(code, {})))
        for number in numbers:
            path = locale_path(code, number)
            if old.files.get(path) == new.files.get(path):
                continue
            # every entry of both versions is compared: one decode of each file, not one per entry
            before = old.locale_chunks.get(code, {}).get(number, EMPTY).peek_all()
            after = new.locale_chunks.get(code, {}).get(number, EMPTY).peek_all()
            for asset_id in list(after.keys()) + [key for key in before.keys() if key not in after]:
                was, now = before.get(asset_id), after.get(asset_id)
                if not same_text(was, now):
                    change: Change = {"asset": asset_id, "locale": code, "old": was["text"] if was else None,
                                      "new": now["text"] if now else None, "flag": now.get("flag", "") if now else "",
                                      "revision": now["rev"] if now else 0, "path": path,
                                      "author": now.get("author") if now else None, "commit": None}
                    if now and now.get("pusher"):
                        change["pushedBy"] = now["pusher"]
                    changes.append(change)
    _attribute(project.repo, changes, old.commit, new.commit)
    for change in changes:
        del change["path"]
    return changes


def _attribute(repo: GitRepo, changes: list[Change], old: bytes | None, new: bytes | None) -> None:
    """Fill in each change's commit (and author when the entry names none): the newest commit on the
    first-parent path from `new` back to `old` (or to the root when `old` is not on it) that changed the
    entry's text or flag (storage.textchanges: recorded by maintenance, or read from git)."""
    pending = {textchanges.token(change["path"], change["asset"]): change for change in changes}
    if not pending or new is None:
        return
    paths = sorted({change["path"] for change in changes})
    commits = textchanges.along(repo, new, old, paths)
    try:
        for commit, _, tokens in commits:
            for token in tokens:
                change = pending.pop(token, None)
                if change is not None:
                    _attribute_to(repo, change, commit)
            if not pending:
                break
    finally:
        commits.close()  # stops git if it was asked


def _attribute_to(repo: GitRepo, change: Change, commit_id: bytes) -> None:
    change["commit"] = commit_id.decode()
    if change["author"] is None or change["new"] is None:
        author = Person.parse(repo.read_commit(commit_id).author)
        change["author"] = {"name": author.name, "email": author.email}
