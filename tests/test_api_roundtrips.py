"""Round trips through HTTP: idempotent PO/MO re-imports, exports no less valid than imports (issue 7 §1)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.api import Api, commit_count
from tests.support import corpus_path, require_tool

RU_PO = "po/loco-translate__languages_loco-translate-ru_RU.po"



def download(api: Api, path: str) -> bytes:
    response = api.client.get(path, headers=api.headers)
    assert response.status_code == 200, response.data[:300]
    return response.data


def upload(api: Api, path: str, data: bytes) -> dict:
    status, body = api.post(path, data=data, headers={"Content-Type": "application/octet-stream"})
    assert status == 200, body
    return body


def msgfmt_errors(tmp_path: Path, name: str, data: bytes) -> int:
    """The number of fatal errors `msgfmt -c --check-format` finds in a PO file."""
    path = tmp_path / name
    path.write_bytes(data)
    result = subprocess.run([require_tool("msgfmt"), "-c", "--check-format", "-o", "/dev/null", str(path)],
                            capture_output=True, text=True)
    if result.returncode == 0:
        return 0
    found = re.search(r"found (\d+) fatal error", result.stderr)
    assert found, result.stderr
    return int(found.group(1))


@pytest.mark.parametrize("ext", ["po", "mo"])
@pytest.mark.parametrize("locale", ["fr", "de", "ja", "ar", "en"])
def test_reimporting_an_export_by_text_changes_nothing(api, demo, ext, locale):
    api.post("/api/assets", data={"id": "app_name", "default": "untranslated"})  # no source text
    api.post("/api/translations/app_name/fr", data="Acme Notes (fr)")
    api.post("/api/assets", data={"id": "blank_source", "text": ""})
    assets = [asset["id"] for asset in api.get("/api/assets")[1]]
    data = download(api, f"/api/export/locale/{locale}.{ext}")
    before = commit_count(demo[0])
    assert upload(api, f"/api/import/{ext}", data)["message"] == "Nothing updated"
    assert [asset["id"] for asset in api.get("/api/assets")[1]] == assets
    assert commit_count(demo[0]) == before
    assert "app_name-2" not in assets


def test_reimporting_a_corpus_po_export_changes_nothing(blank):
    upload(blank, "/api/import/po", corpus_path(RU_PO).read_bytes())
    assets = [asset["id"] for asset in blank.get("/api/assets")[1]]
    for ext in ("po", "mo"):
        data = download(blank, f"/api/export/locale/ru-RU.{ext}")
        assert upload(blank, f"/api/import/{ext}", data)["message"] == "Nothing updated"
    assert [asset["id"] for asset in blank.get("/api/assets")[1]] == assets


@pytest.mark.parametrize("query", ["", "?printf=java", "?printf=php"])
def test_a_po_export_has_no_more_msgfmt_errors_than_the_imported_file(blank, tmp_path, query):
    original = corpus_path(RU_PO).read_bytes()
    upload(blank, "/api/import/po", original)
    exported = download(blank, f"/api/export/locale/ru-RU.po{query}")
    assert msgfmt_errors(tmp_path, "export.po", exported) <= msgfmt_errors(tmp_path, "original.po", original) == 5


def test_printf_java_adds_no_format_flag_to_a_msgid_without_placeholder(api):
    text = download(api, "/api/export/locale/fr.po?printf=java").decode()
    entries = text.split("\n\n")
    flagged = [entry for entry in entries if "java-printf-format" in entry]
    assert flagged, "some demo msgids hold placeholders"
    for entry in flagged:
        msgid = re.search(r'^msgid "(.*)"$', entry, re.M).group(1)
        assert "%" in msgid, entry
    assert any("%" not in re.search(r'^msgid "(.*)"$', entry, re.M).group(1) for entry in entries[1:]
               if re.search(r'^msgid "(.*)"$', entry, re.M))


def test_convert_po_to_json_keeps_sentence_keys_flat(client):
    po = corpus_path(RU_PO).read_bytes()
    response = client.post("/api/convert/po/messages.json", data=po)
    assert response.status_code == 200
    data = json.loads(response.data)
    assert all(isinstance(value, (str, dict)) for value in data.values())
    dotted = [key for key in data if "." in key]
    assert dotted, "the corpus holds sentences with dots"
    assert all(not isinstance(data[key], dict) or set(data[key]) <= {"zero", "one", "two", "few", "many", "other"}
               for key in data)


def test_flat_json_export_holds_texts_only_and_reimports_without_change(api):
    data = download(api, "/api/export/locale/fr.json?no-expand")
    tree = json.loads(data)
    assert "settings.beta.label" not in tree  # untranslated in the demo: left out, not null
    assert all(isinstance(value, (str, dict)) for value in tree.values())
    assert upload(api, "/api/import/json?locale=fr", data)["message"] == "Nothing updated"
    assert api.get("/api/translations/settings.beta.label/fr")[1]["translated"] is False
