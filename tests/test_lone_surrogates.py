"""No route answers 500 to a text UTF-8 cannot encode: a lone UTF-16 surrogate (`"x\\ud800"`).

Generated from the whole Flask route table (`app.url_map`: every rule and method, the API and the web pages),
on a freshly seeded demo project per operation: each rule is called with lone surrogates in every path
variable, in every query parameter, in JSON bodies (as `\\ud800` escapes and as raw bytes, in every field at
once and in one field of an otherwise valid body), in form fields (urlencoded and multipart) and in files of
every family with such an escape (imported and converted in their own format). Every answer must be below
500, an API 4xx the JSON error record, and the repository must stay clean and pass `git fsck --strict`.
"""
from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from app.routes import is_api_rule
from tests.test_api_auth_matrix import DEMO_VALUES, PLURAL_OWNER
from tests.test_api_fuzz import (FIELD_NAMES, FULL_FORM, QUERY_NAMES, VARIABLE, assert_answer,
                                 assert_repository_clean_and_valid, fresh_demo, fuzz_app, multipart,
                                 route_groups)
from tests.test_web_pages import form_token, sign_in

__all__ = ["fuzz_app"]  # the module-scoped app fixture of the route fuzz, shared

LONE = "x\ud800"  # a high surrogate with no low one after it
LONE_UTF8 = "%ED%A0%80"  # what the surrogate would be in UTF-8 (which forbids it), percent-encoded
PATH_VALUES = [LONE_UTF8, quote("x\\ud800", safe=""), "x%5CuD800%5CuD800"]
QUERY_VALUES = [LONE_UTF8, quote("\\ud800", safe=""), quote('"\\udc00"', safe="")]

# Files holding a lone surrogate spelled the way each family escapes characters; `{ext}` routes get their own.
FILES = [
    ("json", b'{"home.title": "x\\ud800"}'),
    ("json", b'{"x\\ud800": "y", "home.title": "Accueil"}'),
    ("json", b'{"fr": {"home.title": "\\udc00"}}'),
    ("json", b'{"home.title": "x\xed\xa0\x80"}'),  # raw surrogate bytes: invalid UTF-8
    ("arb", b'{"@@locale": "fr", "title": "x\\ud800", "@title": {"description": "\\ud800"}}'),
    ("xcstrings", b'{"sourceLanguage": "en", "version": "1.0", "strings": {"k\\ud800": {}}}'),
    ("strings", b'"home.title" = "x\\UD800";\n'),
    ("properties", b"home.title=x\\ud800\n"),
    ("yml", b'fr:\n  home:\n    title: "x\\ud800"\n'),
    ("php", b'<?php return ["home.title" => "x\\u{d800}"];\n'),
    ("js", b'var t = {"home.title": "x\\ud800"};\n'),
    ("po", b'msgid "home.title"\nmsgstr "x\\ud800"\n'),
    ("txt", b'fr {\n  title { "x\\uD800" }\n}\n'),
    ("xlf", b'<?xml version="1.0"?><xliff version="1.2"><file source-language="en" target-language="fr">'
            b'<body><trans-unit id="a"><source>&#xD800;</source></trans-unit></body></file></xliff>'),
    ("csv", b"id,en,fr\nhome.title,Home,x\\ud800\n"),
]


def operations() -> list[tuple[str, str]]:
    """(method, rule) for every rule of the url_map, HEAD and OPTIONS aside."""
    return sorted((method, rule) for (_, method), rules in route_groups(api_only=False).items() for rule in rules)


OPERATIONS = operations()


def url(rule: str, replace: dict[str, str] | None = None) -> str:
    """The rule on the demo project; `replace` gives raw (already encoded) values to some variables."""
    values = {name: quote(value, safe="") for name, value in DEMO_VALUES.items()}
    if "pid" in rule or "/plurals" in rule:
        values["asset_id"] = PLURAL_OWNER
    values.update(replace or {})
    return VARIABLE.sub(lambda match: values.get(match[1], "unknown"), rule)


def json_bodies() -> list[bytes]:
    """Every field a route reads holding the surrogate at once, then one field at a time in a valid body."""
    every = {name: LONE for name in FIELD_NAMES} | {LONE: "value"}
    valid = {name: values[0] or "x" for name, values in FULL_FORM.items()}
    bodies = [json.dumps(every).encode(), json.dumps(every, ensure_ascii=False).encode("utf-8", "surrogatepass"),
              json.dumps({"aliases": {"a": LONE}, "tags": [LONE], "meta": {"k": [LONE]}}).encode()]
    bodies += [json.dumps(dict(valid, **{name: LONE})).encode() for name in FIELD_NAMES]
    return bodies


