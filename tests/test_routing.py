"""The route table: URLs built for every rule (as `url_for` builds them) lead back to that rule."""
from __future__ import annotations

import pytest


def test_every_rule_builds_a_url_that_matches_its_own_endpoint_with_the_same_values(app):
    adapter = app.url_map.bind("localhost")
    for rule in app.url_map.iter_rules():
        values = {name: "fr-CA" for name in rule.arguments}
        method = sorted(rule.methods - {"HEAD", "OPTIONS"})[0]
        url = adapter.build(rule.endpoint, values, method=method)
        assert adapter.match(url, method=method) == (rule.endpoint, values), (rule.rule, url)
        # a value the rule has no place for goes to the query string (the other builder Werkzeug makes per rule)
        assert adapter.build(rule.endpoint, {**values, "extra": "1"}, method=method) == url + "?extra=1"


def test_apps_made_alike_route_alike_and_a_route_added_later_is_refused_rather_than_given_to_every_app(app, tmp_path):
    from app import create_app

    other = create_app(tmp_path / "other", testing=True)
    assert [(r.rule, r.endpoint, r.methods) for r in other.url_map.iter_rules()] == \
        [(r.rule, r.endpoint, r.methods) for r in app.url_map.iter_rules()]
    with pytest.raises(RuntimeError, match="fixed"):
        other.add_url_rule("/late", "late", lambda: "late")
    assert app.test_client().get("/late").status_code == 404
    assert other.test_client().get("/late").status_code == 404
