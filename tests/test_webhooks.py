"""Webhooks through the API and the deliverer (in-process, against a receiver thread that verifies each
signature with the `standardwebhooks` package); tests/test_webhooks_served.py does it with `gloss serve`."""
from __future__ import annotations

import json
import ssl
import stat
import subprocess

import pytest

from app.webhooks import Deliverer
from storage.webhooks import EVENTS
from tests.support import git, require_tool
from tests.webhook_receiver import Receiver

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def loopback_allowed(monkeypatch):
    monkeypatch.setenv("GLOSS_WEBHOOK_ALLOW", "127.0.0.1/8")


@pytest.fixture
def receiver():
    answers = {"status": 204}
    live = Receiver(SECRET, lambda: answers["status"])
    live.answers = answers
    yield live
    live.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def deliverer(app, clock) -> Deliverer:
    """The deliverer without its thread: each `tick()` delivers what is due, in the test's thread."""
    return Deliverer(app.extensions["gloss.store"], app.extensions["gloss.webhooks"], clock)


def make_hook(api, url: str, **fields) -> dict:
    status, hook = api.post("/api/webhooks", data={"url": url, "secret": SECRET, **fields})
    assert status == 201, hook
    return hook


def first_parent(project, since: str) -> list[str]:
    return git(project.path, "rev-list", "--first-parent", "--reverse", f"{since}..HEAD").split()


# ----------------------------------------------------------------------------- the API
def test_a_hook_made_without_a_secret_gets_one_shown_once_and_never_listed(blank, loopback_allowed):
    status, hook = blank.post("/api/webhooks", json={"url": "http://127.0.0.1:9/hook", "events": ["asset.created"]})
    assert status == 201 and hook["secret"].startswith("whsec_") and hook["events"] == ["asset.created"]
    assert hook["cursor"] == git(blank.project.path, "rev-parse", "HEAD").strip() and hook["failing"] is False
    status, listed = blank.get("/api/webhooks")
    assert status == 200 and [entry["id"] for entry in listed] == [hook["id"]]
    assert "secret" not in listed[0] and hook["secret"] not in json.dumps(listed)
    assert blank.get(f"/api/webhooks/{hook['id']}/deliveries") == (200, [])


def test_the_secret_and_the_cursor_live_in_the_data_directory_never_in_the_repository(blank, loopback_allowed,
                                                                                       data_dir):
    hook = make_hook(blank, "http://127.0.0.1:9/hook")
    stored = data_dir / "webhooks" / f"{blank.project.id}.json"
    assert SECRET in stored.read_text() and stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert hook["cursor"] in stored.read_text()
    assert SECRET.encode() not in b"".join(path.read_bytes() for path in blank.project.path.rglob("*")
                                           if path.is_file())


BAD_FIELDS = [  # (fields, status): each a JSON 4xx that makes no hook
    ({"url": ""}, 400),
    ({"url": "http://127.0.0.1:9/", "events": "translation.changed,asset.renamed"}, 422),
    ({"url": "http://127.0.0.1:9/", "secret": "hunter2"}, 422),
    ({"url": "http://127.0.0.1:9/", "secret": "whsec_c2hvcnQ="}, 422),  # 5 bytes: too short
    ({"url": "http://127.0.0.1:9/", "coalesce": "-1"}, 422),
    ({"url": "http://127.0.0.1:9/", "coalesce": "3601"}, 422),
    ({"url": "http://127.0.0.1:9/", "coalesce": "soon"}, 422),
]


def test_bad_fields_are_json_4xx_and_make_no_hook(blank, loopback_allowed):
    for fields, error in BAD_FIELDS:
        status, body = blank.post("/api/webhooks", data=fields)
        assert status == error, (fields, body)
    status, body = blank.post("/api/webhooks", json={"url": "http://127.0.0.1:9/", "events": [1]})
    assert status == 422, body
    assert blank.get("/api/webhooks") == (200, [])


@pytest.mark.parametrize("given, events", [("*", ["*"]), ("", ["*"]), (None, ["*"]),
                                           ("locale.added, translation.changed", ["translation.changed",
                                                                                  "locale.added"])])
def test_events_are_a_comma_separated_list_and_star_or_none_means_all(blank, loopback_allowed, given, events):
    fields = {} if given is None else {"events": given}
    assert make_hook(blank, "http://127.0.0.1:9/", **fields)["events"] == events


