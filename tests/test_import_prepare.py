"""Imports are prepared outside the project lock and committed by compare-and-swap (Project.prepared_write): a
write made meanwhile is kept and the import is prepared again on top of it; an unchanged re-import makes no
commit."""
from __future__ import annotations

import gc
import json
import os
import threading
import time

import pytest

import formats.operations
from app.exchange import Importer
from storage import operations as ops
from storage.gitrepo import Person
from storage.project import PREPARE_ATTEMPTS
from storage.store import Store, utc_now
from tests.api import Api, commit_count
from tests.support import assert_fsck_clean, git, wait_until

ACTOR = ops.Actor(7, "Alice Martin", "alice@example.com")
ALICE = Person("Alice", "alice@example.com")


def write_during_first_prepare(monkeypatch, write) -> list[bytes]:
    """Make `write` (in another thread, to its end) while the next import is prepared for the first time;
    returns the head each prepare of the import started from."""
    heads: list[bytes] = []
    apply = Importer.apply

    def apply_after_write(self, catalogue):
        heads.append(self.tx.base.commit)
        if len(heads) == 1:
            writer = threading.Thread(target=write)
            writer.start()
            writer.join()
        return apply(self, catalogue)

    monkeypatch.setattr(Importer, "apply", apply_after_write)
    return heads


def head(project) -> str:
    return git(project.path, "rev-parse", "HEAD").strip()


def staged_left(project) -> list:
    """Working-tree files written ahead of a commit (WorkTree.stage) that are still waiting."""
    return list((project.path / ".git" / "gloss-staged").glob("*"))


def test_a_write_made_while_an_import_is_prepared_is_kept_and_the_import_commits_on_top_of_it(
        client, demo, monkeypatch):
    project, keys = demo
    api = Api(client, keys.full)
    answers = []
    # another entry of the same locale file as the import's: the file is rebuilt with both changes
    heads = write_during_first_prepare(monkeypatch, lambda: answers.append(
        api.post("/api/translations/home.new_note/fr", data="Écrite pendant l'import".encode())))
    before = commit_count(project)
    file = json.dumps({"home.greeting": "Salut tout le monde", "brand.new": "Tout neuf"}).encode()
    status, body = api.post("/api/import/json?locale=fr", data=file)
    assert status == 200 and answers[0][0] == 200
    assert body["message"] == "Imported 1 new asset, 1 new translation, 1 translation updated"
    assert len(heads) == 1  # the write touched nothing the import read: committed without a second prepare
    assert api.get("/api/translations/home.new_note/fr")[1]["translation"] == "Écrite pendant l'import"
    assert api.get("/api/translations/home.greeting/fr")[1]["translation"] == "Salut tout le monde"
    assert api.get("/api/translations/brand.new/fr")[1]["translation"] == "Tout neuf"
    assert commit_count(project) == before + 2
    assert "Action: translate" in git(project.path, "log", "-1", "--format=%B", "HEAD~1")
    assert "Action: import" in git(project.path, "log", "-1", "--format=%B", "HEAD")
    # the import's file was written ahead for the head it was prepared on: rewritten in place instead, not left
    assert git(project.path, "status", "--porcelain") == "" and staged_left(project) == []
    assert_fsck_clean(project.path)


def test_an_import_whose_head_moved_is_prepared_again_on_the_new_head(client, demo, monkeypatch):
    project, keys = demo
    api = Api(client, keys.full)
    heads = write_during_first_prepare(
        monkeypatch, lambda: api.post("/api/translations/home.title/fr", data="Écrit pendant l'import".encode()))
    written_before = head(project)
    status, body = api.post("/api/import/json?locale=fr",
                            data=json.dumps({"home.title": "Écrit pendant l'import"}).encode())
    assert status == 200
    assert [commit.decode() for commit in heads] == [written_before, head(project)]
    # prepared again on the head with the write: the file's text is already there, nothing is left to do
    assert body["message"] == "Nothing updated"
    assert "Action: translate" in git(project.path, "log", "-1", "--format=%B", "HEAD")


def test_an_unchanged_reimport_makes_no_commit_and_answers_as_the_import_did(client, demo):
    project, keys = demo
    api = Api(client, keys.full)
    po = ('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Welcome to Acme Notes"\nmsgstr "Salut"\n\n'
          'msgid "Brand new"\nmsgstr "Tout neuf"\n').encode()
    first = api.post("/api/import/po?locale=fr&index=text", data=po)
    before = head(project)
    status, again = api.post("/api/import/po?locale=fr&index=text", data=po)
    assert first[0] == status == 200
    assert again == {"status": 200, "message": "Nothing updated", "locales": first[1]["locales"]}
    assert head(project) == before


@pytest.fixture
def project(tmp_path):
    project = Store(tmp_path / "data").create_project("Shop", "en", "English")
    with project.transaction(ALICE, "Add key", "create-asset") as tx:
        ops.create_asset(tx, "greeting", utc_now(), text="Hello", actor=ACTOR)
    return project


def test_a_prepared_write_whose_head_keeps_moving_is_prepared_under_the_lock_at_last(project):
    calls: list[str] = []

    def prepare(tx):
        calls.append(tx.base.commit.decode())
        if len(calls) <= PREPARE_ATTEMPTS:  # another writer wins the race for the head every time
            with project.transaction(ALICE, f"Add key {len(calls)}", "create-asset") as other:
                ops.create_asset(other, f"other-{len(calls)}", utc_now(), text="Other", actor=ACTOR)
        ops.translate(tx, "greeting", "en", f"Hello {len(calls)}", ACTOR, utc_now())
        return len(calls)

    value, tx = project.prepared_write(prepare, ALICE, "Say hello", "translate")
    assert value == len(calls) == PREPARE_ATTEMPTS + 1
    snapshot = project.snapshot()
    assert tx.result is snapshot and snapshot.commit.decode() == head(project)
    assert snapshot.translation("greeting", "en")["text"] == f"Hello {PREPARE_ATTEMPTS + 1}"
    assert all(snapshot.has_asset(f"other-{n}") for n in range(1, PREPARE_ATTEMPTS + 1))
    assert git(project.path, "rev-parse", "HEAD~1").strip() == calls[-1]  # on top of the last other write
    assert_fsck_clean(project.path)


