"""Imports whose files name their own locale, and the option vocabularies: never a 500 (issue 7 §1)."""
from __future__ import annotations

import json

import pytest

from tests.api import Api, commit_count
from tests.support import corpus_path

RU_PO = "po/loco-translate__languages_loco-translate-ru_RU.po"
NL_PO = "po/loco-translate__languages_loco-translate-nl_BE.po"
DE_MO = "mo/loco-translate__languages_loco-translate-de_DE.mo"
JA_MO = "mo/loco-translate__languages_loco-translate-ja.mo"



def post_file(api: Api, path: str, data: bytes):
    return api.post(path, data=data, headers={"Content-Type": "application/octet-stream"})


def locale_codes(api: Api) -> list[str]:
    return [record["code"] for record in api.get("/api/locales")[1]]


@pytest.mark.parametrize(("relative", "ext", "expected"), [
    (RU_PO, "po", "ru-RU"), (NL_PO, "po", "nl-BE"), (DE_MO, "mo", "de-DE"), (JA_MO, "mo", "ja-JP"),
])
@pytest.mark.parametrize("query", ["", "?locale=auto"])
def test_a_locale_named_by_the_file_is_canonicalised_like_the_query(blank, relative, ext, expected, query):
    status, body = post_file(blank, f"/api/import/{ext}{query}", corpus_path(relative).read_bytes())
    assert status == 200, body
    assert expected in [record["code"] for record in body["locales"]]
    assert locale_codes(blank) == ["en", expected]


def test_arb_locale_and_multi_json_keys_and_csv_header_are_canonicalised(blank):
    arb = json.dumps({"@@locale": "pt_br", "hello": "Olá"}).encode()
    assert post_file(blank, "/api/import/arb?locale=auto", arb)[0] == 200
    multi = json.dumps({"en": {"hello": "Hello"}, "zh_hant_tw": {"hello": "你好"}}).encode()
    assert post_file(blank, "/api/import/json?format=multi&locale=auto", multi)[0] == 200
    csv = b'"id","context","notes","plural","en","sr_latn"\n"bye","","","","Bye","Zdravo"\n'
    assert post_file(blank, "/api/import/csv", csv)[0] == 200
    assert locale_codes(blank) == ["en", "pt-BR", "zh-Hant-TW", "sr-Latn"]
    assert blank.get("/api/translations/hello/zh-Hant-TW")[1]["translation"] == "你好"


def test_a_query_locale_is_canonicalised_too(blank):
    status, _ = post_file(blank, "/api/import/json?locale=PT_br", '{"hello": "Olá"}'.encode())
    assert status == 200 and locale_codes(blank) == ["en", "pt-BR"]


def test_a_po_that_names_no_locale_and_gets_none_is_a_clear_422_and_commits_nothing(blank):
    before = commit_count(blank.project)
    status, body = post_file(blank, "/api/import/po?locale=auto", corpus_path("po/polib__test_msgctxt.po").read_bytes())
    assert status == 422 and "give the locale option" in body["error"]
    assert commit_count(blank.project) == before


def test_a_locale_the_file_names_that_is_not_a_language_is_a_422(blank):
    po = b'msgid ""\nmsgstr "Language: xx-not_a-locale!\\n"\n\nmsgid "Hi"\nmsgstr "Yo"\n'
    status, body = post_file(blank, "/api/import/po", po)
    assert status == 422 and "locale" in body["error"]
    arb = json.dumps({"@@locale": "qq", "hello": "x"}).encode()
    status, body = post_file(blank, "/api/import/arb?locale=auto", arb)
    assert status == 422 and "qq" in body["error"]
    assert locale_codes(blank) == ["en"]


def test_unknown_status_is_a_400_naming_the_accepted_ones(client, demo):
    response = client.get("/api/export/locale/fr.json?status=done",
                          headers={"Authorization": f"Loco {demo[1].export}"})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert "'done'" in error and "translated, untranslated, blank-translation, flagged, all, fuzzy" in error
    ok = client.get("/api/export/locale/fr.json?status=!Translated,blank",
                    headers={"Authorization": f"Loco {demo[1].export}"})
    assert ok.status_code == 200


def test_unsupported_import_and_convert_list_only_readable_formats(api, client):
    status, body = api.post("/api/import/docx", data=b"x")
    assert status == 400 and "supported for reading: arb, blist, bplist, csv, ini, json, mo, php, phps, plist, po, pot, properties, res, resw, resx, strings, stringsdict, tmx, ts, txt, xcstrings, xlf, xliff, xml, yaml, yml" in body["error"]
    assert "sql" not in body["error"] and "html" not in body["error"]
    response = client.post("/api/convert/docx/messages.json", data=b"x")
    assert response.status_code == 400 and "sql" not in response.get_json()["error"]
    status, body = api.post("/api/import/sql", data=b"x")
    assert status == 400 and "can be exported but not read" in body["error"]
