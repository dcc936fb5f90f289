"""Hostile files of every readable format, on import (with a key) and keyless convert: each answers a JSON 4xx
in time proportional to its size, and the repository does not change."""
from __future__ import annotations

import threading
import time

import pytest

from tests.reliability.harness import SHAPES, convert_path, import_path, malformed_corpus

SIZE = 256 * 1024  # the size that took the service down for two minutes before (issue 12)
# Generous, linear: a shared 2-core machine is slow, but a quadratic reader takes minutes at this size.
SECONDS_PER_KB = 0.02
BASE_SECONDS = 2.0


def within_linear_budget(seconds: float, size: int) -> bool:
    return seconds <= BASE_SECONDS + SECONDS_PER_KB * size / 1024


def test_every_hostile_file_is_a_quick_json_4xx_and_changes_nothing(server):
    before = server.head()
    slow, wrong = [], []
    corpus = list(malformed_corpus(SIZE))
    assert {ext for _, ext, _, _ in corpus} == set(SHAPES)  # every reader's timing: tests/formats/test_hostile_readers.py
    for label, ext, variant, data in corpus:
        for kind, path, key in (("import", import_path(ext, variant), True), ("convert", convert_path(ext), False)):
            reply = server.request("POST", path, data, key=key)
            if not (400 <= reply.status < 500 and reply.is_json_error):
                wrong.append((kind, label, reply.status, reply.body[:200]))
            if not within_linear_budget(reply.seconds, len(data)):
                slow.append((kind, label, round(reply.seconds, 2)))
    assert wrong == []
    assert slow == []
    assert server.head() == before


@pytest.mark.parametrize("route", ["translation", "convert"])
def test_a_chunked_body_over_the_limit_is_413_whatever_the_framing(server, route):
    import limits

    before = server.head()
    if route == "translation":
        asset = server.request("GET", "/api/assets?ugly").json()[0]["id"]
        path, size, key = f"/api/translations/{asset}/fr", limits.MAX_BODY_BYTES, True
    else:
        path, size, key = "/api/convert/json/big-fr.po", limits.MAX_CONVERT_BYTES, False
    piece = b"x" * (1024 * 1024)
    reply = server.request("POST", path, iter([piece] * (size // len(piece) + 1)), key=key)
    assert reply.status == 413 and reply.is_json_error
    assert ("max_body_bytes" if route == "translation" else "max_convert_bytes") in reply.json()["error"]
    assert server.head() == before


def test_quality_checks_on_hostile_translations_answer_in_linear_time(server):
    """The QA regexes (HTML tags, printf placeholders) on 40 KB translations built to make them backtrack."""
    hostile = {"text": ("html", "<a" * 20_000), "printf-zeros": ("text", "%" + "0" * 40_000),
               "printf-named": ("text", "%(" * 20_000), "icu": ("text", "{a,b," + " " * 40_000)}
    for name, (kind, text) in hostile.items():
        asset_id = f"qa.hostile.{name}"
        reply = server.request("POST", "/api/assets", f"id={asset_id}&type={kind}&text=%25s <b>x</b>".encode(),
                               {"Content-Type": "application/x-www-form-urlencoded"})
        assert reply.status in (201, 409)
        assert server.request("POST", f"/api/translations/{asset_id}/fr", text.encode()).status == 200
    reply = server.request("GET", "/api/locales/fr/errors")
    assert reply.status == 200
    assert within_linear_budget(reply.seconds, 160 * 1024)
    reply = server.request("GET", "/api/export/locale/fr.po?printf=icu")
    assert reply.status == 200 and within_linear_budget(reply.seconds, 160 * 1024)


def test_authenticated_requests_keep_answering_while_keyless_converts_attack(server):
    """Four clients post hostile 256 KB converts without a key; every authenticated probe still succeeds."""
    attack = [data for _, ext, _, data in malformed_corpus(SIZE) if ext == "json"]
    stop = threading.Event()
    attacked = []

    def attacker() -> None:
        while not stop.is_set():
            for data in attack:
                attacked.append(server.request("POST", convert_path("json"), data, key=False, timeout=120).status)

    threads = [threading.Thread(target=attacker) for _ in range(4)]
    for thread in threads:
        thread.start()
    probes = []
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            try:
                probes.append(server.request("GET", "/api/locales", timeout=10).status)
            except OSError as error:
                probes.append(repr(error))
            time.sleep(0.1)  # the behaviour under test: a reader keeps probing at its pace during the attack
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert probes and all(status == 200 for status in probes), probes
    assert attacked and all(400 <= status < 500 for status in attacked)


def test_gunicorn_refusals_use_the_json_error_shape(server):
    long_line = server.raw(b"GET /api/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = long_line.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 414") and b"application/json" in head
    assert b'"status": 414' in body
    garbage = server.raw(b"\x00\x01 NOT HTTP\r\n\r\n")
    head, _, body = garbage.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b'"status": 400' in body
    big_header = server.raw(b"GET /api/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n")
    head, _, body = big_header.partition(b"\r\n\r\n")
    assert head.split(b" ")[1].startswith(b"4") and b"application/json" in head
