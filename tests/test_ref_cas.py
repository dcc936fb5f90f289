"""The branch moves by compare-and-swap under git's own `refs/heads/main.lock`, so git and Gloss exclude each other."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from storage import operations as ops
from storage.git import refs
from storage.errors import Busy, Conflict
from storage.gitrepo import Person
from storage.store import Store, utc_now
from tests.conftest import auth
from tests.support import assert_fsck_clean, git

ALICE = Person("Alice Martin", "alice@example.com")


@pytest.fixture
def project(tmp_path):
    project = Store(tmp_path / "data").create_project("Shop", "en", "English")
    with project.transaction(ALICE, "Add asset", "create-asset") as tx:
        ops.create_asset(tx, "greeting", utc_now(), text="Hello")
    return project


def translate(project, text):
    with project.transaction(ALICE, "Translate", "translate") as tx:
        ops.translate(tx, "greeting", "en", text, None, utc_now())


def lock_path(project):
    return project.path / ".git" / "refs" / "heads" / "main.lock"


def test_a_write_whose_branch_moved_meanwhile_is_a_conflict_and_writes_nothing(project):
    base = git(project.path, "rev-parse", "HEAD").strip()
    tree = git(project.path, "rev-parse", "HEAD^{tree}").strip()
    foreign = git(project.path, "commit-tree", tree, "-p", base, "-m", "pushed by git").strip()
    with pytest.raises(Conflict):
        with project.transaction(ALICE, "Translate", "translate") as tx:
            ops.translate(tx, "greeting", "en", "Hi", None, utc_now())
            git(project.path, "update-ref", "refs/heads/main", foreign, base)  # git moves it mid-write
    assert git(project.path, "rev-parse", "HEAD").strip() == foreign
    assert not lock_path(project).exists()
    translate(project, "Hi again")  # the next write builds on git's commit
    assert git(project.path, "rev-parse", "HEAD^").strip() == foreign
    assert_fsck_clean(project.path)


def test_git_cannot_move_the_branch_while_gloss_holds_the_ref_lock(project):
    head = git(project.path, "rev-parse", "HEAD").strip()
    parent = git(project.path, "rev-parse", "HEAD^").strip()
    with project.repo.ref_lock():
        result = subprocess.run(["git", "update-ref", "refs/heads/main", parent, head], cwd=project.path,
                                capture_output=True, text=True)
        assert result.returncode != 0 and "main.lock" in result.stderr
    assert git(project.path, "rev-parse", "HEAD").strip() == head
    assert not lock_path(project).exists()


def test_gloss_waits_for_then_gives_up_on_a_lock_held_by_git_and_writes_nothing(project, monkeypatch):
    monkeypatch.setattr(refs, "REF_LOCK_TIMEOUT", 0.2)
    head = git(project.path, "rev-parse", "HEAD").strip()
    lock_path(project).write_text(head + "\n")  # what git leaves while its ref transaction runs
    with pytest.raises(Busy):
        translate(project, "Hi")
    assert git(project.path, "rev-parse", "HEAD").strip() == head
    assert lock_path(project).read_text() == head + "\n"  # never steals a live lock
    lock_path(project).unlink()
    translate(project, "Hi")
    assert project.snapshot().translation("greeting", "en")["text"] == "Hi"


def test_a_lock_left_by_a_killed_writer_long_ago_does_not_wedge_the_project(project):
    lock = lock_path(project)
    lock.write_text("")
    old = time.time() - refs.STALE_REF_LOCK - 5
    os.utime(lock, (old, old))
    translate(project, "Hi")
    assert project.snapshot().translation("greeting", "en")["text"] == "Hi"
    assert not lock.exists()
    assert_fsck_clean(project.path)


def test_a_branch_locked_by_git_answers_503_with_a_json_error_through_http(client, demo, monkeypatch):
    project, keys = demo
    monkeypatch.setattr(refs, "REF_LOCK_TIMEOUT", 0.1)
    head = git(project.path, "rev-parse", "HEAD").strip()
    lock_path(project).write_text("")
    response = client.post("/api/assets", data={"id": "x", "text": "X"}, **auth(keys.full))
    assert response.status_code == 503
    assert response.get_json()["status"] == 503 and "lock" in response.get_json()["error"]
    assert git(project.path, "rev-parse", "HEAD").strip() == head


def test_a_fresh_lock_left_by_a_gloss_writer_killed_at_any_moment_is_removed_by_the_next_write(project,
                                                                                            monkeypatch):
    monkeypatch.setattr(refs, "REF_LOCK_TIMEOUT", 0.2)  # far below STALE_REF_LOCK: no waiting it out
    fd = project.repo.branch.create_lock()  # what a writer holds when it is killed
    os.close(fd)
    assert lock_path(project).exists()
    assert list((project.path / ".git").glob("gloss-ref-lock-*")) == []  # its private name is gone already
    translate(project, "After the crash")
    assert project.snapshot().translation("greeting", "en")["text"] == "After the crash"
    assert not lock_path(project).exists()
    assert_fsck_clean(project.path)
