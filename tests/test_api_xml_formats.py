"""The XML family through HTTP: exports pass their validators, imports name their locales, hostile XML is a 4xx
that commits nothing and leaves the server responsive."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.api import Api, commit_count
from tests.support import git, require_tool, schema_path

SECRET = "TOP-SECRET-MARKER-api"
XLIFF_FR = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" target-language="{target}" datatype="plaintext">
    <body>
      <trans-unit id="home.title"><source>Welcome to Acme Notes</source>
        <target state="needs-review-translation">Bienvenue chez Acme</target></trans-unit>
      <trans-unit id="brand.new" resname="brand.new"><source>Brand new</source>
        <target state="translated">Tout neuf</target><note>Fresh from XLIFF</note></trans-unit>
    </body>
  </file>
</xliff>
"""


def download(client, key: str, path: str) -> bytes:
    response = client.get(path, headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, (path, response.data[:300])
    return response.data


def test_all_xlf_holds_every_target_locale_and_passes_the_strict_schema(client, demo, tmp_path: Path) -> None:
    data = download(client, demo[1].export, "/api/export/all.xlf")
    assert data.count(b"<file ") == 4  # fr, de, ja, ar beside the en source
    path = tmp_path / "all.xlf"
    path.write_bytes(data)
    for schema in ("xliff-core-1.2-strict.xsd", "xliff-core-1.2-transitional.xsd"):
        result = subprocess.run([require_tool("xmllint"), "--noout", "--nonet", "--schema", str(schema_path(schema)),
                                 str(path)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_all_tmx_passes_the_dtd(client, demo, tmp_path: Path) -> None:
    data = download(client, demo[1].export, "/api/export/all.tmx")
    assert b'<!DOCTYPE tmx SYSTEM "tmx14.dtd">' in data and b'xml:lang="ar"' in data
    path = tmp_path / "all.tmx"
    path.write_bytes(data)
    result = subprocess.run([require_tool("xmllint"), "--noout", "--nonet", "--dtdvalid",
                             str(schema_path("tmx14.dtd")), str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", [
    "/api/export/locale/fr.xlf", "/api/export/locale/fr.xlf?format=xcode", "/api/export/locale/fr.tmx",
    "/api/export/locale/fr.xml", "/api/export/locale/fr.xml?format=java", "/api/export/locale/fr.xml?format=tizen",
    "/api/export/locale/fr.ts", "/api/export/locale/fr.resx",
])
def test_exporting_then_importing_the_same_file_changes_nothing(client, demo, path: str) -> None:
    api = Api(client, demo[1].full)
    data = download(client, demo[1].export, path)
    ext = path.split("?")[0].rsplit(".", 1)[1]
    variant = path.split("format=")[1] if "format=" in path else ""
    before = commit_count(demo[0])
    assets = len(api.get("/api/assets")[1])
    query = f"locale=fr&format={variant}" if variant else "locale=fr"
    status, body = api.post(f"/api/import/{ext}?{query}", data=data)
    assert status == 200, body
    assert len(api.get("/api/assets")[1]) == assets, body
    assert commit_count(demo[0]) == before, body["message"]


@pytest.mark.parametrize("target", ["fr_FR", "fr-FR"])
def test_xliff_target_language_names_the_locale(client, demo, target: str) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post("/api/import/xlf?locale=auto", data=XLIFF_FR.format(target=target).encode())
    assert status == 200, body
    assert "fr-FR" in [locale["code"] for locale in body["locales"]]
    home = api.get("/api/translations/home.title/fr-FR")[1]
    assert home["translation"] == "Bienvenue chez Acme" and home["flag"] == "fuzzy"
    assert api.get("/api/assets/brand.new.json")[1]["notes"] == "Fresh from XLIFF"


def test_ts_language_names_the_locale(client, demo) -> None:
    api = Api(client, demo[1].full)
    ts = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="de_AT">\n'
          "<context><name></name><message><source>New note</source><translation>Neue Notiz</translation>"
          "</message></context></TS>\n")
    status, body = api.post("/api/import/ts", data=ts.encode())
    assert status == 200, body
    assert "de-AT" in [locale["code"] for locale in body["locales"]]
    assert api.get("/api/translations/home.new_note/de-AT")[1]["translation"] == "Neue Notiz"


def test_convert_po_to_xliff_and_android(client, demo) -> None:
    po = b'msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Open"\nmsgstr "Ouvrir"\n'
    headers = {"Authorization": f"Loco {demo[1].full}"}
    response = client.post("/api/convert/po/messages-fr.xlf", data=po, headers=headers)
    assert response.status_code == 200, response.data
    assert b'<target state="translated">Ouvrir</target>' in response.data
    response = client.post("/api/convert/po/messages-fr.xml", data=po, headers=headers)
    assert response.status_code == 200 and b"<string name=\"Open\">Ouvrir</string>" in response.data


# --- hostile XML ---------------------------------------------------------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    (tmp_path / "evil.dtd").write_text(f'<!ENTITY leak "{SECRET}">')
    return path


def hostile_bodies(secret: Path) -> dict[str, bytes]:
    dtd = secret.parent / "evil.dtd"
    laughs = "".join(f'<!ENTITY l{n} "{("&l" + str(n - 1) + ";") * 10}">' for n in range(1, 10))
    return {
        "xxe": f'<!DOCTYPE resources [<!ENTITY x SYSTEM "file://{secret}">]>'
               f'<resources><string name="a">&x;</string></resources>'.encode(),
        "billion laughs": f'<!DOCTYPE resources [<!ENTITY l0 "lol">{laughs}]>'
                          f'<resources><string name="a">&l9;</string></resources>'.encode(),
        "external dtd": f'<!DOCTYPE resources SYSTEM "file://{dtd}"><resources><string name="a">&leak;</string>'
                        f"</resources>".encode(),
        "parameter entity": f'<!DOCTYPE resources [<!ENTITY % p SYSTEM "file://{dtd}"> %p;]>'
                            f'<resources><string name="a">&leak;</string></resources>'.encode(),
    }


@pytest.mark.parametrize("case", ["xxe", "billion laughs", "external dtd", "parameter entity"])
@pytest.mark.parametrize("ext", ["xml", "xlf", "tmx", "ts", "resx"])
def test_hostile_xml_is_a_4xx_that_commits_nothing(client, demo, secret: Path, case: str, ext: str) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    started = time.monotonic()
    status, body = api.post(f"/api/import/{ext}?locale=fr", data=hostile_bodies(secret)[case])
    assert 400 <= status < 500 and status != 404, body
    assert time.monotonic() - started < 10
    assert SECRET not in body["error"]
    assert commit_count(demo[0]) == before
    assert git(demo[0].path, "status", "--porcelain") == ""
    assert api.get("/api/auth/verify")[0] == 200  # still answering


def test_a_100_mb_xml_body_is_refused_without_a_commit(client, demo) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    body = b'<resources><string name="a">' + b"x" * (100 * 1024 * 1024) + b"</string></resources>"
    status, answer = api.post("/api/import/xml?locale=fr", data=body)
    assert status == 413, answer
    assert commit_count(demo[0]) == before
    assert api.get("/api/auth/verify")[0] == 200


# --- registry facts through HTTP -----------------------------------------------------------------


def test_aliases_export_and_import(client, demo) -> None:
    api = Api(client, demo[1].full)
    xliff = download(client, demo[1].export, "/api/export/locale/fr.xliff")
    assert b'target-language="fr"' in xliff
    resw = download(client, demo[1].export, "/api/export/locale/fr.resw")
    assert b"text/microsoft-resx" in resw
    before = commit_count(demo[0])
    assert api.post("/api/import/xliff?locale=fr", data=xliff)[0] == 200
    assert api.post("/api/import/resw?locale=fr", data=resw)[0] == 200
    assert commit_count(demo[0]) == before  # the same translations: nothing to commit


def test_android_archive_uses_resource_qualifiers(client, demo) -> None:
    import io
    import zipfile

    data = download(client, demo[1].export, "/api/export/archive/xml.zip")
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "values-fr/strings.xml" in names and "values-ar/strings.xml" in names


def test_formats_listing_names_the_xml_family(client, demo) -> None:
    response = client.get("/api/formats", headers={"Authorization": f"Loco {demo[1].export}"})
    assert response.status_code == 200
    listed = {(record["ext"], record["variant"]): record for record in response.get_json()}
    assert listed[("xlf", "")]["aliases"] == ["xliff"] and listed[("xlf", "")]["multi_locale"]
    assert listed[("resx", "")]["aliases"] == ["resw"]
    assert {("xlf", "xcode"), ("tmx", ""), ("ts", ""), ("xml", ""), ("xml", "java"), ("xml", "tizen")} <= set(listed)
    assert all(listed[key]["readable"] and listed[key]["writable"] for key in listed if key[0] in ("xlf", "xml"))
