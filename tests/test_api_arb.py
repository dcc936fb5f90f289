"""Flutter ARB through HTTP: @key metadata kept in the project and written back; exports are valid ICU."""
from __future__ import annotations

import json
import subprocess

from tests.api import Api, commit_count
from tests.formats.validators import icu_format_all

GREETING_META = {"description": "Shown on the home page", "type": "text", "x-screen": "home",
                 "placeholders": {"name": {"type": "String", "example": "Ann"}}}
ITEMS_META = {"description": "Cart size", "placeholders": {"count": {"type": "int", "example": "3"}}}
ARB = {
    "@@locale": "en",
    "greeting": "Hello {name}",
    "@greeting": GREETING_META,
    "items": "{count, plural, one{# item} other{# items}}",
    "@items": ITEMS_META,
}


def import_arb(api: Api, document: dict) -> dict:
    status, body = api.post("/api/import/arb", data=json.dumps(document).encode())
    assert status == 200, body
    return body


def export_arb(api: Api, locale: str = "en") -> dict:
    response = api.client.get(f"/api/export/locale/{locale}.arb", headers=api.headers)
    assert response.status_code == 200, response.data[:300]
    return json.loads(response.data)


def test_arb_metadata_survives_import_and_export(blank):
    import_arb(blank, ARB)
    exported = export_arb(blank)
    assert exported["greeting"] == "Hello {name}"
    assert exported["@greeting"] == GREETING_META
    assert exported["@items"] == ITEMS_META


def test_reimporting_an_arb_export_changes_nothing(blank):
    import_arb(blank, ARB)
    before = commit_count(blank.project)
    assert import_arb(blank, export_arb(blank))["message"] == "Nothing updated"
    assert commit_count(blank.project) == before
    assert export_arb(blank)["@greeting"] == GREETING_META


def test_arb_metadata_is_kept_in_the_git_repository_not_in_loco_records(blank):
    import_arb(blank, ARB)
    files = subprocess.run(["git", "-C", str(blank.project.path), "grep", "-l", "x-screen", "HEAD", "--", "assets"],
                           capture_output=True, text=True)
    assert files.returncode == 0 and "assets/" in files.stdout
    status, record = blank.get("/api/assets/greeting")
    assert status == 200 and "meta" not in record  # Loco's asset shape is unchanged


def test_a_later_import_fills_metadata_an_asset_lacks_without_overwriting_it(blank):
    blank.post("/api/assets", data={"id": "greeting", "text": "Hello {name}"})
    import_arb(blank, ARB)
    assert export_arb(blank)["@greeting"]["placeholders"] == GREETING_META["placeholders"]
    changed = {**ARB, "@greeting": {**GREETING_META, "placeholders": {"name": {"type": "Object"}}}}
    import_arb(blank, changed)
    assert export_arb(blank)["@greeting"]["placeholders"] == GREETING_META["placeholders"]


def test_arb_export_is_valid_icu_that_shows_each_text_as_stored(blank):
    texts = {"handlebars": "Use {{name}} here", "stray": "a } b {", "apostrophes": "It's '{x}' and {{y}}",
             "argument": "Hello {name}", "plain": "It's fine"}
    for asset_id, text in texts.items():
        assert blank.post("/api/assets", data={"id": asset_id, "text": text})[0] == 201
    exported = export_arb(blank)
    assert exported["argument"] == "Hello {name}" and exported["plain"] == "It's fine"  # valid ICU: unchanged
    literal = [asset_id for asset_id in texts if asset_id != "argument"]
    rendered = icu_format_all([(exported[asset_id], {}) for asset_id in literal])
    assert rendered == [(True, texts[asset_id]) for asset_id in literal]
