"""Dashboard sessions: the cookie carries a random session id, never the API key; the server keeps the session
(DATA/sessions/) and ends it at sign-out, key revocation and its idle or absolute lifetime; the cookie is
Secure over HTTPS or when forced."""
from __future__ import annotations

import base64
import hashlib
import stat
import time
import zlib

import pytest

from app import create_app
from app.cli import main as gloss_main
from app.web.session import COOKIE_NAME
from storage.sessions import SESSIONS_DIR
from tests.support import git
from tests.test_web_pages import form_token, post, sign_in

HOUR = 3600.0


def cookie_of(response) -> str:
    """The raw Set-Cookie header that sets the session cookie."""
    headers = [value for value in response.headers.getlist("Set-Cookie") if value.startswith(COOKIE_NAME + "=")]
    assert len(headers) == 1, response.headers
    return headers[0]


def payload_bytes(cookie_header: str) -> bytes:
    """What the cookie's value carries, decoded as an attacker would: itsdangerous's `payload.time.signature`,
    the payload URL-safe base64, zlib-compressed when it starts with a dot."""
    value = cookie_header.split(";", 1)[0].split("=", 1)[1].strip('"')
    payload = value.rsplit(".", 2)[0]
    compressed = payload.startswith(".")
    raw = base64.urlsafe_b64decode(payload.lstrip(".") + "=" * (-len(payload.lstrip(".")) % 4))
    return zlib.decompress(raw) if compressed else raw


def copy_of(app, client):
    """Another browser holding a copy of `client`'s session cookie."""
    thief = app.test_client()
    thief.set_cookie(COOKIE_NAME, client.get_cookie(COOKIE_NAME).value)
    return thief


def signed_in(client) -> bool:
    response = client.get("/changes")
    assert response.status_code in (200, 302)
    return response.status_code == 200


def session_files(data_dir) -> list:
    directory = data_dir / SESSIONS_DIR
    return sorted(directory.iterdir()) if directory.exists() else []


@pytest.fixture
def clock(app):
    """The sessions' clock, set by the test: `clock.now += 13 * HOUR`."""

    class Clock:
        now = time.time()

    app.extensions["gloss.sessions"].clock = lambda: Clock.now
    return Clock


# ----------------------------------------------------------------------------- what the cookie holds
def test_the_cookie_holds_a_random_session_id_and_neither_the_key_nor_its_digest(app, client, demo, data_dir):
    key = demo[1].full
    header = cookie_of(sign_in(client, key))
    decoded = payload_bytes(header)
    digest = hashlib.sha256(key.encode()).hexdigest()
    encodings = [key, digest, base64.b64encode(key.encode()).decode(), base64.urlsafe_b64encode(key.encode()).decode()]
    for secret in encodings:
        assert secret not in header and secret.encode() not in decoded
    session = app.session_interface.get_signing_serializer(app).loads(client.get_cookie(COOKIE_NAME).value)
    assert set(session) == {"sid", "csrf"} and len(session["sid"]) >= 43  # 256 random bits
    assert session["sid"] != key and session["sid"] != form_token(client)


def test_the_server_keeps_only_a_digest_of_the_session_id_outside_the_project(client, demo, data_dir, app):
    sign_in(client, demo[1].full)
    session_id = app.session_interface.get_signing_serializer(app).loads(client.get_cookie(COOKIE_NAME).value)["sid"]
    [stored] = session_files(data_dir)
    assert stored.name == hashlib.sha256(session_id.encode()).hexdigest()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    everything = b"".join(path.read_bytes() for path in data_dir.rglob("*") if path.is_file())
    assert session_id.encode() not in everything
    assert SESSIONS_DIR not in git(demo[0].path, "ls-files")


def test_a_session_id_the_server_does_not_know_is_signed_out_even_in_a_validly_signed_cookie(app, client, demo):
    sign_in(client, demo[1].full)
    forged = app.session_interface.get_signing_serializer(app).dumps({"sid": "A" * 43, "csrf": "x"})
    client.set_cookie(COOKIE_NAME, forged)
    assert not signed_in(client)
    legacy = app.session_interface.get_signing_serializer(app).dumps({"key": demo[1].full, "csrf": "x"})
    client.set_cookie(COOKIE_NAME, legacy)  # a cookie of the old kind, with the key in it, is worth nothing now
    assert not signed_in(client)


# ----------------------------------------------------------------------------- ending sessions
def test_a_copied_cookie_stops_working_after_sign_out(app, client, demo, data_dir):
    sign_in(client, demo[1].full)
    thief = copy_of(app, client)
    assert signed_in(thief)
    assert post(client, "/sign-out").status_code == 302
    assert not signed_in(thief) and not signed_in(client)
    assert session_files(data_dir) == []


def test_signing_in_again_replaces_the_session_and_its_form_token(app, client, demo):
    sign_in(client, demo[1].full)
    before, token = copy_of(app, client), form_token(client)
    sign_in(client, demo[1].readonly)
    assert not signed_in(before) and signed_in(client)
    response = client.post("/sign-out", data={"csrf": token})
    assert response.status_code == 400 and signed_in(client)


