"""The web pages through Flask's test client: escaping, sessions, CSRF, access by key type, edits as commits,
changes and their filters, downloads from the format registry, and the route table outside `/api/`."""
from __future__ import annotations

import os
import re
import stat
from html import unescape

import pytest

from app import create_app
from app.routes import is_api_rule
from app.web.worddiff import word_diff
from app.web.session import SECRET_FILE
from formats.registry import supported
from tests.api import Api, commit_count
from tests.support import commit_tree, git, project_files

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
HOSTILE = "<script>alert(1)</script>"


def form_token(client) -> str:
    """The session's CSRF token, read from the page as a browser would."""
    return unescape(CSRF.search(client.get("/").get_data(as_text=True)).group(1))


def sign_in(client, key: str):
    return client.post("/sign-in", data={"key": key, "csrf": form_token(client)})


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:500])
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def post(client, url: str, **fields):
    return client.post(url, data=dict({"csrf": form_token(client)}, **fields))


@pytest.fixture
def full(client, demo):
    assert sign_in(client, demo[1].full).status_code == 302
    return client


def latest_commit(project) -> str:
    return git(project.path, "rev-parse", "HEAD").strip()


# ----------------------------------------------------------------------------- sign-in and the session
def test_the_front_page_signs_in_with_any_key_type_and_refuses_a_wrong_key(app, client, demo):
    assert 'for="key"' in page(client, "/")
    response = sign_in(client, "not-a-key")
    assert response.status_code == 401 and "not valid" in response.get_data(as_text=True)
    for key in (demo[1].full, demo[1].readonly, demo[1].export):
        fresh = app.test_client()
        assert sign_in(fresh, key).status_code == 302
        assert "Acme Notes" in page(fresh, "/")


def test_the_session_cookie_is_signed_httponly_samesite_and_its_secret_lives_in_the_data_dir(client, demo,
                                                                                             data_dir):
    response = sign_in(client, demo[1].full)
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    secret = data_dir / SECRET_FILE
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(secret.read_bytes().strip()) == 64
    project_files = " ".join(git(demo[0].path, "ls-files").split())
    assert SECRET_FILE not in project_files and "keys" not in project_files
    # the same data directory keeps its secret: sessions survive a restart
    assert create_app(data_dir, testing=True).secret_key == secret.read_bytes().strip()


def test_a_tampered_session_cookie_is_signed_out(app, client, demo):
    sign_in(client, demo[1].full)
    cookie = client.get_cookie("gloss_session")
    client.set_cookie("gloss_session", cookie.value[:-2] + ("AA" if not cookie.value.endswith("AA") else "BB"))
    assert client.get("/changes").status_code == 302


def test_signing_out_ends_the_session(full):
    assert post(full, "/sign-out").status_code == 302
    assert full.get("/changes").status_code == 302
    assert 'for="key"' in page(full, "/")


def test_a_revoked_key_signs_the_browser_out(full, demo, keystore):
    keystore.revoke(demo[1].full)
    response = full.get("/changes")
    assert response.status_code == 302 and response.headers["Location"].endswith("/")


