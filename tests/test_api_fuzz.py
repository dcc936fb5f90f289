"""Property-based tests of the whole HTTP surface, generated from the Flask route table.

1. Fuzzing: every API route and method of `app.url_map` (the rules under `/api/`) gets random path values (unicode, dots, slashes, `..`,
   `%2F`, invalid UTF-8, control characters, IDs of exactly 999 and 1000 UTF-8 bytes), random bodies (bytes,
   invalid UTF-8, JSON of any shape, urlencoded and multipart forms with REQUEST_METHOD among the fields),
   random content types and query strings, always with a valid full-access key. Every answer must be 2xx or
   4xx (never 3xx, never 5xx), and a 4xx must be the JSON error record `{"status": <code>, "error": "..."}`.
   Afterwards the project repository must be clean (`git status --porcelain`) and pass `git fsck --strict`.
2. Writes and commits: after any random sequence of API writes, every write answered 2xx made exactly one
   commit (or none, for the writes that change nothing, listed above that test), every refused write made none,
   and the working tree still equals HEAD.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from itertools import count
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from app import create_app
from app.routes import is_api_rule
from app.seed import seed_demo
from formats.registry import FORMATS, aliases_of
from tests.support import assert_fsck_clean, git

# No shrinking: the assertion message names the whole failing request, and shrinking many failing routes
# would cost minutes on the 2-core machine.
FUZZ_SETTINGS = settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                         suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                HealthCheck.data_too_large, HealthCheck.filter_too_much])


# ----------------------------------------------------------------------------- the route table
def route_groups(api_only: bool = True) -> dict[tuple[str, str], list[str]]:
    """(endpoint, method) -> the rules (spellings) of that operation, for every API rule of the url_map (every
    rule, web pages included, with api_only=False)."""
    import tempfile
    from pathlib import Path

    groups: dict[tuple[str, str], list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "data", testing=True)
        for rule in app.url_map.iter_rules():
            if api_only and not is_api_rule(rule.rule):
                continue
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                groups.setdefault((rule.endpoint, method), []).append(rule.rule)
    return groups


GROUPS = route_groups()
GROUP_KEYS = sorted(GROUPS)


@dataclass
class Demo:
    app: object
    client: object
    project: object
    headers: dict


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    return create_app(tmp_path_factory.mktemp("fuzz") / "data", testing=True)


def fresh_demo(app) -> Demo:
    """A newly seeded demo project (acme-notes-N) in the shared app, with its full-access key."""
    project, key = seed_demo(app.extensions["gloss.store"], app.extensions["gloss.keys"])
    return Demo(app, app.test_client(), project, {"Authorization": f"Loco {key}"})


def wait_for_background_work() -> None:
    """Asynchronous imports run in threads, and every 50 commits the store packs objects in one: let them end."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and (thread.name == "gloss-pack"
                                                          or thread.name.startswith("import-")):
            thread.join(60)


def assert_repository_clean_and_valid(project) -> None:
    wait_for_background_work()
    assert git(project.path, "status", "--porcelain") == ""
    assert_fsck_clean(project.path)


def commit_count(project) -> int:
    return int(git(project.path, "rev-list", "--count", "HEAD"))


def assert_answer(response, request_repr: str) -> None:
    status = response.status_code
    assert 200 <= status < 300 or 400 <= status < 500, f"{status} for {request_repr}: {response.get_data()[:300]!r}"
    if status >= 400:
        assert response.mimetype == "application/json", f"{status} not JSON for {request_repr}"
        body = json.loads(response.get_data())
        assert isinstance(body, dict), request_repr
        assert body.get("status") == status, f"{body} for {request_repr}"
        assert isinstance(body.get("error"), str) and body["error"].strip(), f"{body} for {request_repr}"


