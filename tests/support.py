"""Helpers shared by the test modules: external tools and the shared real-world corpus."""
from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GLOSS_SHARED", REPO_ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

T = TypeVar("T")


def poll_until(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.05) -> T:
    """Call `condition` every `interval` seconds until it returns something truthy, and return that; after
    `timeout` seconds return its last (falsy) answer. Tests wait on the condition, never on the clock, so
    they are as fast as the machine and no flakier when it is loaded."""
    deadline = time.monotonic() + timeout
    while not (answer := condition()) and time.monotonic() < deadline:
        time.sleep(interval)
    return answer


def wait_until(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.05,
               message: str = "the condition never held") -> T:
    """`poll_until`, failing the test with `message` when the condition does not hold within `timeout` s."""
    answer = poll_until(condition, timeout, interval)
    assert answer, f"{message} (waited {timeout} s)"
    return answer


def answers(url: str) -> bool:
    """Does a server answer GET `url` with 200 now (a server starting up may refuse or reset the connection)?"""
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:  # URLError and HTTPError are OSErrors
        return False


def require_tool(name: str) -> str:
    """Path of an external validator; skip locally when missing, fail under CI (the Makefile installs it)."""
    path = shutil.which(name)
    if path:
        return path
    if IN_CI:
        pytest.fail(f"required tool {name!r} is not installed (make test installs it)")
    pytest.skip(f"{name} not installed")


def require_module(name: str):
    """An independent reader's Python module (a test extra); skip locally when missing, fail under CI."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if IN_CI:
            pytest.fail(f"required module {name!r} is not installed (make install installs the test extras)")
        pytest.skip(f"{name} not installed")


def corpus_path(relative: str) -> Path:
    """A file of ../shared/corpus; skip when the folder is absent, except under CI where that is a failure."""
    path = SHARED / "corpus" / relative
    if path.exists():
        return path
    if IN_CI:
        pytest.fail(f"shared corpus file missing: {path}")
    pytest.skip(f"shared corpus not available ({path})")


def schema_path(relative: str) -> Path:
    """A schema of ../shared/schemas, with the same skip/fail rule as corpus_path."""
    path = SHARED / "schemas" / relative
    if path.exists():
        return path
    if IN_CI:
        pytest.fail(f"shared schema missing: {path}")
    pytest.skip(f"shared schemas not available ({path})")


def git(repo: Path | str, *args: str) -> str:
    """Run the real git command line in `repo` and return its output (fails the test on error)."""
    import subprocess

    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr}"
    return result.stdout


def clone_as_tester(project_path: Path, tmp_path: Path) -> Path:
    """A clone of a project repository (by path, not over HTTP) with a committer set, as a developer edits one."""
    target = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project_path), str(target))
    git(target, "config", "user.name", "Tester")
    git(target, "config", "user.email", "tester@example.com")
    return target


def assert_fsck_clean(repo: Path | str) -> None:
    """`git fsck --strict` finds nothing wrong with `repo`.

    It runs holding Gloss's maintenance lock: a background `git repack -d` deletes the packs it rewrote, and
    an fsck that listed them a moment before reports "packfile ... index not opened" for each, which says
    nothing about the repository (git's own gc races fsck the same way).
    """
    with maintenance_paused(repo):
        git(repo, "fsck", "--strict")


@contextmanager
def maintenance_paused(repo: Path | str) -> Iterator[None]:
    """Holding Gloss's maintenance lock: no background `git repack` of `repo` runs (or deletes packs) meanwhile."""
    import fcntl

    from storage.git.maintenance import MAINTENANCE_LOCK

    fd = os.open(Path(repo) / ".git" / MAINTENANCE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def edit_line(path: Path, asset_id: str, **changes) -> None:
    """Change one entry of a canonical catalogue in place, as a person editing the file would."""
    lines = path.read_text("utf-8").split("\n")
    prefix = json.dumps(asset_id, ensure_ascii=False) + ": "
    for number, line in enumerate(lines):
        if line.startswith(prefix):
            comma = "," if line.endswith(",") else ""
            value = json.loads(line[len(prefix):len(line) - len(comma)])
            value.update(changes)
            lines[number] = prefix + json.dumps(value, ensure_ascii=False) + comma
            break
    else:
        raise AssertionError(f"{asset_id} not in {path}")
    path.write_text("\n".join(lines), "utf-8")


def project_files(project) -> dict[str, bytes]:
    """Every file of the project's head, path -> content (what a clone's working tree holds)."""
    return {path: project.repo.read_raw(blob) for path, blob in project.snapshot().files.items()}


def commit_tree(project, files: dict[str, bytes], message: str = "pushed") -> str:
    """A commit on the project's head holding exactly `files` (path -> content), written into its object store
    as a push's objects would be, without moving any ref; its id."""
    from storage.gitrepo import Person

    repo = project.repo
    person = Person("Pat Pusher", "pat@example.com")
    return repo.write_commit(_write_tree(repo, files), [repo.head()], person, person, message).decode()


def _write_tree(repo, files: dict[str, bytes]) -> bytes:
    entries, subdirs = {}, {}
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            subdirs.setdefault(head, {})[rest] = data
        else:
            entries[head] = (0o100644, repo.write_blob(data))
    for name, content in subdirs.items():
        entries[name] = (0o040000, _write_tree(repo, content))
    return repo.write_tree(entries)