REFUSED_URLS = [
    "http://127.0.0.1:9/hook", "http://localhost/hook", "http://10.1.2.3/", "http://192.168.0.10/",
    "http://172.16.5.4/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://100.64.0.1/", "http://[fd00:ec2::254]/",
    "http://224.0.0.1/", "ftp://example.com/hook", "http://user:password@127.0.0.1/", "not a url",
    "http:///nohost", "http://1.2.3.4:0/", "http://[::1", "http://x:99999/", "http://" + "a" * 2100 + ".example/",
]


def test_urls_gloss_must_not_call_are_refused_without_the_operators_allowance(blank):
    for url in REFUSED_URLS:
        status, body = blank.post("/api/webhooks", data={"url": url})
        assert status == 422, (url, body)
    assert blank.get("/api/webhooks") == (200, [])


def test_the_allowance_opens_only_the_networks_it_lists(blank, monkeypatch):
    monkeypatch.setenv("GLOSS_WEBHOOK_ALLOW", "127.0.0.1/32")
    assert blank.post("/api/webhooks", data={"url": "http://127.0.0.1:9/"})[0] == 201
    assert blank.post("/api/webhooks", data={"url": "http://127.0.0.2:9/"})[0] == 422
    assert blank.post("/api/webhooks", data={"url": "http://10.0.0.1/"})[0] == 422


EMBEDDING_PRIVATE = [
    "64:ff9b::7f00:1", "64:ff9b::a00:7", "64:ff9b::a9fe:a9fe", "64:ff9b::c0a8:101",  # NAT64 of 127/8, 10/8...
    "::ffff:127.0.0.1", "::ffff:10.0.0.7", "::ffff:169.254.169.254",  # IPv4-mapped
    "2002:7f00:1::1", "2002:a00:7::1", "2002:c0a8:101:1::1",  # 6to4 of loopback and private networks
    "64:ff9b:1::a00:7"]  # local-use NAT64


def test_ipv6_addresses_that_embed_a_loopback_or_private_ipv4_address_are_refused(blank):
    for address in EMBEDDING_PRIVATE:
        status, body = blank.post("/api/webhooks", data={"url": f"http://[{address}]:8080/hook"})
        assert status == 422 and "Gloss does not call" in body["error"], (address, body)


def test_ipv6_addresses_embedding_a_public_ipv4_address_are_public(blank):
    for address in ("64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"):
        assert blank.post("/api/webhooks", data={"url": f"http://[{address}]/hook"})[0] == 201, address


def test_the_allowance_applies_to_the_ipv4_address_an_ipv6_one_reaches(blank, monkeypatch):
    monkeypatch.setenv("GLOSS_WEBHOOK_ALLOW", "127.0.0.1/32")
    assert blank.post("/api/webhooks", data={"url": "http://[64:ff9b::7f00:1]:9/"})[0] == 201
    assert blank.post("/api/webhooks", data={"url": "http://[64:ff9b::7f00:2]:9/"})[0] == 422


def test_a_project_has_at_most_max_webhooks_per_project(blank, loopback_allowed, monkeypatch):
    monkeypatch.setattr("storage.webhooks.MAX_WEBHOOKS_PER_PROJECT", 2)
    for _ in range(2):
        make_hook(blank, "http://127.0.0.1:9/")
    status, body = blank.post("/api/webhooks", data={"url": "http://127.0.0.1:9/"})
    assert status == 422 and "max_webhooks_per_project" in body["error"]


def test_a_deleted_hook_is_gone_and_unknown_hooks_are_json_404s(blank, loopback_allowed):
    hook = make_hook(blank, "http://127.0.0.1:9/")
    assert blank.delete(f"/api/webhooks/{hook['id']}") == (200, {"status": 200, "message": "Webhook deleted"})
    assert blank.get("/api/webhooks") == (200, [])
    assert blank.delete(f"/api/webhooks/{hook['id']}")[0] == 404
    assert blank.get("/api/webhooks/wh0000/deliveries")[0] == 404


def test_a_hook_change_its_mirror_refuses_is_a_503_and_saves_nothing(app, blank, loopback_allowed):
    from storage.errors import Busy

    hooks, seen = app.extensions["gloss.webhooks"], []
    kept = make_hook(blank, "http://127.0.0.1:9/")

    def mirror(project: str, data: bytes | None, required: bool) -> None:  # a cluster node's copy (cluster.webhooks)
        seen.append((project, required))
        raise Busy("The project's followers could not take the webhook change")

    hooks.mirror = mirror
    assert blank.post("/api/webhooks", data={"url": "http://127.0.0.1:9/"})[0] == 503
    assert blank.delete(f"/api/webhooks/{kept['id']}")[0] == 503
    hooks.mirror = None
    assert [hook["id"] for hook in blank.get("/api/webhooks")[1]] == [kept["id"]]
    assert [required for _, required in seen] == [True, True]