# ----------------------------------------------------------------------------- strategies
# Values that name things in the demo project, by path variable (other variables get random values only).
DEMO_VALUES = {
    "asset_id": ["home.title", "notes.count", "notes.count.other", "trash.items", "errors.generic",
                 "settings.theme.dark", "sync.progress", "settings.about.text", "home.title/fr", "home.title.json"],
    "pid": ["notes.count.other", "notes.count.2", "trash.items.other", "home.title"],
    "tag": ["web", "mobile", "errors", "onboarding", "web.json"],
    "locale": ["fr", "de", "ja", "ar", "en", "fr-FR", "fr_FR", "en-GB", "es"],
    # every extension and alias of the registry, an upper-case spelling and the archive's
    "ext": sorted({spec.ext for spec in FORMATS} | {alias for spec in FORMATS for alias in aliases_of(spec.ext)})
    + ["JSON", "zip"],
    "name": ["messages", "messages-fr_FR", "app.fr", "x-de", "messages-zz"],
}
DEMO_VALUES["from_ext"] = DEMO_VALUES["ext"]
DEMO_WORDS = sorted({word for words in DEMO_VALUES.values() for word in words})
LONG_IDS = ["é" * 499 + "a", "é" * 500, "€" * 333, "€" * 333 + "a", "😀" * 249 + "abc", "😀" * 250, "a" * 999,
            "a" * 1000]
assert sorted({len(value.encode()) for value in LONG_IDS}) == [999, 1000]
RAW_SEGMENTS = ["", ".", "..", "...", "/", "//", "%2F", "%2f", "a%2Fb", "..%2F..", "%2e%2e", "%2e%2e%2f%2e%2e",
                "home.title%2Ffr", "home.title/fr", "home.title/fr.json", ".json", "a.json", "fr.json", "%00",
                "%0A", "%0D%0A", "%7F", "%FF", "%C3%28", "%ED%A0%80", "%", "%zz", "%25", " ", "%20", "+", "%3F",
                "%23", "~", "*", "!web", "web,mobile", "%E2%80%8B", "%EF%BB%BF"]


def encoded(text: str, keep_slashes: bool) -> str:
    return quote(text, safe="/" if keep_slashes else "")


random_path_values = st.one_of(
    st.sampled_from(DEMO_WORDS).map(lambda word: encoded(word, False)),
    st.sampled_from(RAW_SEGMENTS),
    st.sampled_from(LONG_IDS).map(lambda word: encoded(word, False)),
    st.builds(encoded, st.text(max_size=30), st.booleans()),
    st.builds(encoded, st.text(st.characters(max_codepoint=0x9F), max_size=8), st.just(False)),  # controls
    st.builds(lambda a, b: a + b, st.sampled_from(DEMO_WORDS + ["."]), st.sampled_from(RAW_SEGMENTS)),
)


def path_values(variable: str, plausible: bool):
    """Values for a path variable: ones that name something in the demo (when there are such), or anything."""
    known = DEMO_VALUES.get(variable)
    if not known:
        return random_path_values
    valid = st.sampled_from(known).map(lambda word: encoded(word, True))
    return valid if plausible else st.one_of(valid, random_path_values)


FIELD_NAMES = ["id", "text", "type", "context", "notes", "default", "pid", "name", "code", "flag", "src",
               "REQUEST_METHOD", "key", "tags"]
FIELD_VALUES = ["", "DELETE", "PATCH", "delete", "patch", "PUT", "GET", "POST", "fuzzy", "incorrect", "bogus",
                "untranslated", "translated", "html", "xml", "text", "es", "pt-BR", "fr", "en", "x-invalid-!",
                "web", "newtag", "a,b", "home.title", "notes.count", "notes.count.other", "fuzz.new",
                '{"home.title": "Accueil"}']
field_names = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=10))
field_values = st.one_of(st.sampled_from(FIELD_VALUES), st.text(max_size=40), st.sampled_from(LONG_IDS))
form_fields = st.one_of(
    st.dictionaries(st.sampled_from(FIELD_NAMES), st.sampled_from(FIELD_VALUES), max_size=4).map(
        lambda fields: list(fields.items())),
    st.lists(st.tuples(field_names, field_values), max_size=6),
)

