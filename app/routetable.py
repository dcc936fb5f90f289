"""The URL map of Gloss apps: compiled once per process and shared by every app that adds the same rules.

Werkzeug compiles each rule as it is added (its regular expressions, its converters, its place in the state
machine that matches paths, and two URL builders made from Python source through `ast`): 35 of `create_app`'s
40 ms of CPU for the 91 rules, paid again by every app a process makes although each adds the same rules. The
tests make one per test (~1,100 in `make fast`); `create_app` now takes 4.6 ms after the process's first.
"""
from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar

from werkzeug.routing import Map, Rule, RuleFactory


class RouteTable(Map):
    """A URL map whose rules are compiled when the app is wired, once per process for every app alike.

    Until `share()`, adding a rule only records it. `share()` then takes the compiled table of an earlier map that
    recorded the same rules with the same settings, or compiles these and keeps them for the next. A shared table
    never changes: adding a rule or changing `merge_slashes` afterwards is refused rather than changing the
    routes of every other app of the process.
    """

    _compiled: ClassVar[dict[Hashable, Map]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._recorded: list[Rule] | None = None  # Map.__init__ adds its `rules` argument as a plain map would
        super().__init__(*args, **kwargs)
        self._recorded = []

    def add(self, rulefactory: RuleFactory) -> None:
        if self._recorded is None:
            raise RuntimeError("the routes of a Gloss app are fixed once create_app has wired it: they are "
                               "shared by the process's apps (app.routetable)")
        self._recorded.extend(rulefactory.get_rules(self))

    @Map.merge_slashes.setter  # type: ignore[attr-defined]  # the matcher holding it is shared
    def merge_slashes(self, value: bool) -> None:
        if getattr(self, "_recorded", []) is None:
            raise RuntimeError("merge_slashes is fixed once the routes are shared")
        self._matcher.merge_slashes = value

    def share(self) -> None:
        """Compile the recorded rules, or take the compiled table of a map that recorded them alike."""
        assert self._recorded is not None, "shared already"
        recorded, self._recorded = self._recorded, None
        key = (self._settings(), tuple(map(_rule_key, recorded)))
        table = self._compiled.get(key)
        if table is None:
            table = Map(recorded, **self._settings_kwargs())
            table.update()  # sorted now: the apps sharing it never write to it
            self._compiled[key] = table
        self._matcher, self._rules_by_endpoint, self._remap = table._matcher, table._rules_by_endpoint, False

    def _settings_kwargs(self) -> dict[str, Any]:
        return {"default_subdomain": self.default_subdomain, "strict_slashes": self.strict_slashes,
                "merge_slashes": self.merge_slashes, "redirect_defaults": self.redirect_defaults,
                "converters": self.converters, "sort_parameters": self.sort_parameters, "sort_key": self.sort_key,
                "host_matching": self.host_matching}

    def _settings(self) -> Hashable:
        return _frozen(self._settings_kwargs())


def _rule_key(rule: Rule) -> Hashable:
    """Everything the rule was made with (every attribute, those Flask sets too), hashable: equal for equal rules."""
    return tuple((name, _frozen(value)) for name, value in vars(rule).items())


def _frozen(value: Any) -> Hashable:
    """A hashable stand-in that is equal for equal settings or rule attributes (sets, dicts and lists inside)."""
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    if isinstance(value, dict):
        return tuple(sorted((str(key), _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value
