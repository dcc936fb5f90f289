"""Assets, plural forms and asset tags through HTTP (spec §4.1; loco-compat §3.2–3.4)."""
from __future__ import annotations

import pytest

from tests.api import commit_count
from tests.support import git


def test_list_assets_returns_full_records_in_creation_order(api):
    status, assets = api.get("/api/assets")
    assert status == 200
    assert assets[0]["id"] == "home.title"
    assert set(assets[0]) == {"id", "type", "context", "notes", "printf", "created", "modified", "plurals",
                              "tags", "aliases", "progress"}
    assert assets[0]["progress"] == {"translated": 5, "untranslated": 0, "flagged": 0}
    assert api.get("/api/assets.json")[1] == assets


def test_the_list_counts_each_assets_progress_as_its_own_record_does(api, demo):
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})
    api.delete("/api/translations/home.title/de")
    api.post("/api/assets", data={"id": "fresh.key", "text": "New"})
    listed = {asset["id"]: asset["progress"] for asset in api.get("/api/assets")[1]}
    assert listed["home.title"]["flagged"] == 1 and listed["home.title"]["untranslated"] == 1
    assert listed["fresh.key"] == {"translated": 1, "untranslated": 4, "flagged": 0}
    # a fresh application (cold caches) builds the whole list at once: the same counts
    from app import create_app

    cold = create_app(demo[0].path.parent.parent, testing=True).test_client()
    headers = {"Authorization": f"Loco {demo[1].full}"}
    assert {asset["id"]: asset["progress"] for asset in cold.get("/api/assets", headers=headers).get_json()} == listed
    for asset_id, progress in listed.items():
        assert api.get(f"/api/assets/{asset_id}.json")[1]["progress"] == progress


@pytest.mark.parametrize("expression,included,excluded", [
    ("errors", {"errors.network"}, {"home.title"}),
    ("onboarding,errors", {"errors.network", "onboarding.welcome"}, {"home.title"}),
    ("!errors", {"home.title"}, {"errors.network"}),
    ("*", {"home.title"}, set()),
    ("web,!errors", {"home.title"}, {"errors.network"}),
])
def test_asset_tag_filter_takes_comma_lists_star_and_negation(api, expression, included, excluded):
    ids = {asset["id"] for asset in api.get("/api/assets", query_string={"filter": expression})[1]}
    assert included <= ids and not (excluded & ids)


def test_star_filter_excludes_untagged_assets(api):
    api.post("/api/assets", data={"id": "untagged", "text": "x"})
    assert "untagged" not in {a["id"] for a in api.get("/api/assets?filter=*")[1]}
    assert "untagged" in {a["id"] for a in api.get("/api/assets?filter=!*")[1]}


def test_create_asset_answers_201_with_the_asset_and_its_source_translation(api, demo):
    before = commit_count(demo[0])
    status, asset = api.post("/api/assets", data={"id": "cart.title", "text": "Your cart", "type": "html",
                                                   "context": "header", "notes": "Shown on top"})
    assert status == 201
    assert (asset["id"], asset["type"], asset["context"], asset["notes"]) == ("cart.title", "html", "header",
                                                                              "Shown on top")
    assert asset["progress"]["translated"] == 1
    assert api.get("/api/translations/cart.title/en")[1]["translation"] == "Your cart"
    assert commit_count(demo[0]) == before + 1


def test_create_asset_accepts_multipart_forms(api):
    status, asset = api.post("/api/assets", data={"id": "multi.part", "text": "Hi"},
                             content_type="multipart/form-data")
    assert status == 201 and asset["id"] == "multi.part"


def test_a_multipart_part_without_a_name_is_a_400_not_a_crash(api, demo):
    before = commit_count(demo[0])
    body = b'--XX\r\nContent-Disposition: form-data\r\n\r\nmulti.part\r\n--XX--\r\n'
    status, answer = api.post("/api/assets", data=body, content_type="multipart/form-data; boundary=XX")
    assert status == 400 and "no name" in answer["error"]
    assert commit_count(demo[0]) == before


def test_blank_id_makes_a_unique_id_from_the_text(api):
    first = api.post("/api/assets", data={"id": "", "text": "Hello World"})[1]["id"]
    second = api.post("/api/assets", data={"text": "Hello World"})[1]["id"]
    assert first == "hello-world" and second == "hello-world-2"


def test_text_is_required_when_id_is_empty(api):
    status, body = api.post("/api/assets", data={"id": ""})
    assert status == 400 and "text" in body["error"]