FULL_FORM = {"id": ["", "fuzz.new", "fuzz.é", "home.title"], "text": ["Some text", "%d notes", "<b>x</b>", ""],
             "name": ["web", "fuzz-tag", "new tag"], "code": ["es", "pt-BR", "fr", "zz"],
             "flag": ["fuzzy", "incorrect", "rejected", ""], "pid": ["", "fuzz.plural", "notes.count.2"],
             "type": ["text", "html"], "default": ["translated", "untranslated", "fuzzy"],
             "notes": ["a note"], "context": ["ctx"]}

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
              st.sampled_from(FIELD_VALUES)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(st.sampled_from(FIELD_NAMES + DEMO_WORDS),
                                                         st.text(max_size=8)), children, max_size=5)),
    max_leaves=12,
)

# Small files of several formats (import and convert bodies), used whole or truncated.
SAMPLE_FILES = [
    b'{"home.title": "Accueil", "fuzz.imported": "Nouveau"}',
    b'{"home": {"title": "Accueil", "greeting": {"one": "x"}}}',
    b'{"fr": {"home.title": "Accueil"}, "de": {"home.title": "Start"}}',
    b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr\\n"\n\n'
    b'msgctxt "home.title"\nmsgid "Home"\nmsgstr "Accueil"\n\nmsgid "fuzz.po"\nmsgstr ""\n',
    b'<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
    b'<file source-language="en" target-language="fr" datatype="plaintext" original="x"><body>'
    b'<trans-unit id="home.title"><source>Home</source><target>Accueil</target></trans-unit>'
    b'</body></file></xliff>',
    b'<?xml version="1.0" encoding="utf-8"?>\n<resources><string name="home_title">Accueil</string>'
    b'<plurals name="notes"><item quantity="one">%d note</item></plurals></resources>',
    b"home:\n  title: Accueil\nfuzz.yml: [1, 2]\n",
    b"home.title=Accueil\nfuzz.props=\\u00e9t\\u00e9\n",
    b'"home.title" = "Accueil";\n/* comment */\n"fuzz.strings" = "x";\n',
    b"id,en,fr\nhome.title,Home,Accueil\n",
    b"<?php return ['home.title' => 'Accueil'];\n",
    b'<?xml version="1.0"?><tmx version="1.4"><header srclang="en"/><body><tu tuid="home.title">'
    b'<tuv xml:lang="fr"><seg>Accueil</seg></tuv></tu></body></tmx>',
    b"\xde\x12\x04\x95\x00\x00\x00\x00\x01\x00\x00\x00",  # a broken .mo
    b"<!DOCTYPE x [<!ENTITY a SYSTEM 'file:///etc/passwd'>]><x>&a;</x>",
]

CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-8", "text/plain",
                 "text/plain;charset=UTF-8", "application/octet-stream", "application/x-www-form-urlencoded",
                 "multipart/form-data", "multipart/form-data; boundary=", "application/xml", "*/*", "garbage",
                 "application/x-www-form-urlencoded; charset=latin-1"]
content_types = st.one_of(st.sampled_from(CONTENT_TYPES), st.text(max_size=30).filter(lambda s: "\n" not in s
                                                                                       and "\r" not in s))


def multipart(parts: list[tuple[str, bytes, bool]], boundary: str) -> bytes:
    chunks = []
    for name, value, as_file in parts:
        disposition = f'form-data; name="{name}"' + ('; filename="f.txt"' if as_file else "")
        chunks.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode("utf-8", "replace")
                      + value + b"\r\n")
    return b"".join(chunks) + f"--{boundary}--\r\n".encode()


