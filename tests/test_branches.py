"""Branches through the API: create, list, read, delete; every read and write on `?branch=`; key-level merges."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.api import Api, commit_count
from tests.support import git


def head_of(project, ref: str) -> str:
    return git(project.path, "rev-parse", ref).strip()


def texts(api: Api, locale: str, branch: str | None = None) -> dict[str, str]:
    query = {"branch": branch, "no-expand": "1"} if branch else {"no-expand": "1"}
    status, body = api.get(f"/api/export/locale/{locale}.json", query_string=query)
    assert status == 200
    return body


def translate(api: Api, asset: str, locale: str, text: str, branch: str | None = None) -> None:
    query = {"branch": branch} if branch else {}
    status, _ = api.post(f"/api/translations/{asset}/{locale}", data=text.encode(), query_string=query)
    assert status == 200


def merge(client, key: str, name: str, **kwargs):
    """(status, body) of a merge; a 409 carries the conflicts beside the usual error shape."""
    response = client.post(f"/api/branches/{name}/merge", headers={"Authorization": f"Loco {key}"}, **kwargs)
    assert response.mimetype == "application/json"
    return response.status_code, response.get_json()


def test_a_branch_is_created_from_main_listed_read_and_deleted(api, demo):
    status, made = api.post("/api/branches", data={"name": "release/1.0"})
    assert status == 201
    head = head_of(demo[0], "main")
    assert made["name"] == "release/1.0" and made["head"] == head and made["from"] == "main"
    assert made["base"] == head and made["ahead"] == 0 and made["behind"] == 0
    assert made["revisions"] == commit_count(demo[0])
    assert [branch["name"] for branch in api.get("/api/branches")[1]] == ["main", "release/1.0"]
    assert api.get("/api/branches/release/1.0") == (200, made)
    assert head_of(demo[0], "refs/heads/release/1.0") == head
    assert api.delete("/api/branches/release/1.0")[0] == 200
    assert api.get("/api/branches/release/1.0")[0] == 404
    assert [branch["name"] for branch in api.get("/api/branches")[1]] == ["main"]
    assert api.post("/api/branches", data={"name": "release"})[0] == 201  # its directory went with it


def test_the_list_of_branches_says_what_each_branch_read_alone_says(api, demo):
    """The list is counted in one pass over every branch (git's tracking counts), each branch alone by its own
    walk: both agree, and with git's own count of revisions."""
    for name in ("feature", "x=y/1.0", "behind"):
        assert api.post("/api/branches", data={"name": name})[0] == 201
    translate(api, "home.title", "fr", "Accueil (feature)", "feature")
    translate(api, "home.title", "de", "Willkommen (x=y)", "x=y/1.0")
    translate(api, "home.greeting", "fr", "Salut %s (main)")
    status, listed = api.get("/api/branches")
    assert status == 200 and [branch["name"] for branch in listed] == ["main", "behind", "feature", "x=y/1.0"]
    assert listed == [api.get(f"/api/branches/{branch['name']}")[1] for branch in listed]
    for branch in listed:
        counted = git(demo[0].path, "rev-list", "--count", f"refs/heads/{branch['name']}").strip()
        assert branch["revisions"] == int(counted)
    assert [(branch["ahead"], branch["behind"]) for branch in listed] == [(0, 0), (0, 1), (1, 1), (1, 1)]


def test_a_branch_is_made_from_another_branch_when_from_names_it(api):
    api.post("/api/branches", data={"name": "feature"})
    translate(api, "home.title", "fr", "Bienvenue (feature)", "feature")
    status, made = api.post("/api/branches", json={"name": "feature-2", "from": "feature"})
    assert status == 201 and made["from"] == "feature"
    assert texts(api, "fr", "feature-2")["home.title"] == "Bienvenue (feature)"


BAD_NAMES = ["a..b", "a b", "-x", "x.lock", "a/.b", "x/", "/x", "a//b", "x.", "a@{b", "@", "HEAD", "a~1", "a^",
             "a:b", "a?", "a*", "a[b", "a\\b", "a\x01", "x" * 81]


def test_a_garbled_record_of_where_branches_came_from_leaves_every_branch_readable(api, demo):
    api.post("/api/branches", data={"name": "feature"})
    record = demo[0].path / ".git" / "gloss-branches.json"
    for garbled in (b'{"feature": {"from": "ma', b"[1, 2]", b'{"feature": 7}', b"\xff\xfe"):
        record.write_bytes(garbled)  # as a disk error or a hand edit could leave it
        status, listed = api.get("/api/branches")
        assert status == 200 and [branch["name"] for branch in listed] == ["main", "feature"]
        assert listed[1]["from"] is None and listed[1]["head"] == head_of(demo[0], "main")
    assert api.post("/api/branches", data={"name": "other"})[0] == 201  # writes it whole again
    assert api.get("/api/branches/other")[1]["from"] == "main"


def test_a_crash_between_recording_a_branchs_origin_and_making_its_ref_leaves_no_trace(api, demo):
    """The origin is written first (durably), the ref second: a crash in between leaves an entry for a branch
    that does not exist, shown nowhere and replaced when the name is made."""
    record = demo[0].path / ".git" / "gloss-branches.json"
    record.write_text('{"ghost": {"from": "elsewhere", "base": "0000", "created": "2020-01-01T00:00:00Z"}}')
    assert api.get("/api/branches/ghost")[0] == 404
    assert [branch["name"] for branch in api.get("/api/branches")[1]] == ["main"]
    status, made = api.post("/api/branches", data={"name": "ghost"})
    assert status == 201 and made["from"] == "main" and made["base"] == head_of(demo[0], "main")
    assert api.delete("/api/branches/ghost")[0] == 200
    assert "ghost" not in record.read_text()


def test_names_git_would_refuse_are_a_422_and_create_nothing(api, demo):
    assert api.post("/api/branches", data={"name": ""})[0] == 400
    for name in BAD_NAMES:
        status, body = api.post("/api/branches", data={"name": name})
        assert status == 422 and "Invalid branch name" in body["error"], (name, body)
    assert git(demo[0].path, "for-each-ref", "--format=%(refname)", "refs/heads/").split() == ["refs/heads/main"]


def test_duplicates_nested_names_and_main_are_conflicts(api):
    assert api.post("/api/branches", data={"name": "feature"})[0] == 201
    assert api.post("/api/branches", data={"name": "feature"})[0] == 409
    assert api.post("/api/branches", data={"name": "feature/x"})[0] == 409
    assert api.post("/api/branches", data={"name": "main"})[0] == 409
    assert api.delete("/api/branches/main") == (409, {"status": 409, "error": "main cannot be deleted"})


def test_unknown_branches_are_a_404_for_reads_writes_and_sources(api, demo):
    before = commit_count(demo[0])
    assert api.get("/api/assets", query_string={"branch": "nope"}) == (404, {"status": 404,
                                                                             "error": "Unknown branch 'nope'"})
    assert api.get("/api/assets", query_string={"branch": "../../etc"})[0] == 404
    assert api.post("/api/translations/home.title/fr", data=b"x", query_string={"branch": "nope"})[0] == 404
    assert api.post("/api/branches", data={"name": "x", "from": "nope"})[0] == 404
    assert api.delete("/api/branches/nope")[0] == 404
    assert api.post("/api/branches/nope/merge")[0] == 404
    assert commit_count(demo[0]) == before


def test_read_only_keys_list_branches_but_only_full_keys_change_them(api, readonly_api):
    assert readonly_api.get("/api/branches")[0] == 200
    assert readonly_api.post("/api/branches", data={"name": "x"})[0] == 403
    api.post("/api/branches", data={"name": "x"})
    assert readonly_api.get("/api/branches/x")[0] == 200
    assert readonly_api.delete("/api/branches/x")[0] == 403
    assert readonly_api.post("/api/branches/x/merge")[0] == 403


def test_writes_on_a_branch_are_commits_there_with_their_own_revisions_and_main_is_untouched(api, demo):
    project = demo[0]
    api.post("/api/branches", data={"name": "feature"})
    main_before = head_of(project, "main")
    main_fr = texts(api, "fr")
    rev_before = api.get("/api/translations/home.title/fr")[1]["revision"]
    translate(api, "home.title", "fr", "Bienvenue, branche", "feature")
    translate(api, "home.title", "fr", "Bienvenue, branche 2", "feature")
    assert api.post("/api/assets", data={"id": "new.key", "text": "New"}, query_string={"branch": "feature"})[0] == 201
    assert head_of(project, "main") == main_before
    assert texts(api, "fr") == main_fr
    assert texts(api, "fr", "feature")["home.title"] == "Bienvenue, branche 2"
    assert api.get("/api/assets/new.key")[0] == 404
    assert api.get("/api/assets/new.key", query_string={"branch": "feature"})[0] == 200
    on_branch = api.get("/api/translations/home.title/fr", query_string={"branch": "feature"})[1]
    assert on_branch["revision"] == rev_before + 2
    assert api.get("/api/translations/home.title/fr")[1]["revision"] == rev_before
    log = git(project.path, "log", "-3", "--format=%an|%s", "feature").splitlines()
    assert log[0].startswith("Demo Owner|") or "|" in log[0]
    assert "Action: translate" in git(project.path, "log", "-1", "--skip=1", "--format=%B", "feature")
    info = api.get("/api/branches/feature")[1]
    assert info["ahead"] == 3 and info["behind"] == 0
    # the working tree is main's: a branch write never touches it
    assert git(project.path, "status", "--porcelain") == ""


def test_a_clean_merge_is_one_merge_commit_on_main_with_every_kind_of_change(api, client, demo):
    project, keys = demo
    api.post("/api/branches", data={"name": "feature"})
    on = {"branch": "feature"}
    translate(api, "home.title", "fr", "Bienvenue (branche)", "feature")
    api.post("/api/assets", data={"id": "feature.key", "text": "Feature text", "notes": "new"}, query_string=on)
    translate(api, "feature.key", "de", "Funktionstext", "feature")
    api.post("/api/translations/home.title/de/flag", data={"flag": "fuzzy"}, query_string=on)
    api.post("/api/tags", data={"name": "beta"}, query_string=on)
    api.post("/api/assets/feature.key/tags", data={"name": "beta"}, query_string=on)
    assert api.post("/api/locales", data={"code": "es"}, query_string=on)[0] == 201
    translate(api, "home.title", "es", "Bienvenido", "feature")
    translate(api, "home.greeting", "fr", "Salut, %s !")  # main moves on meanwhile, elsewhere
    main_before = head_of(project, "main")
    branch_head = head_of(project, "feature")
    status, result = merge(client, keys.full, "feature", query_string={"into": "main"})
    assert status == 200 and result["merged"] is True, result
    head = head_of(project, "main")
    assert head == result["commit"]
    assert git(project.path, "log", "-1", "--format=%P", "main").split() == [main_before, branch_head]
    message = git(project.path, "log", "-1", "--format=%B", "main")
    assert "Action: merge-branch" in message and "Branch: feature" in message
    assert texts(api, "fr")["home.title"] == "Bienvenue (branche)"
    assert texts(api, "fr")["home.greeting"] == "Salut, %s !"
    assert texts(api, "de")["feature.key"] == "Funktionstext"
    assert texts(api, "es")["home.title"] == "Bienvenido"
    assert api.get("/api/translations/home.title/de")[1]["flagged"] is True
    asset = api.get("/api/assets/feature.key")[1]
    assert asset["notes"] == "new" and asset["tags"] == ["beta"]
    assert "beta" in api.get("/api/tags")[1]
    assert api.get("/api/branches/feature")[1]["ahead"] == 0
    # merging again has nothing to bring
    assert merge(client, keys.full, "feature")[1]["merged"] is False
    assert head_of(project, "main") == head


def test_exports_and_archives_of_a_branch_equal_mains_after_a_clean_merge(api, client, demo, monkeypatch):
    import app.exports

    class FixedClock(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    monkeypatch.setattr(app.exports, "datetime", FixedClock)
    api.post("/api/branches", data={"name": "feature"})
    on = {"branch": "feature"}
    translate(api, "home.title", "fr", "Bienvenue (branche)", "feature")
    api.post("/api/assets", data={"id": "feature.key", "text": "Feature text"}, query_string=on)
    translate(api, "feature.key", "ja", "機能", "feature")
    paths = ["/api/export/locale/fr.po", "/api/export/locale/ja.xlf", "/api/export/all.json",
             "/api/export/archive/po.zip", "/api/export/archive/json.tar", "/api/export/template.pot"]
    headers = {"Authorization": f"Loco {demo[1].full}"}
    from_branch = {path: client.get(path, headers=headers, query_string=on).data for path in paths}
    assert merge(client, demo[1].full, "feature")[0] == 200
    for path in paths:
        assert client.get(path, headers=headers).data == from_branch[path], path


def test_a_conflict_is_a_409_listing_both_sides_and_changes_nothing(api, client, demo):
    project, keys = demo
    api.post("/api/branches", data={"name": "feature"})
    base_text = texts(api, "fr")["home.title"]
    translate(api, "home.title", "fr", "Version branche", "feature")
    translate(api, "home.title", "fr", "Version main")
    translate(api, "home.greeting", "fr", "Branche seule %s", "feature")
    head = head_of(project, "main")
    status, body = merge(client, keys.full, "feature")
    assert status == 409 and body["status"] == 409 and body["error"]
    assert body["conflicts"] == [{"asset": "home.title", "locale": "fr", "field": "text", "base": base_text,
                                  "ours": "Version main", "theirs": "Version branche"}]
    assert head_of(project, "main") == head
    assert texts(api, "fr")["home.greeting"] != "Branche seule %s"


RESOLUTIONS = [
    ({"query_string": {"strategy": "theirs"}}, "theirs"),
    ({"query_string": {"strategy": "ours"}}, "ours"),
    ({"data": {"strategy": "theirs"}}, "theirs"),
    ({"json": {"resolve": [{"asset": "home.title", "locale": "fr", "strategy": "theirs"}]}}, "theirs"),
    ({"json": {"strategy": "theirs", "resolve": [{"asset": "home.title", "locale": "fr", "strategy": "ours"}]}},
     "ours"),
    ({"data": {"resolve": '[{"asset": "home.title", "locale": "fr", "strategy": "theirs"}]'}}, "theirs"),
]


def test_conflicts_are_resolved_by_a_strategy_for_the_merge_or_per_key(api, client, demo):
    for number, (how, side) in enumerate(RESOLUTIONS):
        name = f"feature-{number}"
        api.post("/api/branches", data={"name": name})
        translate(api, "home.title", "fr", f"{name} branche", name)
        translate(api, "home.title", "fr", f"{name} main")
        translate(api, "home.greeting", "fr", f"{name} seule %s", name)
        status, body = merge(client, demo[1].full, name, **how)
        assert status == 200 and body["merged"], (how, body)
        assert texts(api, "fr")["home.title"] == f"{name} {'branche' if side == 'theirs' else 'main'}", how
        assert texts(api, "fr")["home.greeting"] == f"{name} seule %s"


def test_a_malformed_resolution_is_a_400(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    translate(api, "home.title", "fr", "Version branche", "feature")
    for how in ({"query_string": {"strategy": "mine"}}, {"json": {"resolve": "nope"}},
                {"json": {"resolve": [{"asset": "home.title", "strategy": "both"}]}},
                {"data": {"resolve": "[not json"}}):
        assert merge(client, demo[1].full, "feature", **how)[0] == 400, how


def test_a_branch_merges_into_another_branch_with_into(api, client, demo):
    api.post("/api/branches", data={"name": "release"})
    api.post("/api/branches", data={"name": "fix", "from": "release"})
    translate(api, "home.title", "fr", "Correctif", "fix")
    status, body = merge(client, demo[1].full, "fix", query_string={"into": "release"})
    assert status == 200 and body["into"] == "release"
    assert texts(api, "fr", "release")["home.title"] == "Correctif"
    assert texts(api, "fr")["home.title"] != "Correctif"
    assert merge(client, demo[1].full, "fix", query_string={"into": "fix"})[0] == 422


def test_an_asset_deleted_on_one_side_and_changed_on_the_other_is_a_conflict(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    assert api.patch("/api/assets/home.title", json={"notes": "changed on main"})[0] == 200
    assert api.delete("/api/assets/home.title", query_string={"branch": "feature"})[0] == 200
    status, body = merge(client, demo[1].full, "feature")
    assert status == 409
    assert body["conflicts"] == [{"asset": "home.title", "locale": None, "field": "asset", "base": "kept",
                                  "ours": "changed", "theirs": "deleted"}]
    assert merge(client, demo[1].full, "feature", query_string={"strategy": "ours"})[0] == 200
    assert api.get("/api/assets/home.title")[1]["notes"] == "changed on main"


def test_an_asset_deleted_on_a_branch_while_main_changed_its_translations_is_a_conflict(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    translate(api, "home.title", "fr", "Accueil (main)")
    assert api.delete("/api/assets/home.title", query_string={"branch": "feature"})[0] == 200
    before = head_of(demo[0], "main")
    status, body = merge(client, demo[1].full, "feature")
    assert status == 409 and head_of(demo[0], "main") == before
    assert body["conflicts"] == [{"asset": "home.title", "locale": None, "field": "asset", "base": "kept",
                                  "ours": "changed", "theirs": "deleted"}]
    resolve = {"resolve": [{"asset": "home.title", "locale": None, "strategy": "theirs"}]}
    assert merge(client, demo[1].full, "feature", json=resolve)[0] == 200
    assert api.get("/api/assets/home.title")[0] == 404


def test_an_asset_deleted_on_a_branch_that_main_left_alone_is_deleted_by_the_merge(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    translate(api, "home.greeting", "fr", "Salut %s (main)")  # another asset's translation: no conflict
    assert api.delete("/api/assets/home.title", query_string={"branch": "feature"})[0] == 200
    assert merge(client, demo[1].full, "feature")[0] == 200
    assert api.get("/api/assets/home.title")[0] == 404


def test_an_asset_field_changed_differently_on_both_sides_is_a_conflict_with_locale_null(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    assert api.patch("/api/assets/home.title", json={"notes": "main notes"})[0] == 200
    assert api.patch("/api/assets/home.title", json={"notes": "branch notes"},
                     query_string={"branch": "feature"})[0] == 200
    status, body = merge(client, demo[1].full, "feature")
    assert status == 409 and body["conflicts"] == [{"asset": "home.title", "locale": None, "field": "notes",
                                                    "base": "", "ours": "main notes", "theirs": "branch notes"}]
    resolved = {"resolve": [{"asset": "home.title", "locale": None, "strategy": "theirs"}]}
    assert merge(client, demo[1].full, "feature", json=resolved)[0] == 200
    assert api.get("/api/assets/home.title")[1]["notes"] == "branch notes"


def test_a_branch_write_whose_ref_and_pack_renames_were_lost_is_replayed_from_its_journal(store, demo):
    """A branch's commits are as durable as main's: its own journal names the head its ref should show."""
    import os

    from storage import branches, operations as ops
    from storage.gitrepo import Person
    from storage.journal import Journal
    from storage.store import Store, utc_now

    project = demo[0]
    branches.create_branch(project, "feature")
    before = project.branch_head("feature").decode()
    with project.transaction(Person("W", "w@x"), "write", "translate", branch="feature") as tx:
        ops.translate(tx, "home.title", "fr", "acknowledged", None, utc_now())
    latest, _ = Journal(project.path / ".git", "feature").read()
    pack_dir = project.path / ".git" / "objects" / "pack"
    temp_pack, temp_index, name = latest.packs[0]
    # as if the power went before the renames reached the disk: old ref, the pack under its temp names
    os.replace(pack_dir / f"{name}.pack", pack_dir / temp_pack)
    os.replace(pack_dir / f"{name}.idx", pack_dir / temp_index)
    (project.path / ".git" / "refs" / "heads" / "feature").write_text(before + "\n")
    reopened = Store(store.data_dir).project(project.id)
    assert reopened.snapshot("feature").translation("home.title", "fr")["text"] == "acknowledged"
    assert head_of(project, "feature") == latest.head
    assert git(project.path, "status", "--porcelain") == ""


def test_a_locale_renamed_differently_on_both_sides_is_a_conflict_with_asset_null(api, client, demo):
    api.post("/api/branches", data={"name": "feature"})
    assert api.patch("/api/locales/fr", json={"name": "French (main)"})[0] == 200
    assert api.patch("/api/locales/fr", json={"name": "French (branch)"}, query_string={"branch": "feature"})[0] == 200
    status, body = merge(client, demo[1].full, "feature")
    assert status == 409 and body["conflicts"] == [{"asset": None, "locale": "fr", "field": "name",
                                                    "base": "French", "ours": "French (main)",
                                                    "theirs": "French (branch)"}]
    assert merge(client, demo[1].full, "feature", query_string={"strategy": "theirs"})[0] == 200
    assert api.get("/api/locales/fr")[1]["name"] == "French (branch)"


def test_threads_writing_main_and_a_branch_at_once_each_land_on_their_own_branch(store, demo):
    """Commit groups hold one branch's commits: writers of two branches taking turns never mix them."""
    import threading

    from storage import branches, operations as ops
    from storage.gitrepo import Person
    from storage.store import utc_now

    project = demo[0]
    branches.create_branch(project, "feature")
    main_before, errors = commit_count(project), []

    def writer(branch: str, locale: str, number: int) -> None:
        try:
            for step in range(8):
                with project.transaction(Person("W", "w@x"), f"{branch} {number} {step}", "translate",
                                         branch=branch) as tx:
                    ops.translate(tx, "home.title", locale, f"{branch} {number} {step}", None, utc_now())
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(branch, locale, number))
               for number in range(3) for branch, locale in (("main", "de"), ("feature", "fr"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert commit_count(project) == main_before + 24
    assert int(git(project.path, "rev-list", "--count", "main..feature")) == 24
    assert project.snapshot("feature").translation("home.title", "de") == project.snapshot_at(
        git(project.path, "merge-base", "main", "feature").strip().encode()).translation("home.title", "de")
    main_fr = project.snapshot().translation("home.title", "fr")["text"]
    assert not main_fr.startswith("feature") and project.snapshot().translation("home.title", "de")["rev"] >= 24
    assert project.snapshot("feature").translation("home.title", "fr")["text"].startswith("feature")
    assert git(project.path, "status", "--porcelain") == ""
