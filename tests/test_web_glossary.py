"""The dashboard's glossary page and the checks on the asset page, through Flask's test client."""
from __future__ import annotations

from tests.api import Api
from tests.support import git
from tests.test_web_pages import page, post, sign_in

import pytest


@pytest.fixture
def full(client, demo):
    assert sign_in(client, demo[1].full).status_code == 302
    return client


def test_a_term_added_and_deleted_on_the_glossary_page_is_in_the_api(full, demo):
    api = Api(full, demo[1].full)
    response = post(full, "/glossary/save", term="notebook", **{"translation-fr": "carnet"}, note="<i>ours</i>",
                    forbidden="on")
    assert response.status_code == 302
    assert api.get("/api/glossary/notebook")[1] == {"term": "notebook", "translations": {"fr": "carnet"},
                                                    "note": "<i>ours</i>", "forbidden": True}
    html = page(full, "/glossary")
    assert "carnet" in html and "&lt;i&gt;ours&lt;/i&gt;" in html and "forbidden" in html
    assert 'value="carnet"' in page(full, "/glossary?term=notebook")
    assert post(full, "/glossary/delete", term="notebook").status_code == 302
    assert api.get("/api/glossary/notebook")[0] == 404


def test_a_readonly_key_sees_the_glossary_without_edit_controls(app, demo):
    client = app.test_client()
    sign_in(client, demo[1].readonly)
    html = page(client, "/glossary")
    assert "Save term" not in html
    assert post(client, "/glossary/save", term="x").status_code == 403


def test_the_asset_page_shows_the_checks_a_translation_fails_with_their_names(full, demo):
    Api(full, demo[1].full).post("/api/translations/home.greeting/de", data="Hallo".encode())
    html = page(full, "/asset?id=home.greeting")
    assert "<code>php_format</code> Missing placeholder %s" in html
    assert "check-error" in html


def test_the_grid_highlights_the_glossary_terms_of_a_source_with_their_translation(full, demo):
    Api(full, demo[1].full).call("PUT", "/api/glossary/note", json={"translations": {"fr": "note"},
                                                                   "note": "not « remarque »"})
    html = page(full, "/translate/fr")
    assert 'This <mark class="term" title="note: not « remarque »">note</mark> was changed' in html


def test_a_glossary_edit_is_listed_term_by_term_on_its_commit_page(full, demo):
    api = Api(full, demo[1].full)
    api.call("PUT", "/api/glossary/notebook", json={"translations": {"fr": "carnet"}})
    html = page(full, "/changes/" + git(demo[0].path, "rev-parse", "HEAD").strip())
    assert "Glossary (1)" in html and "notebook</a> <span class=\"badge\">created</span>" in html
    assert "<dt>translation (fr)</dt><dd><ins dir=\"auto\">carnet</ins></dd>" in html
    assert "changed no translations" not in html
    api.call("PUT", "/api/glossary/notebook", json={"translations": {"fr": "cahier", "de": "Heft"}, "forbidden": True})
    html = page(full, "/changes/" + git(demo[0].path, "rev-parse", "HEAD").strip())
    assert "<span class=\"badge\">changed</span>" in html
    assert "<dt>translation (fr)</dt><dd><del dir=\"auto\">carnet</del> → <ins dir=\"auto\">cahier</ins></dd>" in html
    assert "<dt>translation (de)</dt><dd><ins dir=\"auto\">Heft</ins></dd>" in html
    assert "<dt>forbidden</dt><dd><ins dir=\"auto\">yes</ins></dd>" in html and "<dt>note</dt>" not in html
    api.call("DELETE", "/api/glossary/notebook")
    html = page(full, "/changes/" + git(demo[0].path, "rev-parse", "HEAD").strip())
    assert "<span class=\"badge\">deleted</span>" in html and "<dt>" not in html.split("Glossary (1)")[1]
