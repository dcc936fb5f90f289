"""A plural form is never dropped (issue #26 item 2): plural forms are assets of their own (service-api §2), so
every format without plural syntax (its capabilities say so) writes each as an entry of its own, generated over
the format registry and read back with the format's own reader."""
from __future__ import annotations

import pytest

from formats import ReadOptions, read_file
from formats.registry import FORMATS

FLAT = [spec for spec in FORMATS if spec.writable and not spec.capabilities.plurals]
SINGULAR, PLURAL = "%d pomme zq", "%d pommes zq"
SOURCE_SINGULAR, SOURCE_PLURAL = "%d apple zq", "%d apples zq"


@pytest.fixture
def pluralised(client, demo) -> tuple[str, str]:
    """The export key of a project whose asset `apple` has a plural form translated in French, and its ID."""
    full = {"Authorization": f"Loco {demo[1].full}"}
    assert client.post("/api/assets", data={"id": "apple", "text": SOURCE_SINGULAR}, headers=full).status_code in (200, 201)
    created = client.post("/api/assets/apple/plurals", data={"text": SOURCE_PLURAL}, headers=full)
    assert created.status_code == 200, created.data
    pid = created.get_json()["id"]
    for asset_id, text in (("apple", SINGULAR), (pid, PLURAL)):
        assert client.post(f"/api/translations/{asset_id}/fr", data=text.encode(), headers=full).status_code == 200
    return demo[1].export, pid


def export(client, key: str, spec, query: str = "") -> bytes:
    response = client.get(f"/api/export/locale/fr.{spec.ext}?format={spec.variant or 'default'}{query}",
                          headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200, response.data[:300]
    return response.data


def texts_by_key(spec, data: bytes) -> dict[str, str | None]:
    catalogue = read_file(spec.ext, spec.variant, data, ReadOptions(locale="fr", index="id"))
    return {unit.id: unit.translation("fr").text for unit in catalogue.units}


def test_the_matrix_covers_the_flat_formats() -> None:
    names = {spec.name for spec in FLAT}
    assert {"xml (java)", "xml (tizen)", "strings", "resx", "php (constants)"} <= names
    assert all(spec.readable for spec in FLAT)  # each is read back below with its own reader


@pytest.mark.parametrize("spec", FLAT, ids=lambda spec: spec.name)
def test_each_plural_form_is_an_entry_of_its_own(client, pluralised, spec) -> None:
    key, pid = pluralised
    found = texts_by_key(spec, export(client, key, spec))
    singular = [name for name, text in found.items() if text == SINGULAR]
    plural = [name for name, text in found.items() if text == PLURAL]
    assert len(singular) == 1 and len(plural) == 1, found
    assert singular != plural
    if spec.key_filter is None:  # keys the format can hold are the asset IDs
        assert (singular[0].lower(), plural[0].lower()) == ("apple", pid.lower())


@pytest.mark.parametrize("spec", [spec for spec in FLAT if spec.key_filter is None], ids=lambda spec: spec.name)
def test_with_index_text_each_plural_form_is_keyed_by_its_own_source_text(client, pluralised, spec) -> None:
    key, _ = pluralised
    found = texts_by_key(spec, export(client, key, spec, "&index=text"))
    assert found[SOURCE_SINGULAR] == SINGULAR and found[SOURCE_PLURAL] == PLURAL


PO = '''msgid ""
msgstr ""
"Language: fr\\n"
"Plural-Forms: nplurals=2; plural=(n > 1);\\n"

msgid "example"
msgid_plural "examples"
msgstr[0] "exemple"
msgstr[1] "exemples"
'''


@pytest.mark.parametrize("spec", FLAT, ids=lambda spec: spec.name)
def test_a_converted_plural_keeps_its_forms_named_as_new_plural_form_assets(client, spec) -> None:
    response = client.post(f"/api/convert/po/test-fr.{spec.ext}?format={spec.variant or 'default'}&index=id",
                           data=PO.encode())
    assert response.status_code == 200, response.data[:300]
    found = texts_by_key(spec, response.data)
    assert sorted(text for text in found.values() if text) == ["exemple", "exemples"], found
    if spec.key_filter is None:
        assert (found["example"], found["example-plural"]) == ("exemple", "exemples")
