"""Templates through HTTP hold the source keys and no source translation, in every non-bilingual format
(issue #26 item 1: template.strings, Android template.xml and template.xml?format=java wrote the English)."""
from __future__ import annotations

import pytest

from formats.registry import FORMATS

TEMPLATED = [spec for spec in FORMATS if spec.writable and not spec.bilingual and not spec.multi_locale]


SOURCE_TEXT = "Zebra welcome banner"


@pytest.mark.parametrize("spec", TEMPLATED, ids=lambda spec: spec.name)
def test_a_template_export_holds_no_source_text(client, demo, spec) -> None:
    key = demo[1].export
    created = client.post("/api/assets", data={"id": "zulu.title", "text": SOURCE_TEXT},
                          headers={"Authorization": f"Loco {demo[1].full}"})
    assert created.status_code in (200, 201)
    response = client.get(f"/api/export/template.{spec.ext}?format={spec.variant or 'default'}&index=id",
                          headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, response.data[:300]
    assert SOURCE_TEXT.encode() not in response.data
