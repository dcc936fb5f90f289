"""The asset list after a burst of writes between two reads: the same bytes as a list built from scratch, built
again only for the assets the writes touched, in the worker that wrote and in one that did not (another app on
the same data directory, as each `gloss serve` worker is)."""
from __future__ import annotations

import json

import pytest

import app.jsonio as jsonio
from app import create_app
from tests.api import chunked_project

ASSETS = 30  # three chunks of ten
BURST = 50


@pytest.fixture
def project(client, store, keystore):
    """30 assets in chunks of 10, translated in French and German."""
    _, api = chunked_project(client, store, keystore, "Bursty",
                             lambda i: {code: f"{code} {i}" for code in ("fr", "de")}, ASSETS)
    return api


def asset_list(client, key: str, query: str = "") -> bytes:
    response = client.get(f"/api/assets{query}", headers={"Authorization": f"Loco {key}"})
    assert response.status_code == 200
    assert response.headers["Content-Length"] == str(len(response.data))
    return response.data


def test_filtered_lists_are_the_pretty_json_of_the_records_they_select(client, project):
    for i in (3, 15, 16, 17, 29):  # runs of tagged assets, and single ones, in every chunk
        assert project.post(f"/api/assets/a{i}/tags", data={"name": "urgent"})[0] == 200
    for expression in ("urgent", "!urgent", "*", "nothing", ""):
        query = f"?filter={expression}"
        records = json.loads(asset_list(client, project.key, query + "&ugly"))
        pretty = asset_list(client, project.key, query)
        assert pretty.decode() == json.dumps(records, indent=4, ensure_ascii=False) + "\n"
        assert len(records) == {"urgent": 5, "!urgent": 25, "*": 5, "nothing": 0, "": 30}[expression]


@pytest.fixture
def rendered(monkeypatch) -> list[str]:
    """The IDs of the Asset records rendered (`jsonio.pretty_item`, which every list entry goes through)."""
    seen: list[str] = []
    render = jsonio.pretty_item

    def counting(value):
        seen.append(value["id"])
        return render(value)

    monkeypatch.setattr(jsonio, "pretty_item", counting)
    return seen


MIXED_BURST = [
    *[("POST", f"/api/translations/a{i % 3}/{'fr' if i % 2 else 'de'}", {"data": f"burst {i}".encode()})
      for i in range(BURST - 11)],
    ("POST", "/api/translations/a12/fr/flag", {"data": {"flag": "fuzzy"}}),
    ("DELETE", "/api/translations/a13/de", {}),
    ("PATCH", "/api/assets/a14", {"json": {"notes": "changed", "context": "menu"}}),
    *[("POST", f"/api/assets/a{i}/tags", {"data": {"name": "urgent"}}) for i in (3, 15, 16, 29)],
    ("POST", "/api/assets", {"data": {"id": "late", "text": "Late"}}),
    ("POST", "/api/translations/late/fr", {"data": "Tard".encode()}),
    ("DELETE", "/api/assets/a21", {}),
    ("POST", "/api/locales", {"data": {"code": "ja"}}),
]


def test_asset_list_after_a_burst_of_writes_equals_a_list_built_from_scratch(client, data_dir, project):
    other = create_app(data_dir, testing=True).test_client()
    asset_list(client, project.key), asset_list(other, project.key)  # both workers hold a cached list
    for done, (method, path, kwargs) in enumerate(MIXED_BURST, start=1):
        status, body = project.call(method, path, **kwargs)
        assert status in (200, 201), (path, body)
        # the writer reads after every 10 writes, the other app after the burst (then again after a new locale)
        if done % 10 == 0 or done >= len(MIXED_BURST) - 1:
            for query in ("", "?filter=urgent", "?filter=!urgent", "?ugly"):
                fresh = asset_list(create_app(data_dir, testing=True).test_client(), project.key, query)
                assert asset_list(client, project.key, query) == fresh, query
                if done >= len(MIXED_BURST) - 1:
                    assert asset_list(other, project.key, query) == fresh, query


def test_a_read_after_a_burst_renders_only_the_assets_the_writes_changed(client, data_dir, project, rendered):
    other = create_app(data_dir, testing=True).test_client()
    asset_list(client, project.key), asset_list(other, project.key)
    touched = ["a1", "a2", "a13", "a25"]  # every chunk, written many times each
    for i in range(BURST):
        asset = touched[i % len(touched)]
        assert project.post(f"/api/translations/{asset}/fr", data=f"burst {i}".encode())[0] == 200
    rendered.clear()
    asset_list(client, project.key)
    assert sorted(rendered) == sorted(touched)
    rendered.clear()
    asset_list(other, project.key)
    assert sorted(rendered) == sorted(touched)
