"""Locales (with CLDR plural rules, progress and QA errors) and tags through HTTP (spec §4.4, §4.5)."""
from __future__ import annotations

import pytest

from tests.api import commit_count

EXPECTED_PLURALS = {"en": (2, ["one", "other"]), "fr": (2, ["one", "other"]), "ru": (3, ["one", "few", "many"]),
                    "ja": (1, ["other"]), "ar": (6, ["zero", "one", "two", "few", "many", "other"])}


def test_locales_list_source_first_with_full_records(api):
    status, locales = api.get("/api/locales")
    assert status == 200
    assert [l["code"] for l in locales] == ["en", "fr", "de", "ja", "ar"]
    assert locales[0]["source"] is True and locales[0]["native"] is True and locales[1]["source"] is False
    assert set(locales[0]["progress"]) == {"translated", "untranslated", "flagged", "words"}


@pytest.mark.parametrize("code", sorted(EXPECTED_PLURALS))
def test_plural_rules_come_from_cldr(api, code):
    if code == "ru":
        api.post("/api/locales", data={"code": "ru"})
    plurals = api.get(f"/api/locales/{code}")[1]["plurals"]
    assert (plurals["length"], plurals["forms"]) == EXPECTED_PLURALS[code]
    assert "n" in plurals["equation"] or plurals["length"] == 1


@pytest.mark.parametrize("given,code,name", [("es", "es", "Spanish"), ("pt-BR", "pt-BR", "Portuguese (Brazil)"),
                                             ("zh_Hant_TW", "zh-Hant-TW", "Chinese (Traditional, Taiwan)"),
                                             ("en-GB-x-abcde", "en-GB-x-abcde", "English (United Kingdom)")])
def test_create_locale_validates_and_names_it_from_cldr(api, given, code, name):
    status, locale = api.post("/api/locales", data={"code": given})
    assert status == 201
    assert locale["code"] == code and locale["name"].startswith(name.split(" (")[0])
    assert locale["progress"]["untranslated"] == len(api.get("/api/assets")[1])


@pytest.mark.parametrize("code", ["", "x", "12", "fr FR", "../etc", "qq-ZZ-toolongsubtag", "zz"])
def test_invalid_locale_codes_are_refused_without_a_commit(api, demo, code):
    before = commit_count(demo[0])
    status, _ = api.post("/api/locales", data={"code": code})
    assert status in (400, 422)
    assert commit_count(demo[0]) == before


def test_duplicate_locale_is_a_409(api):
    assert api.post("/api/locales", data={"code": "fr"}) == (409, {"status": 409, "error": "Locale already exists"})
    assert api.post("/api/locales", data={"code": "fr_FR"})[0] == 201  # a different locale


def test_unknown_locale_is_a_404(api):
    assert api.get("/api/locales/ru") == (404, {"status": 404, "error": "Locale not in project"})


def test_patch_locale_renames_and_recodes_keeping_translations(api):
    status, locale = api.patch("/api/locales/fr", json={"name": "Renamed OK"})
    assert status == 200 and locale["name"] == "Renamed OK"
    status, locale = api.patch("/api/locales/fr", json={"code": "fr-FR"})
    assert status == 200 and locale["code"] == "fr-FR" and locale["name"] == "Renamed OK"
    assert api.get("/api/translations/home.title/fr-FR")[1]["translation"] == "Bienvenue dans Acme Notes"
    assert api.get("/api/locales/fr")[0] == 404


@pytest.mark.parametrize("body,status", [({"rubbish": 1}, 422), ({"name": 5}, 422), ({"code": "nope nope"}, 422),
                                         ({"code": "de"}, 409), ({"name": " "}, 422)])
def test_patch_locale_rejects_bad_bodies(api, body, status):
    assert api.patch("/api/locales/fr", json=body)[0] == status


def test_delete_locale_removes_its_translations_but_never_the_source(api, demo):
    assert api.delete("/api/locales/en") == (422, {"status": 422, "error": "You cannot delete the source locale"})
    status, body = api.delete("/api/locales/ja")
    assert status == 200 and body["status"] == 200
    assert not (demo[0].path / "locales" / "ja").exists()
    assert api.post("/api/locales", data={"code": "ja"})[1]["progress"]["translated"] == 0


def test_progress_counts_statuses_and_flags(api):
    progress = api.get("/api/locales/fr/progress")[1]
    assert progress["fuzzy"] == 1 and progress["provisional"] == 1 and progress["flagged"] == 2
    assert progress["translated"] + progress["untranslated"] == len(api.get("/api/assets")[1])
    assert "rejected" not in progress
    filtered = api.get("/api/locales/fr/progress", query_string={"filter": "errors"})[1]
    assert filtered["translated"] + filtered["untranslated"] == \
        len(api.get("/api/assets", query_string={"filter": "errors"})[1])


def _errors(api, locale):
    return {e["id"]: e for e in api.get(f"/api/locales/{locale}/errors")[1]}


def test_errors_report_missing_and_added_placeholders(api):
    api.post("/api/translations/home.greeting/de", data="Hallo!".encode())
    api.post("/api/translations/editor.last_edited/de", data="Von %1$s am %2$s %3$s".encode())
    found = _errors(api, "de")
    assert found["home.greeting"]["errors"] == ["Missing placeholder %s"]
    assert found["home.greeting"]["source"] == "Hello, %s!" and found["home.greeting"]["target"] == "Hallo!"
    assert found["editor.last_edited"]["errors"] == ["Unexpected placeholder %3$s"]


