"""The API and a push accept exactly the same data, field by field: for every value below, the API's answer
(a write through the Flask test client) and a push's (the same value in a pushed commit, through
storage.receive.check_push, the code the HTTP path runs) agree; and whatever the API stored passes a full
push check, so data written by the API never blocks a later push (tests/test_push_limits.py pushes over HTTP).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from limits import MAX_ASSET_ID_BYTES, MAX_LOCALE_NAME_CHARS, MAX_TAG_CHARS, MAX_TEXT_CHARS
from storage import fields
from storage.checks import CommitChecker
from storage.errors import StorageError
from storage.receive import check_push
from tests.conftest import auth
from tests.support import commit_tree

KEY = "the demo's full-access key"  # stands for the live key itself (a case's value is built with it)
Files = dict[str, bytes]


@dataclass(frozen=True)
class Field:
    """How the API writes one field (method, path, request kwargs for a value) and how a pushed file holds it."""
    api: Callable[[Any], tuple[str, str, dict]]
    push: Callable[[Files, Any], None]


def edit_record(files: Files, path: str, key: str, **changes: Any) -> None:
    """Change one record of a catalogue file (as storage.canonical writes it: one record per line)."""
    lines = files[path].decode("utf-8").split("\n")
    prefix = json.dumps(key, ensure_ascii=False) + ": "
    number = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    comma = "," if lines[number].endswith(",") else ""
    record = json.loads(lines[number][len(prefix):len(lines[number]) - len(comma)])
    record.update(changes)
    lines[number] = prefix + json.dumps(record, ensure_ascii=False) + comma
    files[path] = "\n".join(lines).encode("utf-8", "surrogatepass")


def rename_asset(files: Files, old: str, new: str) -> None:
    """Give an asset a new ID in its chunk and in every locale's."""
    before, after = json.dumps(old, ensure_ascii=False) + ": ", json.dumps(new, ensure_ascii=False) + ": "
    for path in files:
        if path != "project.json":
            lines = files[path].decode("utf-8").split("\n")
            files[path] = "\n".join(after + line[len(before):] if line.startswith(before) else line
                                    for line in lines).encode("utf-8")


def edit_project(files: Files, change: Callable[[dict], None]) -> None:
    meta = json.loads(files["project.json"])
    change(meta)
    files["project.json"] = (json.dumps(meta, ensure_ascii=False, indent=2) + "\n").encode("utf-8", "surrogatepass")


def rename_locale(meta: dict, name: str) -> None:
    next(record for record in meta["locales"] if record["code"] == "fr")["name"] = name


def json_body(payload: dict) -> dict:
    """Request kwargs for a JSON body as a client sends it (lone surrogates as `\ud800` escapes)."""
    return {"data": json.dumps(payload), "content_type": "application/json"}


def patch_asset(field: str) -> Callable[[Any], tuple[str, str, dict]]:
    return lambda value: ("PATCH", "/api/assets/home.title", json_body({field: value}))


FIELDS: dict[str, Field] = {
    "text": Field(lambda v: ("POST", "/api/translations/home.title/fr",
                             {"data": v.encode("utf-8", "surrogatepass")}),
                  lambda files, v: edit_record(files, "locales/fr/0000.json", "home.title", text=v)),
    "context": Field(patch_asset("context"),
                     lambda files, v: edit_record(files, "assets/0000.json", "home.title", context=v)),
    "notes": Field(patch_asset("notes"),
                   lambda files, v: edit_record(files, "assets/0000.json", "home.title", notes=v)),
    "type": Field(patch_asset("type"), lambda files, v: edit_record(files, "assets/0000.json", "home.title", type=v)),
    "printf": Field(patch_asset("printf"),
                    lambda files, v: edit_record(files, "assets/0000.json", "home.title", printf=v)),
    "max length": Field(patch_asset("max_length"),
                        lambda files, v: edit_record(files, "assets/0000.json", "home.title", max_length=v)),
    "aliases": Field(patch_asset("aliases"),
                     lambda files, v: edit_record(files, "assets/0000.json", "home.title", aliases=v)),
    "asset id": Field(patch_asset("id"), lambda files, v: rename_asset(files, "home.title", v)),
    "flag": Field(lambda v: ("POST", "/api/translations/home.title/fr/flag", {"data": {"flag": v}}),
                  lambda files, v: edit_record(files, "locales/fr/0000.json", "home.title", flag=v)),
    "tag": Field(lambda v: ("POST", "/api/tags", {"data": {"name": v}}),
                 lambda files, v: edit_project(files, lambda meta: meta["tags"].append(v))),
    "locale name": Field(lambda v: ("PATCH", "/api/locales/fr", json_body({"name": v})),
                         lambda files, v: edit_project(files, lambda meta: rename_locale(meta, v))),
    "locale code": Field(lambda v: ("POST", "/api/locales", {"data": {"code": v}}),
                         lambda files, v: edit_project(files, lambda meta: meta["locales"].append(
                             {"code": v, "name": "Added"}))),
}