def test_default_untranslated_creates_no_source_translation(api):
    api.post("/api/assets", data={"id": "quiet", "text": "Hidden", "default": "untranslated"})
    assert api.get("/api/translations/quiet/en")[1]["translated"] is False


def test_duplicate_asset_id_is_a_409_with_loco_message(api):
    status, body = api.post("/api/assets", data={"id": "home.title", "text": "again"})
    assert status == 409 and body["error"] == 'Asset already exists with ID "home.title"'


@pytest.mark.parametrize("field,value", [("type", "image"), ("default", "maybe")])
def test_invalid_field_values_are_422(api, field, value):
    status, _ = api.post("/api/assets", data={"id": "bad", "text": "x", field: value})
    assert status == 422
    assert api.get("/api/assets/bad.json")[0] == 404


def test_asset_ids_may_be_999_bytes_but_not_1000(api):
    assert api.post("/api/assets", data={"id": "é" * 499 + "x", "text": "x"})[0] == 201
    assert api.post("/api/assets", data={"id": "é" * 500, "text": "x"})[0] == 422


def test_get_asset_with_and_without_json_suffix_and_dotted_ids(api):
    status, asset = api.get("/api/assets/home.title.json")
    assert status == 200 and asset["id"] == "home.title"
    assert api.get("/api/assets/home.title")[1] == asset
    assert api.get("/api/assets/nope.json") == (404, {"status": 404, "error": "Asset not in project"})


def test_asset_whose_id_ends_in_json_is_still_reachable(api):
    api.post("/api/assets", data={"id": "config.json", "text": "x"})
    assert api.get("/api/assets/config.json")[1]["id"] == "config.json"
    assert api.get("/api/assets/config.json.json")[1]["id"] == "config.json"


def test_patch_changes_fields_and_answers_the_full_asset(api):
    status, asset = api.patch("/api/assets/home.title.json",
                              json={"type": "html", "context": "c", "notes": "n", "printf": "java",
                                    "aliases": {"android": "home_title"}})
    assert status == 200
    assert (asset["type"], asset["context"], asset["notes"], asset["printf"], asset["aliases"]) == \
        ("html", "c", "n", "java", {"android": "home_title"})


@pytest.mark.parametrize("body", [{"translated": True}, {"tags": ["x"]}, {"plurals": 2}, {"type": 5}, ["id"]])
def test_patch_rejects_unknown_unpatchable_or_mistyped_fields(api, demo, body):
    before = commit_count(demo[0])
    status, _ = api.patch("/api/assets/home.title.json", json=body)
    assert 400 <= status < 500
    assert commit_count(demo[0]) == before


def test_patch_rejects_a_non_json_body(api):
    assert api.patch("/api/assets/home.title.json", data="id=x", content_type="text/plain")[0] == 400


def test_renaming_an_asset_keeps_translations_history_and_plural_links(api):
    api.post("/api/translations/home.title/fr", data="Accueil")
    status, asset = api.patch("/api/assets/home.title.json", json={"id": "home.heading"})
    assert status == 200 and asset["id"] == "home.heading"
    assert api.get("/api/assets/home.title.json")[0] == 404
    fr = api.get("/api/translations/home.heading/fr")[1]
    assert fr["translation"] == "Accueil" and fr["revision"] == 3
    revisions = api.get("/api/translations/home.heading/fr/revisions")[1]
    assert [r["revision"] for r in revisions] == [3, 2, 1]
    api.patch("/api/assets/notes.count.json", json={"id": "notes.counter"})
    assert [a["id"] for a in api.get("/api/assets/notes.counter/plurals")[1]][0] == "notes.count.other"


def test_renaming_onto_an_existing_id_is_a_409(api):
    assert api.patch("/api/assets/home.title.json", json={"id": "home.greeting"})[0] == 409


def test_delete_asset_removes_translations_in_every_locale_in_one_commit(api, demo):
    project = demo[0]
    before = commit_count(project)
    status, body = api.delete("/api/assets/home.title.json")
    assert (status, body["status"]) == (200, 200)
    assert commit_count(project) == before + 1
    changed = git(project.path, "diff", "--name-only", "HEAD~1", "HEAD").split()
    assert set(changed) == {"assets/0000.json"} | {f"locales/{c}/0000.json" for c in ("en", "fr", "de", "ja", "ar")}
    assert '"home.title"' not in git(project.path, "show", "HEAD:locales/fr/0000.json")
    assert api.get("/api/assets/home.title.json")[0] == 404


