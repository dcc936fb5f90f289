"""What Gloss does for a push, at the two moments `git receive-pack` asks (its hooks, see app.githooks):

- `check_push` (pre-receive) runs while the pushed objects are still in git's quarantine
  (GIT_QUARANTINE_PATH): it refuses refs other than the project's branches (`refs/heads/NAME`, a valid name,
  storage.branches), their review refs (`refs/for/NAME`, for an existing branch) and tags, and checks
  every new commit (storage.checks); a tag must name a valid commit and may not be deleted or moved unless
  the project allows it (Project.movable_tags). A refusal leaves no ref moved and no object kept.
- `apply_push` (proc-receive) handles `refs/heads/NAME` and `refs/for/NAME` instead of receive-pack: under the
  project's write lock (the same transaction as an API write) it replays the pushed changes onto the branch's
  head and records them as a merge commit whose second parent is the pushed commit (storage.replay, through
  storage.branches.merge_commit, which branch merges use too). A push to a branch must be based on its head
  (fast-forward); `refs/for/NAME` may be based on any older commit. A push to a branch that does not exist yet
  creates it at the newest commit the push has in common with main, then merges onto it.
  The merge commit's author is the pushed commit's author (the translator: anyone may write any name there);
  its committer is the pushing key's user (`Actor.person`), so who pushed is on record beside whom they name.

Both run in the server process that received the push, next to the project's cached snapshot, so a one-line
push costs the chunks it changes, not a load of the whole project.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .branches import check_branch_name, create_branch, delete_branch, merge_commit
from .checks import CommitChecker
from .errors import Invalid, StorageError
from .fields import check_file_size
from .git.refs import HEADS, MAIN, REVIEWS
from .gitrepo import ZERO_ID, GitRepo, Person
from .operations import Actor
from .project import Project
from .replay import PUSH
from .trailers import Action, Trailer

TAGS = "refs/tags/"
# The ref prefixes a push may name that proc-receive handles in place of receive-pack (git's
# receive.procReceiveRefs takes prefixes): every branch, and every branch's review ref
HANDLED_REFS = (HEADS, REVIEWS)

Command = tuple[bytes, bytes, str]  # old id, new id, ref name: one line of what receive-pack hands a hook


class Refused(StorageError):
    """A push refused with a reason for the client."""


@dataclass
class RefResult:
    """What became of one pushed ref: `error` is None when it was applied."""
    ref: str
    error: str | None
    message: str  # one line for the person pushing (git prints it as `remote: ...`)


def parse_command(line: str) -> Command:
    old, new, ref = line.strip().split(" ", 2)
    return old.encode(), new.encode(), ref


def target_branch(ref: str) -> str | None:
    """The branch a pushed ref names (`refs/heads/NAME`, `refs/for/NAME`), or None for any other ref."""
    for prefix in HANDLED_REFS:
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return None


def check_ref(old: bytes, new: bytes, ref: str, movable_tags: bool = False,
              branches: tuple[str, ...] | list[str] = (MAIN,)) -> None:
    """Only the project's branches (through apply_push; a new one with a valid name), the review refs of its
    existing `branches` and tags may be pushed; an existing tag is a release and stays as it is (deleted or
    moved only when the project allows it, Project.movable_tags)."""
    target = target_branch(ref)
    if target is not None:
        if new == ZERO_ID:
            raise Refused(f"{ref} cannot be deleted by a push (DELETE /api/branches/NAME deletes a branch)")
        try:
            check_branch_name(target)
        except Invalid as error:
            raise Refused(f"{ref}: {error.message}") from None
        if ref.startswith(REVIEWS) and target not in branches:
            raise Refused(f"{ref}: there is no branch {target!r} to merge into")
        return
    if ref.startswith(TAGS):
        if old != ZERO_ID and not movable_tags:
            raise Refused(f"{ref} cannot be {'deleted' if new == ZERO_ID else 'moved'}: tags are releases and "
                          "immutable in this project (push a new tag instead)")
        return
    raise Refused(f"{ref}: only branches (refs/heads/NAME, fast-forward), refs/for/NAME (key-level merge) and tags "
                  "may be pushed")


# ----------------------------------------------------------------------------- pre-receive
def check_push(project: Project, commands: list[Command], quarantine: Path | None,
               is_live_key: Callable[[str], bool]) -> None:
    """Refuse (raise) unless every ref may be pushed and every new commit is a valid project."""
    repo = project.repo.with_quarantine(quarantine) if quarantine else project.repo
    try:
        movable_tags = project.movable_tags
        branches = project.repo.branch_names()
        for old, new, ref in commands:
            check_ref(old, new, ref, movable_tags, branches)
        check_objects(project.repo, repo, [new for _, new, _ in commands if new != ZERO_ID])
        # what the project holds now is valid: its parsed chunks spare the checker a re-read
        checker = CommitChecker(repo, is_live_key, known=project.snapshot())
        for old, new, ref in commands:
            if new == ZERO_ID:
                continue
            tip = pushed_commit(checker, new, ref)
            target = target_branch(ref)
            head = project.repo.named_branch(target).valid_head() if target is not None else None
            if target is not None and head is None:  # a new branch: made where the push meets main
                head, ref = project.repo.head(), REVIEWS + MAIN
            if head is not None:
                merge_base_of(repo, head, new, ref)  # refused here, its objects never leave the quarantine
            for commit in repo.new_commits(tip):
                checker.check(commit)
            if ref.startswith(TAGS):
                checker.check(tip)  # even one already in the history: a release must be a valid project
    finally:
        if repo is not project.repo:
            repo.close()


def pushed_commit(checker: CommitChecker, new: bytes, ref: str) -> bytes:
    """The commit a pushed ref names: the object itself for the branch and its review ref, the commit behind
    any annotated tags for a tag (a tag of a blob or a tree is refused)."""
    if ref.startswith(TAGS):
        try:
            return checker.tagged_commit(new)
        except Invalid as error:
            raise Refused(f"{ref}: {error.message}") from None
    if checker.repo.read_raw_type(new) != b"commit":
        raise Refused(f"{ref}: the pushed object is not a commit")
    return new


def check_objects(project_repo: GitRepo, pushed: GitRepo, tips: list[bytes]) -> None:
    """Refuse a push carrying an object over max_file_bytes (judged from the object headers, before anything
    is read) or an object that no pushed ref reaches (it would be stored unchecked, and could be fetched)."""
    carried = pushed.quarantined_objects()
    for object_id, (kind, size) in carried.items():
        try:
            check_file_size(f"{kind.decode()} {object_id.decode()[:12]}", size)
        except Invalid as error:
            raise Refused(error.message) from None
    stray = set(carried) - pushed.objects_new_from(tips)
    unknown = project_repo.missing_objects(stray) if stray else set()
    if unknown:
        raise Refused(f"the push carries {len(unknown)} object(s) that no pushed ref reaches, e.g. "
                      f"{min(unknown).decode()[:12]}; push only what your refs need")


def merge_base_of(repo: GitRepo, head: bytes, new: bytes, ref: str) -> bytes:
    """The commit a push of `new` to `ref` is replayed from: the branch's head itself for refs/heads/NAME (which
    must be a fast-forward), the newest common commit for refs/for/NAME."""
    if ref.startswith(HEADS):
        if not repo.is_ancestor(head, new):
            raise Refused(f"non-fast-forward: the branch changed since you fetched; pull and push again, "
                          f"or push to {REVIEWS}{ref[len(HEADS):]} for a key-level merge")
        return head
    common = repo.merge_base(head, new)
    if common is None:
        raise Refused("the pushed history has no commit in common with the project")
    return common


# ----------------------------------------------------------------------------- proc-receive
def merge_push(project: Project, new: bytes, ref: str, pusher: Actor) -> bytes:
    """Replay the pushed commit onto its branch's head as a merge commit authored by the pushed commit's author
    and committed by the pusher, under the project's write lock; returns the merge commit. A push to a new
    branch creates it first (and deletes it again when the push is refused: a refused push changes nothing)."""
    pushed_commit = project.repo.read_commit(new)
    author = Person.parse(pushed_commit.author)
    actor = Actor(pusher.id, author.name, author.email, pusher=pusher)
    target = target_branch(ref)
    assert target is not None  # check_ref let only branches and their review refs through
    created = False
    if ref.startswith(HEADS) and project.repo.named_branch(target).valid_head() is None:
        main = project.repo.head()
        start = project.repo.merge_base(main, new) if main is not None else None
        if start is None:
            raise Refused("the pushed history has no commit in common with the project")
        create_branch(project, target, MAIN, at=start)
        created = True
    try:
        result, _ = merge_commit(project, target, new, lambda head: merge_base_of(project.repo, head, new, ref),
                                 author, pusher.person(), f"Merge push {new.decode()[:12]} into {target}",
                                 Action.PUSH, [(Trailer.PUSHED, new.decode()), (Trailer.PUSHED_TO, ref)], actor,
                                 PUSH)
    except BaseException:
        if created:
            delete_branch(project, target)
        raise
    assert result.commit is not None
    return result.commit


def apply_push(project: Project, commands: list[Command], pusher: Actor) -> list[RefResult]:
    """Merge each pushed ref into its branch, one transaction each; a refused ref leaves the others applied."""
    results = []
    for _, new, ref in commands:
        try:
            merged = merge_push(project, new, ref, pusher)
        except StorageError as error:
            results.append(RefResult(ref, one_line(error.message), f"Gloss refused {ref}: {error.message}"))
            continue
        results.append(RefResult(ref, None, f"Gloss merged your push into {target_branch(ref)} as "
                                            f"{merged.decode()[:12]}; "
                                            "`git pull` brings the merge commit."))
    return results


def one_line(text: str) -> str:
    return " ".join(text.split())[:300]
