"""A project's branches: `refs/heads/NAME`, made from another branch, listed, read, deleted and merged key by key.

`main` is the branch every request uses by default and the only one checked out; a named branch is a ref alone,
written through the same transactions (Project.transaction(branch=...)), compare-and-swap and journal as main
(storage.git.refs.Branch). Where a branch was made from is kept beside the refs (`.git/gloss-branches.json`),
since Git itself does not record it (see _origins for how it stays right through a crash). A merge replays the changes one branch made since the merge base onto
another, key by key (storage.replay), and records them as one merge commit: the same function serves a branch
merge (the API) and a push (storage.receive).
"""
from __future__ import annotations

import json
from typing import Any, Callable

from .errors import Conflict, Invalid, NotFound
from .git import durable
from .git.refs import MAIN, check_branch_name
from .gitrepo import Person
from .operations import Actor
from .project import Project
from .replay import Merge, replay
from .snapshot import Snapshot
from .store import utc_now
from .trailers import Action, Trailer

ORIGINS_FILE = "gloss-branches.json"  # in .git: where each branch was made from (no clone sees it)
__all__ = ["check_branch_name", "create_branch", "branch_names", "list_branches", "branch_info", "delete_branch", "merge_branch",
           "merge_commit"]
# ----------------------------------------------------------------------------- where branches come from
# The file is written under the project's ref lock, replaced whole and durably (storage.git.durable), before the
# ref is made and after it is deleted: a crash in between leaves an entry for a branch that does not exist,
# which nothing shows and the next create of that name replaces, never a branch without its entry. Reading is
# tolerant: a missing, unreadable or garbled file (or entry) is "not recorded" (from/base/created null), not
# an error, since the branch itself, the ref, is what counts.
def _origins(project: Project) -> dict[str, dict[str, str]]:
    try:
        found = json.loads((project.repo.git_dir / ORIGINS_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: entry for name, entry in found.items()
            if isinstance(entry, dict) and all(isinstance(value, str) for value in entry.values())}


def _save_origins(project: Project, origins: dict[str, dict[str, str]], making: str | None = None) -> None:
    """Under the project's ref lock: the entries of the existing branches (and of `making`, about to be)."""
    existing = set(project.repo.branch_names())
    if making is not None:
        existing.add(making)
    kept = {name: entry for name, entry in origins.items() if name in existing}
    durable.replace_durably(project.repo.git_dir / ORIGINS_FILE,
                            json.dumps(kept, ensure_ascii=False, sort_keys=True).encode("utf-8"))


# ----------------------------------------------------------------------------- create, list, read, delete
def create_branch(project: Project, name: str, source: str = MAIN, at: bytes | None = None) -> dict[str, Any]:
    """Make branch `name` at the head of branch `source` (or at its commit `at`, for a push); Conflict when it
    exists (or a name it would nest in or under does: `a` and `a/b` cannot both be refs), NotFound when
    `source` does not."""
    check_branch_name(name)
    with project.ref_update():
        head = at or project.branch_head(source)
        for other in project.repo.branch_names():
            if other == name:
                raise Conflict(f"Branch {name!r} exists already")
            if other.startswith(name + "/") or name.startswith(other + "/"):
                raise Conflict(f"Branch {name!r} cannot exist beside branch {other!r} (one would contain the "
                               "other, as a file and a directory)")
        origins = _origins(project)
        origins[name] = {"from": source, "base": head.decode(), "created": utc_now()}
        _save_origins(project, origins, making=name)
        project.repo.named_branch(name).move_head(head, expected=None)
    return branch_info(project, name)


def branch_names(project: Project) -> list[str]:
    return project.repo.branch_names()


def list_branches(project: Project) -> list[dict[str, Any]]:
    """branch_info of every branch, main first: two git calls whatever the number of branches (heads, ahead and
    behind from one `for-each-ref`; main's revisions from one count, each branch's derived from it)."""
    listed = project.repo.branches_against(MAIN)
    if not listed or listed[0][0] != MAIN:
        raise NotFound(f"Unknown branch {MAIN!r}")
    main_revisions = project.repo.count_commits(listed[0][1])
    origins = _origins(project)
    return [_described(name, head, main_revisions, ahead, behind, origins.get(name, {}))
            for name, head, ahead, behind in listed]


def branch_info(project: Project, name: str) -> dict[str, Any]:
    """What the API shows of a branch: its head, how many commits (revisions of the project) it holds, how
    many of them main lacks and how many of main's it lacks, and where it was made from."""
    head = project.branch_head(name)
    main = project.branch_head(MAIN)
    ahead, behind = project.repo.ahead_behind(head, main)
    return _described(name, head, project.repo.count_commits(main), ahead, behind, _origins(project).get(name, {}))


def _described(name: str, head: bytes, main_revisions: int, ahead: int, behind: int,
               origin: dict[str, str]) -> dict[str, Any]:
    """A branch as the API shows it; its revisions are main's, less the `behind` it lacks, plus its `ahead`."""
    return {"name": name, "head": head.decode(), "revisions": main_revisions - behind + ahead,
            "ahead": ahead, "behind": behind,
            "from": origin.get("from"), "base": origin.get("base"), "created": origin.get("created")}


def delete_branch(project: Project, name: str) -> None:
    """Remove a branch (never main); its commits stay in the repository, unreachable."""
    if name == MAIN:
        raise Conflict("main cannot be deleted")
    with project.ref_update():
        head = project.branch_head(name)
        project.repo.named_branch(name).delete(head)
        _save_origins(project, _origins(project))


# ----------------------------------------------------------------------------- merge
def merge_commit(project: Project, into: str, theirs: bytes, base_of: Callable[[bytes], bytes],
                 author: Person, committer: Person, summary: str, action: str,
                 trailers: list[tuple[str, str]], actor: Actor, merge: Merge) -> tuple[Snapshot, int]:
    """Replay what commit `theirs` changed since `base_of(head of into)` onto branch `into`, key by key under
    the `merge` policy, as one merge commit whose second parent is `theirs` (a push, a branch's head); nothing
    is written when the replay raises (a refused push, MergeConflict). Returns the merged snapshot and how many
    key-level changes were replayed."""
    with project.transaction(author, summary, action, trailers, first_in_group=True, committer=committer,
                             branch=into) as tx:
        head = tx.base.commit
        if head is None:
            raise Conflict("the project has no commit to merge into yet")
        base = project.snapshot_at(base_of(head))
        changes = replay(tx, base, Snapshot.load(project.repo, theirs, base), actor, utc_now(), merge)
        tx.trailers.append((Trailer.CHANGES, str(changes)))
        tx.merge_parents.append(theirs)
    assert tx.result is not None  # set by the transaction's clean exit
    return tx.result, changes


def merge_branch(project: Project, name: str, into: str, merger: Actor, merge: Merge) -> dict[str, Any]:
    """Merge branch `name` into branch `into` key by key (storage.replay): one merge commit on `into`, or
    nothing when `into` has all of it already. Raises MergeConflict (nothing written) when keys conflict."""
    if name == into:
        raise Invalid("A branch cannot be merged into itself")
    theirs = project.branch_head(name)
    target = project.branch_head(into)
    if project.repo.is_ancestor(theirs, target):
        return {"merged": False, "commit": target.decode(), "changes": 0}

    def base_of(head: bytes) -> bytes:
        common = project.repo.merge_base(head, theirs)
        if common is None:
            raise Conflict(f"Branches {name!r} and {into!r} have no commit in common")
        return common

    person = merger.person()
    result, changes = merge_commit(project, into, theirs, base_of, person, person, f"Merge branch {name} into {into}",
                          Action.MERGE_BRANCH, [(Trailer.BRANCH, name)], merger, merge)
    assert result.commit is not None
    return {"merged": True, "commit": result.commit.decode(), "changes": changes}