# ----------------------------------------------------------------------------- plurals
def test_plural_list_excludes_the_singular(api):
    plurals = api.get("/api/assets/notes.count/plurals")[1]
    assert [a["id"] for a in plurals] == ["notes.count.other", "notes.count.2", "notes.count.3",
                                         "notes.count.4", "notes.count.5"]
    assert api.get("/api/assets/notes.count.json")[1]["plurals"] == 5


def test_create_plural_makes_a_new_asset_with_its_source_text(api):
    api.post("/api/assets", data={"id": "apple", "text": "%d apple"})
    status, plural = api.post("/api/assets/apple/plurals", data={"text": "%d apples"})
    assert status == 200 and plural["progress"]["translated"] > 0
    assert api.get(f"/api/translations/{plural['id']}/en")[1]["translation"] == "%d apples"
    assert [a["id"] for a in api.get("/api/assets/apple/plurals")[1]] == [plural["id"]]
    en = api.get("/api/translations/apple/en")[1]
    assert [(p["id"], p["form"]) for p in en["plurals"]] == [(plural["id"], "other")]


def test_link_existing_asset_as_plural_then_unlink_and_relink(api):
    api.post("/api/assets", data={"id": "pear", "text": "%d pear"})
    api.post("/api/assets", data={"id": "pears", "text": "%d pears"})
    status, linked = api.post("/api/assets/pear/plurals", data={"pid": "pears", "text": "ignored"})
    assert status == 200 and linked["id"] == "pears"
    assert api.get("/api/translations/pears/en")[1]["translation"] == "%d pears"
    assert api.delete("/api/assets/pear/plurals/pears.json") == (200, {"status": 200,
                                                                      "message": "Plural form unlinked"})
    assert api.get("/api/assets/pear/plurals")[1] == []
    assert api.get("/api/assets/pears.json")[0] == 200  # unlinking deletes nothing
    assert api.post("/api/assets/pear/plurals", data={"pid": "pears"})[1]["id"] == "pears"


def test_a_plural_of_a_plural_is_refused(api):
    status, _ = api.post("/api/assets/notes.count.other/plurals", data={"text": "x"})
    assert status == 422
    assert api.post("/api/assets/home.title/plurals", data={"pid": "notes.count"})[0] == 422


def test_plural_endpoints_404_for_a_missing_asset(api):
    assert api.get("/api/assets/nope/plurals")[0] == 404
    assert api.post("/api/assets/nope/plurals", data={"text": "x"})[0] == 404
    assert api.delete("/api/assets/home.title/plurals/nope.json")[0] == 404


def test_translation_record_lists_the_plural_forms_each_locale_uses(api):
    ar = api.get("/api/translations/notes.count/ar")[1]
    assert ar["locale"]["plurals"]["forms"] == ["zero", "one", "two", "few", "many", "other"]
    assert [p["form"] for p in ar["plurals"]] == ["one", "two", "few", "many", "other"]
    fr = api.get("/api/translations/notes.count/fr")[1]
    assert [(p["id"], p["form"]) for p in fr["plurals"]] == [("notes.count.other", "other")]
    assert api.get("/api/translations/notes.count/ja")[1]["plurals"] == []


# ----------------------------------------------------------------------------- tagging
def test_tag_asset_creates_the_tag_and_untag_removes_it(api):
    status, asset = api.post("/api/assets/home.title/tags", data={"name": "Test tag"})
    assert status == 200 and "Test tag" in asset["tags"]
    assert "Test tag" in api.get("/api/tags")[1]
    status, body = api.delete("/api/assets/home.title/tags/Test tag.json")
    assert status == 200 and body["status"] == 200
    assert "Test tag" not in api.get("/api/assets/home.title.json")[1]["tags"]
    assert api.delete("/api/assets/home.title/tags/Test tag.json")[0] == 404


def test_tag_asset_needs_a_name(api):
    assert api.post("/api/assets/home.title/tags", data={})[0] == 400


def test_asset_list_reflects_every_write_and_ugly_gives_the_same_records(api):
    before = {a["id"]: a for a in api.get("/api/assets")[1]}
    api.post("/api/translations/settings.beta.label/de", data=b"Beta-Funktionen testen")
    api.post("/api/locales", data={"code": "es"})
    after = {a["id"]: a for a in api.get("/api/assets")[1]}
    assert before["settings.beta.label"]["progress"] == {"translated": 1, "untranslated": 4, "flagged": 0}
    assert after["settings.beta.label"]["progress"] == {"translated": 2, "untranslated": 4, "flagged": 0}
    assert after["home.title"]["progress"]["untranslated"] == 1  # the new locale counts everywhere
    assert api.get("/api/assets?ugly")[1] == list(after.values())