@st.composite
def bodies(draw) -> tuple[str | None, bytes]:
    """(Content-Type, body bytes)."""
    # Hypothesis leans towards the first choices: the one that reaches the success paths comes first.
    shape = draw(st.sampled_from(["full-form", "file", "text", "json", "urlencoded", "multipart", "bytes",
                                  "invalid-utf8", "none"]))
    if shape == "none":
        return draw(content_types), b""
    if shape == "bytes":
        return draw(content_types), draw(st.binary(max_size=300))
    if shape == "invalid-utf8":
        return draw(content_types), draw(st.text(max_size=20)).encode() + draw(
            st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80abc", b"\xf4\x90\x80\x80"]))
    if shape == "text":
        return draw(content_types), draw(st.one_of(st.text(max_size=200), st.sampled_from(LONG_IDS))).encode()
    if shape == "json":
        content_type = draw(st.one_of(st.just("application/json"), content_types))
        return content_type, json.dumps(draw(json_values)).encode()
    if shape == "file":
        data = draw(st.sampled_from(SAMPLE_FILES))
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]
        return draw(content_types), data
    if shape == "full-form":  # every field some route reads, with a valid value: reaches the success paths
        fields = [(name, draw(st.sampled_from(values))) for name, values in FULL_FORM.items()]
        shape = draw(st.sampled_from(["urlencoded", "multipart"]))
    else:
        fields = draw(form_fields)
    if draw(st.booleans()):
        fields.append(("REQUEST_METHOD", draw(st.sampled_from(["DELETE", "PATCH", "delete", "GET", "PUT", ""]))))
    if shape == "urlencoded":
        content_type = draw(st.sampled_from(["application/x-www-form-urlencoded",
                                             "application/x-www-form-urlencoded; charset=UTF-8"]))
        body = urlencode(fields).encode()
        if draw(st.booleans()):
            body += b"&bad=%FF%FE"
        return content_type, body
    boundary = draw(st.sampled_from(["XyZ", "----gloss-boundary", "a" * 70]))
    parts = [(name, value.encode("utf-8", "replace"), draw(st.booleans())) for name, value in fields]
    if draw(st.booleans()):
        parts.append((draw(field_names), b"\xff\xfe invalid", draw(st.booleans())))
    body = multipart(parts, boundary)
    if draw(st.booleans()):
        body = body[: draw(st.integers(0, len(body)))]  # truncated
    header_boundary = draw(st.sampled_from([boundary, boundary, "other", ""]))
    return f"multipart/form-data; boundary={header_boundary}", body


PATCH_BODIES = [{"notes": "patched", "context": "ctx"}, {"type": "html"}, {"id": "fuzz.renamed"}, {"name": "Renamed"},
                {"name": "renamed-tag"}, {"code": "es"}, {"printf": "icu", "aliases": {"x": "y"}}]


@st.composite
def plausible_bodies(draw, method: str) -> tuple[str | None, bytes]:
    """Bodies a client that means well would send: forms, files and raw texts, JSON objects to PATCH."""
    shape = "patch" if method == "PATCH" else draw(st.sampled_from(["form", "file", "text", "form"]))
    if shape == "form":
        fields = [(name, draw(st.sampled_from(values))) for name, values in FULL_FORM.items()]
        return "application/x-www-form-urlencoded", urlencode(fields).encode()
    if shape == "file":
        return draw(st.sampled_from([None, "text/plain;charset=UTF-8"])), draw(st.sampled_from(SAMPLE_FILES))
    if shape == "text":
        text = draw(st.sampled_from(["Bonjour", "home.title,notes.count", "trash.items", "Ünïcödé ✓", ""]))
        return draw(st.sampled_from([None, "text/plain", "application/octet-stream"])), text.encode()
    return "application/json", json.dumps(draw(st.sampled_from(PATCH_BODIES))).encode()


QUERY_NAMES = ["filter", "ugly", "index", "locale", "format", "async", "status", "order", "fallback", "source",
               "no-expand", "no-comments", "charset", "breaks", "key", "v", "ignore-new", "delete-absent",
               "namespace", "printf", "collisions", "path", "native", "tag-new", "flag-new", "ignore-existing"]
QUERY_VALUES = ["", "1", "0", "true", "false", "web", "!web", "*", "web,mobile", "fr", "de", "en", "id", "text",
                "1.0", "1.0.29", "bogus", "multi", "rails", "symfony", "i18next", "nested", "jed", "fuzzy",
                "!fuzzy", "translated", "php", "icu", "DOS", "Mac", "fail", "auto", "iso-8859-1", "utf-16",
                "{locale}/{project}.{ext}"]
