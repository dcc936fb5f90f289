"""Exports reuse the rendering of unchanged asset chunks (app.exchange.EXPORT_CACHE, formats/segments.py):
an export after any write is byte for byte what an uncached export of the same commit gives."""
from __future__ import annotations

import io
import zipfile
from datetime import datetime, timezone
from urllib.parse import quote

import pytest

import app.exports as exports
from app.exchange import snapshot_catalogue
from formats import FORMATS, ExportOptions, RenderCache, export_file
from tests.api import Api
from tests.conftest import auth

SOURCE_PO = """msgid ""
msgstr ""
"Language: fr\\n"
"Plural-Forms: nplurals=2; plural=(n > 1);\\n"

""" + "".join(f"""#. note {n}
#: screens/{n}.c:1
#, fuzzy
msgctxt "screen {n % 3}"
msgid "Text {n} with \\"quotes\\" and a\\nline break"
msgstr "Texte {n}"

""" for n in range(12)) + """msgid "One file"
msgid_plural "%d files"
msgstr[0] "Un fichier"
msgstr[1] "%d fichiers"

msgid "Same text"
msgstr "Même texte A"

msgctxt "screen 0"
msgid "Text 0 with \\"quotes\\" and a\\nline break"
msgstr "doublon"
"""

QUERIES = ("", "?index=id", "?status=translated", "?status=fuzzy", "?filter=urgent", "?filter=!urgent",
           "?fallback=en", "?no-comments=1", "?order=id", "?printf=java", "?charset=ISO-8859-1",
           "?breaks=DOS", "?collisions=ignore", "?collisions=fail")


@pytest.fixture
def chunky(client, store, keystore):
    """A project in chunks of 4 assets (so exports have several runs), French imported from a PO file."""
    project = store.create_project("Chunky", "en", "English", chunk_size=4)
    key, _ = keystore.create(project.id, "full", "Tester", "")
    api = Api(client, key)
    status, body = api.post("/api/import/po?locale=fr&index=text", data=SOURCE_PO.encode())
    assert status == 200, body
    status, _ = api.post("/api/locales", data={"code": "de"})
    assert status in (200, 201)
    api.key = key
    api.project = project
    return api


def _export(client, api: Api, path: str, cached: bool, monkeypatch) -> tuple[int, bytes]:
    """The export of the project's last commit (`ref=` fixes the header's time), with or without the cache."""
    commit = api.project.snapshot().commit
    ref = commit.decode() if isinstance(commit, bytes) else commit
    separator = "&" if "?" in path else "?"
    with monkeypatch.context() as patch:
        if not cached:
            patch.setattr(exports, "EXPORT_CACHE", None)
        response = client.get(f"{path}{separator}ref={ref}", **auth(api.key))
    return response.status_code, response.data


WRITES = (
    ("POST", "/api/translations/{sixth}/fr", {"data": "changé".encode()}),  # an asset of the second chunk
    ("POST", "/api/assets", {"data": {"id": "late.asset", "text": "Late text", "notes": "added late"}}),
    ("POST", "/api/assets/late.asset/tags", {"data": {"name": "urgent"}}),
    ("POST", "/api/translations/late.asset/de", {"data": "Später".encode()}),
    ("PATCH", "/api/assets/late.asset", {"json": {"context": "screen 1", "notes": "changed"}}),
    ("POST", "/api/assets", {"data": {"id": "twin", "text": "Same text"}}),  # a msgid shared across chunks
    ("DELETE", "/api/assets/late.asset", {}),
)


def test_po_exports_after_each_write_match_uncached_exports(client, chunky, monkeypatch):
    for method, path, kwargs in WRITES:
        for query in QUERIES:
            for locale in ("fr", "de", "en"):
                url = f"/api/export/locale/{locale}.po{query}"
                assert _export(client, chunky, url, True, monkeypatch) == _export(client, chunky, url, False,
                                                                                   monkeypatch), (method, path, url)
        _write(chunky, method, path, kwargs)
    assert exports.EXPORT_CACHE.size > 0  # the cached path was taken


def test_po_archive_after_writes_matches_an_uncached_archive(client, chunky, monkeypatch):
    for method, path, kwargs in WRITES:
        cached = _export(client, chunky, "/api/export/archive/po.zip", True, monkeypatch)
        fresh = _export(client, chunky, "/api/export/archive/po.zip", False, monkeypatch)
        assert cached[0] == fresh[0] == 200
        assert _members(cached[1]) == _members(fresh[1])
        _write(chunky, method, path, kwargs)


def test_template_and_mo_exports_match_uncached_ones(client, chunky, monkeypatch):
    for url in ("/api/export/template.pot", "/api/export/locale/fr.mo", "/api/export/all.json"):
        assert _export(client, chunky, url, True, monkeypatch) == _export(client, chunky, url, False, monkeypatch)


def test_export_cache_stays_within_its_bound_dropping_the_least_recently_used():
    cache = RenderCache(1000)
    cache.put("a", "x", 400)
    cache.put("b", "y", 400)
    assert cache.get("a") == "x"  # now the most recently used
    cache.put("c", "z", 400)
    assert cache.size <= 1000
    assert cache.get("b") is None and cache.get("a") == "x" and cache.get("c") == "z"
    cache.put("huge", "w", 1001)
    assert cache.get("huge") is None and cache.size == 800


def _members(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name: archive.read(name) for name in archive.namelist()}


def _write(api: Api, method: str, path: str, kwargs: dict) -> None:
    sixth = api.get("/api/assets")[1][5]["id"]
    status, body = api.call(method, quote(path.format(sixth=sixth), safe="/"), **kwargs)
    assert status < 300, (path, body)


def test_templates_from_the_whole_catalogue_equal_templates_from_the_source_locale_alone(demo):
    """Template exports share the project's catalogue with every other export (no second set of units)."""
    snap = demo[0].snapshot()
    options = ExportOptions(template=True, exported_at=datetime(2024, 5, 1, tzinfo=timezone.utc))
    checked = 0
    for spec in FORMATS:
        if not spec.writable:
            continue
        whole = export_file(snapshot_catalogue(snap), spec.ext, spec.variant, options)
        source_only = export_file(snapshot_catalogue(snap, []), spec.ext, spec.variant, options)
        assert whole == source_only, spec.name
        checked += 1
    assert checked > 20
