"""The web pages in a real browser: headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) against a real `gloss serve` on a free port with the demo project.

Chromium and chromedriver are Debian's (the Makefile's APT_TOOLS installs them); Selenium is told their paths,
so it never downloads a browser or a driver. Without them these tests skip locally and fail under CI=true.
Screenshots of the pages land in each test's temporary directory (overview.png, change.png, ...).
"""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support import REPO_ROOT, answers, poll_until, require_tool

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

PROJECT = "acme-notes"
DEMO_LOCALES = ["en", "fr", "de", "ja", "ar"]
WAIT = 20  # seconds an element may take to appear (CI machines are slow and shared)


@dataclass
class Server:
    url: str
    data: Path
    full: str
    readonly: str

    def api(self, path: str, key: str | None = None) -> object:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Loco {key or self.full}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gloss(data: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "app.cli", "--data", str(data), *args], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    def up() -> bool:
        if process.poll() is not None:
            pytest.fail(f"gloss serve exited with {process.returncode}: {log.read_text()}")
        return answers(url + "/api/ping")

    if not poll_until(up, timeout=60, interval=0.2):
        pytest.fail(f"gloss serve did not answer within 60 s: {log.read_text()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`gloss serve` on an empty data directory: it seeds the demo and prints a full-access key."""
    root = tmp_path_factory.mktemp("served")
    data, log = root / "data", root / "serve.log"
    port = free_port()
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", "--data", str(data), "serve", "--port",
                                    str(port), "--workers", "2"], cwd=REPO_ROOT, stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, process, log)
        full = next(line.split(": ", 1)[1] for line in log.read_text().splitlines()
                    if line.startswith("Full-access API key: "))
        readonly = gloss(data, "key", "create", PROJECT, "--access", "readonly", "--user", "Rita Reader")
        yield Server(url, data, full, readonly.strip().splitlines()[-1])
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = require_tool("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,1000", "--lang=en-US"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=require_tool("chromedriver")), options=options)
    driver.implicitly_wait(WAIT)
    yield driver
    driver.quit()


@pytest.fixture
def signed_out(browser, server):
    """A browser with no session, on the sign-in page."""
    browser.set_window_size(1280, 1000)
    browser.get(server.url + "/")
    browser.delete_all_cookies()
    browser.get(server.url + "/")
    return browser


