"""Who may call what: the access matrix of every route, generated from the Flask route table.

Nothing here lists the routes by hand. Every API rule of `app.url_map` (those under `/api/`; HEAD and OPTIONS
aside) is turned into a concrete URL on the seeded demo project and called with no key, wrong keys, and the
three key types in the four ways a key can be sent. (The web pages outside `/api/` sign in with a session
cookie instead; tests/test_web_pages.py checks that every other rule is one of them.) The expectation for each key type is derived from the route's `gloss_kind`
("read", "export", "write", set by `app.auth.requires`), and the same kinds must appear as `x-gloss-access` in
the OpenAPI description, which must list exactly the registered routes.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from app import create_app
from app.openapi import build_document
from app.routes import is_api_rule
from app.seed import seed_demo
from storage.keys import KINDS
from tests.conftest import AUTH_MODES, Keys, auth

# Routes that need no key: ping, ping/not-found, this description, the format list, and (spec §4.8) the
# converter.
PUBLIC_PREFIXES = ("/api/ping", "/api/openapi.json", "/api/formats", "/api/convert/")
# Path variables and values that exist in the demo project.
DEMO_VALUES = {"asset_id": "home.title", "pid": "notes.count.other", "tag": "web", "locale": "fr", "ext": "json",
               "name": "messages"}
PLURAL_OWNER = "notes.count"  # the singular whose plural form is notes.count.other
# Who may call a route of each kind (an independent statement of storage.keys.ACCESS_ALLOWS, which the OpenAPI document states).
ACCESS_OF_KIND = {"read": ["full", "readonly"], "export": ["full", "readonly", "export"], "write": ["full"]}
VARIABLE = re.compile(r"<(?:[^<>:]+:)?([^<>:]+)>")
# Flask variable names -> the specification's path parameter names (spec §4: {id}, {pid}, {tag}, {locale},
# {ext}, {from}); any other `something_id` is an `{id}` too.
OPENAPI_NAMES = {"asset_id": "id", "from_ext": "from"}


@dataclass(frozen=True)
class Route:
    rule: str
    method: str
    endpoint: str
    kind: str | None  # None: public

    @property
    def id(self) -> str:
        return f"{self.method} {self.rule}"

    @property
    def variables(self) -> list[str]:
        return VARIABLE.findall(self.rule)

    @property
    def names_demo_objects(self) -> bool:
        """True when every path variable gets a value that names something in the demo project.

        A rule ending in `/` is the spelling of an empty variable (`/api/import/progress/`): it names nothing.
        """
        return all(name in DEMO_VALUES for name in self.variables) and not self.rule.endswith("/")

    def url(self) -> str:
        values = dict(DEMO_VALUES)
        if "pid" in self.variables or "/plurals" in self.rule:
            values["asset_id"] = PLURAL_OWNER

        def substitute(match: re.Match) -> str:
            return quote(values.get(match[1], "unknown"), safe="")

        return VARIABLE.sub(substitute, self.rule)

    def openapi_path(self) -> str:
        """`/api/assets/<path:asset_id>.json` -> `/api/assets/{id}.json` (see OPENAPI_NAMES)."""
        def name(variable: str) -> str:
            return OPENAPI_NAMES.get(variable, "id" if variable.endswith("_id") else variable)

        return VARIABLE.sub(lambda m: "{" + name(m[1]) + "}", self.rule)


def route_table() -> list[Route]:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "data", testing=True)
        routes = []
        for rule in app.url_map.iter_rules():
            if not is_api_rule(rule.rule):
                continue
            kind = getattr(app.view_functions[rule.endpoint], "gloss_kind", None)
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                routes.append(Route(rule.rule, method, rule.endpoint, kind))
    return routes


ROUTES = route_table()
PROTECTED = [route for route in ROUTES if route.kind is not None]
PUBLIC = [route for route in ROUTES if route.kind is None]
# GETs of what only a project's administrators (full keys) may see: its webhooks (their URLs and attempts).
FULL_KEY_GET_PREFIXES = ("/api/webhooks",)
GETS = [route for route in PROTECTED if route.method == "GET" and route.kind != "write"]
FULL_KEY_GETS = [route for route in PROTECTED if route.method == "GET" and route.kind == "write"]
WRITES = [route for route in PROTECTED if route.method != "GET"]


def ids(routes: list[Route]) -> list[str]:
    return [route.id for route in routes]


def call(client, route: Route, **kwargs):
    return client.open(route.url(), method=route.method, **kwargs)


def assert_error(response, status: int) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json(silent=True)
    assert isinstance(body, dict), f"not a JSON object: {response.get_data()[:200]!r}"
    assert body.get("status") == status
    assert isinstance(body.get("error"), str) and body["error"].strip()


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One seeded demo for the checks that change nothing (401s, 403s and GETs)."""
    app = create_app(tmp_path_factory.mktemp("matrix") / "data", testing=True)
    store, keystore = app.extensions["gloss.store"], app.extensions["gloss.keys"]
    project, full = seed_demo(store, keystore)
    readonly, _ = keystore.create(project.id, "readonly", "Reader", "reader@example.com")
    export, _ = keystore.create(project.id, "export", "Pipeline", "ci@example.com")
    client = app.test_client()
    # a glossary term: the TBX export of an empty glossary is a 409 (TBX holds one entry at least)
    assert client.post("/api/glossary", json={"term": "demo"}, **auth(full)).status_code == 201
    return client, Keys(full, readonly, export)


