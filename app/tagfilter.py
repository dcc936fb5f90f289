"""Loco's tag filter: comma list matching ANY listed tag, `*` = any tag at all, `!tag` excludes."""
from __future__ import annotations

from typing import Callable, Iterable


def tag_filter(expression: str) -> Callable[[Iterable[str]], bool]:
    positive, negative = set(), set()
    for term in (part.strip() for part in (expression or "").split(",")):
        if term.startswith("!") and term[1:].strip():
            negative.add(term[1:].strip())
        elif term:
            positive.add(term)

    def has(tags: set[str], term: str) -> bool:
        return bool(tags) if term == "*" else term in tags

    def matches(tags: Iterable[str]) -> bool:
        tags = set(tags)
        if any(has(tags, term) for term in negative):
            return False
        return not positive or any(has(tags, term) for term in positive)

    return matches