# ----------------------------------------------------------------------------- escaping
def test_every_page_escapes_user_strings(full, demo):
    api = Api(full, demo[1].full)
    assert api.post("/api/assets", data={"id": HOSTILE, "text": HOSTILE, "notes": HOSTILE, "context": HOSTILE,
                                         "tags": "<img src=x onerror=alert(2)>"})[0] == 201
    assert api.post(f"/api/translations/{HOSTILE}/fr", data="<b onmouseover=alert(3)>x</b>")[0] == 200
    commit = latest_commit(demo[0])
    urls = ["/", "/changes", f"/changes/{commit}", "/search?q=script", "/search?q=%3Cscript",
            "/asset?id=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/changes?tag=%3Cimg+src%3Dx+onerror%3Dalert(2)%3E"]
    for url in urls:
        body = page(full, url)
        assert "<script>" not in body and "<img src=x" not in body and "<b onmouseover" not in body, url
    asset = page(full, "/asset?id=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in asset
    assert "&lt;b onmouseover=alert(3)&gt;x&lt;/b&gt;" in page(full, f"/changes/{commit}")


def test_pages_send_a_content_security_policy_without_inline_scripts(full):
    response = full.get("/")
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert response.headers["X-Frame-Options"] == "DENY"


# ----------------------------------------------------------------------------- CSRF and access
def test_a_post_without_the_form_token_is_refused_and_commits_nothing(full, demo):
    before = commit_count(demo[0])
    for token in (None, "", "forged-token"):
        fields = {"asset": "home.title", "locale": "fr", "text": "Forged"}
        if token is not None:
            fields["csrf"] = token
        response = full.post("/edit/translation", data=fields)
        assert response.status_code == 400 and "did not come from this site" in response.get_data(as_text=True)
    assert full.post("/sign-out").status_code == 400
    assert commit_count(demo[0]) == before


def test_readonly_and_export_keys_see_no_edit_controls_and_their_posts_are_refused(app, demo):
    project, keys = demo
    before = commit_count(project)
    for key in (keys.readonly, keys.export):
        client = app.test_client()
        sign_in(client, key)
        overview = page(client, "/")
        assert "<textarea" not in overview and "/edit/" not in overview
        for url, fields in (("/edit/translation", {"text": "Forged"}), ("/edit/flag", {"flag": "fuzzy"})):
            response = post(client, url, asset="home.title", locale="fr", **fields)
            assert response.status_code == 403, response.get_data(as_text=True)
    reader = app.test_client()
    sign_in(reader, keys.readonly)
    asset = page(reader, "/asset?id=home.title")
    assert "Bienvenue" in asset and "<textarea" not in asset and "<form class=\"edit" not in asset
    assert commit_count(project) == before


def test_an_export_key_sees_progress_and_downloads_but_not_the_history(app, demo):
    client = app.test_client()
    sign_in(client, demo[1].export)
    overview = page(client, "/")
    assert "locale-fr" in overview and "/download/locale/fr.po" in overview
    assert "Last changes" not in overview and "/changes" not in overview
    for url in ("/changes", "/search", "/asset?id=home.title"):
        assert client.get(url).status_code == 403


def test_signed_out_posts_are_refused_and_gets_go_to_sign_in(client, demo):
    assert post(client, "/edit/translation", asset="home.title", locale="fr", text="x").status_code == 401
    for url in ("/changes", "/search", "/asset?id=home.title", "/download/locale/fr.po"):
        response = client.get(url)
        assert response.status_code == 302 and response.headers["Location"].endswith("/")


# ----------------------------------------------------------------------------- editing
def test_an_edit_is_one_commit_through_the_api_operations_and_visible_in_the_api(full, demo):
    project, keys = demo
    api = Api(full, keys.full)
    _, before = api.get("/api/translations/home.title/fr")
    count = commit_count(project)
    response = post(full, "/edit/translation", asset="home.title", locale="fr", text="Bienvenue\r\nchez Acme")
    assert response.status_code == 302 and response.headers["Location"].endswith("/asset?id=home.title#locale-fr")
    assert commit_count(project) == count + 1
    _, after = api.get("/api/translations/home.title/fr")
    assert after["translation"] == "Bienvenue\nchez Acme" and after["revision"] == before["revision"] + 1
    message = git(project.path, "log", "-1", "--format=%an%n%B")
    assert message.startswith("Demo Owner\nTranslate home.title [fr]")
    assert "Revision: " + str(after["revision"]) in message and "Action: translate" in message
    assert f"revision {after['revision']}" in page(full, "/asset?id=home.title")  # the flashed message
    # the same text again changes nothing
    post(full, "/edit/translation", asset="home.title", locale="fr", text="Bienvenue\nchez Acme")
    assert commit_count(project) == count + 1


def test_setting_and_clearing_a_flag_are_one_commit_each(full, demo):
    project, keys = demo
    api = Api(full, keys.full)
    count = commit_count(project)
    post(full, "/edit/flag", asset="home.title", locale="fr", flag="incorrect")
    assert api.get("/api/translations/home.title/fr")[1]["flag"] == "incorrect"
    post(full, "/edit/flag", asset="home.title", locale="fr", flag="")
    assert api.get("/api/translations/home.title/fr")[1]["flagged"] is False
    assert commit_count(project) == count + 2
    assert git(project.path, "log", "-2", "--format=%s").splitlines() == [
        "Unflag home.title [fr]", "Flag home.title [fr] as incorrect"]


@pytest.mark.parametrize("fields, status", [
    ({"asset": "no.such.asset", "locale": "fr", "text": "x"}, 404),
    ({"asset": "home.title", "locale": "xx", "text": "x"}, 404),
    ({"asset": "home.title", "text": "x"}, 400),
])
def test_an_edit_of_something_that_does_not_exist_is_a_clear_error_page(full, demo, fields, status):
    count = commit_count(demo[0])
    response = post(full, "/edit/translation", **fields)
    assert response.status_code == status and response.mimetype == "text/html"
    assert commit_count(demo[0]) == count


def test_an_unknown_flag_is_refused(full, demo):
    response = post(full, "/edit/flag", asset="home.title", locale="fr", flag="shiny")
    assert response.status_code == 422 and "flag must be one of" in response.get_data(as_text=True)


# ----------------------------------------------------------------------------- changes
def test_a_change_page_shows_old_and_new_text_word_by_word(full, demo):
    api = Api(full, demo[1].full)
    api.post("/api/translations/home.title/fr", data="Bienvenue dans Acme Notes")
    api.post("/api/translations/home.title/fr", data="Bienvenue sur Acme Notes")
    revision = api.get("/api/translations/home.title/fr")[1]["revision"]
    body = page(full, f"/changes/{latest_commit(demo[0])}")
    assert "<del>dans</del>" in body and "<ins>sur</ins>" in body
    assert f"revision {revision - 1}</span>" in body and f"revision {revision}</span>" in body
    assert 'lang="fr" dir="ltr"' in body


def test_a_change_page_shows_each_asset_field_the_commit_changed_before_and_after(full, demo):
    api = Api(full, demo[1].full)
    api.patch("/api/assets/home.title.json", json={"context": "Home screen", "notes": "Shown once"})
    api.patch("/api/assets/home.title.json", json={"context": "Welcome screen", "notes": "Shown once"})
    body = page(full, f"/changes/{latest_commit(demo[0])}")
    assert '<dt>context</dt><dd><del dir="auto">Home screen</del> → <ins dir="auto">Welcome screen</ins></dd>' in body
    assert "<dt>notes</dt>" not in body  # unchanged by this commit


def test_arabic_changes_are_marked_right_to_left(full, demo):
    body = page(full, "/changes?locale=ar")
    commit = re.search(r"/changes/([0-9a-f]{40})", body).group(1)
    assert 'lang="ar" dir="rtl"' in page(full, f"/changes/{commit}")


def test_changes_filter_by_locale_author_and_tag(full, demo):
    def summaries(query: str) -> list[str]:
        return [unescape(s) for s in re.findall(r'class="summary"[^>]*>([^<]*)<', page(full, "/changes" + query))]

    def git_log(*args: str) -> list[str]:
        return git(demo[0].path, "log", "--format=%s", *args).splitlines()

    everything = summaries("")
    assert everything == git_log()
    german = summaries("?locale=de")
    assert german == git_log("--", "locales/de") and set(german) < set(everything)
    sam = summaries("?author=SAM.OKAFOR")
    assert sam == git_log("-i", "--author=sam.okafor") and "Review German error messages: smoother wording" in sam
    errors = summaries("?tag=errors")
    assert "Review German error messages: smoother wording" in errors and set(errors) < set(everything)
    assert summaries("?author=nobody-at-all") == []
    assert full.get("/changes?locale=zz").status_code == 404
    assert full.get("/changes?page=0").status_code == 400


def test_changes_are_paginated(full, demo, monkeypatch):
    from app.web import views

    monkeypatch.setattr(views, "CHANGES_PER_PAGE", 4)
    total = commit_count(demo[0])
    seen: list[str] = []
    number = 1
    while True:
        body = page(full, f"/changes?page={number}")
        seen += re.findall(r'/changes/([0-9a-f]{40})" dir="auto"', body)
        if 'rel="next"' not in body:
            break
        number += 1
    assert len(seen) == len(set(seen)) == total
    assert number == -(-total // 4)


def test_an_unknown_commit_is_a_404_page(full):
    for commit in ("0" * 40, "nothex", "a" * 39):
        assert full.get(f"/changes/{commit}").status_code == 404


def test_a_change_lists_created_assets(full, demo):
    Api(full, demo[1].full).post("/api/assets", data={"id": "cart.title", "text": "Cart", "notes": "Heading"})
    body = page(full, f"/changes/{latest_commit(demo[0])}")
    assert "cart.title" in body and "created" in body and "Cart" in body


# ----------------------------------------------------------------------------- assets, search, downloads
def test_the_asset_page_shows_plural_forms_notes_tags_and_history(full, demo):
    body = page(full, "/asset?id=notes.count")
    assert "Shown under each notebook name in the sidebar." in body
    assert "Plural forms in Arabic" in body and "notes.count.other" in body
    assert ">web</a>" in body
    assert "History (" in body
    assert full.get("/asset?id=nothing.here").status_code == 404


def test_search_finds_source_and_translated_texts(full, demo):
    assert "home.title" in page(full, "/search?q=welcome")  # English source
    french = page(full, "/search?q=bienvenue&locale=fr")
    assert "home.title" in french and "onboarding.welcome" in french and "2 assets" in french
    assert "&lt;strong&gt;Bienvenue" in french and "<strong>" not in french  # an HTML asset's text is shown, not rendered
    assert "No such" not in page(full, "/search?q=%D9%85")  # Arabic letter
    tagged = page(full, "/search?tag=errors")
    assert "errors.network" in tagged and "home.title" not in tagged


def test_the_overview_links_a_download_for_every_writable_format_of_the_registry(full, demo):
    body = unescape(page(full, "/"))
    for spec in supported():
        link = f"/download/locale/fr.{spec['ext']}" + (f"?format={spec['variant']}" if spec["variant"] else "")
        assert (link in body) == spec["writable"], link
        if spec["multi_locale"] and spec["writable"]:
            assert f"/download/all.{spec['ext']}" in body
    response = full.get("/download/locale/fr.po")
    assert response.status_code == 200 and b'msgstr "Bienvenue' in response.data
    assert full.get("/download/all.csv").status_code == 200


# ----------------------------------------------------------------------------- route table
def test_every_rule_outside_the_api_is_a_web_page_that_declares_who_may_see_it(app):
    public = {"web.home", "web.sign_in_post", "web.sign_out_post", "web.static"}
    for rule in app.url_map.iter_rules():
        if is_api_rule(rule.rule):
            continue
        assert rule.endpoint.startswith("web."), f"{rule.rule} is neither API nor web page"
        view = app.view_functions[rule.endpoint]
        assert rule.endpoint in public or getattr(view, "gloss_web_kind", None), rule.endpoint


def test_every_web_post_needs_the_form_token(app, client, demo):
    sign_in(client, demo[1].full)
    posts = [rule.rule for rule in app.url_map.iter_rules() if not is_api_rule(rule.rule) and "POST" in rule.methods]
    assert posts
    for url in posts:
        assert client.post(url, data={}).status_code == 400, url


def test_word_diff_marks_changed_words_and_single_ideographs():
    assert word_diff("a b c", "a x c") == ([(False, "a "), (True, "b"), (False, " c")],
                                           [(False, "a "), (True, "x"), (False, " c")])
    old, new = word_diff("新しいノート", "新規ノート")
    assert "".join(text for _, text in old) == "新しいノート" and any(changed for changed, _ in new)
    assert word_diff("", "Bonjour") == ([], [(True, "Bonjour")])


def test_a_change_page_details_a_bounded_number_of_entries_and_counts_the_rest(full, demo, monkeypatch):
    from app.web import views

    monkeypatch.setattr(views, "CHANGES_SHOWN", 3)
    bulk = git(demo[0].path, "log", "--format=%H", "--grep=^Add 42 assets").split()[0]
    # every entry is one line of a canonical file: Git's own diff counts the changed entries
    entries = sum(line.startswith('+"') for line in git(demo[0].path, "show", "--format=", "-U0", bulk).splitlines())
    assert entries > 3
    body = page(full, f"/changes/{bulk}")
    assert body.count('class="badge">created</span>') + body.count('<article class="diff"') == 3
    assert f"{entries - 3} more changes not shown" in body


def test_a_change_page_shows_only_commits_that_main_or_a_tag_reaches(full, demo):
    project = demo[0]
    files = project_files(project)
    files["locales/fr/0000.json"] = files["locales/fr/0000.json"].replace(b"Bienvenue", b"Brouillon", 1)
    draft = commit_tree(project, files, "a draft whose push was refused")  # its objects stayed in the store
    assert git(project.path, "cat-file", "-t", draft).strip() == "commit"
    assert full.get(f"/changes/{draft}").status_code == 404
    assert "Brouillon" not in page(full, f"/changes/{latest_commit(project)}")  # reachable commits still show
    git(project.path, "tag", "draft-release", draft)
    assert "Brouillon" in page(full, f"/changes/{draft}")  # a tag makes it part of the project


def test_compiled_templates_shared_by_the_apps_of_a_process_follow_an_edited_template():
    from jinja2 import DictLoader, Environment

    from app.web import CompiledTemplates

    shared = CompiledTemplates()
    render = lambda source: Environment(loader=DictLoader({"page.html": source}), bytecode_cache=shared) \
        .get_template("page.html").render(name="Ada")
    assert render("Hello {{ name }}") == render("Hello {{ name }}") == "Hello Ada"
    assert render("Goodbye {{ name }}") == "Goodbye Ada"