def form_bodies(csrf: str) -> list[tuple[str, bytes]]:
    """Form fields cannot carry a surrogate as text: its UTF-8 bytes (refused) and its escape (plain text)."""
    fields = [("csrf", csrf.encode())] + [(name, b"x\xed\xa0\x80") for name in FIELD_NAMES]
    escaped = [("csrf", csrf.encode())] + [(name, b"x\\ud800") for name in FIELD_NAMES]
    urlencoded = "&".join(f"{name}={LONE_UTF8}" for name in FIELD_NAMES) + f"&csrf={quote(csrf)}"
    return [("application/x-www-form-urlencoded", urlencoded.encode()),
            ("multipart/form-data; boundary=B", multipart([(n, v, False) for n, v in fields], "B")),
            ("multipart/form-data; boundary=B", multipart([(n, v, True) for n, v in escaped], "B"))]


def requests_for(method: str, rule: str, csrf: str) -> list[tuple[str, str, str | None, bytes]]:
    """(path, query, content type, body) of every hostile request to one operation."""
    found: list[tuple[str, str, str | None, bytes]] = []
    for name in VARIABLE.findall(rule):
        found += [(url(rule, {name: value}), "", None, b"") for value in PATH_VALUES]
    found += [(url(rule), "&".join(f"{name}={value}" for name in QUERY_NAMES), None, b"")
              for value in QUERY_VALUES]
    if method == "GET":
        return found
    found += [(url(rule), "", "application/json", body) for body in json_bodies()]
    found += [(url(rule), "", content_type, body) for content_type, body in form_bodies(csrf)]
    for ext, data in FILES:  # a file in its own format where the rule names one (import, convert)
        path = url(rule, {"ext": ext, "from_ext": ext}) if "<from_ext>" not in rule else url(rule, {"from_ext": ext})
        found.append((path, "locale=fr", None, data))
    return found


@pytest.mark.parametrize("method, rule", OPERATIONS, ids=[f"{method} {rule}" for method, rule in OPERATIONS])
def test_a_lone_surrogate_anywhere_in_a_request_is_never_a_500(fuzz_app, method, rule):
    demo = fresh_demo(fuzz_app)
    api = is_api_rule(rule)
    if not api:  # the web pages: signed in, with the form token, so that requests reach the handlers
        sign_in(demo.client, demo.headers["Authorization"].split()[1])
    csrf = "" if api else form_token(demo.client)
    for path, query, content_type, body in requests_for(method, rule, csrf):
        headers = dict(demo.headers) if api else {}
        if content_type is not None:
            headers["Content-Type"] = content_type
        response = demo.client.open(path, method=method, query_string=query, headers=headers, data=body)
        request_repr = f"{method} {path}?{query} Content-Type={content_type!r} body={body[:100]!r}"
        if api:
            assert_answer(response, request_repr)
        else:
            assert response.status_code < 500, f"{response.status_code} for {request_repr}"
    assert_repository_clean_and_valid(demo.project)


def test_every_operation_of_the_route_table_is_covered():
    """The API and the web pages, with the operations the issue named (assets, locales, tags, import)."""
    rules = {rule for _, rule in OPERATIONS}
    assert any(not is_api_rule(rule) for rule in rules)
    for needed in ("/api/assets", "/api/locales", "/api/tags", "/api/import/<ext>",
                   "/api/convert/<from_ext>/<name>.<ext>"):
        assert needed in rules, needed


# The families whose escapes can spell a surrogate (YAML and PO refuse such an escape as a syntax error).
ESCAPING = [(ext, data) for ext, data in FILES if ext in ("json", "arb", "xcstrings", "strings", "properties", "php",
                                                          "txt") and b"\\u" in data.lower()]


@pytest.mark.parametrize("ext, data", ESCAPING, ids=[ext for ext, _ in ESCAPING])
def test_a_file_spelling_a_lone_surrogate_is_a_422_naming_it_on_import_and_convert(api, ext, data):
    before = api.get("/api/assets")[1]
    for path in (f"/api/import/{ext}?locale=fr", f"/api/convert/{ext}/messages-fr.json"):
        status, body = api.post(path, data=data)
        assert status == 422, (path, status, body)
        assert "lone UTF-16 surrogate" in body["error"] and "U+D" in body["error"], body
    assert api.get("/api/assets")[1] == before


def test_a_json_body_with_a_lone_surrogate_is_a_400_naming_it(api):
    status, body = api.patch("/api/locales/fr", data=json.dumps({"name": "Fran\udc00ais"}),
                             content_type="application/json")
    assert status == 400 and "U+DC00, a lone UTF-16 surrogate" in body["error"], body
    assert api.get("/api/locales/fr")[1]["name"] != "Fran\udc00ais"


def test_a_surrogate_pair_is_one_character_and_is_kept(api):
    status, body = api.post("/api/import/properties?locale=fr", data=b"home.title=\\ud83d\\ude00\n")
    assert status == 200, body
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "\U0001F600"