def test_revoking_a_key_ends_all_its_sessions_and_no_other(app, demo, keystore):
    browsers = [app.test_client() for _ in range(3)]
    for browser, key in zip(browsers, (demo[1].full, demo[1].full, demo[1].readonly)):
        sign_in(browser, key)
    keystore.revoke(demo[1].full)
    assert [signed_in(browser) for browser in browsers] == [False, False, True]


def test_gloss_key_revoke_removes_the_keys_sessions_from_the_data_directory(app, demo, keystore, data_dir,
                                                                            capsys):
    browsers = [app.test_client() for _ in range(3)]
    for browser, key in zip(browsers, (demo[1].full, demo[1].full, demo[1].readonly)):
        sign_in(browser, key)
    assert len(session_files(data_dir)) == 3
    assert gloss_main(["--data", str(data_dir), "key", "revoke", keystore.verify(demo[1].full).id]) == 0
    assert "ended 2 dashboard session(s)" in capsys.readouterr().out
    assert len(session_files(data_dir)) == 1
    assert [signed_in(browser) for browser in browsers] == [False, False, True]


def test_a_session_unused_for_longer_than_the_idle_lifetime_is_refused(client, demo, clock, data_dir):
    sign_in(client, demo[1].full)
    for _ in range(3):  # used every 11 hours: alive for 33 hours
        clock.now += 11 * HOUR
        assert signed_in(client)
    clock.now += 12 * HOUR + 61  # 12 h is kept to within the minute a use is written at most once in
    assert not signed_in(client)
    assert session_files(data_dir) == []


def test_a_session_ends_after_its_absolute_lifetime_however_busy(client, demo, clock):
    sign_in(client, demo[1].full)
    for _ in range(16):  # 160 hours < 7 days
        clock.now += 10 * HOUR
        assert signed_in(client)
    clock.now += 10 * HOUR
    assert not signed_in(client)


@pytest.mark.parametrize("how", ["config", "environment"])
def test_the_lifetimes_are_configurable(data_dir, monkeypatch, how):
    settings = {"GLOSS_SESSION_IDLE_HOURS": "0.5", "GLOSS_SESSION_MAX_HOURS": "2"}
    if how == "environment":
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
    app = create_app(data_dir, testing=True, config=settings if how == "config" else None)
    lifetime = app.extensions["gloss.sessions"].lifetime
    assert (lifetime.idle, lifetime.max) == (1800, 7200)


@pytest.mark.parametrize("value", ["0", "-1", "twelve", "inf", "nan"])
def test_a_lifetime_that_is_not_a_positive_number_of_hours_is_refused_at_start(data_dir, value):
    with pytest.raises(ValueError, match="GLOSS_SESSION_IDLE_HOURS must be a positive number of hours"):
        create_app(data_dir, testing=True, config={"GLOSS_SESSION_IDLE_HOURS": value})


def test_a_short_idle_lifetime_ends_the_session(data_dir, demo, store, keystore):
    app = create_app(data_dir, testing=True, config={"GLOSS_SESSION_IDLE_HOURS": "0.5"})
    now = [time.time()]
    app.extensions["gloss.sessions"].clock = lambda: now[0]
    client = app.test_client()
    sign_in(client, demo[1].full)
    now[0] += 29 * 60
    assert signed_in(client)
    now[0] += 31 * 60
    assert not signed_in(client)


def test_expired_sessions_are_swept_at_a_later_sign_in(app, demo, clock, data_dir):
    for key in (demo[1].full, demo[1].readonly):
        sign_in(app.test_client(), key)
    clock.now += 13 * HOUR
    late = app.test_client()
    sign_in(late, demo[1].full)
    assert len(session_files(data_dir)) == 1 and signed_in(late)


# ----------------------------------------------------------------------------- cookie attributes
@pytest.mark.parametrize("base_url, forced, secure", [("http://localhost", False, False),
                                                      ("https://localhost", False, True),
                                                      ("http://localhost", True, True)])
def test_the_cookie_is_secure_over_https_or_when_forced(data_dir, demo, base_url, forced, secure):
    app = create_app(data_dir, testing=True, config={"GLOSS_SECURE_COOKIES": "1"} if forced else None)
    client = app.test_client()
    token = form_token(client)
    header = cookie_of(client.post("/sign-in", data={"key": demo[1].full, "csrf": token}, base_url=base_url))
    attributes = {part.strip().split("=")[0].lower() for part in header.split(";")[1:]}
    assert ("secure" in attributes) is secure
    assert "httponly" in attributes and "SameSite=Lax" in header
    assert "expires" not in attributes and "max-age" not in attributes  # gone when the browser closes


def test_the_environment_forces_secure_cookies(data_dir, demo, monkeypatch):
    monkeypatch.setenv("GLOSS_SECURE_COOKIES", "yes")
    client = create_app(data_dir, testing=True).test_client()
    assert "; Secure" in cookie_of(client.get("/"))  # the sign-in form's token cookie too
