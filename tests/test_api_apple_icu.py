"""Apple (.strings, .stringsdict, .xcstrings, plist, bplist) and ICU (.res, .txt) files through HTTP:
corpus imports with their counts, exports checked by independent tools, broken files as 422 without a commit."""
from __future__ import annotations

import io
import plistlib
import zipfile
from pathlib import Path

import pytest

from tests.api import Api, commit_count
from tests.formats.samples import run_tool
from tests.support import corpus_path, git, require_tool

STRINGS = "strings/desktop-kDrive__src_gui4_macOS_kDriveResources_Localizable_fr.lproj_Localizable.strings"
STRINGSDICT = "stringsdict/desktop-kDrive__src_gui4_macOS_kDriveResources_Localizable_fr.lproj_Localizable.stringsdict"
XCSTRINGS = "xcstrings/CubeTime__Localizable.xcstrings"


def download(client, key: str, path: str) -> bytes:
    response = client.get(path, headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, (path, response.data[:300])
    return response.data


@pytest.mark.parametrize(("name", "ext", "query", "message"), [
    (STRINGS, "strings", "locale=fr", "461 new assets"),
    ("strings/ios-kMail__Mail_Localizable_fr.lproj_InfoPlist.strings", "strings", "locale=fr", "8 new assets"),
    (STRINGSDICT, "stringsdict", "locale=fr", "2 new assets"),
    (XCSTRINGS, "xcstrings", "", "288 new assets"),
    ("plist/ios-kDrive__Info.plist", "plist", "locale=en", "60 new assets"),
    ("plist/ios-kMail__Info.plist", "plist", "locale=en", "48 new assets"),
])
def test_corpus_files_import_with_their_counts(client, demo, name: str, ext: str, query: str, message: str) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post(f"/api/import/{ext}?{query}", data=corpus_path(name).read_bytes())
    assert status == 200, body
    assert body["message"].startswith(f"Imported {message}"), body["message"]
    assert commit_count(demo[0]) == before + 1


def test_imported_strings_keep_texts_and_notes(client, demo) -> None:
    api = Api(client, demo[1].full)
    api.post("/api/import/strings?locale=fr", data=corpus_path(STRINGS).read_bytes())
    assert api.get("/api/translations/aboutKDrive/fr")[1]["translation"] == "À propos de kDrive"
    notes = api.get("/api/assets/accessibilitySearchSheetLabel")[1]["notes"]
    assert notes.startswith("VoiceOver reads this when the search sheet opens")


def test_imported_stringsdict_plurals_are_linked_forms(client, demo) -> None:
    api = Api(client, demo[1].full)
    api.post("/api/import/stringsdict?locale=fr", data=corpus_path(STRINGSDICT).read_bytes())
    fr = download(client, demo[1].full, "/api/export/locale/fr.stringsdict")
    rule = plistlib.loads(fr)["buttonRemoveFileExclusionRule"]["value"]
    assert rule["one"] == "Supprimer (%lld élément)" and rule["other"] == "Supprimer (%lld éléments)"
    assert rule["NSStringFormatValueTypeKey"] == "lld"


def test_imported_string_catalog_creates_its_locales(client, demo) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post("/api/import/xcstrings", data=corpus_path(XCSTRINGS).read_bytes())
    assert status == 200 and "zh-Hans" in [locale["code"] for locale in body["locales"]]
    # what could not be mapped is said in the answer: the empty key, stale/shouldTranslate attributes
    assert "1 empty key skipped (an asset ID cannot be empty)" in body["warnings"]
    assert any("key attributes" in warning for warning in body["warnings"])
    assert api.get("/api/translations/Add New Session/zh-Hans")[1]["translation"] == "新建分组"


def _bplist_truncated() -> bytes:
    return plistlib.dumps({"a": "b", "c": "d"}, fmt=plistlib.FMT_BINARY)[:-10]


def _res_truncated(client, key: str) -> bytes:
    return download(client, key, "/api/export/locale/fr.res")[:-12]


@pytest.mark.parametrize(("ext", "query", "data", "needle"), [
    ("bplist", "locale=fr", _bplist_truncated(), "byte"),
    ("blist", "locale=fr", _bplist_truncated(), "byte"),
    ("plist", "locale=fr", plistlib.dumps({"a": "b"}, fmt=plistlib.FMT_BINARY)[:30], "bytes"),
    ("strings", "locale=fr", '"hello" = "Bonjour";\n'.encode("utf-16-le"), "without a byte-order mark (NUL byte at offset 1)"),
    ("strings", "locale=fr", b'"a" = "b";\n"hello" = "Bonjour"\n"c" = "d";\n',
     "line 2: expected ';' after the value of 'hello'"),
    ("txt", "locale=fr", b'fr {\n  hello { "Bonjour" \n}\n', "line"),
    ("xcstrings", "", b'{"sourceLanguage": "en", "strings": {"a": {"localizations": {"fr": 3}}}}', "'a'"),
])
def test_broken_files_are_422_naming_the_place_and_commit_nothing(client, demo, ext, query, data, needle) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post(f"/api/import/{ext}?{query}", data=data)
    assert status == 422, body
    assert needle in body["error"]
    assert commit_count(demo[0]) == before
    assert git(demo[0].path, "status", "--porcelain") == ""


def test_truncated_res_is_422_naming_the_byte(client, demo) -> None:
    api = Api(client, demo[1].full)
    data = _res_truncated(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post("/api/import/res?locale=fr", data=data)
    assert status == 422 and "truncated" in body["error"] and "byte" in body["error"]
    assert commit_count(demo[0]) == before


def _tool_check(tmp_path: Path, ext: str, data: bytes) -> None:
    """The independent check of each extension, on a file served by the API."""
    path = tmp_path / f"fr.{ext}"
    path.write_bytes(data)
    if ext == "strings":
        result = run_tool(require_tool("sfparse"), path)
        assert "seems ok" in result.stdout + result.stderr, result.stdout + result.stderr
    elif ext in ("plist", "bplist", "stringsdict"):
        out = tmp_path / "converted"
        result = run_tool(require_tool("plistutil"), "-i", path, "-o", out, "-f", "bin" if ext != "bplist" else "xml")
        assert result.returncode == 0 and plistlib.loads(out.read_bytes()) == plistlib.loads(data)
    elif ext == "txt":
        out = tmp_path / "compiled"
        out.mkdir()
        result = run_tool(require_tool("genrb"), "-k", "-d", out, path)
        assert result.returncode == 0, result.stderr
    elif ext == "res":
        result = run_tool(require_tool("derb"), "-s", tmp_path, "-c", path.name)
        assert result.returncode == 0 and "fr{" in result.stdout, result.stderr


@pytest.mark.parametrize("ext", ["strings", "stringsdict", "plist", "bplist", "txt", "res"])
def test_demo_exports_pass_their_independent_tool(client, demo, tmp_path: Path, ext: str) -> None:
    data = download(client, demo[1].full, f"/api/export/locale/fr.{ext}")
    _tool_check(tmp_path, ext, data)


@pytest.mark.parametrize("ext", ["strings", "stringsdict", "xcstrings", "plist", "bplist", "txt", "res"])
def test_export_then_import_changes_nothing(client, demo, ext: str) -> None:
    api = Api(client, demo[1].full)
    path = "/api/export/all.xcstrings" if ext == "xcstrings" else f"/api/export/locale/fr.{ext}"
    data = download(client, demo[1].full, path)
    before = commit_count(demo[0])
    status, body = api.post(f"/api/import/{ext}" + ("" if ext == "xcstrings" else "?locale=fr&index=id"), data=data)
    assert status == 200, body
    assert "new asset" not in body["message"], body["message"]


def test_all_xcstrings_holds_every_project_locale(client, demo) -> None:
    import json
    catalog = json.loads(download(client, demo[1].full, "/api/export/all.xcstrings"))
    assert catalog["sourceLanguage"] == "en" and catalog["version"] == "1.0"
    locales = {code for record in catalog["strings"].values() for code in record.get("localizations", {})}
    assert locales <= {"en", "fr", "de", "ja", "ar"} and {"fr", "de"} <= locales


def test_string_catalog_keys_survive_import_and_export(client, demo) -> None:
    """Keys with line breaks or longer than an asset ID come back unchanged in all.xcstrings."""
    import json
    api = Api(client, demo[1].full)
    original = json.loads(corpus_path(XCSTRINGS).read_bytes())
    api.post("/api/import/xcstrings", data=corpus_path(XCSTRINGS).read_bytes())
    exported = json.loads(download(client, demo[1].full, "/api/export/all.xcstrings"))
    keys = set(original["strings"]) - {""}
    assert keys <= set(exported["strings"])
    assert any("\n" in key for key in keys) and any(len(key.encode()) > 999 for key in keys)
    for key in keys:
        wanted = original["strings"][key].get("localizations", {}).get("zh-Hans")
        if wanted:
            assert exported["strings"][key]["localizations"]["zh-Hans"] == wanted, key


@pytest.mark.parametrize(("ext", "names"), [
    ("strings", {"en.lproj/Localizable.strings", "fr.lproj/Localizable.strings", "ar.lproj/Localizable.strings"}),
    ("stringsdict", {"fr.lproj/Localizable.stringsdict", "ja.lproj/Localizable.stringsdict"}),
    ("res", {"fr.res", "de.res"}),
    ("txt", {"fr.txt", "en.txt"}),
])
def test_archives_follow_the_platform_layout(client, demo, ext: str, names: set[str]) -> None:
    data = download(client, demo[1].full, f"/api/export/archive/{ext}.zip")
    listed = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    assert names <= listed and len(listed) == 5  # the demo project's five locales


def test_xcstrings_archive_is_one_catalog_of_every_locale(client, demo) -> None:
    import json
    data = download(client, demo[1].full, "/api/export/archive/xcstrings.zip")
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.namelist() == ["Localizable.xcstrings"]
    catalog = json.loads(archive.read("Localizable.xcstrings"))
    locales = {code for record in catalog["strings"].values() for code in record.get("localizations", {})}
    assert {"fr", "de", "ja"} <= locales


def test_imports_without_anything_unmapped_answer_no_warnings(client, demo) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post("/api/import/strings?locale=fr", data=corpus_path(STRINGS).read_bytes())
    assert status == 200 and "warnings" not in body


def test_blist_is_an_alias_of_bplist(client, demo) -> None:
    api = Api(client, demo[1].full)
    status, body = api.get("/api/formats")
    bplist = next(record for record in body if record["ext"] == "bplist")
    assert "blist" in bplist["aliases"] and bplist["readable"] and bplist["writable"]
    data = download(client, demo[1].full, "/api/export/locale/fr.bplist")
    status, body = api.post("/api/import/blist?locale=fr&index=id", data=data)
    assert status == 200 and "new asset" not in body["message"]


COTEDITOR = "xcstrings/coteditor-CotEditor__CotEditor_Localizables_Document_Window_Document.xcstrings"


def test_each_plural_variable_of_a_string_is_an_asset_edited_through_the_api_and_exported_in_its_string(
        blank: Api) -> None:
    import json

    status, body = blank.post("/api/import/xcstrings", data=corpus_path(COTEDITOR).read_bytes())
    assert status == 200, body
    string, variable = "FolderFind.Metrics.message", "FolderFind.Metrics.message:arg2"
    assert blank.get(f"/api/translations/{string}/de")[1]["translation"] == "%#@arg1@ in %#@arg2@"
    forms = blank.get(f"/api/translations/{variable}/de")[1]
    assert forms["translation"] == "%arg Datei"  # the singular form; its plural form is an asset of its own
    plural_form = next(item["id"] for item in forms["plurals"] if item["form"] == "other")
    status, _ = blank.post(f"/api/translations/{plural_form}/de", data="%arg Dokumenten".encode())
    assert status == 200
    entry = plistlib.loads(download(blank.client, blank.headers["Authorization"][5:],
                                    "/api/export/locale/de.stringsdict"))[string]
    assert entry["NSStringLocalizedFormatKey"] == "%1$#@arg1@ in %2$#@arg2@"
    assert entry["arg2"]["other"] == "%arg Dokumenten" and entry["arg2"]["NSStringFormatValueTypeKey"] == "lld"
    assert variable not in plistlib.loads(download(blank.client, blank.headers["Authorization"][5:],
                                                   "/api/export/locale/de.stringsdict"))
    catalog = json.loads(download(blank.client, blank.headers["Authorization"][5:], "/api/export/all.xcstrings"))
    substitution = catalog["strings"][string]["localizations"]["de"]["substitutions"]["arg2"]
    assert substitution["argNum"] == 2 and substitution["variations"]["plural"]["other"]["stringUnit"]["value"] == \
        "%arg Dokumenten"
    assert variable not in catalog["strings"]
