"""GET /api/formats and the OpenAPI description: both derived from the format registry."""
from __future__ import annotations

import io
import itertools
import re
import zipfile

from openapi_spec_validator import OpenAPIV31SpecValidator

from app.openapi import build_document
from formats.registry import FORMATS, aliases_of


def test_formats_lists_every_ext_and_variant_without_a_key(client):
    response = client.get("/api/formats")
    assert response.status_code == 200
    records = response.get_json()
    assert [(r["ext"], r["variant"]) for r in records] == [(spec.ext, spec.variant) for spec in FORMATS]
    po = next(r for r in records if r["ext"] == "po")
    assert (po["label"], po["readable"], po["writable"], po["multi_locale"], po["aliases"]) == \
        ("Gettext PO", True, True, False, [])
    sql = next(r for r in records if r["ext"] == "sql")
    assert (sql["readable"], sql["writable"], sql["multi_locale"]) == (False, True, True)
    assert client.get("/api/formats.json").get_json() == records


def test_formats_lists_declared_aliases(client, monkeypatch):
    from formats import registry

    monkeypatch.setattr(registry, "_ALIASES", {**registry._ALIASES, "jsn": "json"})
    records = client.get("/api/formats").get_json()
    assert all(r["aliases"] == ["jsn"] for r in records if r["ext"] == "json")


def test_openapi_description_passes_the_openapi_spec_validator():
    errors = [error.message for error in OpenAPIV31SpecValidator(build_document()).iter_errors()]
    assert errors == []


def test_openapi_enumerates_extensions_and_variants_from_the_registry():
    paths = build_document()["paths"]
    export_params = {p["name"]: p for p in paths["/api/export/locale/{locale}.{ext}"]["get"]["parameters"]}
    import_params = {p["name"]: p for p in paths["/api/import/{ext}"]["post"]["parameters"]}
    writable = {spec.ext for spec in FORMATS if spec.writable}
    readable = {spec.ext for spec in FORMATS if spec.readable}
    assert set(export_params["ext"]["schema"]["enum"]) == writable | {a for e in writable for a in aliases_of(e)}
    assert set(import_params["ext"]["schema"]["enum"]) == readable | {a for e in readable for a in aliases_of(e)}
    for spec in FORMATS:
        if spec.variant and spec.writable:
            assert spec.variant in export_params["format"]["schema"]["enum"]
            assert f"{spec.ext}: " in export_params["format"]["description"]
    archive = paths["/api/export/archive/{ext}.zip"]["get"]["description"]
    assert all(spec.archive_path in archive for spec in FORMATS if spec.writable)
    listing = paths["/api/formats"]["get"]["description"]
    assert all(spec.label in listing for spec in FORMATS)


def archive_names(client, key: str, path: str) -> list[str]:
    response = client.get(path, headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, response.data
    return zipfile.ZipFile(io.BytesIO(response.data)).namelist()


def test_archive_uses_each_format_declared_layout(client, demo):
    names = archive_names(client, demo[1].export, "/api/export/archive/json.zip?format=chrome")
    assert "_locales/fr/messages.json" in names and "_locales/en/messages.json" in names
    assert "app_fr.arb" in archive_names(client, demo[1].export, "/api/export/archive/arb.zip")
    assert "acme-notes-fr.csv" in archive_names(client, demo[1].export, "/api/export/archive/csv.zip")


def spec_format_values() -> list[tuple[str, str]]:
    """(ext, format value) for every value the specification's "format values by extension" table names."""
    from tests.support import SHARED, IN_CI
    import pytest

    path = SHARED / "spec" / "service-api.md"
    if not path.exists():
        if IN_CI:
            pytest.fail(f"shared specification missing: {path}")
        return []
    after = path.read_text(encoding="utf-8").split("format values by extension:", 1)[1].strip().splitlines()
    table = list(itertools.takewhile(lambda line: line.startswith("|"), after))[2:]  # no header, no ---
    values = []
    for row in table:
        ext, listed = (cell.strip() for cell in row.strip().strip("|").split("|"))
        values.extend((ext, name.strip()) for name in re.sub(r"\([^)]*\)", "", listed).split(",") if name.strip())
    return values


def test_every_format_value_the_specification_names_is_accepted_by_its_name(client, demo):
    values = spec_format_values()
    if not values:
        import pytest
        pytest.skip("the shared specification is not available")
    assert ("xml", "android") in values and ("yml", "simple") in values  # the defaults' own names
    headers = {"Authorization": f"Loco {demo[1].full}"}
    for ext, value in values:
        response = client.get(f"/api/export/locale/fr.{ext}?format={value}", headers=headers)
        assert response.status_code == 200, (ext, value, response.data[:200])
    named = client.get("/api/export/locale/fr.xml?format=android", headers=headers).data
    assert named.split(b"-->", 1)[1] == client.get("/api/export/locale/fr.xml", headers=headers).data.split(b"-->", 1)[1]
    assert client.get("/api/export/locale/fr.php?format=zend", headers=headers).status_code == 200


def test_openapi_enumerates_the_defaults_own_names():
    paths = build_document()["paths"]
    export_params = {p["name"]: p for p in paths["/api/export/locale/{locale}.{ext}"]["get"]["parameters"]}
    assert {"android", "simple", "zend"} <= set(export_params["format"]["schema"]["enum"])
