"""What Gloss does for a push, at the two moments `git receive-pack` asks (its hooks, see app.githooks):

- `check_push` (pre-receive) runs while the pushed objects are still in git's quarantine
  (GIT_QUARANTINE_PATH): it refuses refs other than the project branch, `refs/for/main` and tags, and checks
  every new commit (storage.checks); a tag must name a valid commit and may not be deleted or moved unless
  the project allows it (Project.movable_tags). A refusal leaves no ref moved and no object kept.
- `apply_push` (proc-receive) handles `refs/heads/main` and `refs/for/main` instead of receive-pack: under the
  project's write lock (the same transaction as an API write) it replays the pushed changes onto the current
  head and records them as a merge commit whose second parent is the pushed commit (storage.replay). A push to
  `main` must be based on the current head (fast-forward); `refs/for/main` may be based on any older commit.
  The merge commit's author is the pushed commit's author (the translator: anyone may write any name there);
  its committer is the pushing key's user (`Actor.person`), so who pushed is on record beside whom they name.

Both run in the server process that received the push, next to the project's cached snapshot, so a one-line
push costs the chunks it changes, not a load of the whole project.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .checks import CommitChecker
from .errors import Invalid, StorageError
from .fields import check_file_size
from .git.refs import BRANCH_REF as BRANCH
from .git.refs import REVIEW_REF as REVIEW
from .gitrepo import ZERO_ID, GitRepo, Person
from .operations import Actor
from .project import Project
from .replay import replay
from .snapshot import Snapshot
from .store import utc_now
from .trailers import Action, Trailer

TAGS = "refs/tags/"
# The refs a push may name that proc-receive handles in place of receive-pack
HANDLED_REFS = (BRANCH, REVIEW)

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


def check_ref(old: bytes, new: bytes, ref: str, movable_tags: bool = False) -> None:
    """Only the project branch (through apply_push), its review ref and tags may be pushed; an existing tag
    is a release and stays as it is (deleted or moved only when the project allows it, Project.movable_tags)."""
    if ref in HANDLED_REFS:
        if new == ZERO_ID:
            raise Refused(f"{ref} cannot be deleted")
        return
    if ref.startswith(TAGS):
        if old != ZERO_ID and not movable_tags:
            raise Refused(f"{ref} cannot be {'deleted' if new == ZERO_ID else 'moved'}: tags are releases and "
                          "immutable in this project (push a new tag instead)")
        return
    raise Refused(f"{ref}: only main (fast-forward), refs/for/main (key-level merge) and tags may be pushed")


# ----------------------------------------------------------------------------- pre-receive
def check_push(project: Project, commands: list[Command], quarantine: Path | None,
               is_live_key: Callable[[str], bool]) -> None:
    """Refuse (raise) unless every ref may be pushed and every new commit is a valid project."""
    repo = project.repo.with_quarantine(quarantine) if quarantine else project.repo
    try:
        movable_tags = project.movable_tags
        for old, new, ref in commands:
            check_ref(old, new, ref, movable_tags)
        check_objects(project.repo, repo, [new for _, new, _ in commands if new != ZERO_ID])
        # what the project holds now is valid: its parsed chunks spare the checker a re-read
        checker = CommitChecker(repo, is_live_key, known=project.snapshot())
        head = project.repo.head()
        for old, new, ref in commands:
            if new == ZERO_ID:
                continue
            tip = pushed_commit(checker, new, ref)
            if ref in HANDLED_REFS and head is not None:
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
    """The commit a push of `new` to `ref` is replayed from: the head itself for main (which must be a
    fast-forward), the newest common commit for refs/for/main."""
    if ref == BRANCH:
        if not repo.is_ancestor(head, new):
            raise Refused("non-fast-forward: the project changed since you fetched; pull and push again, "
                          "or push to refs/for/main for a key-level merge")
        return head
    common = repo.merge_base(head, new)
    if common is None:
        raise Refused("the pushed history has no commit in common with the project")
    return common


# ----------------------------------------------------------------------------- proc-receive
def merge_push(project: Project, new: bytes, ref: str, pusher: Actor) -> bytes:
    """Replay the pushed commit onto the head as a merge commit authored by the pushed commit's author and
    committed by the pusher, under the project's write lock; returns the merge commit."""
    pushed_commit = project.repo.read_commit(new)
    author = Person.parse(pushed_commit.author)
    actor = Actor(pusher.id, author.name, author.email, pusher=pusher)
    with project.transaction(author, f"Merge push {new.decode()[:12]} into main", Action.PUSH,
                             [(Trailer.PUSHED, new.decode()), (Trailer.PUSHED_TO, ref)], first_in_group=True,
                             committer=pusher.person()) as tx:
        head = tx.base.commit
        if head is None:
            raise Refused("the project has no commit to merge into yet")
        base = project.snapshot_at(merge_base_of(project.repo, head, new, ref))
        pushed = Snapshot.load(project.repo, new, base)
        changes = replay(tx, base, pushed, actor, utc_now())
        tx.trailers.append((Trailer.CHANGES, str(changes)))
        tx.merge_parents.append(new)
    assert tx.result is not None and tx.result.commit is not None  # set by the transaction's clean exit
    return tx.result.commit


def apply_push(project: Project, commands: list[Command], pusher: Actor) -> list[RefResult]:
    """Merge each pushed ref into main, one transaction each; a refused ref leaves the others applied."""
    results = []
    for _, new, ref in commands:
        try:
            merged = merge_push(project, new, ref, pusher)
        except StorageError as error:
            results.append(RefResult(ref, one_line(error.message), f"Gloss refused {ref}: {error.message}"))
            continue
        results.append(RefResult(ref, None, f"Gloss merged your push into main as {merged.decode()[:12]}; "
                                            "`git pull` brings the merge commit."))
    return results


def one_line(text: str) -> str:
    return " ".join(text.split())[:300]
