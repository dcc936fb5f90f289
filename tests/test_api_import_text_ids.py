"""Files keyed by their source texts import whatever the texts hold (Formats V §1): a text that cannot be an
asset ID as it is gets an ID derived from it, the same on every import, and exports still carry the text."""
from __future__ import annotations

from urllib.parse import quote

import pytest

from vocabulary import asset_id_of_text, text_of_asset_id
from tests.api import Api, commit_count

MULTI_LINE = "First line of a long help text,\nthen the second line."
LONG = "A paragraph that goes on. " * 60  # 1,560 bytes: over max_asset_id_bytes
UNADDRESSABLE = "docs/../index.html"  # a `..` segment: no URL could name it


def xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def ts_file(texts: list[str]) -> bytes:
    """A Qt Linguist file: messages have no IDs, only their source texts."""
    messages = "".join(f"<message><source>{xml_text(text)}</source><translation>FR {xml_text(text)}</translation>"
                       "</message>" for text in texts)
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="fr_FR">'
            f"<context><name>Main</name>{messages}</context></TS>\n").encode()


def tmx_file(texts: list[str]) -> bytes:
    units = "".join(f'<tu><tuv xml:lang="en"><seg>{xml_text(text)}</seg></tuv>'
                    f'<tuv xml:lang="fr"><seg>FR {xml_text(text)}</seg></tuv></tu>' for text in texts)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header creationtool="OmegaT" '
            f'creationtoolversion="4" segtype="sentence" o-tmf="OmegaT TMX" adminlang="EN-US" srclang="en" '
            f'datatype="plaintext"/><body>{units}</body></tmx>\n').encode()


FILES = {"ts": ts_file, "tmx": tmx_file}


# TMX units are keyed by their source text; a TS file too when read with index=id (its default, index=text,
# makes a slug of the text as for an asset created without an ID)
@pytest.mark.parametrize("ext, query", [("tmx", ""), ("ts", "&index=id")])
def test_units_whose_texts_cannot_be_ids_import_under_derived_ids_and_a_reimport_finds_them(
        blank: Api, ext: str, query: str):
    texts = [MULTI_LINE, LONG, UNADDRESSABLE, "Plain text"]
    data = FILES[ext](texts)
    status, body = blank.post(f"/api/import/{ext}?locale=fr{query}", data=data)
    assert status == 200, body
    assert len(body["warnings"]) == 3 and all("imported as" in warning for warning in body["warnings"])
    ids = [asset["id"] for asset in blank.get("/api/assets")[1]]
    assert len(ids) == len(texts)
    assert sum("\\n" in asset_id for asset_id in ids) == 1 and sum("…#" in asset_id for asset_id in ids) == 2
    fr = {blank.get(f"/api/translations/{quote(asset_id, safe='')}/fr")[1]["translation"] for asset_id in ids}
    assert fr == {f"FR {text}" for text in texts}
    before = commit_count(blank.project)
    status, again = blank.post(f"/api/import/{ext}?locale=fr{query}", data=data)
    assert status == 200 and again["message"] == "Nothing updated", again
    assert [asset["id"] for asset in blank.get("/api/assets")[1]] == ids  # the same assets were found
    assert commit_count(blank.project) <= before + 1


def test_an_export_keyed_by_text_carries_each_full_original_text(blank: Api):
    texts = [MULTI_LINE, LONG]
    assert blank.post("/api/import/ts?locale=fr&index=id", data=ts_file(texts))[0] == 200
    exported = blank.client.get("/api/export/locale/fr.ts", headers=blank.headers).data.decode()
    for text in texts:
        assert xml_text(text) in exported


def test_derived_ids_are_readable_bounded_addressable_and_a_line_break_comes_back():
    assert asset_id_of_text("Save\nchanges?") == "Save\\nchanges?"
    assert text_of_asset_id(asset_id_of_text("Save\nchanges?\t\x01")) == "Save\nchanges?\t\x01"
    long = asset_id_of_text(LONG)
    assert long.startswith("A paragraph") and len(long.encode()) <= 500 and long != asset_id_of_text(LONG + "!")
    assert asset_id_of_text("docs/../index.html").startswith("docs .. index.html…#")
    assert asset_id_of_text("a/tags") != "a/tags" and asset_id_of_text("a/b") == "a/b"  # a route word after /
