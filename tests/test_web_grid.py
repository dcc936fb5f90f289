"""The translator's grid (/translate/<locale>) through Flask's test client: filters, pages, access by key type,
saves as commits (plain forms and the script's JSON), lost races, flags, checks, suggestions, plurals, RTL."""
from __future__ import annotations

import re
from html import unescape

import pytest

import app.web.views as views
from tests.api import Api, chunked_project, commit_count
from tests.support import git
from tests.test_web_pages import form_token, page, sign_in

JSON = {"Accept": "application/json"}
CELL = re.compile(r'<div class="cell state-(\w+)" id="cell-[\d-]+" data-state="\w+" data-asset="([^"]+)">')


def cells(html: str) -> list[tuple[str, str]]:
    """(asset, state) of every cell of a grid page, in order."""
    return [(unescape(asset), state) for state, asset in CELL.findall(html)]


def save(client, locale: str, asset: str, text: str, base: str, json: bool = False, **fields):
    return client.post(f"/translate/{locale}/save", headers=JSON if json else {},
                       data=dict({"csrf": form_token(client), "asset": asset, "text": text, "base": base}, **fields))


@pytest.fixture
def full(client, demo):
    assert sign_in(client, demo[1].full).status_code == 302
    return client


@pytest.fixture
def chunked(app, client, store, keystore):
    """30 assets a0..a29 in chunks of ten; French has a0..a9, a5 flagged; a20..a29 tagged `late`."""
    project, api = chunked_project(client, store, keystore, "Paged", lambda i: {"fr": f"Texte {i}"} if i < 10 else {})
    assert api.post("/api/translations/a5/fr/flag")[0] == 200
    assert api.post("/api/tags", data={"name": "late"})[0] in (200, 201)
    for i in range(20, 30):
        assert api.post(f"/api/assets/a{i}/tags", data={"name": "late"})[0] in (200, 201)
    assert sign_in(client, api.key).status_code == 302
    return project, api


# ----------------------------------------------------------------------------- reading
def test_the_grid_shows_each_source_beside_its_translation_with_a_form_per_cell(full):
    html = page(full, "/translate/fr")
    assert "Translate French" in html and 'lang="en" dir="ltr">Welcome to Acme Notes</span>' in html
    assert re.search(r'<textarea id="t-1-1" name="text" rows="2" lang="fr" dir="ltr">[^<]+</textarea>', html)
    assert "grid.js" in html and "<script>" not in html  # the app's own file, nothing inline


def test_the_state_filter_lists_only_the_rows_in_that_state(full, chunked):
    assert {state for _, state in cells(page(full, "/translate/fr?state=untranslated"))} == {"untranslated"}
    assert cells(page(full, "/translate/fr?state=flagged")) == [("a5", "flagged")]
    translated = cells(page(full, "/translate/fr?state=translated"))
    assert [asset for asset, _ in translated] == [f"a{i}" for i in range(10) if i != 5]
    assert len(cells(page(full, "/translate/fr"))) == 30


def test_tag_and_text_filters_combine_with_the_state(full, chunked):
    assert [a for a, _ in cells(page(full, "/translate/fr?tag=late&state=untranslated"))] == \
        [f"a{i}" for i in range(20, 30)]
    assert cells(page(full, "/translate/fr?tag=late&state=translated")) == []
    assert [a for a, _ in cells(page(full, "/translate/fr?q=texte 7"))] == ["a7"]  # a translation's words
    assert [a for a, _ in cells(page(full, "/translate/fr?q=TEXT 2&state=untranslated"))] == \
        ["a20", "a21", "a22", "a23", "a24", "a25", "a26", "a27", "a28", "a29"]  # the source's, any case
    assert [a for a, _ in cells(page(full, '/translate/fr?q="'))] == []


def test_pages_continue_after_the_last_row_of_the_previous_one(full, chunked, monkeypatch):
    monkeypatch.setattr(views, "GRID_ROWS_PER_PAGE", 4)
    seen, url = [], "/translate/fr?state=untranslated"
    while url:
        html = page(full, url)
        seen += [asset for asset, _ in cells(html)]
        found = re.search(r'<a href="([^"]+)" rel="next"', html)
        url = unescape(found.group(1)) if found else None
    assert seen == [f"a{i}" for i in range(10, 30)]  # across chunk boundaries, each row once


def test_bad_filters_are_refused_with_a_4xx_page_and_json_for_the_script(full):
    assert "state must be one of" in page(full, "/translate/fr?state=done", 400)
    page(full, "/translate/xx", 404)
    response = full.get("/translate/fr/checks?asset=nope&text=x", headers=JSON)
    assert response.status_code == 404 and response.get_json()["status"] == 404


def test_a_readonly_key_sees_the_grid_without_edit_controls_and_cannot_save(client, demo):
    sign_in(client, demo[1].readonly)
    html = page(client, "/translate/fr")
    assert "Welcome to Acme Notes" in html
    assert "<textarea" not in html and "grid.js" not in html and 'class="save"' not in html
    assert save(client, "fr", "home.title", "Forged", "").status_code == 403
    export = client.application.test_client()
    sign_in(export, demo[1].export)
    assert export.get("/translate/fr").status_code == 403