def test_after_a_big_prepared_write_the_project_reads_its_chunks_from_git_and_answers_the_same(project, monkeypatch):
    import storage.derived
    import storage.project

    monkeypatch.setattr(storage.project, "FREEZE_AT", 20)  # "big": chunks of 20 assets or more rewritten
    monkeypatch.setattr(storage.project, "PERSIST_DERIVED_AT", 0)  # and the project keeps its derived data
    ids = [f"key-{number}" for number in range(30)]

    def prepare(tx):
        for asset_id in ids:
            ops.create_asset(tx, asset_id, utc_now(), text=f"Text {asset_id}", actor=ACTOR)

    loads, decodes = [], []
    real_load, real_decode = storage.project.Snapshot.load, storage.derived.decode
    monkeypatch.setattr(storage.project.Snapshot, "load", lambda *args: loads.append(args[1]) or real_load(*args))
    monkeypatch.setattr(storage.derived, "decode", lambda data: decodes.append(len(data)) or real_decode(data))
    _, tx = project.prepared_write(prepare, ALICE, "Many keys", "create-asset")
    # the tip is loaded by the next read, and the derived data saved ahead read again from its file, once the
    # write's temporaries are gone (made among them, what stays kept the memory around them)
    assert loads == []
    decodes.clear()
    loaded = project.snapshot()
    assert loads == [tx.result.commit] and decodes
    assert loaded is not tx.result and loaded.commit == tx.result.commit
    assert tx.result.assets_in_memory() > 0 and loaded.assets_in_memory() == 0  # nothing the write built is kept
    assert [loaded.translation(asset_id, "en") for asset_id in ids + ["greeting"]] \
        == [tx.result.translation(asset_id, "en") for asset_id in ids + ["greeting"]]
    with project.transaction(ALICE, "One more", "translate") as after:  # the next write starts from it
        ops.translate(after, "key-3", "en", "Changed", ACTOR, utc_now())
    assert [project.snapshot().translation(asset_id, "en")["text"] for asset_id in ("key-2", "key-3")] \
        == ["Text key-2", "Changed"]
    assert_fsck_clean(project.path)


def test_a_prepared_write_that_changes_nothing_makes_no_commit(project):
    before = head(project)
    value, tx = project.prepared_write(lambda tx: "unchanged", ALICE, "Nothing", "translate")
    assert value == "unchanged" and tx.result is project.snapshot() and head(project) == before


def test_an_imports_files_are_flushed_before_the_lock_and_renamed_into_the_working_tree(client, demo):
    # written and flushed inside the project lock, a 100k-unit import's 50 MB of files held every other writer
    # of the project for 280-340 ms; renamed into place, a file gets a new inode (a rewrite in place keeps it)
    project, keys = demo
    inodes = {path: (project.path / path).stat().st_ino for path in git(project.path, "ls-files").split()}
    file = json.dumps({"home.greeting": "Salut tout le monde", "brand.new": "Tout neuf"}).encode()
    assert Api(client, keys.full).post("/api/import/json?locale=fr", data=file)[0] == 200
    changed = git(project.path, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert "locales/fr/0000.json" in changed
    assert all((project.path / path).stat().st_ino != inodes[path] for path in changed if path in inodes)
    assert git(project.path, "status", "--porcelain") == "" and staged_left(project) == []
    assert_fsck_clean(project.path)


def test_an_import_runs_with_the_collector_off_and_gives_it_back(client, demo, monkeypatch):
    project, keys = demo
    seen: list[bool] = []
    apply = Importer.apply
    monkeypatch.setattr(Importer, "apply", lambda self, catalogue: (seen.append(gc.isenabled()),
                                                                    apply(self, catalogue))[1])
    assert gc.isenabled()
    file = json.dumps({"home.greeting": "Salut"}).encode()
    assert Api(client, keys.full).post("/api/import/json?locale=fr", data=file)[0] == 200
    assert seen == [False] and gc.isenabled()


def test_the_collector_comes_back_when_a_job_keeps_it_off_too_long_and_overlapping_jobs_share_it(monkeypatch):
    monkeypatch.setattr(formats.operations, "COLLECTOR_OFF_SECONDS", 0.2)
    first_in, second_out = threading.Event(), threading.Event()

    def second_job():
        first_in.wait()
        with formats.operations.collector_off():
            pass
        second_out.set()

    other = threading.Thread(target=second_job)
    other.start()
    with formats.operations.collector_off():
        first_in.set()
        second_out.wait()
        assert not gc.isenabled()  # the other job's end does not turn it on under this one
        wait_until(gc.isenabled, message="the collector stayed off past its bound while this job ran")
    other.join()
    assert gc.isenabled()


def test_files_written_ahead_by_a_killed_import_are_swept_once_old(project):
    directory = project.path / ".git" / "gloss-staged"
    directory.mkdir()
    old, young = directory / "123-0", directory / "124-0"
    old.write_bytes(b"left by a killed import")
    young.write_bytes(b"a running import's")
    an_hour_ago = time.time() - 3700
    os.utime(old, (an_hour_ago, an_hour_ago))
    project.repo.sweep_temp_files()
    assert not old.exists() and young.exists()
