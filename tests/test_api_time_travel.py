"""Time travel (`?ref=` on every read of project data) and GET /api/diff between two versions."""
from __future__ import annotations

import pytest

from app.openapi import build_document
from tests.conftest import auth
from tests.support import git
from tests.test_api_auth_matrix import GETS, call, ids

EXPORTS = ["/api/export/locale/fr.json", "/api/export/all.json", "/api/export/locale/de.csv",
           "/api/export/template.json", "/api/export/locale/fr.po", "/api/export/locale/ja.arb",
           "/api/export/locale/de.sql", "/api/export/archive/json.zip"]


def head(project) -> str:
    return project.repo.head().decode()


def tag(project, name: str) -> None:
    git(project.path, "tag", name)


@pytest.mark.parametrize("path", EXPORTS)
def test_an_export_at_a_ref_equals_the_export_made_back_then(demo, client, api, path):
    project, keys = demo
    then = head(project)
    # exported "back then" at the commit's own time, as a ref export is dated by its commit
    old = client.get(path, query_string={"ref": "HEAD"}, **auth(keys.export))
    assert old.status_code == 200
    api.post("/api/translations/home.title/fr", data="Plus tard".encode())
    api.post("/api/translations/home.title/de", data="Später".encode())
    api.post("/api/assets", data={"id": "later.asset", "text": "Later"})
    api.post("/api/translations/later.asset/ja", data="後で".encode())  # untranslated units are left out
    again = client.get(path, query_string={"ref": then}, **auth(keys.export))
    assert again.status_code == 200
    assert again.data == old.data
    assert client.get(path, **auth(keys.export)).data != old.data


def test_a_plain_export_then_a_ref_export_of_that_commit_are_byte_equal(demo, client, api):
    project, keys = demo
    before = client.get("/api/export/locale/fr.json", **auth(keys.full)).data
    then = head(project)
    api.post("/api/translations/home.title/fr", data="Encore".encode())
    assert client.get("/api/export/locale/fr.json", query_string={"ref": then}, **auth(keys.full)).data == before


def test_reads_at_a_ref_answer_from_that_commit(demo, api):
    project, _ = demo
    tag(project, "before-edits")
    original = api.get("/api/translations/home.title/fr")[1]
    api.post("/api/translations/home.title/fr", data="Nouveau titre".encode())
    api.post("/api/assets", data={"id": "brand.new", "text": "New"})
    api.post("/api/locales", data={"code": "es"})
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Nouveau titre"
    for ref in ("before-edits", "HEAD~3", git(project.path, "rev-parse", "before-edits").strip()):
        status, body = api.get("/api/translations/home.title/fr", query_string={"ref": ref})
        assert status == 200 and body == original
    assert api.get("/api/translations/home.title/fr", query_string={"ref": "HEAD~1"})[1]["translation"] \
        == "Nouveau titre"
    ids = [asset["id"] for asset in api.get("/api/assets", query_string={"ref": "before-edits"})[1]]
    assert "brand.new" not in ids and "brand.new" in [a["id"] for a in api.get("/api/assets")[1]]
    codes = [locale["code"] for locale in api.get("/api/locales", query_string={"ref": "before-edits"})[1]]
    assert "es" not in codes
    revisions = api.get("/api/translations/home.title/fr/revisions", query_string={"ref": "before-edits"})[1]
    assert revisions[0]["translation"] == original["translation"]
    abbreviated = git(project.path, "rev-parse", "--short", "before-edits").strip()
    assert api.get("/api/translations/home.title/fr", query_string={"ref": abbreviated})[1] == original


@pytest.mark.parametrize("ref", ["no-such-tag", "HEAD~100000", "0" * 40, "--all", "HEAD..HEAD~1"])
def test_an_unknown_ref_is_a_json_404(api, ref):
    status, body = api.get("/api/translations/home.title/fr", query_string={"ref": ref})
    assert status == 404 and "Unknown ref" in body["error"]
    assert api.get("/api/export/locale/fr.json", query_string={"ref": ref})[0] == 404


def test_a_write_with_a_ref_is_refused(api):
    status, body = api.post("/api/translations/home.title/fr", query_string={"ref": "HEAD~1"}, data=b"x")
    assert status == 400 and "ref" in body["error"]
    assert api.get("/api/translations/home.title/fr")[1]["translation"] != "x"