plausible_queries = st.one_of(st.just({}), st.just({"locale": "fr"}), st.just({"locale": "fr", "index": "id"}),
                              st.dictionaries(st.sampled_from(QUERY_NAMES[:-8]), st.sampled_from(QUERY_VALUES),
                                              max_size=2)).map(urlencode)
query_strings = st.one_of(
    st.dictionaries(st.sampled_from(QUERY_NAMES), st.sampled_from(QUERY_VALUES), max_size=4),
    st.lists(st.tuples(st.one_of(st.sampled_from(QUERY_NAMES), st.text(max_size=8)),
                       st.one_of(st.sampled_from(QUERY_VALUES), st.text(max_size=20))), max_size=4),
).map(urlencode)

VARIABLE = re.compile(r"<(?:[^<>:]+:)?([^<>:]+)>")


# ----------------------------------------------------------------------------- 1. fuzzing every route
@pytest.mark.parametrize("group", GROUP_KEYS, ids=[f"{method} {endpoint}" for endpoint, method in GROUP_KEYS])
def test_any_request_to_any_route_answers_2xx_or_a_json_4xx(fuzz_app, group):
    """Per route: 20 well-meant requests (they reach the success paths), then 40 hostile ones."""
    demo = fresh_demo(fuzz_app)
    endpoint, method = group
    rules = GROUPS[group]

    def send(data, body, query, plausible):
        rule = data.draw(st.sampled_from(rules), label="rule")
        path = VARIABLE.sub(lambda match: data.draw(path_values(match[1], plausible), label=match[1]), rule)
        content_type, payload = body
        headers = dict(demo.headers)
        if content_type is not None:
            headers["Content-Type"] = content_type
        request_repr = f"{method} {path}?{query} Content-Type={content_type!r} body={payload[:120]!r}"
        response = demo.client.open(path, method=method, query_string=query, headers=headers, data=payload)
        assert_answer(response, request_repr)

    @settings(FUZZ_SETTINGS, max_examples=20)
    @given(data=st.data(), body=plausible_bodies(method), query=plausible_queries)
    def well_meant(data, body, query):
        send(data, body, query, True)

    @settings(FUZZ_SETTINGS, max_examples=40)
    @given(data=st.data(), body=bodies(), query=query_strings)
    def hostile(data, body, query):
        send(data, body, query, False)

    well_meant()
    hostile()
    assert_repository_clean_and_valid(demo.project)


EMPTY_VALUE_CASES = [(endpoint, method, rule) for (endpoint, method), rules in sorted(GROUPS.items())
                     for rule in rules if VARIABLE.search(rule)]


@pytest.fixture(scope="module")
def one_demo(fuzz_app) -> Demo:
    return fresh_demo(fuzz_app)


@pytest.mark.parametrize("endpoint, method, rule", EMPTY_VALUE_CASES,
                         ids=[f"{method} {rule}" for _, method, rule in EMPTY_VALUE_CASES])
def test_an_empty_path_value_is_answered_without_a_redirect(one_demo, endpoint, method, rule):
    """`/api/translations//fr` (a client with an empty asset ID) must get a JSON answer, not a 3xx to another
    resource (a 308 to `/api/translations/fr` would name the asset `fr`)."""
    path = VARIABLE.sub("", rule)
    response = one_demo.client.open(path, method=method, headers=one_demo.headers)
    assert_answer(response, f"{method} {path}")


# ----------------------------------------------------------------------------- 2. writes and commits
# The 2xx writes that may leave the project unchanged, and so make no commit (checked below, step by step):
#   - POST /api/assets/{id}/tags with a tag the asset already has
#   - POST /api/tags/{tag}.json listing only assets that already carry the tag
#   - PATCH /api/tags/{tag}.json renaming a tag to its own name
#   - PATCH /api/locales/{locale} with the name (and code) it already has
#   - POST /api/translations/{id}/{locale} with an empty body when there is no translation to erase
#   - POST /api/assets/{id}/plurals with pid already a plural form of {id}
#   - POST .../flag with the flag the translation already has, and PATCH /api/assets/{id}.json setting the
#     values the asset already has, within the same second (the flag and modification times are to the
#     second; a later second changes them and commits)
NO_OP, MAYBE, CHANGE = "no-op", "maybe", "change"
FLAGS = ["fuzzy", "incorrect", "incomplete", "provisional", "unapproved", "rejected"]
NEW_LOCALES = ["es", "it", "pt-BR", "nl", "fr", "de", "zz-!!"]
TAG_NAMES = ["web", "mobile", "errors", "beta", "new tag", "ünïcode"]


