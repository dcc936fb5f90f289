"""The HTTP skeleton: ping, key verification in four modes, JSON errors, versioning, method override."""
from __future__ import annotations

import json

import pytest

from tests.conftest import AUTH_MODES, auth


def test_ping_needs_no_key_and_reports_version_and_build(client):
    response = client.get("/api/ping")
    assert response.status_code == 200
    assert response.get_json()["version"] == "1.0.29"
    assert response.get_json()["build"]


def test_ping_not_found_is_a_json_404(client):
    response = client.get("/api/ping/not-found.json")
    assert response.status_code == 404
    assert response.get_json() == {"status": 404, "error": "Not found"}


@pytest.mark.parametrize("mode", AUTH_MODES)
def test_verify_accepts_the_key_in_every_mode(demo, client, mode):
    project, keys = demo
    response = client.get("/api/auth/verify", **auth(keys.full, mode))
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"]["name"] == "Demo Owner"
    assert body["project"]["name"] == "Acme Notes"
    assert set(body) == {"user", "group", "project"}


@pytest.mark.parametrize("mode", AUTH_MODES)
def test_wrong_key_gets_401_with_json_error(demo, client, mode):
    response = client.get("/api/auth/verify", **auth("not-a-real-key", mode))
    assert response.status_code == 401
    assert response.get_json() == {"status": 401, "error": "Invalid API key"}
    assert response.status == "401 Authorization Required"


def test_missing_key_gets_401(client):
    response = client.get("/api/auth/verify")
    assert response.status_code == 401 and response.get_json()["status"] == 401


def test_post_verify_tells_write_access(demo, client):
    _, keys = demo
    assert client.post("/api/auth/verify", **auth(keys.full)).status_code == 200
    for key in (keys.readonly, keys.export):
        response = client.post("/api/auth/verify", **auth(key))
        assert response.status_code == 403
        assert response.get_json() == {"status": 403, "error": "Insufficient privileges"}


def test_read_only_and_export_keys_may_get_verify(demo, client):
    _, keys = demo
    assert client.get("/api/auth/verify", **auth(keys.readonly)).status_code == 200
    assert client.get("/api/auth/verify", **auth(keys.export)).status_code == 200


def test_ugly_gives_compact_ascii_json_with_escaped_slashes(demo, client):
    _, keys = demo
    body = client.get("/api/auth/verify?ugly", **auth(keys.full)).get_data(as_text=True)
    assert "\n" not in body.strip() and "\\/" in body
    pretty = client.get("/api/auth/verify", **auth(keys.full)).get_data(as_text=True)
    assert '\n    "user": {' in pretty
    assert json.loads(body) == json.loads(pretty)


@pytest.mark.parametrize("how", ["query", "header"])
def test_version_pinning_is_accepted_and_announced(client, how):
    kwargs = {"query_string": {"v": "1.0"}} if how == "query" else {"headers": {"X-Api-Version": "1.0.18"}}
    response = client.get("/api/ping", **kwargs)
    assert response.status_code == 200
    assert response.headers["X-Api-Version"] == "1.0.29"


@pytest.mark.parametrize("version", ["2", "2.0.0", "0.9", "1.1.0", "banana"])
def test_unknown_or_malformed_versions_are_a_400(client, version):
    response = client.get("/api/ping", query_string={"v": version})
    assert response.status_code == 400 and "version" in response.get_json()["error"]


def test_unknown_route_and_wrong_method_are_json(client):
    assert client.get("/api/nope").get_json() == {"status": 404, "error": "Not found"}
    response = client.delete("/api/ping")
    assert response.status_code == 405 and response.get_json()["status"] == 405


def test_request_method_override_turns_a_form_post_into_that_method(demo, client):
    _, keys = demo
    response = client.post("/api/ping", data={"REQUEST_METHOD": "DELETE"})
    assert response.status_code == 405  # DELETE /api/ping is not a route: proof the method changed
    assert client.post("/api/ping", data={"REQUEST_METHOD": "GET"}).status_code == 405  # only DELETE/PATCH


def test_request_bodies_over_the_limit_are_refused_with_413(app, client):
    app.config["MAX_CONTENT_LENGTH"] = 1024
    response = client.post("/api/auth/verify", data=b"x" * 4096, headers={"Content-Type": "text/plain"})
    assert response.status_code == 413 and response.get_json()["status"] == 413