def sign_in(browser, key: str) -> None:
    browser.find_element(By.ID, "key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, ".signin button[type=submit]").click()
    assert browser.find_element(By.CSS_SELECTOR, "#locales-heading").text == "Locales"


def text_of(browser, selector: str) -> str:
    return browser.find_element(By.CSS_SELECTOR, selector).text


def screenshot(browser, path: Path) -> Path:
    """A full-height screenshot (the window is stretched to the page's height first)."""
    width = browser.get_window_size()["width"]
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(width, min(max(height + 140, 600), 6000))
    assert browser.save_screenshot(str(path))
    return path


# ----------------------------------------------------------------------------- full key
def test_overview_shows_the_progress_of_every_demo_locale(signed_out, server, tmp_path):
    browser = signed_out
    assert browser.find_element(By.CSS_SELECTOR, "label[for=key]").text == "API key"
    sign_in(browser, server.full)
    locales = {record["code"]: record for record in server.api("/api/locales")}
    assert sorted(locales) == sorted(DEMO_LOCALES)
    for code, record in locales.items():
        progress = record["progress"]
        item = f"#locale-{code}"
        assert text_of(browser, f"{item} .count-translated") == f"{progress['translated']} translated"
        assert text_of(browser, f"{item} .count-flagged") == f"{progress['flagged']} flagged"
        assert text_of(browser, f"{item} .count-untranslated") == f"{progress['untranslated']} untranslated"
        assert text_of(browser, f"{item} .count-words") == f"{progress['words']} words"
        bar = browser.find_element(By.CSS_SELECTOR, f"{item} svg.bar")
        assert bar.get_attribute("aria-label").startswith(record["name"] + ":")
    assert screenshot(browser, tmp_path / "overview.png").stat().st_size > 10_000


def test_the_latest_change_shows_the_old_and_the_new_text(signed_out, server, tmp_path):
    browser = signed_out
    sign_in(browser, server.full)
    browser.find_element(By.LINK_TEXT, "Changes").click()
    browser.find_element(By.CSS_SELECTOR, ".commits li:first-child a.summary").click()
    articles = browser.find_elements(By.CSS_SELECTOR, "article.diff")
    assert articles, "the latest demo change changes translations"
    for article in articles:
        asset_id = article.find_element(By.CSS_SELECTOR, "h3 a").text
        locale = article.find_element(By.CSS_SELECTOR, ".old .diff-text .text").get_attribute("lang")
        history = server.api(f"/api/translations/{quote(asset_id, safe='')}/{locale}/revisions")
        new, old = history[0], history[1]  # the latest change made the newest revision of this translation
        assert article.find_element(By.CSS_SELECTOR, ".new .diff-text").text == new["translation"]
        assert article.find_element(By.CSS_SELECTOR, ".old .diff-text").text == old["translation"]
        assert article.find_elements(By.CSS_SELECTOR, ".old del") and article.find_elements(By.CSS_SELECTOR,
                                                                                              ".new ins")
        assert f"revision {new['revision']}" in article.find_element(By.CSS_SELECTOR, ".new h4").text
    screenshot(browser, tmp_path / "change.png")


def test_a_french_edit_is_one_new_revision_in_the_api_and_signing_out_ends_the_session(signed_out, server,
                                                                                        tmp_path):
    browser = signed_out
    sign_in(browser, server.full)
    before = server.api("/api/translations/home.new_note/fr")
    browser.find_element(By.ID, "top-search").send_keys("home.new_note\n")
    browser.find_element(By.LINK_TEXT, "home.new_note").click()
    field = browser.find_element(By.ID, "text-fr")
    assert field.get_attribute("lang") == "fr" and field.get_attribute("dir") == "ltr"
    assert browser.find_element(By.CSS_SELECTOR, "label[for=text-fr]").text == "French translation"
    field.clear()
    field.send_keys("Créer une note")
    browser.find_element(By.CSS_SELECTOR, "#locale-fr form.edit button").click()
    assert f"revision {before['revision'] + 1}" in text_of(browser, ".flash")
    after = server.api("/api/translations/home.new_note/fr")
    assert after["translation"] == "Créer une note"
    assert after["revision"] == before["revision"] + 1
    assert after["author"]["name"] == "Demo Owner"

    browser.find_element(By.LINK_TEXT, "Changes").click()
    browser.find_element(By.CSS_SELECTOR, ".commits li:first-child a.summary").click()
    assert text_of(browser, "article.diff .old .diff-text") == before["translation"]
    assert text_of(browser, "article.diff .new .diff-text") == "Créer une note"
    screenshot(browser, tmp_path / "edit-change.png")

    browser.find_element(By.CSS_SELECTOR, ".who button").click()
    assert browser.find_element(By.ID, "key")  # the sign-in form again
    browser.get(server.url + "/changes")
    assert browser.find_elements(By.ID, "key"), "a signed-out browser is sent to the sign-in page"


def test_arabic_text_is_laid_out_right_to_left(signed_out, server, tmp_path):
    browser = signed_out
    sign_in(browser, server.full)
    browser.get(server.url + "/asset?id=notes.count")
    plural = browser.find_element(By.CSS_SELECTOR, "#locale-ar table.plurals .text")
    assert plural.get_attribute("dir") == "rtl"
    screenshot(browser, tmp_path / "asset.png")
    browser.get(server.url + "/asset?id=home.title")
    text = browser.find_element(By.CSS_SELECTOR, "#locale-ar .current .text")
    assert text.get_attribute("dir") == "rtl" and text.get_attribute("lang") == "ar"
    assert browser.execute_script("return getComputedStyle(arguments[0]).direction", text) == "rtl"
    french = browser.find_element(By.CSS_SELECTOR, "#locale-fr .current .text")
    assert browser.execute_script("return getComputedStyle(arguments[0]).direction", french) == "ltr"


def test_pages_fit_a_phone_screen(signed_out, server, tmp_path):
    browser = signed_out
    browser.set_window_size(390, 844)
    sign_in(browser, server.full)
    browser.get(server.url + "/changes")
    latest = browser.find_element(By.CSS_SELECTOR, ".commits li:first-child a.summary").get_attribute("href")
    for path in ("/", "/changes", latest.removeprefix(server.url), "/asset?id=notes.count", "/search?q=note"):
        browser.get(server.url + path)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways on a phone by {overflow}px"
    browser.get(server.url + "/")
    screenshot(browser, tmp_path / "overview-phone.png")


# ----------------------------------------------------------------------------- read-only key
def test_a_readonly_key_gets_no_edit_form_and_a_forged_post_is_refused(signed_out, server):
    browser = signed_out
    sign_in(browser, server.readonly)
    browser.get(server.url + "/asset?id=home.title")
    assert browser.find_element(By.CSS_SELECTOR, "#locale-fr .current")
    browser.implicitly_wait(0)
    assert browser.find_elements(By.CSS_SELECTOR, "form.edit, form.edit-flag, textarea") == []
    browser.implicitly_wait(WAIT)
    before = server.api("/api/translations/home.title/fr")
    # a post built in the page itself, carrying this session's valid form token: only the key's rights stop it
    browser.execute_script("""
        const form = document.createElement('form');
        form.method = 'post'; form.action = '/edit/translation';
        const fields = {asset: 'home.title', locale: 'fr', text: 'Forged',
                        csrf: document.querySelector('input[name=csrf]').value};
        for (const [name, value] of Object.entries(fields)) {
            const input = document.createElement('input');
            input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input);
        }
        document.body.appendChild(form); form.submit();""")
    assert text_of(browser, ".error-page h1") == "403"
    after = server.api("/api/translations/home.title/fr")
    assert (after["translation"], after["revision"]) == (before["translation"], before["revision"])