def test_read_only_and_export_keys_may_not_see_or_make_hooks(client, demo, loopback_allowed):
    from tests.api import Api

    for key in (demo[1].readonly, demo[1].export):
        api = Api(client, key)
        assert api.get("/api/webhooks")[0] == 403
        assert api.post("/api/webhooks", data={"url": "http://127.0.0.1:9/"})[0] == 403


def test_the_openapi_document_names_every_event(client):
    document = client.get("/api/openapi.json").get_json()
    schema = document["paths"]["/api/webhooks"]["post"]["requestBody"]["content"]
    assert all(event in json.dumps(schema) for event in EVENTS)


# ----------------------------------------------------------------------------- delivery
def test_each_commit_is_delivered_in_order_signed_with_its_range_authors_pairs_and_events(
        blank, loopback_allowed, receiver, deliverer):
    hook = make_hook(blank, receiver.url)
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    assert blank.post("/api/assets", data={"id": "greeting", "text": "Hello"})[0] == 201
    for text in ("Bonjour", "Salut"):
        assert blank.post("/api/translations/greeting/fr", data=text.encode())[0] == 200
    deliverer.tick()
    commits = first_parent(blank.project, hook["cursor"])
    assert len(commits) == 4 and all(delivery["valid"] for delivery in receiver.deliveries)
    payloads = [delivery["payload"] for delivery in receiver.deliveries]
    assert [payload["data"]["commits"]["to"] for payload in payloads] == commits
    assert [payload["data"]["commits"]["from"] for payload in payloads] == [hook["cursor"], *commits[:-1]]
    assert [payload["type"] for payload in payloads] == ["locale.added", "asset.created",
                                                        "translation.changed", "translation.changed"]
    assert payloads[1]["data"]["events"] == ["translation.changed", "asset.created"]
    assert payloads[1]["data"]["assets"] == ["greeting"]
    assert payloads[2]["data"]["changes"] == [{"asset": "greeting", "locale": "fr"}]
    assert [author["name"] for author in payloads[2]["data"]["authors"]] == ["Tester"]
    assert payloads[2]["data"]["project"] == blank.project.id
    status, deliveries = blank.get(f"/api/webhooks/{hook['id']}/deliveries")
    assert [attempt["status"] for attempt in deliveries] == ["delivered"] * 4
    assert deliveries[0]["code"] == 204 and deliveries[0]["commits"]["to"] == commits[-1]
    assert blank.get("/api/webhooks")[1][0]["cursor"] == commits[-1]
    deliverer.tick()
    assert len(receiver.deliveries) == 4  # nothing new, nothing sent


def test_a_hook_hears_only_the_events_it_asked_for_and_its_cursor_passes_the_others(
        blank, loopback_allowed, receiver, deliverer):
    make_hook(blank, receiver.url, events="locale.added")
    assert blank.post("/api/assets", data={"id": "a", "text": "A"})[0] == 201
    assert blank.post("/api/locales", data={"code": "de"})[0] == 201
    assert blank.post("/api/translations/a/de", data=b"Ah")[0] == 200
    deliverer.tick()
    assert [d["payload"]["type"] for d in receiver.deliveries] == ["locale.added"]
    assert blank.get("/api/webhooks")[1][0]["cursor"] == git(blank.project.path, "rev-parse", "HEAD").strip()


def test_commits_within_the_coalescing_window_go_in_one_delivery(blank, loopback_allowed, receiver, deliverer,
                                                                 clock):
    hook = make_hook(blank, receiver.url, coalesce="60")
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    deliverer.tick()
    for i in range(5):
        assert blank.post("/api/assets", data={"id": f"a{i}", "text": f"A{i}"})[0] == 201
    clock.now += 59
    deliverer.tick()
    assert receiver.deliveries == []
    clock.now += 1
    deliverer.tick()
    (delivery,) = receiver.deliveries
    data = delivery["payload"]["data"]
    assert delivery["valid"] and data["commits"] == {"from": hook["cursor"], "to": first_parent(
        blank.project, hook["cursor"])[-1], "count": 6}
    assert data["assets"] == [f"a{i}" for i in range(5)]
    assert {"asset": "a3", "locale": "en"} in data["changes"]


