"""`status` selects translations, also in multi-locale files (issue #26 item 3): generated over every format
that holds all locales."""
from __future__ import annotations

import pytest

from formats.registry import FORMATS

MULTI = [spec for spec in FORMATS if spec.writable and spec.multi_locale]
FRENCH, ENGLISH = "Zebre flou ici", "Zebra fuzzy here"


@pytest.fixture
def fuzzy_french(client, demo) -> str:
    full = {"Authorization": f"Loco {demo[1].full}"}
    assert client.post("/api/assets", data={"id": "zulu.fuzzy", "text": ENGLISH}, headers=full).status_code in (200, 201)
    assert client.post("/api/translations/zulu.fuzzy/fr", data=FRENCH.encode(), headers=full).status_code == 200
    assert client.post("/api/translations/zulu.fuzzy/fr/flag", data={"flag": "fuzzy"}, headers=full).status_code == 200
    return demo[1].export


def export_all(client, key: str, spec, status: str) -> bytes:
    response = client.get(f"/api/export/all.{spec.ext}?format={spec.variant or 'default'}&status={status}",
                          headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, response.data[:300]
    return response.data


@pytest.mark.parametrize("spec", MULTI, ids=lambda spec: spec.name)
def test_not_fuzzy_leaves_out_the_fuzzy_translation_and_keeps_the_other_locales(client, fuzzy_french, spec) -> None:
    data = export_all(client, fuzzy_french, spec, "!fuzzy")
    assert FRENCH.encode() not in data
    assert ENGLISH.encode() in data


@pytest.mark.parametrize("spec", [spec for spec in MULTI if not spec.bilingual], ids=lambda spec: spec.name)
def test_fuzzy_does_not_bring_in_the_other_locales_texts(client, fuzzy_french, spec) -> None:
    data = export_all(client, fuzzy_french, spec, "fuzzy")
    assert FRENCH.encode() in data
    assert ENGLISH.encode() not in data
