"""The hooks `git receive-pack` runs for a push over HTTP: `python -m storage.receive pre-receive|proc-receive`.

- `pre-receive` runs while the pushed objects are still in git's quarantine (GIT_QUARANTINE_PATH): it refuses
  refs other than the project branch, `refs/for/main` and tags, and checks every new commit (storage.checks).
  Its standard error reaches the client as `remote:` lines; a refusal leaves no ref moved and no object kept.
- `proc-receive` handles `refs/heads/main` and `refs/for/main` instead of receive-pack: under the project's
  write lock (the same transaction as an API write) it replays the pushed changes onto the current head and
  records them as a merge commit whose second parent is the pushed commit (storage.replay). A push to `main`
  must be based on the current head (fast-forward); `refs/for/main` may be based on any older commit.

The HTTP handler passes the project and the pusher in the environment (GLOSS_DATA, GLOSS_PROJECT,
GLOSS_USER_ID); receive-pack hands it on to its hooks.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import BinaryIO

from .checks import CommitChecker
from .errors import StorageError
from .gitrepo import ZERO_ID, Person
from .keys import KeyStore, digest_of
from .operations import Actor
from .project import Project
from .replay import replay
from .snapshot import Snapshot
from .store import Store, utc_now

BRANCH = "refs/heads/main"
REVIEW = "refs/for/main"
TAGS = "refs/tags/"
RELAYED_PATHS = ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH")


class Refused(StorageError):
    """A push refused with a reason for the client."""


# ----------------------------------------------------------------------------- pkt-line
def read_pkt(stream: BinaryIO) -> bytes | None:
    """One pkt-line payload; None for a flush packet."""
    header = stream.read(4)
    if len(header) < 4:
        raise EOFError("receive-pack closed the stream")
    length = int(header, 16)
    if length == 0:
        return None
    return stream.read(length - 4)


def write_pkt(stream: BinaryIO, payload: bytes | None) -> None:
    stream.write(b"0000" if payload is None else b"%04x" % (len(payload) + 4) + payload)


# ----------------------------------------------------------------------------- shared
def open_project() -> Project:
    return Store(Path(os.environ["GLOSS_DATA"])).project(os.environ["GLOSS_PROJECT"])


def absolute_git_paths() -> None:
    """receive-pack may give the quarantine relative to the hook's directory; our git calls run elsewhere."""
    for name in RELAYED_PATHS:
        if os.environ.get(name):
            os.environ[name] = os.path.abspath(os.environ[name])
    alternates = os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES")
    if alternates:
        os.environ["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = ":".join(
            os.path.abspath(path) for path in alternates.split(":"))


def parse_command(line: bytes) -> tuple[bytes, bytes, str]:
    old, new, ref = line.decode("utf-8").strip().split(" ", 2)
    return old.encode(), new.encode(), ref


def check_ref(old: bytes, new: bytes, ref: str) -> None:
    """Only the project branch (through proc-receive), its review ref and tags may be pushed."""
    if ref in (BRANCH, REVIEW):
        if new == ZERO_ID:
            raise Refused(f"{ref} cannot be deleted")
        return
    if ref.startswith(TAGS):
        return
    raise Refused(f"{ref}: only main (fast-forward), refs/for/main (key-level merge) and tags may be pushed")


# ----------------------------------------------------------------------------- pre-receive
def pre_receive(project: Project, commands: list[tuple[bytes, bytes, str]]) -> None:
    """Refuse (raise) unless every ref may be pushed and every new commit is a valid project."""
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    repo = project.repo.with_quarantine(Path(quarantine)) if quarantine else project.repo
    live = {record.digest for record in KeyStore(Path(os.environ["GLOSS_DATA"]) / "keys.json").all()}
    checker = CommitChecker(repo, lambda candidate: digest_of(candidate) in live)
    for old, new, ref in commands:
        check_ref(old, new, ref)
        if new == ZERO_ID:
            continue
        if repo.read_raw_type(new) != b"commit" and not ref.startswith(TAGS):
            raise Refused(f"{ref}: the pushed object is not a commit")
        for commit in repo.new_commits(new):
            checker.check(commit)


# ----------------------------------------------------------------------------- proc-receive
def merge_push(project: Project, new: bytes, ref: str, user_id: int) -> bytes:
    """Replay the pushed commit onto the head as a merge commit, under the project's write lock; returns
    the merge commit."""
    pushed_commit = project.repo.read_commit(new)
    author = Person.parse(pushed_commit.author)
    actor = Actor(user_id, author.name, author.email)
    with project.transaction(author, f"Merge push {new.decode()[:12]} into main", "push",
                             [("Pushed", new.decode()), ("Pushed-To", ref)]) as tx:
        head = tx.base.commit
        if head is None:
            raise Refused("the project has no commit to merge into yet")
        if ref == BRANCH:
            if not project.repo.is_ancestor(head, new):
                raise Refused("non-fast-forward: the project changed since you fetched; pull and push again, "
                              "or push to refs/for/main for a key-level merge")
            base_commit = head
        else:
            common = project.repo.merge_base(head, new)
            if common is None:
                raise Refused("the pushed history has no commit in common with the project")
            base_commit = common
        base = project.snapshot_at(base_commit)
        pushed = Snapshot.load(project.repo, new, base)
        changes = replay(tx, base, pushed, actor, utc_now())
        tx.trailers.append(("Changes", str(changes)))
        tx.merge_parents.append(new)
    assert tx.result is not None and tx.result.commit is not None  # set by the transaction's clean exit
    return tx.result.commit


def proc_receive(project: Project, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Speak the proc-receive protocol (githooks(5)): version, commands, then one result per command."""
    read_pkt(stdin)  # version=1 and receive-pack's capabilities
    while read_pkt(stdin) is not None:
        pass
    write_pkt(stdout, b"version=1\0")
    write_pkt(stdout, None)
    stdout.flush()
    commands = []
    while (line := read_pkt(stdin)) is not None:
        commands.append(parse_command(line))
    user_id = int(os.environ.get("GLOSS_USER_ID") or 0)
    for _, new, ref in commands:
        try:
            merged = merge_push(project, new, ref, user_id)
        except StorageError as error:
            print(f"Gloss refused {ref}: {error.message}", file=sys.stderr)
            write_pkt(stdout, f"ng {ref} {one_line(error.message)}".encode("utf-8"))
            continue
        print(f"Gloss merged your push into main as {merged.decode()[:12]}; "
              "`git pull` brings the merge commit.", file=sys.stderr)
        write_pkt(stdout, f"ok {ref}".encode("utf-8"))
    write_pkt(stdout, None)
    stdout.flush()


def one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def main(argv: list[str]) -> int:
    absolute_git_paths()
    project = open_project()
    if argv[1:] == ["pre-receive"]:
        commands = [parse_command(line) for line in sys.stdin.buffer.read().splitlines() if line.strip()]
        try:
            pre_receive(project, commands)
        except StorageError as error:
            print(f"Gloss refused the push: {error.message}", file=sys.stderr)
            return 1
        return 0
    if argv[1:] == ["proc-receive"]:
        proc_receive(project, sys.stdin.buffer, sys.stdout.buffer)
        return 0
    print("usage: python -m storage.receive pre-receive|proc-receive", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