# ----------------------------------------------------------------------------- the route table itself
def test_the_route_table_has_protected_routes_of_every_kind_and_method():
    assert {route.kind for route in PROTECTED} == set(KINDS)
    assert {route.method for route in PROTECTED} >= {"GET", "POST", "PATCH", "DELETE"}


@pytest.mark.parametrize("route", PUBLIC, ids=ids(PUBLIC))
def test_a_route_without_a_kind_is_one_of_the_public_routes(route):
    """A route that forgot `@requires(...)` would be open to anyone: only the known public ones may be."""
    assert route.method == "GET" or route.rule.startswith("/api/convert/")
    assert route.rule.startswith(PUBLIC_PREFIXES), f"{route.id} has no gloss_kind: is @requires missing?"


@pytest.mark.parametrize("route", PROTECTED, ids=ids(PROTECTED))
def test_the_kind_of_a_route_agrees_with_its_method(route):
    """GETs read or export; every POST, PATCH and DELETE writes (read-only keys get 403 on all of them)."""
    assert route.kind in KINDS
    if route.method == "GET" and route.rule.startswith(FULL_KEY_GET_PREFIXES):
        assert route.kind == "write"
    elif route.method == "GET":
        assert route.kind in ("read", "export")
    else:
        assert route.kind == "write"


def test_export_kind_covers_locales_verify_and_every_export_endpoint():
    export_gets = {route.rule for route in GETS if route.kind == "export"}
    assert {"/api/locales", "/api/auth/verify"} <= export_gets
    for route in ROUTES:
        if route.rule.startswith("/api/export/"):
            assert (route.method, route.kind) == ("GET", "export"), route.id


# ----------------------------------------------------------------------------- (a) no key, wrong key
@pytest.mark.parametrize("route", PROTECTED, ids=ids(PROTECTED))
def test_no_key_gets_a_json_401(shared, route):
    client, _ = shared
    response = call(client, route)
    assert_error(response, 401)
    assert set(response.get_json()) == {"status", "error"}


@pytest.mark.parametrize("mode", AUTH_MODES)
@pytest.mark.parametrize("route", PROTECTED, ids=ids(PROTECTED))
def test_a_wrong_key_gets_a_json_401_in_every_mode(shared, route, mode):
    client, keys = shared
    assert_error(call(client, route, **auth("wrong-" + keys.full[6:], mode)), 401)


@pytest.mark.parametrize("header", ["Loco", "Basic !!not-base64!!", "Basic " + "Og==", "Token abc", "Service "])
def test_malformed_authorization_headers_get_a_json_401(shared, header):
    client, _ = shared
    for route in (PROTECTED[0], WRITES[0]):
        assert_error(call(client, route, headers={"Authorization": header}), 401)


# ----------------------------------------------------------------------------- (b) read-only key
@pytest.mark.parametrize("route", WRITES, ids=ids(WRITES))
def test_a_read_only_key_gets_403_on_every_write(shared, route):
    client, keys = shared
    for mode in AUTH_MODES:
        assert_error(call(client, route, **auth(keys.readonly, mode)), 403)


