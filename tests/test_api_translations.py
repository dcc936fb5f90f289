"""Translations through HTTP: revisions, raw bodies, flags, erasing, history (spec §3, §4.6)."""
from __future__ import annotations

import pytest

from tests.api import commit_count
from tests.support import git


def test_untranslated_translation_is_a_record_not_a_404(api):
    api.post("/api/assets", data={"id": "fresh", "text": "Fresh"})
    status, record = api.get("/api/translations/fresh/de")
    assert status == 200
    assert (record["id"], record["translated"], record["flagged"], record["revision"], record["modified"]) == \
        ("fresh", False, False, 0, None)
    assert record["locale"]["code"] == "de" and record["status"] == "untranslated"


def test_translation_record_has_loco_fields(api):
    record = api.get("/api/translations/home.title/fr")[1]
    assert set(record) == {"id", "status", "flagged", "flag", "translated", "translation", "revision",
                           "comments", "modified", "author", "flagger", "locale", "plurals"}
    assert record["author"]["name"] == "Sam Okafor"
    assert set(record["locale"]) == {"code", "name", "source", "native", "plurals", "progress"}


def test_state_table_of_the_specification(api, demo):
    """no translation --POST--> translated rev 1 --POST--> rev n+1, one commit each (spec §3)."""
    project = demo[0]
    api.post("/api/assets", data={"id": "walk", "text": "Walk"})
    assert api.get("/api/translations/walk/fr")[1]["translated"] is False
    before = commit_count(project)
    expected = 0
    for text in ("Marcher", "Marche", "Marche"):  # identical text still bumps: the spec wins over Loco
        expected += 1
        status, record = api.post("/api/translations/walk/fr", data=text.encode(),
                                  content_type="application/octet-stream")
        assert status == 200 and record["translated"] is True and record["revision"] == expected
        assert record["translation"] == text
    assert commit_count(project) == before + 3
    trailers = git(project.path, "log", "-1", "--format=%B")
    assert "Asset: walk" in trailers and "Locale: fr" in trailers and "Revision: 3" in trailers
    assert "Action: translate" in trailers
    assert git(project.path, "log", "-1", "--format=%an") == "Demo Owner\n"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "application/json", "multipart/form-data; boundary=x", None])
def test_translation_text_is_the_raw_body_whatever_the_content_type(api, content_type):
    text = 'a=1&b="q" {json} \\ ünï\nline'
    kwargs = {"data": text.encode()}
    if content_type:
        kwargs["headers"] = {"Content-Type": content_type}
    status, record = api.post("/api/translations/home.title/de", **kwargs)
    assert status == 200 and record["translation"] == text


def test_invalid_utf8_body_is_a_400_and_changes_nothing(api, demo):
    before = commit_count(demo[0])
    assert api.post("/api/translations/home.title/de", data=b"\xff\xfe bad")[0] == 400
    assert commit_count(demo[0]) == before


def test_empty_body_marks_the_translation_untranslated(api):
    status, record = api.post("/api/translations/home.title/de", data=b"")
    assert status == 200 and record["translated"] is False and record["revision"] == 0


def test_translating_needs_an_existing_asset_and_locale(api):
    assert api.post("/api/translations/nope/fr", data=b"x") == (404, {"status": 404,
                                                                      "error": "Asset not in project"})
    assert api.post("/api/translations/home.title/ru", data=b"x") == (404, {"status": 404,
                                                                            "error": "Locale not in project"})


def test_locale_segment_accepts_underscore_and_case_variants(api):
    api.post("/api/locales", data={"code": "pt-BR"})
    assert api.post("/api/translations/home.title/pt_BR", data="Bem-vindo".encode())[0] == 200
    assert api.get("/api/translations/home.title/pt-br")[1]["translation"] == "Bem-vindo"


def test_all_translations_of_an_asset_include_untranslated_locales_source_first(api):
    status, records = api.get("/api/translations/settings.beta.label.json")
    assert status == 200
    assert [r["locale"]["code"] for r in records] == ["en", "fr", "de", "ja", "ar"]
    assert records[0]["translated"] is True and not any(r["translated"] for r in records[1:])
    assert api.get("/api/translations/nope.json")[0] == 404


