"""Property: whatever tree a push carries, once the checks accept it every export and API read answers below 500.

Pushed trees are generated from the project's own files with aliases (zero-padded or non-ASCII chunk names),
case variants, extra directories and hostile record values; they go through storage.receive's check and apply,
the code the HTTP path runs (tests/test_git_http.py pushes over real HTTP)."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings, strategies as st

from storage.gitrepo import Person
from storage.operations import Actor
from storage.receive import apply_push, check_push
from storage.errors import StorageError
from tests.conftest import auth

CHUNK_NAMES = ["0000.json", "00000.json", "0.json", "0001.json", "00001.json", "0000.JSON",
               "\u0660\u0660\u0660\u0660.json"]
DIRS = ["assets", "Assets", "locales/fr", "locales/FR", "locales/de", "assets/sub", "extra"]
HOSTILE_VALUES = [{"a": 1}, 5, [1], None, True, "x/tags", "../a", ""]
FIELDS = ["context", "notes", "type", "printf", "tags", "text", "rev", "flag", "n", "aliases", "meta", "author"]
IDS = ["x/tags", "/abs/", "a/../b", "ok.id", "home.title"]
READS = ["/api/assets", "/api/locales", "/api/tags", "/api/export/all.json", "/api/export/locale/fr.po",
         "/api/export/locale/en.json", "/api/export/archive/json.zip", "/api/assets/home.title"]


def hostile_file(original: bytes, field: str, value, asset_id: str) -> bytes:
    """The file with its first record's `field` set to `value` and the record renamed to `asset_id`."""
    lines = original.decode("utf-8").split("\n")
    key, _, rest = lines[1].rstrip(",").partition(": ")
    record = json.loads(rest)
    record[field] = value
    lines[1] = json.dumps(asset_id) + ": " + json.dumps(record) + ("," if lines[1].endswith(",") else "")
    return "\n".join(lines).encode("utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@example(changes=[("assets", "00000.json", "context", {"a": 1}, "home.title")])  # the case issue 19 found
@given(changes=st.lists(st.tuples(st.sampled_from(DIRS), st.sampled_from(CHUNK_NAMES), st.sampled_from(FIELDS),
                                  st.sampled_from(HOSTILE_VALUES), st.sampled_from(IDS)), min_size=1, max_size=1))
def test_after_any_accepted_push_every_read_answers_below_500(client, demo, changes):
    project, keys = demo
    repo, head = project.repo, project.repo.head()
    files = {path: repo.read_raw(blob) for path, blob in project.snapshot().files.items()}
    for directory, name, field, value, asset_id in changes:
        source = "assets/0000.json" if directory.lower().startswith("assets") else "locales/fr/0000.json"
        files[f"{directory}/{name}"] = hostile_file(files[source], field, value, asset_id)
    commit = repo.write_commit(write_tree(repo, files), [head], Person("P", "p@x"), Person("P", "p@x"), "push")
    command = [(head, commit, "refs/heads/main")]
    try:
        check_push(project, command, None, lambda candidate: False)
    except StorageError:
        return  # refused: nothing changed
    apply_push(project, command, Actor(1, "Pusher", "pusher@example.com"))
    for path in READS:
        response = client.get(path, **auth(keys.full))
        assert response.status_code < 500, (path, changes, response.data[:300])


def write_tree(repo, files: dict[str, bytes], prefix: str = "") -> bytes:
    """A tree (and its subtrees) holding `files` (path -> content)."""
    entries, subdirs = {}, {}
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            subdirs.setdefault(head, {})[rest] = data
        else:
            entries[head] = (0o100644, repo.write_blob(data))
    for name, content in subdirs.items():
        entries[name] = (0o040000, write_tree(repo, content))
    return repo.write_tree(entries)
