"""Every `format` name Loco accepts for a variant (php zend, xml android, xlf symfony, yml simple) exports
through HTTP the same file as the variant's registered name: generated from the registry, so a name declared
on a new format is held to it too."""
from __future__ import annotations

import pytest

from formats.registry import FORMATS

NAMED = [(spec.ext, spec.variant, name) for spec in FORMATS for name in spec.variant_names]


def export(client, key: str, path: str):
    return client.get(path, headers={"Authorization": f"Loco {key}"})


def test_the_registry_declares_the_names_loco_documents() -> None:
    assert {(ext, name) for ext, _, name in NAMED} >= {("php", "zend"), ("xml", "android"), ("xlf", "symfony")}


@pytest.mark.parametrize(("ext", "variant", "name"), NAMED)
def test_a_variant_name_loco_accepts_exports_the_same_file_as_the_variant(client, demo, ext, variant, name) -> None:
    key = demo[1].export
    query = "&no-comments=1"
    by_name = export(client, key, f"/api/export/locale/fr.{ext}?format={name}{query}")
    assert by_name.status_code == 200, by_name.data[:300]
    registered = export(client, key, f"/api/export/locale/fr.{ext}?format={variant or 'default'}{query}")
    assert by_name.data == registered.data


def test_an_unknown_variant_name_is_still_a_400(client, demo) -> None:
    response = export(client, demo[1].export, "/api/export/locale/fr.php?format=laminas")
    assert response.status_code == 400
    assert "laminas" in response.get_json()["error"]
