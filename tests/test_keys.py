"""API keys: stored hashed, outside every project repository, verified in constant time, revocable."""
from __future__ import annotations

import subprocess

import pytest

from storage.errors import Invalid, NotFound
from tests.conftest import auth


def test_key_file_holds_no_plaintext_key(demo, data_dir):
    _, keys = demo
    content = (data_dir / "keys.json").read_text()
    for key in (keys.full, keys.readonly, keys.export):
        assert key not in content
    assert (data_dir / "keys.json").stat().st_mode & 0o077 == 0  # readable by the service user only


def test_no_object_in_a_project_repository_contains_a_key(demo, client):
    project, keys = demo
    client.post("/api/auth/verify", **auth(keys.full, "query"))  # a key in the URL must not leak either
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=project.path,
                             capture_output=True, check=True).stdout
    files = b"".join(p.read_bytes() for p in project.path.rglob("*") if p.is_file())
    for key in (keys.full, keys.readonly, keys.export):
        assert key.encode() not in objects
        assert key.encode() not in files


def test_verify_finds_the_record_and_rejects_near_misses(demo, keystore):
    project, keys = demo
    record = keystore.verify(keys.readonly)
    assert (record.access, record.project, record.user_name) == ("readonly", project.id, "Reader")
    assert keystore.verify(keys.readonly[:-1]) is None
    assert keystore.verify(keys.readonly + "x") is None
    assert keystore.verify("") is None


def test_revoked_key_is_rejected_by_key_or_by_id(demo, keystore, client):
    _, keys = demo
    assert client.get("/api/auth/verify", **auth(keys.export)).status_code == 200
    keystore.revoke(keys.export)
    assert client.get("/api/auth/verify", **auth(keys.export)).status_code == 401
    record = keystore.verify(keys.readonly)
    keystore.revoke(record.id)
    assert keystore.verify(keys.readonly) is None
    with pytest.raises(NotFound):
        keystore.revoke("no-such-key")


def test_unknown_access_type_is_refused(keystore):
    with pytest.raises(Invalid):
        keystore.create("p", "admin")


def test_a_new_key_never_starts_with_a_dash_so_command_lines_take_it_as_an_argument(keystore, monkeypatch):
    drawn = iter(["-" + "a" * 31, "_" + "b" * 31])
    monkeypatch.setattr("storage.keys.secrets.token_urlsafe", lambda size: next(drawn))
    key, record = keystore.create("p", "full")
    assert key == "_" + "b" * 31
    assert keystore.verify(key) == record


def test_same_person_keeps_one_user_id_across_keys(keystore):
    _, first = keystore.create("p", "full", "Ann", "ann@example.com")
    _, second = keystore.create("p", "readonly", "Ann", "ann@example.com")
    _, other = keystore.create("p", "full", "Bob", "bob@example.com")
    assert first.user_id == second.user_id != other.user_id
