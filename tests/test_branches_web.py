"""The dashboard on branches: a selector on every page that carries `?branch=` along (reads and edits), and the
"compare with main" page."""
from __future__ import annotations

from html import unescape

import pytest

from tests.api import Api
from tests.test_web_pages import form_token, page, sign_in


@pytest.fixture
def on_branch(client, demo):
    """A signed-in dashboard, and a branch `feature` whose French title differs from main's."""
    api = Api(client, demo[1].full)
    assert api.post("/api/branches", data={"name": "feature"})[0] == 201
    assert api.post("/api/translations/home.title/fr", data="Bienvenue (feature)".encode(),
                    query_string={"branch": "feature"})[0] == 200
    assert sign_in(client, demo[1].full).status_code == 302
    return api


def test_every_page_has_a_branch_selector_listing_the_branches(client, on_branch):
    for url in ("/", "/changes", "/search", "/asset?id=home.title", "/compare"):
        html = page(client, url + ("&" if "?" in url else "?") + "branch=feature")
        assert 'name="branch"' in html, url
        assert '<option value="main" ' in html and '<option value="feature" selected>' in html, url


def test_links_and_forms_on_a_branch_page_stay_on_the_branch(client, on_branch):
    html = unescape(page(client, "/?branch=feature"))
    assert "/changes?branch=feature" in html and "/search?branch=feature" in html
    assert "/download/locale/fr.po?branch=feature" in html or "branch=feature" in html.split("download", 1)[1]
    asset = unescape(page(client, "/asset?id=home.title&branch=feature"))
    assert "Bienvenue (feature)" in asset
    assert 'action="/edit/translation?branch=feature"' in asset


def test_an_edit_made_on_a_branch_page_is_a_commit_on_the_branch_only(client, on_branch):
    response = client.post("/edit/translation?branch=feature",
                           data={"csrf": form_token(client), "asset": "home.title", "locale": "fr",
                                 "text": "Bienvenue (page)"})
    assert response.status_code == 302 and "branch=feature" in response.headers["Location"]
    branch_text = on_branch.get("/api/translations/home.title/fr", query_string={"branch": "feature"})[1]
    assert branch_text["translation"] == "Bienvenue (page)"
    assert on_branch.get("/api/translations/home.title/fr")[1]["translation"] != "Bienvenue (page)"


def test_the_compare_page_lists_what_the_branch_changed_since_main(client, on_branch):
    html = page(client, "/compare?branch=feature")
    assert "Bienvenue (feature)" in html and "home.title" in html and "1 commit main lacks" in html
    assert "Choose a branch" in page(client, "/compare")


def test_an_unknown_branch_is_a_404_page(client, on_branch):
    assert "Unknown branch" in page(client, "/?branch=nope", status=404)