# ----------------------------------------------------------------------------- writing
def test_a_plain_form_save_is_one_commit_by_the_keys_user_and_goes_back_to_the_same_page(full, demo):
    project = demo[0]
    before = commit_count(project)
    response = save(full, "ar", "home.greeting", "مرحبًا %s!", "", state="untranslated", q="hello")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/translate/ar?state=untranslated&q=hello")
    assert commit_count(project) == before + 1
    assert git(project.path, "log", "-1", "--format=%an|%s").strip() == "Demo Owner|Translate home.greeting [ar]"
    status, record = Api(full, demo[1].full).get("/api/translations/home.greeting/ar")
    assert (status, record["translation"]) == (200, "مرحبًا %s!")
    assert "Saved home.greeting [ar]" in page(full, response.headers["Location"])
    assert save(full, "ar", "home.greeting", "مرحبًا %s!", "مرحبًا %s!").status_code == 302
    assert commit_count(project) == before + 1  # nothing changed, nothing committed
    assert save(full, "ar", "home.search.placeholder", "بحث", "", state="done").status_code == 400
    assert commit_count(project) == before + 1  # a bad filter refuses the save before it is written


def test_the_scripts_save_answers_the_cell_and_its_checks_in_json(full, demo):
    answer = save(full, "ar", "home.greeting", "مرحبًا!", "", json=True).get_json()
    assert answer["saved"] and answer["state"] == "translated" and answer["revision"] == 1
    assert answer["checks"] == ["Missing placeholder %s"]  # a warning: the text is saved
    answer = save(full, "ar", "home.greeting", "مرحبًا %s!", "مرحبًا!", json=True).get_json()
    assert answer["checks"] == [] and answer["revision"] == 2


def test_a_save_that_lost_a_race_writes_nothing_and_shows_both_texts(full, demo):
    project = demo[0]
    api = Api(full, demo[1].full)
    _, started = api.get("/api/translations/home.title/fr")
    assert api.post("/api/translations/home.title/fr", data="Bienvenue chez Acme")[0] == 200  # someone else
    before = commit_count(project)
    response = save(full, "fr", "home.title", "Mon texte", started["translation"])
    html = response.get_data(as_text=True)
    assert response.status_code == 409 and "Bienvenue chez Acme" in html and "Mon texte" in html
    assert "Keep mine" in html and "Take theirs" in html
    answer = save(full, "fr", "home.title", "Mon texte", started["translation"], json=True)
    assert answer.status_code == 409
    assert answer.get_json()["theirs"]["text"] == "Bienvenue chez Acme" and answer.get_json()["mine"] == "Mon texte"
    assert commit_count(project) == before
    # "keep mine" sends the same text again, now started from theirs
    base = unescape(re.search(r'name="base" value="([^"]*)"', html.split('class="keep-mine"')[1]).group(1))
    assert save(full, "fr", "home.title", "Mon texte", base).status_code == 302
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Mon texte"


def test_a_flag_is_set_and_cleared_from_the_grid_one_commit_each(full, demo):
    project, before = demo[0], commit_count(demo[0])
    fields = {"csrf": form_token(full), "asset": "home.title"}
    answer = full.post("/translate/fr/flag", headers=JSON, data=dict(fields, flag="fuzzy")).get_json()
    assert (answer["state"], answer["flag"]) == ("flagged", "fuzzy")
    assert ("home.title", "flagged") in cells(page(full, "/translate/fr?state=flagged"))
    assert full.post("/translate/fr/flag", data=dict(fields, flag="")).status_code == 302
    assert commit_count(project) == before + 2
    assert git(project.path, "log", "-1", "--format=%an").strip() == "Demo Owner"


# ----------------------------------------------------------------------------- the adapters
def test_checks_of_a_text_as_typed_name_a_missing_placeholder(full):
    url = "/translate/fr/checks?asset=home.greeting&text="
    assert full.get(url + "Bonjour !", headers=JSON).get_json() == {"checks": ["Missing placeholder %s"]}
    assert full.get(url + "Bonjour, %25s !", headers=JSON).get_json() == {"checks": []}


def test_suggestions_come_from_translation_memory_with_the_words_that_differ_marked(full, chunked):
    project, api = chunked
    assert api.post("/api/assets", data={"id": "again", "text": "Text 3"})[0] == 201
    found = full.get("/translate/fr/suggestions?asset=again", headers=JSON).get_json()
    assert [(s["text"], s["score"], s["asset"], s["author"]) for s in found][0] == ("Texte 3", 100, "a3", "Tester")
    assert found[0]["diff"] == [[False, "Text 3"]]
    assert len(found) == 3 and all(s["score"] < 100 and s["diff"] != [[False, "Text 3"]] for s in found[1:])
    assert all(s["asset"] != "a5" for s in found)  # flagged: no example to follow
    untranslated = full.get("/translate/fr/suggestions?asset=a15", headers=JSON).get_json()
    assert untranslated and all(s["score"] < 100 for s in untranslated)


# ----------------------------------------------------------------------------- plurals and scripts
def test_a_plural_group_is_one_row_with_the_forms_of_the_locales_rules(full):
    arabic = page(full, "/translate/ar?q=notes.count")
    japanese = page(full, "/translate/ja?q=notes.count")
    assert [a for a, _ in cells(japanese)] == ["notes.count"]  # one form: "other"
    arabic_forms = re.findall(r'<span class="form">(\w+)</span>', arabic)
    assert arabic_forms[:2] == ["zero", "one"] and len(arabic_forms) == len(cells(arabic)) >= 2
    rows = re.findall(r'class="row-id"><a href="[^"]+" dir="auto">([^<]+)</a>', page(full, "/translate/ar"))
    assert "notes.count" in rows and "notes.count.other" not in rows  # a member is a form, not a row


def test_right_to_left_locales_have_right_to_left_target_cells(full):
    html = page(full, "/translate/ar")
    assert '<div class="target" lang="ar" dir="rtl">' in html and re.search(r'<textarea [^>]*lang="ar" dir="rtl"', html)
    assert 'class="text source-text" lang="en" dir="ltr"' in html
    assert '<div class="target" lang="fr" dir="ltr">' in page(full, "/translate/fr")
