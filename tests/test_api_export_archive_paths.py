"""The archive honours `path` ([doc DOCS-paths], issue #26 item 4), for every format an archive holds."""
from __future__ import annotations

import io
import zipfile

import pytest

from formats.registry import FORMATS, archive_per_locale

PER_LOCALE = [spec for spec in FORMATS if spec.writable and not (spec.multi_locale and not archive_per_locale(spec))]


def archive(client, demo, query: str, ext: str = "json"):
    return client.get(f"/api/export/archive/{ext}.zip?{query}", headers={"Authorization": f"Loco {demo[1].export}"})


def names(response) -> list[str]:
    assert response.status_code == 200, response.data[:300]
    return sorted(zipfile.ZipFile(io.BytesIO(response.data)).namelist())


@pytest.mark.parametrize("spec", PER_LOCALE, ids=lambda spec: spec.name)
def test_the_archive_lays_files_out_by_the_path_pattern(client, demo, spec) -> None:
    query = f"format={spec.variant or 'default'}&path=i18n/{{locale}}.{{ext}}"
    listed = names(archive(client, demo, query, spec.ext))
    assert f"i18n/fr.{spec.ext}" in listed
    assert all(name.startswith("i18n/") for name in listed)


def test_every_documented_placeholder_is_filled(client, demo) -> None:
    query = "path={namespace}/{lang}{region}{script}{variant}/{%locale}_{locale_}.{extension}&namespace=app"
    assert "app/fr/fr_fr.json" in names(archive(client, demo, query))


@pytest.mark.parametrize("path", ["/etc/{locale}.json", "../{locale}.json", "a/../../{locale}", "{unknown}/{locale}",
                                  "{locale.__class__}", "i18n/all.json", "C:/{locale}"])
def test_a_path_that_is_absolute_climbs_out_or_names_no_locale_is_a_400(client, demo, path) -> None:
    response = archive(client, demo, "path=" + path.replace("{", "%7B").replace("}", "%7D"))
    assert response.status_code == 400, (path, response.data[:200])
    assert response.get_json()["error"]