TEXT_LIKE = ["text", "context", "notes", "asset id", "tag", "locale name"]
# (field, value, accepted by both?); KEY inside a value is replaced by the live key
CASES: list[tuple[str, Any, bool]] = [
    ("text", "Bienvenue", True), ("text", "x" * MAX_TEXT_CHARS, True), ("text", "x" * (MAX_TEXT_CHARS + 1), False),
    ("text", "lone \ud800 surrogate", False), ("text", "a\u0000nul and\ttab", True),
    ("context", "On the home page", True), ("context", "lone \udfff", False), ("context", "y" * 100_000, True),
    ("notes", "", True), ("notes", "note\nwith lines", True), ("notes", "\ud83d", False),
    ("type", "html", True), ("type", "video", False), ("type", "", False),
    ("printf", "java", True), ("printf", "", True), ("printf", "qt", True), ("printf", "cobol", False),
    ("max length", 80, True), ("max length", 0, True), ("max length", -1, False), ("max length", "80", False),
    ("max length", True, False), ("max length", 10 ** 9, False),
    ("aliases", {"android": "home_title"}, True), ("aliases", {"x": 1}, False), ("aliases", {"x": "\ud800"}, False),
    ("asset id", "home.heading", True), ("asset id", "a/b//c", True), ("asset id", "/abs/", False),
    ("asset id", "x/tags", False), ("asset id", "a/../b", False), ("asset id", "x" * MAX_ASSET_ID_BYTES, True),
    ("asset id", "x" * (MAX_ASSET_ID_BYTES + 1), False), ("asset id", "bell\u0007", False),
    ("flag", "fuzzy", True), ("flag", "provisional", True), ("flag", "shiny", False),
    ("tag", "release-1", True), ("tag", "t" * MAX_TAG_CHARS, True), ("tag", "t" * (MAX_TAG_CHARS + 1), False),
    ("tag", "a,b", False), ("tag", "tab\there", False),
    ("locale name", "Français (France)", True), ("locale name", "   ", False),
    ("locale name", "n" * MAX_LOCALE_NAME_CHARS, True), ("locale name", "n" * (MAX_LOCALE_NAME_CHARS + 1), False),
    ("locale name", "del\u007f", False),
    ("locale code", "it", True), ("locale code", "pt-BR", True), ("locale code", "../x", False),
    ("locale code", "x" * 36, False),
    *[(field, f"holds {KEY} inside", False) for field in TEXT_LIKE],
    ("aliases", {"leak": KEY}, False),
]


def with_key(value: Any, key: str) -> Any:
    if isinstance(value, str):
        return value.replace(KEY, key)
    if isinstance(value, dict):
        return {name: with_key(item, key) for name, item in value.items()}
    return value


def push_refusal(project, files: Files, is_live_key) -> str | None:
    """Why a push of `files` on top of the head is refused, or None when the checks accept it."""
    head = project.repo.head()
    commit = commit_tree(project, files, "push").encode()
    try:
        check_push(project, [(head, commit, "refs/heads/main")], None, is_live_key)
    except StorageError as error:
        return error.message
    return None


def test_every_field_has_cases_both_sides_accept_and_refuse():
    for field in FIELDS:
        outcomes = {accepted for name, _, accepted in CASES if name == field}
        assert outcomes == {True, False}, field


@pytest.mark.parametrize("field, value, accepted", CASES,
                         ids=[f"{field}-{'ok' if ok else 'refused'}-{i}" for i, (field, _, ok) in enumerate(CASES)])
def test_the_api_and_a_push_accept_and_refuse_the_same_values(client, demo, keystore, field, value, accepted):
    project, keys = demo
    value = with_key(value, keys.full)
    files = {path: project.repo.read_raw(blob) for path, blob in project.snapshot().files.items()}
    FIELDS[field].push(files, value)
    refusal = push_refusal(project, files, keystore.is_live)
    method, path, kwargs = FIELDS[field].api(value)
    response = client.open(path, method=method, **kwargs, **auth(keys.full))
    answer = response.get_data(as_text=True)
    assert (refusal is None) == accepted, (field, refusal)
    if accepted:
        assert response.status_code < 300, answer
        head = project.repo.head()  # what the API stored is a valid project, even checked in full
        CommitChecker(project.repo, keystore.is_live).check(head, full=True)
    else:
        assert 400 <= response.status_code < 500 and response.get_json()["error"], answer
    if isinstance(value, (str, dict)) and keys.full in json.dumps(value):
        assert response.status_code == 422 and "contains an API key" in answer, answer
        assert keys.full not in answer and keys.full not in refusal


def test_a_catalogue_larger_than_max_file_bytes_is_refused_by_the_api_as_by_a_push(client, demo, keystore,
                                                                                   monkeypatch):
    project, keys = demo
    path = "locales/fr/0000.json"
    size = len(project.repo.read_raw(project.snapshot().files[path]))
    monkeypatch.setattr(fields, "MAX_FILE_BYTES", size + 100)  # a small limit: a few more characters hit it
    for text, accepted in (("y" * 50, True), ("z" * 500, False)):
        files = {name: project.repo.read_raw(blob) for name, blob in project.snapshot().files.items()}
        edit_record(files, path, "home.title", text=text)
        refusal = push_refusal(project, files, keystore.is_live)
        response = client.post("/api/translations/home.title/fr", data=text.encode(), **auth(keys.full))
        assert (refusal is None) == accepted == (response.status_code == 200), (refusal, response.get_json())
        if not accepted:
            assert response.status_code == 422 and "max_file_bytes" in response.get_json()["error"]
            assert "max_file_bytes" in refusal