@pytest.mark.parametrize("route", FULL_KEY_GETS, ids=ids(FULL_KEY_GETS))
def test_a_read_only_key_gets_403_on_the_gets_of_full_keys(shared, route):
    client, keys = shared
    for mode in AUTH_MODES:
        assert_error(call(client, route, **auth(keys.readonly, mode)), 403)


@pytest.mark.parametrize("route", GETS, ids=ids(GETS))
def test_a_read_only_key_may_get_every_get_route(shared, route):
    client, keys = shared
    response = call(client, route, **auth(keys.readonly))
    if route.names_demo_objects:
        assert 200 <= response.status_code < 300, (route.url(), response.get_data(as_text=True))
    else:  # a variable the demo cannot fill (a job id...): at least the key is accepted
        assert response.status_code not in (401, 403) and response.status_code < 500


# ----------------------------------------------------------------------------- (c) export key
@pytest.mark.parametrize("route", PROTECTED, ids=ids(PROTECTED))
def test_an_export_key_may_call_only_export_gets(shared, route):
    client, keys = shared
    for mode in AUTH_MODES:
        response = call(client, route, **auth(keys.export, mode))
        if route.method == "GET" and route.kind == "export":
            if route.names_demo_objects:
                assert 200 <= response.status_code < 300, (mode, route.url(), response.get_data(as_text=True))
            else:
                assert response.status_code not in (401, 403) and response.status_code < 500
        else:
            assert_error(response, 403)


# ----------------------------------------------------------------------------- (d) full key
@pytest.mark.parametrize("mode", AUTH_MODES)
@pytest.mark.parametrize("route", GETS + FULL_KEY_GETS, ids=ids(GETS + FULL_KEY_GETS))
def test_a_full_key_may_get_every_get_route_in_every_mode(shared, route, mode):
    client, keys = shared
    response = call(client, route, **auth(keys.full, mode))
    assert response.status_code not in (401, 403)
    if route.names_demo_objects:
        assert 200 <= response.status_code < 300, (route.url(), response.get_data(as_text=True))


@pytest.mark.parametrize("route", WRITES, ids=ids(WRITES))
def test_a_full_key_is_never_refused_a_write_in_any_mode(demo, client, route):
    """Writes change the project, so each route gets a fresh demo; the four modes run one after the other."""
    _, keys = demo
    for mode in AUTH_MODES:
        response = call(client, route, **auth(keys.full, mode))
        assert response.status_code not in (401, 403), (mode, response.get_data(as_text=True))
        assert response.status_code < 500, (mode, response.get_data(as_text=True))


# ----------------------------------------------------------------------------- OpenAPI agrees
def test_every_route_is_in_the_openapi_document_and_every_operation_is_a_route():
    document = build_document()
    registered = {(route.openapi_path(), route.method.lower()) for route in ROUTES}
    documented = {(path, method) for path, operations in document["paths"].items() for method in operations
                  if method in ("get", "post", "patch", "put", "delete")}
    assert sorted(registered - documented) == [], "routes missing from the OpenAPI document"
    assert sorted(documented - registered) == [], "documented operations that are not routes"


@pytest.mark.parametrize("route", ROUTES, ids=ids(ROUTES))
def test_the_openapi_access_of_an_operation_is_the_kind_of_its_route(route):
    operation = build_document()["paths"].get(route.openapi_path(), {}).get(route.method.lower())
    assert operation is not None, f"{route.id} is not documented"
    if route.kind is None:
        assert operation.get("security") == [], f"public {route.id} must say security: []"
        assert "x-gloss-access" not in operation
    else:
        assert operation.get("x-gloss-access") == ACCESS_OF_KIND[route.kind]
        assert operation.get("security", "default") != []
        assert {"401", "403"} <= set(operation["responses"])


def test_openapi_json_needs_no_key_and_is_openapi_3_1(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert body["openapi"] == "3.1.0"
    assert body["paths"].keys() == build_document()["paths"].keys()
    assert set(body["components"]["securitySchemes"]) == set(AUTH_MODES)
