"""Every real-world file of the shared corpus (its manifest, sources.json) imports through the API, or is refused
with a clear 4xx, and the project's export in the same format passes that format's independent validator
(Formats V §6). The validators are one per registered writer, so every export of the registry is checked too."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.registry import FORMATS
from tests.api import Api
from tests.formats.samples import options, rich_catalogue
from tests.formats.validators import validate_export
from tests.support import IN_CI, SHARED

# Files whose extension names several formats: the variant a person would choose for them.
VARIANTS = {
    "xml/Wert1go-Sparrow-Tizen__res_rus-RU.xml": "tizen",
    "xml/apache-openmeetings__openmeetings-web_src_main_java_org_apache_openmeetings_web_app_Application.properties.xml":
        "java",
}


def manifest() -> list[dict]:
    path = SHARED / "corpus" / "sources.json"
    if not path.exists():
        if IN_CI:
            pytest.fail(f"shared corpus manifest missing: {path}")
        return []
    return json.loads(path.read_text(encoding="utf-8"))


FILES = [item["file"] for item in manifest()]


def variant_of(name: str) -> str:
    return next((variant for prefix, variant in VARIANTS.items() if name.startswith(prefix.split("__")[0])), "")


@pytest.mark.skipif(not FILES, reason="the shared corpus is not available")
@pytest.mark.parametrize("name", FILES)
def test_every_corpus_file_imports_and_its_export_passes_the_formats_validator(blank: Api, name: str,
                                                                              tmp_path: Path) -> None:
    ext, variant = name.rsplit(".", 1)[-1], variant_of(name)
    data = (SHARED / "corpus" / name).read_bytes()
    query = "locale=auto" + (f"&format={variant}" if variant else "")
    status, body = blank.post(f"/api/import/{ext}?{query}", data=data)
    if status == 422 and "does not say its language" in body["error"]:
        status, body = blank.post(f"/api/import/{ext}?locale=fr" + (f"&format={variant}" if variant else ""),
                                  data=data)
    if status == 400 and "can be exported but not read" in body["error"]:
        return  # a write-only format (JavaScript packs): a clear 4xx naming what can be read
    assert status == 200, body
    locales = [record["code"] for record in blank.get("/api/locales")[1]]
    target = next((code for code in locales if code != "en"), "en")
    response = blank.client.get(f"/api/export/locale/{target}.{ext}" + (f"?format={variant}" if variant else ""),
                                headers=blank.headers)
    assert response.status_code == 200, response.data[:300]
    if tool_accepts(ext, variant, tmp_path / "original", data):
        validate_export(ext, variant, tmp_path, response.data)


def tool_accepts(ext: str, variant: str, folder: Path, data: bytes) -> bool:
    """Whether the format's validator accepts the file as it came: one it refuses carries a defect of its own
    (a translator's placeholder that its msgid lacks, say), which the export keeps as it was written."""
    folder.mkdir()
    try:
        validate_export(ext, variant, folder, data)
    except AssertionError:
        return False
    return True


def test_the_corpus_variants_name_files_of_the_manifest() -> None:
    if not FILES:
        pytest.skip("the shared corpus is not available")
    assert all(any(name.startswith(prefix.split("__")[0]) for name in FILES) for prefix in VARIANTS)


@pytest.mark.parametrize("spec", [spec for spec in FORMATS if spec.writable], ids=lambda spec: spec.name)
def test_every_writer_has_an_independent_validator_that_accepts_its_export(spec, tmp_path: Path) -> None:
    from formats import export_file

    locale = "ru"
    data = export_file(rich_catalogue((locale,)), spec.ext, spec.variant,
                       options(locale=locale, all_locales=spec.multi_locale)).data
    validate_export(spec.ext, spec.variant, tmp_path, data)