def test_errors_check_icu_placeholders(api):
    api.post("/api/translations/sharing.invite/de", data="{nom} hat dich zu {notebook} eingeladen.".encode())
    assert _errors(api, "de")["sharing.invite"]["errors"] == ["Missing placeholder {name}",
                                                              "Unexpected placeholder {nom}"]


def test_errors_check_html_tags_of_html_assets(api):
    api.post("/api/translations/onboarding.welcome/de", data="<b>Willkommen</b> bei Acme".encode())
    errors = _errors(api, "de")["onboarding.welcome"]["errors"]
    assert any(e.startswith("Missing HTML tag <strong>") for e in errors)
    assert "Unexpected HTML tag <b>" in errors


def test_errors_report_empty_whitespace_and_edge_spaces(api):
    api.post("/api/translations/home.title/de", data=b"   ")
    api.post("/api/translations/home.new_note/de", data=b" Neue Notiz")
    found = _errors(api, "de")
    assert found["home.title"]["errors"] == ["Translation is only whitespace"]
    assert found["home.new_note"]["errors"] == ["Leading whitespace differs from the source"]


def test_correct_translations_have_no_errors(api):
    found = _errors(api, "fr")
    assert "home.greeting" not in found and "editor.last_edited" not in found


# ----------------------------------------------------------------------------- tags
def test_tags_are_plain_strings(api):
    assert api.get("/api/tags") == (200, ["web", "mobile", "onboarding", "errors"])


def test_create_tag_is_201_and_a_duplicate_409(api):
    assert api.post("/api/tags", data={"name": "release-2"}) == (201, {"status": 201, "message": "Tag created"})
    assert api.post("/api/tags", data={"name": "release-2"})[0] == 409
    assert api.post("/api/tags", data={})[0] == 400
    assert "release-2" in api.get("/api/tags.json")[1]


def test_tag_many_assets_with_a_raw_comma_separated_body(api, demo):
    api.post("/api/tags", data={"name": "batch"})
    before = commit_count(demo[0])
    status, _ = api.post("/api/tags/batch.json", data=b"home.title, home.greeting,editor.save",
                         content_type="text/plain")
    assert status == 200 and commit_count(demo[0]) == before + 1
    tagged = {a["id"] for a in api.get("/api/assets", query_string={"filter": "batch"})[1]}
    assert tagged == {"home.title", "home.greeting", "editor.save"}


def test_tagging_missing_assets_or_tags_changes_nothing(api, demo):
    api.post("/api/tags", data={"name": "batch"})
    before = commit_count(demo[0])
    assert api.post("/api/tags/batch.json", data=b"home.title,nope")[0] == 404
    assert api.post("/api/tags/unknown.json", data=b"home.title")[0] == 404
    assert commit_count(demo[0]) == before
    assert "batch" not in api.get("/api/assets/home.title.json")[1]["tags"]


def test_rename_tag_updates_every_asset(api):
    assert api.patch("/api/tags/web.json", json={"name": "website"}) == (200, {"status": 200,
                                                                              "message": "Tag renamed"})
    assert "website" in api.get("/api/assets/home.title.json")[1]["tags"]
    assert "web" not in api.get("/api/tags")[1]
    assert api.patch("/api/tags/website.json", json={"name": "mobile"})[0] == 409
    assert api.patch("/api/tags/website.json", json={"colour": "red"})[0] == 422
    assert api.patch("/api/tags/nope.json", json={"name": "x"})[0] == 404


def test_delete_tag_removes_it_from_every_asset(api):
    assert api.delete("/api/tags/errors.json") == (200, {"status": 200, "message": "Tag deleted"})
    assert not api.get("/api/assets", query_string={"filter": "errors"})[1]
    assert api.delete("/api/tags/errors.json")[0] == 404


def test_tag_names_with_spaces_and_plus_signs_work_in_paths(api):
    api.post("/api/assets/home.title/tags", data={"name": "messages+intl-icu"})
    assert api.post("/api/tags/messages+intl-icu.json", data=b"home.greeting")[0] == 200
    assert api.delete("/api/assets/home.title/tags/messages+intl-icu.json")[0] == 200


def test_progress_kept_up_to_date_by_writes_equals_a_fresh_count(api, demo, data_dir):
    from storage.store import Store

    api.get("/api/locales")  # counts cached now, then updated write by write
    steps = [("post", "/api/translations/home.title/de", b"Hallo"), ("post", "/api/translations/home.title/de", b""),
             ("post", "/api/translations/home.greeting/de", b"Hallo %s"),
             ("flag", "/api/translations/home.greeting/de/flag", {"flag": "rejected"}),
             ("flag", "/api/translations/home.greeting/de/flag", {"flag": "fuzzy"}),
             ("post", "/api/translations/settings.beta.label/de", b"   "),
             ("delete", "/api/translations/home.new_note/de", None),
             ("delete", "/api/translations/home.greeting/de/flag", None)]
    for kind, path, body in steps:
        if kind == "delete":
            assert api.delete(path)[0] == 200
        else:
            assert api.post(path, data=body)[0] == 200
        api.get("/api/locales/de/progress")
    fresh = Store(data_dir).project(demo[0].id).snapshot()  # another handle: nothing cached
    assert demo[0].snapshot().locale_progress("de") == fresh.locale_progress("de")