def test_legacy_locale_json_spelling_reads_and_writes_one_translation(api):
    assert api.get("/api/translations/home.title/fr.json")[1]["id"] == "home.title"
    assert api.post("/api/translations/home.title/de.json", data=b"Willkommen")[1]["translation"] == "Willkommen"


def test_delete_erases_text_and_revision(api, demo):
    status, body = api.delete("/api/translations/home.title/fr")
    assert status == 200 and body["message"].endswith("translation deleted")
    record = api.get("/api/translations/home.title/fr")[1]
    assert (record["translated"], record["revision"], record["translation"]) == (False, 0, "")
    assert api.delete("/api/translations/home.title/fr") == \
        (404, {"status": 404, "error": "Asset not translated in this locale"})
    assert api.post("/api/translations/home.title/fr", data="Salut".encode())[1]["revision"] == 1
    assert [r["revision"] for r in api.get("/api/translations/home.title/fr/revisions")[1]] == [1]


@pytest.mark.parametrize("flag", ["fuzzy", "incorrect", "incomplete", "provisional", "unapproved", "rejected"])
def test_flag_keeps_translated_and_unflag_clears(api, flag):
    status, body = api.post("/api/translations/home.title/fr/flag", data={"flag": flag})
    assert status == 200 and body["message"] == f'Flagged as "{flag.capitalize()}"'
    record = api.get("/api/translations/home.title/fr")[1]
    assert (record["flagged"], record["translated"], record["flag"], record["status"]) == (True, True, flag, flag)
    assert record["flagger"]["name"] == "Demo Owner"
    assert api.delete("/api/translations/home.title/fr/flag") == (200, {"status": 200, "message": "Unflagged"})
    record = api.get("/api/translations/home.title/fr")[1]
    assert (record["flagged"], record["flag"], record["flagger"]) == (False, "", None)


def test_one_flag_at_a_time(api):
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})
    api.post("/api/translations/home.title/fr/flag", data={"flag": "rejected"})
    assert api.get("/api/translations/home.title/fr")[1]["flag"] == "rejected"


def test_flag_defaults_to_fuzzy_and_rejects_unknown_flags(api):
    assert api.post("/api/translations/home.title/fr/flag", data={})[1]["message"] == 'Flagged as "Fuzzy"'
    assert api.post("/api/translations/home.title/fr/flag", data={"flag": "shiny"})[0] == 422


def test_flagging_an_untranslated_translation_is_a_404(api):
    assert api.post("/api/translations/settings.beta.label/fr/flag", data={"flag": "fuzzy"})[0] == 404
    assert api.delete("/api/translations/home.title/de/flag")[0] == 404


def test_a_new_text_clears_the_flag(api):
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})
    assert api.post("/api/translations/home.title/fr", data=b"Accueil")[1]["flagged"] is False


def test_revisions_are_read_from_git_newest_first_with_author_and_time(api, demo):
    status, revisions = api.get("/api/translations/notes.empty/fr/revisions")
    assert status == 200
    assert [r["revision"] for r in revisions] == [3, 2, 1]
    assert revisions[0]["author"]["name"] and revisions[0]["modified"].endswith("+00:00")
    assert set(revisions[0]) == {"status", "flagged", "flag", "translated", "translation", "revision",
                                 "modified", "author", "flagger"}
    assert api.get("/api/translations/settings.beta.label/fr/revisions")[1] == []


def test_request_method_override_deletes_through_a_form_post(api):
    status, body = api.post("/api/translations/home.title/fr/flag", data={"REQUEST_METHOD": "DELETE"})
    assert status == 404  # DELETE flag on an unflagged translation: the override reached the DELETE route
    api.post("/api/translations/home.title/fr/flag", data={"flag": "fuzzy"})
    assert api.post("/api/translations/home.title/fr/flag", data={"REQUEST_METHOD": "DELETE"})[1]["message"] \
        == "Unflagged"


def test_request_method_override_patches_with_form_fields(api):
    status, asset = api.post("/api/assets/home.title.json", data={"REQUEST_METHOD": "PATCH", "notes": "via form"})
    assert status == 200 and asset["notes"] == "via form"