def test_failures_back_off_exponentially_then_the_hook_is_failing_until_the_backlog_is_taken(
        blank, loopback_allowed, receiver, deliverer, clock):
    hook = make_hook(blank, receiver.url)
    receiver.answers["status"] = 503
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    assert blank.post("/api/locales", data={"code": "de"})[0] == 201
    attempts = []
    for _ in range(12):  # wake often: an attempt only when its backoff is over
        deliverer.tick()
        attempts.append(len(receiver.deliveries))
        clock.now += 1
    assert attempts == [1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4]  # waits of 1, 2, 4, then 8 seconds
    listed = blank.get("/api/webhooks")[1][0]
    assert listed["failures"] == 4 and listed["failing"] is False and listed["cursor"] == hook["cursor"]
    clock.now += 24 * 3600
    deliverer.tick()
    listed = blank.get("/api/webhooks")[1][0]
    assert listed["failing"] is True and listed["last_delivery"]["error"] == "answered 503 Service Unavailable"
    receiver.answers["status"] = 200
    clock.now += 3600
    deliverer.tick()
    listed = blank.get("/api/webhooks")[1][0]
    assert listed["failing"] is False and listed["failures"] == 0
    accepted = [d["payload"]["data"]["commits"]["to"] for d in receiver.deliveries if d["answer"] == 200]
    assert accepted == first_parent(blank.project, hook["cursor"])
    # every retry of a commit carries the same message id: a receiver can drop what it already has
    assert len({d["id"] for d in receiver.deliveries}) == 2


def test_a_branch_merge_commit_is_delivered_as_branch_merged(blank, loopback_allowed, receiver, deliverer):
    """The branches' merge commits carry Action.MERGE_BRANCH; the events table maps it to branch.merged."""
    from storage.gitrepo import Person
    from storage.trailers import Action, Trailer

    make_hook(blank, receiver.url, events="branch.merged")
    with blank.project.transaction(Person("Merger", "merger@example.com"), "Merge branch release into main",
                                   Action.MERGE_BRANCH, [(Trailer.LOCALE, "en")]) as tx:
        tx.meta["name"] = "Blank, merged"
    deliverer.tick()
    (delivery,) = receiver.deliveries
    assert delivery["payload"]["type"] == "branch.merged"
    assert delivery["payload"]["data"]["commit_list"][0]["action"] == "merge-branch"
    assert delivery["payload"]["data"]["authors"] == [{"name": "Merger", "email": "merger@example.com"}]


@pytest.mark.parametrize("indexed", [False, True], ids=["read-from-git", "read-from-the-text-change-index"])
def test_a_branch_merged_through_the_api_delivers_branch_merged_naming_only_what_the_merge_brought_to_main(
        blank, loopback_allowed, receiver, deliverer, indexed):
    """The merge commit has two parents; its pairs are its changes against its first parent (main's head), not
    against the branch: main's own change of b/fr, made on main before the merge, is not named."""
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    for asset in ("a", "b"):
        assert blank.post("/api/assets", data={"id": asset, "text": asset.upper()})[0] == 201
    assert blank.post("/api/branches", data={"name": "feature"})[0] == 201
    on_feature = {"query_string": {"branch": "feature"}}
    assert blank.post("/api/translations/a/fr", data=b"A (feature)", **on_feature)[0] == 200
    assert blank.post("/api/assets", data={"id": "c", "text": "C"}, **on_feature)[0] == 201
    assert blank.post("/api/translations/b/fr", data=b"B (main)")[0] == 200
    make_hook(blank, receiver.url, events="branch.merged")
    everything = make_hook(blank, receiver.url)
    status, merged = blank.post("/api/branches/feature/merge", query_string={"into": "main"})
    assert status == 200 and merged["merged"] is True
    if indexed:
        blank.project.repo.pack_loose_objects()  # maintenance: the merge commit gets its line in the index
    deliverer.tick()
    assert len(receiver.deliveries) == 2 and all(delivery["valid"] for delivery in receiver.deliveries)
    for delivery in receiver.deliveries:
        data = delivery["payload"]["data"]
        assert data["commits"] == {"from": everything["cursor"], "to": merged["commit"], "count": 1}
        assert data["changes"] == [{"asset": "a", "locale": "fr"}, {"asset": "c", "locale": "en"}]
        assert [author["name"] for author in data["authors"]] == ["Tester"]  # the merger
        assert data["commit_list"][0]["action"] == "merge-branch"
    events = sorted(delivery["payload"]["data"]["events"] for delivery in receiver.deliveries)
    assert events == [["branch.merged"], ["translation.changed", "branch.merged"]]
    # the type says what the commit did, though it changed texts too
    assert [delivery["payload"]["type"] for delivery in receiver.deliveries] == ["branch.merged"] * 2


