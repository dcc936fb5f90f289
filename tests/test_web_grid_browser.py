"""The translator's grid as a person uses it: headless Chromium (Debian's, as tests/test_web_browser.py starts it,
with its fixtures) against a real `gloss serve`, driven from the keyboard only.

The run writes screenshots of the grid in a left-to-right and a right-to-left locale to build/screenshots/
(README, "Translating in the grid"); the directory is ignored by Git.
"""
from __future__ import annotations

import urllib.request
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.support import REPO_ROOT, git
from tests.test_web_browser import WAIT, browser, server, sign_in, signed_out  # noqa: F401 (fixtures)

SCREENSHOTS = REPO_ROOT / "build" / "screenshots"
TRANSLATED = 10


def keys(browser, *modifiers_then_key: str) -> None:
    """Press a key with modifiers held (Ctrl+Enter, Alt+1 …), as a person would on the focused element."""
    *modifiers, key = modifiers_then_key
    chain = ActionChains(browser)
    for modifier in modifiers:
        chain.key_down(modifier)
    chain.send_keys(key)
    for modifier in reversed(modifiers):
        chain.key_up(modifier)
    chain.perform()


def focused_cell(browser) -> dict[str, str]:
    """The asset and state of the cell whose text field has the focus (the script moves it)."""
    return browser.execute_script(
        "const cell = document.activeElement.closest('.cell');"
        "return cell ? {asset: cell.dataset.asset, state: cell.dataset.state} : null;")


def checks_shown(browser) -> list[str]:
    return browser.execute_script(
        "return Array.from(document.activeElement.closest('.cell').querySelectorAll('.checks li'))"
        ".map((item) => item.textContent);")


def wait(browser, condition, message: str):
    return WebDriverWait(browser, WAIT).until(lambda _: condition(), message)


