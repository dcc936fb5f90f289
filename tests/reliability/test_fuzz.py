"""A property-based fuzz of every route of the live server: whatever the method, path values, query, body,
content type and key, the answer is never a 5xx, and every error has the JSON error shape."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from urllib.parse import quote, urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import create_app

PARAMS = ["index", "locale", "format", "charset", "filter", "status", "order", "fallback", "printf", "breaks",
          "collisions", "source", "native", "v", "async", "ignore-new", "delete-absent", "tag-new", "flag-new",
          "no-comments", "escape-formulas", "ugly", "key"]
TEXT = st.one_of(
    st.sampled_from(["", "fr", "fr-FR", "pt_br", "en", "x" * 300, "..", "%", "*", "!a", "rot13", "base64",
                     "1.0", "9" * 50, "json", "multi", "id", "text", "\u202e", "é"]),
    st.text(max_size=40),
)
BODIES = st.one_of(
    st.binary(max_size=3000),
    st.sampled_from([b"", b"{}", b"[]", b'{"id": 5}', b'{"name": {"a": 1}}', b"[" * 5000, b"/*" * 2000,
                     b"code=fr", b"id=a%FFb", b"REQUEST_METHOD=DELETE", b"\xff\xfe\x00", b'{"a": "\\ud800"}',
                     b'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=9; plural=n;\\n"\n',
                     b'{"fr": {"k": "v"}}']),
    st.text(max_size=500).map(lambda text: text.encode("utf-8", "surrogatepass")),
)
CONTENT_TYPES = st.sampled_from([None, "application/json", "application/x-www-form-urlencoded", "text/plain",
                                 "multipart/form-data; boundary=B", "multipart/form-data", "application/xml",
                                 "garbage/\x7f"])
METHODS = st.sampled_from(["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"])


def route_templates() -> list[str]:
    with tempfile.TemporaryDirectory() as scratch:
        rules = [rule.rule for rule in create_app(Path(scratch) / "data", testing=True).url_map.iter_rules()]
    return sorted({rule for rule in rules if rule.startswith("/api/")})


ROUTES = route_templates()
PLACEHOLDER = re.compile(r"<(?:[a-z]+:)?([a-z_]+)>")


@st.composite
def requests(draw):
    template = draw(st.sampled_from(ROUTES))
    path = PLACEHOLDER.sub(lambda match: quote(draw(TEXT), safe="") or "x", template)
    query = draw(st.dictionaries(st.sampled_from(PARAMS), TEXT, max_size=4))
    return (draw(METHODS), path + ("?" + urlencode(query) if query else ""), draw(BODIES), draw(CONTENT_TYPES),
            draw(st.sampled_from([True, False, "bogus-key"])))


def test_the_route_table_is_covered():
    assert len(ROUTES) > 40 and any("convert" in route for route in ROUTES)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(request=requests())
def test_no_route_answers_5xx_or_a_non_json_error(server, request):
    method, path, body, content_type, key = request
    headers = {"Content-Type": content_type} if content_type else {}
    reply = server.request(method, path, body if method not in ("GET", "HEAD") else None, headers, key=key)
    assert reply.status < 500, (method, path, reply.status, reply.body[:300])
    if reply.status >= 400 and method != "HEAD":
        assert reply.is_json_error, (method, path, reply.status, reply.body[:300])
