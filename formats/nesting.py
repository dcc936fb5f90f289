"""Dotted keys <-> nested objects, shared by every format that nests keys (JSON family, later YAML, PHP)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from typing import Any

from .plurals import CATEGORIES


def nest(items: Iterable[tuple[tuple[str, ...], Any]]) -> dict[str, Any]:
    """A nested dict from (path, value) pairs whose paths never conflict (the pipeline guarantees it)."""
    tree: dict[str, Any] = {}
    for path, value in items:
        if len(path) == 1:  # the common flat key, without walking
            tree[path[0]] = value
            continue
        node = tree
        for segment in path[:-1]:
            node = node.setdefault(segment, {})
        node[path[-1]] = value
    return tree


def fold(
    tree: dict[str, Any], is_leaf: Callable[[dict], bool] = lambda value: False, prefix: str = ""
) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) pairs of a nested object; `is_leaf` keeps some objects whole (plural forms).

    Arrays fold like objects indexed from 0 (`items.0`), empty objects vanish.
    """
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, list):
            value = {str(position): item for position, item in enumerate(value)}
        if isinstance(value, dict) and not is_leaf(value):
            yield from fold(value, is_leaf, path + ".")
        else:
            yield path, value


def is_plural_object(value: Any) -> bool:
    """Whether an object is a set of plural forms ({"one": ..., "other": ...}) rather than a namespace."""
    return (
        isinstance(value, dict) and bool(value) and all(name in CATEGORIES for name in value)
        and all(text is None or isinstance(text, str) for text in value.values())
    )