# ----------------------------------------------------------------------------- diff
def test_diff_between_two_tags_lists_exactly_the_changes_in_between(demo, api):
    project, _ = demo
    tag(project, "v1")
    previous = {(a, l): api.get(f"/api/translations/{a}/{l}")[1]["translation"]
                for a, l in (("home.title", "fr"), ("home.greeting", "de"), ("home.new_note", "fr"))}
    api.post("/api/translations/home.title/fr", data="Titre 2".encode())
    api.post("/api/translations/home.title/fr", data="Titre 3".encode())
    api.post("/api/translations/home.greeting/de", data="Hallo 2 %s".encode())
    api.delete("/api/translations/home.new_note/fr")
    api.post("/api/assets", data={"id": "diff.new", "text": "Fresh"})
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})  # no change, no commit
    tag(project, "v2")
    api.post("/api/translations/home.title/fr", data="after v2".encode())
    status, changes = api.get("/api/diff", query_string={"from": "v1", "to": "v2"})
    assert status == 200
    found = {(c["asset"], c["locale"]): c for c in changes}
    assert set(found) == {("home.title", "fr"), ("home.greeting", "de"), ("home.new_note", "fr"), ("diff.new", "en")}
    assert len(changes) == 4
    assert (found["home.title", "fr"]["old"], found["home.title", "fr"]["new"]) == (previous["home.title", "fr"],
                                                                                  "Titre 3")
    assert found["home.title", "fr"]["flag"] == "fuzzy"
    assert found["home.greeting", "de"]["new"] == "Hallo 2 %s"
    assert (found["home.new_note", "fr"]["old"], found["home.new_note", "fr"]["new"]) == (
        previous["home.new_note", "fr"], None)
    assert (found["diff.new", "en"]["old"], found["diff.new", "en"]["new"]) == (None, "Fresh")
    in_range = set(git(project.path, "rev-list", "v1..v2").split())
    for change in changes:
        assert change["commit"] in in_range
        assert change["author"]["name"] == "Demo Owner"
    greeting = git(project.path, "log", "-1", "--format=%s", found["home.greeting", "de"]["commit"])
    assert greeting.startswith("Translate home.greeting [de]")
    flagged = git(project.path, "log", "-1", "--format=%s", found["home.title", "fr"]["commit"])
    assert flagged.startswith("Flag home.title [fr]")  # the newest change to that entry


def test_diff_as_a_unified_diff_of_the_canonical_files(demo, client, api):
    project, keys = demo
    api.post("/api/translations/home.title/fr", data="Avant".encode())
    tag(project, "a")
    api.post("/api/translations/home.title/fr", data="Après".encode())
    response = client.get("/api/diff", query_string={"from": "a", "to": "HEAD", "format": "diff"},
                          **auth(keys.readonly))
    assert response.status_code == 200 and response.mimetype == "text/x-diff"
    text = response.get_data(as_text=True)
    assert text == git(project.path, "diff", "a", "HEAD")
    assert "--- a/locales/fr/0000.json" in text
    assert any(line.startswith("-") and "Avant" in line for line in text.splitlines())
    assert any(line.startswith("+") and "Après" in line for line in text.splitlines())


def test_a_bare_diff_shows_the_latest_change(api):
    api.post("/api/translations/home.title/ja", data="最新".encode())
    status, changes = api.get("/api/diff")
    assert status == 200
    assert [(c["asset"], c["locale"], c["new"]) for c in changes] == [("home.title", "ja", "最新")]


def test_diff_refuses_unknown_refs_formats_and_export_keys(demo, client, api):
    _, keys = demo
    assert api.get("/api/diff", query_string={"from": "nope"})[0] == 404
    assert api.get("/api/diff", query_string={"format": "html"})[0] == 400
    assert client.get("/api/diff", **auth(keys.export)).status_code == 403


# ----------------------------------------------------------------------------- the OpenAPI description
def documented_parameters(route) -> dict[str, dict]:
    operation = build_document()["paths"][route.openapi_path()]["get"]
    return {parameter["name"]: parameter for parameter in operation.get("parameters", [])
            if parameter.get("in") == "query"}


DATA_READS = [route for route in GETS if route.names_demo_objects and "ref" in documented_parameters(route)]


def test_the_reads_of_project_data_document_ref():
    documented = {route.rule for route in DATA_READS}
    for rule in ("/api/assets", "/api/locales", "/api/translations/<path:asset_id>/<locale>",
                 "/api/export/locale/<locale>.<ext>", "/api/export/all.<ext>"):
        assert any(found.startswith(rule) for found in documented), rule
    assert "Time travel" in documented_parameters(DATA_READS[0])["ref"]["description"]


@pytest.mark.parametrize("route", DATA_READS, ids=ids(DATA_READS))
def test_every_read_documented_with_ref_answers_from_that_commit_or_404(demo, client, route):
    """What the description promises for `ref`, each such route does: HEAD is the present, an unknown ref 404."""
    _, keys = demo
    now = call(client, route, **auth(keys.full))
    at_head = client.get(route.url(), query_string={"ref": "HEAD"}, **auth(keys.full))
    assert (at_head.status_code, at_head.mimetype) == (now.status_code, now.mimetype)
    unknown = client.get(route.url(), query_string={"ref": "no-such-ref"}, **auth(keys.full))
    assert unknown.status_code == 404, unknown.get_data(as_text=True)
    assert "Unknown ref" in unknown.get_json()["error"]


def test_the_diff_endpoint_is_documented_with_its_refs_and_formats():
    operation = build_document()["paths"]["/api/diff"]["get"]
    parameters = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert {"from", "to", "format"} <= set(parameters)
    assert parameters["format"]["schema"]["enum"] == ["json", "diff"]
    assert {"application/json", "text/x-diff"} == set(operation["responses"]["200"]["content"])
    assert "404" in operation["responses"] and operation["x-gloss-access"] == ["full", "readonly"]