def test_writes_on_a_branch_fire_no_hook_until_the_branch_is_merged_into_main(
        blank, loopback_allowed, receiver, deliverer):
    """Hooks follow main: a branch's commits are heard of when, and as, a merge brings them to main."""
    hook = make_hook(blank, receiver.url)
    assert blank.post("/api/branches", data={"name": "feature"})[0] == 201
    assert blank.post("/api/locales", data={"code": "fr"}, query_string={"branch": "feature"})[0] == 201
    assert blank.post("/api/assets", data={"id": "a", "text": "A"}, query_string={"branch": "feature"})[0] == 201
    deliverer.tick()
    assert receiver.deliveries == [] and blank.get("/api/webhooks")[1][0]["cursor"] == hook["cursor"]
    assert blank.post("/api/branches/feature/merge")[0] == 200
    deliverer.tick()
    (delivery,) = receiver.deliveries
    data = delivery["payload"]["data"]
    assert data["events"] == ["translation.changed", "branch.merged"] and data["commits"]["count"] == 1
    assert data["changes"] == [{"asset": "a", "locale": "en"}]


def test_a_redirect_is_a_failure_and_is_not_followed(blank, loopback_allowed, receiver, deliverer):
    receiver.answers["status"] = 302
    hook = make_hook(blank, receiver.url)
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    deliverer.tick()
    (attempt,) = blank.get(f"/api/webhooks/{hook['id']}/deliveries")[1]
    assert attempt["status"] == "failed" and attempt["code"] == 302 and "redirect" in attempt["error"]


def test_the_address_is_checked_again_at_delivery_time(blank, loopback_allowed, receiver, deliverer, monkeypatch):
    hook = make_hook(blank, receiver.url)
    monkeypatch.delenv("GLOSS_WEBHOOK_ALLOW")  # as when the name resolves elsewhere by then (DNS rebinding)
    assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
    deliverer.tick()
    assert receiver.deliveries == []
    (attempt,) = blank.get(f"/api/webhooks/{hook['id']}/deliveries")[1]
    assert attempt["status"] == "failed" and attempt["code"] is None and "127.0.0.1" in attempt["error"]


def test_the_dashboard_shows_a_failing_hook_to_full_keys_only(app, client, demo, loopback_allowed, receiver,
                                                                clock):
    from tests.api import Api
    from tests.test_web_pages import sign_in

    api = Api(client, demo[1].full)
    hook = make_hook(api, receiver.url)
    receiver.answers["status"] = 500
    assert api.post("/api/locales", data={"code": "it"})[0] == 201
    deliverer = Deliverer(app.extensions["gloss.store"], app.extensions["gloss.webhooks"], clock)
    deliverer.tick()
    clock.now += 25 * 3600
    deliverer.tick()
    sign_in(client, demo[1].full)
    page = client.get("/").get_data(as_text=True)
    assert f'id="webhook-{hook["id"]}"' in page and "webhook-failing" in page and "answered 500" in page
    reader = app.test_client()
    sign_in(reader, demo[1].readonly)
    assert "webhook-" not in reader.get("/").get_data(as_text=True)


def self_signed(directory, name: str) -> tuple[str, str]:
    """(certificate, key) files of a self-signed certificate for the host `name`."""
    openssl = require_tool("openssl")
    cert, key = str(directory / f"{name}.crt"), str(directory / f"{name}.key")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    return cert, key


@pytest.mark.parametrize("certified", ["localhost", "elsewhere.example"])
def test_https_deliveries_check_the_certificate_against_the_hooks_host_name(
        blank, loopback_allowed, deliverer, tmp_path, monkeypatch, certified):
    """The connection goes to the checked address, and TLS still verifies the URL's host name."""
    cert, key = self_signed(tmp_path, certified)
    monkeypatch.setenv("SSL_CERT_FILE", cert)  # the one certificate the deliverer trusts here
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    receiver = Receiver(SECRET, tls=context)
    try:
        hook = make_hook(blank, receiver.url)
        assert blank.post("/api/locales", data={"code": "fr"})[0] == 201
        deliverer.tick()
        (attempt,) = blank.get(f"/api/webhooks/{hook['id']}/deliveries")[1]
    finally:
        receiver.close()
    if certified == "localhost":
        assert attempt["status"] == "delivered" and [d["valid"] for d in receiver.deliveries] == [True]
    else:
        assert attempt["status"] == "failed" and "CERTIFICATE_VERIFY_FAILED" in attempt["error"]
