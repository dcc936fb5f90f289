"""Queries that run the `git` command line: revisions, reachability, diffs, streamed first-parent walks and the
repository's own config flags. Git is run in the repository's directory with an environment cleared of a hook's
GIT_* variables, plus the object directories of a push in quarantine when the view is one (see_quarantine)."""
from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Generator, Iterable, Iterator, Sequence, cast


class GitCommandError(Exception):
    """The git command line failed."""


@dataclass(frozen=True)
class CommitPatch:
    """One commit of a first-parent walk and the lines it changed, per path (see first_parent_patches)."""

    id: bytes
    parent: bytes | None
    removed: dict[str, list[bytes]]  # path -> the lines the commit removed from it (without the "-")
    added: dict[str, list[bytes]]  # path -> the lines it added


def _parse_patches(stream: BinaryIO) -> Iterator[CommitPatch]:
    """Commits from `git log --format=%x00%H %P -p -U0` output: a NUL starts a commit (no diff line can)."""
    commit: CommitPatch | None = None
    path, in_hunk = "", False
    for line in stream:
        line = line.rstrip(b"\n")
        if line.startswith(b"\0"):
            if commit is not None:
                yield commit
            ids = line[1:].split()
            commit = CommitPatch(ids[0], ids[1] if len(ids) > 1 else None, {}, {})
        elif commit is None:
            continue
        elif line.startswith(b"diff --git a/"):
            names = line[len(b"diff --git a/"):].decode("utf-8", "replace")
            path, in_hunk = names[:(len(names) - 3) // 2], False  # "P b/P": no renames, both sides alike
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line[:1] == b"-":
            commit.removed.setdefault(path, []).append(line[1:])
        elif in_hunk and line[:1] == b"+":
            commit.added.setdefault(path, []).append(line[1:])
    if commit is not None:
        yield commit


def git_environment() -> dict[str, str]:
    """The environment without GIT_* variables: a hook's GIT_DIR must not redirect our own git calls."""
    keep = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH")
    return {name: value for name, value in os.environ.items()
            if not name.startswith("GIT_") or name in keep}


class GitCommands:
    """The git command line, run in one repository's working tree."""

    def __init__(self, path: Path):
        self.path = path
        self._git_env: dict[str, str] = {}  # a quarantine view's object directories (see_quarantine)

    def see_quarantine(self, quarantine: Path, objects_dir: Path) -> None:
        """Make every later command also see the objects of a push still in git's `quarantine` directory."""
        self._git_env = {"GIT_OBJECT_DIRECTORY": str(quarantine), "GIT_QUARANTINE_PATH": str(quarantine),
                         "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects_dir.resolve())}

    def environment(self) -> dict[str, str]:
        return {**git_environment(), **self._git_env}

    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> bytes:
        """Run the git command line in this repository (with `env` added to its environment) and return its
        standard output."""
        result = subprocess.run(["git", *args], cwd=self.path, input=input, capture_output=True,
                                env={**self.environment(), **(env or {})})
        if check and result.returncode != 0:
            raise GitCommandError(result.stderr.decode("utf-8", "replace").strip())
        return result.stdout

    def resolve(self, ref: str) -> bytes | None:
        """The commit a revision names (`HEAD~2`, a tag, a full or abbreviated id), or None.

        Only commits reachable from the branch or a tag count: an object that a refused push left behind
        was never validated, so it is not part of the project.
        """
        if not ref or ref.startswith("-") or any(ord(ch) < 32 for ch in ref) or len(ref) > 256:
            return None
        try:
            found = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}").strip()
            if not found or self.unreachable_commits({found}):
                return None
        except GitCommandError:
            return None
        return found

    def is_ancestor(self, ancestor: bytes, descendant: bytes) -> bool:
        result = subprocess.run(["git", "merge-base", "--is-ancestor", ancestor.decode(), descendant.decode()],
                                cwd=self.path, capture_output=True, env=self.environment())
        return result.returncode == 0

    def merge_base(self, one: bytes, other: bytes) -> bytes | None:
        try:
            found = self.git("merge-base", one.decode(), other.decode()).strip()
        except GitCommandError:
            return None
        return found or None

    def new_commits(self, tip: bytes) -> list[bytes]:
        """Commits reachable from `tip` and from no ref yet, oldest first (what a push brings)."""
        listed = self.git("rev-list", "--reverse", "--topo-order", tip.decode(), "--not", "--all")
        return listed.split()

    def quarantined_objects(self) -> dict[bytes, tuple[bytes, int]]:
        """The objects of a push still in quarantine (a `with_quarantine` view): id -> (type, size).

        Sizes come from the object headers (`cat-file --batch-check`): nothing is inflated, so a small pack
        holding a huge blob costs no memory here. The repository's own objects are not listed.
        """
        quarantine = self._git_env.get("GIT_QUARANTINE_PATH")
        if quarantine is None:
            return {}
        result = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
            cwd=self.path, capture_output=True, check=True,
            env={**git_environment(), "GIT_OBJECT_DIRECTORY": quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES": ""})
        found = {}
        for line in result.stdout.splitlines():
            object_id, kind, size = line.split()
            found[object_id] = (kind, int(size))
        return found

    def objects_new_from(self, tips: list[bytes]) -> set[bytes]:
        """Objects reachable from `tips` that no ref reaches (a superset: git does not walk all of history)."""
        if not tips:
            return set()
        return set(self.git("rev-list", "--objects", "--no-object-names", *(tip.decode() for tip in tips),
                            "--not", "--all").split())

    def missing_objects(self, object_ids: Iterable[bytes]) -> set[bytes]:
        """Those of `object_ids` this repository (not counting a quarantine) does not hold."""
        listed = self.git("cat-file", "--batch-check=%(objectname)", input=b"".join(i + b"\n" for i in object_ids))
        return {line.split()[0] for line in listed.splitlines() if line.endswith(b" missing")}

    def unreachable_objects(self, object_ids: set[bytes]) -> set[bytes]:
        """Those of `object_ids` that neither the branch nor a tag reaches (objects not held included): what a
        fetch may not be given. Commits cost a walk down to the refs, other objects a listing of history."""
        wanted = object_ids - set(self.git("for-each-ref", "--format=%(objectname)", "refs/heads/", "refs/tags/")
                                  .split())
        if not wanted:
            return set()
        listed = self.git("cat-file", "--batch-check=%(objectname) %(objecttype)",
                          input=b"".join(object_id + b"\n" for object_id in wanted))
        commits = {line.split()[0] for line in listed.splitlines() if line.endswith(b" commit")}
        unreachable = self.unreachable_commits(commits)
        others = wanted - commits
        if others:
            unreachable |= others - set(self.git("rev-list", "--objects", "--no-object-names", "--branches",
                                                 "--tags").split())
        return unreachable

    def unreachable_commits(self, commits: set[bytes]) -> set[bytes]:
        """Those of `commits` (commits this repository holds) that neither the branch nor a tag reaches.

        The one rule for what is part of the project: fetches, time travel and the dashboard's change pages
        serve only reachable commits, as a commit no ref reaches (left by a refused push or a crash) was never
        validated."""
        if not commits:
            return set()
        return commits & set(self.git("rev-list", *(c.decode() for c in commits), "--not", "--branches",
                                      "--tags").split())

    def unified_diff(self, old: bytes, new: bytes) -> bytes:
        """`git diff` between two commits' trees (the canonical files, one asset per line)."""
        return self.git("diff", "--no-color", "--no-ext-diff", "--no-renames", old.decode(), new.decode())

    def first_parent_patches(self, start: bytes, paths: Sequence[str], stop_at: bytes | None = None,
                             niced: bool = False) -> Generator[CommitPatch, None, None]:
        """The commits from `start` back along first parents that changed one of `paths`, newest first, each
        with the lines it removed and added there (against its first parent, merges included).

        This is `git log --first-parent -p -U0 -- paths`, streamed: a caller that has what it needs stops
        iterating and git is stopped with it, and commits that touch none of the paths cost git a lookup in
        the changed-path Bloom filters of the commit-graph (see write_commit_graph; without one git compares
        their trees, still without reading a file). `stop_at`, a commit on `start`'s first-parent chain,
        ends the walk there (it and its ancestors are left out). `niced`: for background maintenance.
        """
        args = ["log", "--first-parent", "--diff-merges=first-parent", "--root", "-p", "-U0", "--text",
                "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/",
                "--dst-prefix=b/", "--format=%x00%H %P", start.decode()]
        if stop_at is not None:
            args.append("^" + stop_at.decode())
        with self.stream([*args, "--", *paths], niced) as stream:
            yield from _parse_patches(stream)

    def raw_objects(self, ids: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored content of many objects from one `git cat-file --batch`: with many packs (between two
        repacks), looking each object up in every pack from Python cost ~3 ms an object."""
        output = self.git("cat-file", "--batch", input=b"".join(object_id + b"\n" for object_id in ids))
        found: dict[bytes, bytes] = {}
        position = 0
        while position < len(output):
            end = output.index(b"\n", position)
            header = output[position:end].split()
            if len(header) != 3:  # `<id> missing`
                raise GitCommandError(f"no object {header[0].decode('ascii', 'replace')}")
            size = int(header[2])
            found[header[0]] = output[end + 1:end + 1 + size]
            position = end + 1 + size + 1
        return found

    def first_parent_chain(self, start: bytes, niced: bool = False
                           ) -> Generator[tuple[bytes, bytes | None], None, None]:
        """(commit, its first parent or None) from `start` back to the root, newest first, streamed (a few
        microseconds a commit with the commit-graph: no tree is read)."""
        with self.stream(["rev-list", "--first-parent", "--parents", start.decode()], niced) as stream:
            for line in stream:
                ids = line.split()
                yield ids[0], ids[1] if len(ids) > 1 else None

    @contextmanager
    def stream(self, args: Sequence[str], niced: bool = False) -> Iterator[BinaryIO]:
        """The standard output of a git command, read as it comes; git is stopped when the block ends, so a
        reader that has what it needs spares git the rest of its walk."""
        command = ["nice", "-n", "10", "git", *args] if niced else ["git", *args]
        with subprocess.Popen(command, cwd=self.path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=self.environment()) as process:
            try:
                yield cast(BinaryIO, process.stdout)
            finally:
                process.kill()

    def config_flag(self, name: str) -> bool:
        """A boolean of the repository's own Git config (`.git/config`: never part of the project's content)."""
        return self.git("config", "--type=bool", "--get", name, check=False).strip() == b"true"

    def set_config_flag(self, name: str, value: bool) -> None:
        self.git("config", "--type=bool", name, "true" if value else "false")
