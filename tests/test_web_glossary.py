"""The dashboard's glossary page and the checks on the asset page, through Flask's test client."""
from __future__ import annotations

from tests.api import Api
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