def screenshot(browser, name: str) -> None:
    """What the translator sees: the window, scrolled to the top of the page."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(SCREENSHOTS / name))


def project_repo(data: Path) -> Path:
    return next(data.rglob("project.json")).parent


def test_a_translator_fills_ten_untranslated_arabic_strings_from_the_keyboard(signed_out, server):
    browser = signed_out
    sign_in(browser, server.full)
    browser.get(server.url + "/translate/ar")
    Select(browser.find_element(By.ID, "grid-state")).select_by_value("untranslated")
    browser.find_element(By.ID, "grid-q").send_keys(Keys.ENTER)  # the filter form, submitted from the keyboard
    wait(browser, lambda: "state=untranslated" in browser.current_url and focused_cell(browser),
         "the grid focuses the first untranslated cell")
    assert browser.find_element(By.CSS_SELECTOR, ".cell .target").get_attribute("dir") == "rtl"

    saved, took_suggestion, saw_check = [], False, False
    while len(saved) < TRANSLATED:
        cell = focused_cell(browser)
        assert cell["state"] == "untranslated", cell
        if cell["asset"] == "home.greeting":  # "Hello, %s!": the placeholder check fires as typed, then clears
            ActionChains(browser).send_keys("مرحبا").perform()
            wait(browser, lambda: checks_shown(browser) == ["Missing placeholder %s"], "the placeholder check fires")
            ActionChains(browser).send_keys(" %s!").perform()
            wait(browser, lambda: checks_shown(browser) == [], "the placeholder check clears")
            saw_check = True
        elif cell["asset"] == "menu.file.save":  # "Save", as editor.save, which Arabic has: a suggestion
            suggestion = server.api("/api/translations/editor.save/ar")["translation"]
            wait(browser, lambda: browser.execute_script(
                "return !document.activeElement.closest('.cell').querySelector('.suggestions').hidden"),
                "the suggestions appear")
            keys(browser, Keys.ALT, "1")
            wait(browser, lambda: browser.switch_to.active_element.get_attribute("value") == suggestion,
                 "Alt+1 takes the first suggestion")
            took_suggestion = True
        elif len(saved) == 2:  # Alt+C copies the source, to be edited (a name, a number …)
            source = browser.execute_script(
                "return document.activeElement.closest('.cell').querySelector('.source-text').textContent")
            keys(browser, Keys.ALT, "c")
            wait(browser, lambda: browser.switch_to.active_element.get_attribute("value") == source,
                 "Alt+C copies the source text")
            ActionChains(browser).send_keys(" ✓").perform()
        else:
            ActionChains(browser).send_keys(f"ترجمة {len(saved) + 1}").perform()
        asset = cell["asset"]
        keys(browser, Keys.CONTROL, Keys.ENTER)  # save, then the next cell that needs work
        wait(browser, lambda: (focused_cell(browser) or {}).get("asset") != asset, f"{asset} saved, focus moved on")
        saved.append(asset)
    assert saw_check and took_suggestion, saved

    keys(browser, Keys.ALT, Keys.ARROW_UP)  # back to the tenth, now translated: flag it for review
    assert focused_cell(browser) == {"asset": saved[-1], "state": "translated"}
    keys(browser, Keys.ALT, "r")
    wait(browser, lambda: focused_cell(browser)["state"] == "flagged", "the flag is set")
    assert server.api(f"/api/translations/{saved[-1]}/ar")["flag"] == "fuzzy"
    screenshot(browser, "grid-ar.png")

    log = git(project_repo(server.data), "log", "-11", "--format=%an|%s").splitlines()
    assert log[0] == f"Demo Owner|Flag {saved[-1]} [ar] as fuzzy"
    assert log[1:] == [f"Demo Owner|Translate {asset} [ar]" for asset in reversed(saved)]
    for asset in saved:
        assert server.api(f"/api/translations/{asset}/ar")["author"]["name"] == "Demo Owner"


def test_the_grid_in_a_left_to_right_locale_and_for_a_readonly_key(signed_out, server):
    browser = signed_out
    sign_in(browser, server.readonly)
    browser.get(server.url + "/translate/de?state=untranslated")
    target = browser.find_element(By.CSS_SELECTOR, ".cell .target")
    assert browser.execute_script("return getComputedStyle(arguments[0]).direction", target) == "ltr"
    browser.implicitly_wait(0)
    assert browser.find_elements(By.CSS_SELECTOR, "textarea, form.save, form.set-flag") == []
    browser.implicitly_wait(WAIT)
    sign_in_again = server.url + "/"
    browser.delete_all_cookies()
    browser.get(sign_in_again)
    sign_in(browser, server.full)
    browser.get(server.url + "/translate/de?state=untranslated")
    wait(browser, lambda: focused_cell(browser), "the grid focuses the first untranslated cell")
    screenshot(browser, "grid-de.png")
    browser.set_window_size(390, 844)
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the grid scrolls sideways on a phone by {overflow}px"
    browser.set_window_size(1280, 1000)


def test_a_save_that_lost_a_race_shows_their_text_and_keeps_mine_on_enter(signed_out, server):
    browser = signed_out
    sign_in(browser, server.full)
    browser.get(server.url + "/translate/fr?q=home.new_note")
    wait(browser, lambda: focused_cell(browser), "the grid focuses the cell")
    asset = focused_cell(browser)["asset"]
    theirs = "Nouvelle note (par quelqu'un d'autre)"
    request = urllib.request.Request(f"{server.url}/api/translations/{asset}/fr", data=theirs.encode(),
                                     method="POST", headers={"Authorization": f"Loco {server.full}"})
    urllib.request.urlopen(request, timeout=30).close()  # saved meanwhile, by someone else
    ActionChains(browser).send_keys(" !").perform()
    mine = browser.switch_to.active_element.get_attribute("value")
    keys(browser, Keys.CONTROL, Keys.ENTER)
    box = browser.find_element(By.CSS_SELECTOR, ".cell .conflict")
    assert box.find_element(By.CSS_SELECTOR, ".theirs").text == theirs
    assert server.api(f"/api/translations/{asset}/fr")["translation"] == theirs  # nothing was overwritten
    assert browser.switch_to.active_element.text == "Keep mine"
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait(browser, lambda: server.api(f"/api/translations/{asset}/fr")["translation"] == mine, "mine is kept")