@dataclass
class Write:
    method: str
    path: str
    kwargs: dict
    expect: str  # what a 2xx answer must do to the history: CHANGE (one commit), NO_OP (none) or MAYBE


def _ids(snap) -> list[str]:
    return list(snap.asset_ids())


def _codes(snap) -> list[str]:
    return [record["code"] for record in snap.locales()]


def _q(value: str) -> str:
    return quote(value, safe="")


@st.composite
def writes(draw, snap, serial: int) -> Write:
    """One random write, drawn against the project's current state `snap`."""
    ids = _ids(snap) or ["home.title"]
    codes = _codes(snap)
    tags = snap.tags()
    asset = draw(st.one_of(st.sampled_from(ids), st.just("no.such.asset")), label="asset")
    code = draw(st.one_of(st.sampled_from(codes), st.just("xx")), label="locale")
    entry = snap.translation(asset, code) if snap.has_asset(asset) else None
    op = draw(st.sampled_from(["create-asset", "translate", "translate", "flag", "unflag", "untranslate",
                               "tag", "untag", "create-locale", "delete-locale", "patch-locale", "patch-asset",
                               "delete-asset", "create-tag", "tag-assets", "rename-tag", "delete-tag",
                               "add-plural", "unlink-plural"]), label="op")
    if op == "create-asset":
        fields = {"id": draw(st.one_of(st.just(f"fuzz.asset{serial}"), st.just(""), st.sampled_from(ids))),
                  "text": draw(st.text(min_size=1, max_size=30))}
        if draw(st.booleans()):
            fields["default"] = draw(st.sampled_from(["untranslated", "fuzzy", "translated"]))
        return Write("POST", "/api/assets", {"data": fields}, CHANGE)
    if op == "translate":
        text = draw(st.one_of(st.just(""), st.text(max_size=40)))
        expect = NO_OP if text == "" and entry is None else CHANGE
        return Write("POST", f"/api/translations/{_q(asset)}/{code}", {"data": text.encode(),
                                                                        "content_type": "text/plain"}, expect)
    if op == "flag":
        name = draw(st.sampled_from(FLAGS + ["bogus"]))
        expect = MAYBE if entry is not None and entry.get("flag") == name else CHANGE
        return Write("POST", f"/api/translations/{_q(asset)}/{code}/flag", {"data": {"flag": name}}, expect)
    if op == "unflag":
        return Write("DELETE", f"/api/translations/{_q(asset)}/{code}/flag", {}, CHANGE)
    if op == "untranslate":
        return Write("DELETE", f"/api/translations/{_q(asset)}/{code}", {}, CHANGE)
    if op == "tag":
        name = draw(st.sampled_from(TAG_NAMES))
        record = snap.asset(asset) or {}
        expect = NO_OP if name in record.get("tags", []) else CHANGE
        return Write("POST", f"/api/assets/{_q(asset)}/tags", {"data": {"name": name}}, expect)
    if op == "untag":
        name = draw(st.sampled_from(TAG_NAMES))
        if draw(st.booleans()):  # the form override spelling
            return Write("POST", f"/api/assets/{_q(asset)}/tags/{_q(name)}.json",
                         {"data": {"REQUEST_METHOD": "DELETE"}}, CHANGE)
        return Write("DELETE", f"/api/assets/{_q(asset)}/tags/{_q(name)}.json", {}, CHANGE)
    if op == "create-locale":
        return Write("POST", "/api/locales", {"data": {"code": draw(st.sampled_from(NEW_LOCALES))}}, CHANGE)
    if op == "delete-locale":
        return Write("DELETE", f"/api/locales/{code}", {}, CHANGE)
    if op == "patch-locale":
        current = (snap.locale(code) or {}).get("name", "")
        name = draw(st.sampled_from([current or "Same", f"Locale {serial}"]))
        return Write("PATCH", f"/api/locales/{code}", {"json": {"name": name}}, NO_OP if name == current else CHANGE)
    if op == "patch-asset":
        changes = draw(st.sampled_from([{"notes": f"note {serial}"}, {"context": f"ctx {serial}"},
                                        {"id": f"renamed.{serial}"}, {"type": "html"}]))
        record = snap.asset(asset) or {}
        expect = MAYBE if "type" in changes and record.get("type") == "html" else CHANGE
        if draw(st.booleans()):
            return Write("PATCH", f"/api/assets/{_q(asset)}.json", {"json": changes}, expect)
        return Write("POST", f"/api/assets/{_q(asset)}.json", {"data": dict(changes, REQUEST_METHOD="PATCH")},
                     expect)
    if op == "delete-asset":
        return Write("DELETE", f"/api/assets/{_q(asset)}.json", {}, CHANGE)
    if op == "create-tag":
        return Write("POST", "/api/tags", {"data": {"name": draw(st.sampled_from(TAG_NAMES))}}, CHANGE)
    if op == "tag-assets":
        tag = draw(st.sampled_from(tags or ["web"]))
        chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3))
        already = all(tag in (snap.asset(member) or {}).get("tags", []) for member in chosen)
        return Write("POST", f"/api/tags/{_q(tag)}.json", {"data": ",".join(chosen).encode()},
                     NO_OP if already else CHANGE)
    if op == "rename-tag":
        tag = draw(st.sampled_from(tags or ["web"]))
        new = draw(st.sampled_from([tag, f"renamed-{serial}"] + TAG_NAMES))
        return Write("PATCH", f"/api/tags/{_q(tag)}.json", {"json": {"name": new}},
                     NO_OP if new == tag else CHANGE)
    if op == "delete-tag":
        return Write("DELETE", f"/api/tags/{_q(draw(st.sampled_from(tags or ['web'])))}.json", {}, CHANGE)
    if op == "add-plural":
        pid = draw(st.one_of(st.just(""), st.just(f"fuzz.plural{serial}"), st.sampled_from(ids)))
        fields = {"pid": pid, "text": draw(st.text(max_size=20))}
        member = snap.asset(pid) if pid else None
        expect = NO_OP if member is not None and member.get("plural_of") == asset else CHANGE
        return Write("POST", f"/api/assets/{_q(asset)}/plurals", {"data": fields}, expect)
    # unlink-plural
    members = (snap.asset(asset) or {}).get("plurals", []) or ["no.such.plural"]
    pid = draw(st.sampled_from(members))
    return Write("DELETE", f"/api/assets/{_q(asset)}/plurals/{_q(pid)}.json", {}, CHANGE)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_successful_write_is_one_commit_and_the_tree_stays_clean(fuzz_app, data):
    demo = fresh_demo(fuzz_app)
    serial = count()
    start = commit_count(demo.project)
    successes, no_commit = 0, []
    for _ in range(data.draw(st.integers(1, 12), label="length")):
        write = data.draw(writes(demo.project.snapshot(), next(serial)), label="write")
        before = commit_count(demo.project)
        response = demo.client.open(write.path, method=write.method, headers=demo.headers, **write.kwargs)
        made = commit_count(demo.project) - before
        assert_answer(response, f"{write.method} {write.path} {write.kwargs}")
        if 200 <= response.status_code < 300:
            successes += 1
            allowed = {CHANGE: {1}, NO_OP: {0}, MAYBE: {0, 1}}[write.expect]
            assert made in allowed, (f"{write.method} {write.path} {write.kwargs} answered "
                                     f"{response.status_code} and made {made} commits (expected {write.expect})")
            if made == 0:
                no_commit.append(write)
        else:
            assert made == 0, f"refused write {write.method} {write.path} made {made} commits"
    assert commit_count(demo.project) - start == successes - len(no_commit)
    assert_repository_clean_and_valid(demo.project)
