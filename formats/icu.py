"""ICU MessageFormat pieces shared by formats that carry ICU text (ARB plurals, printf conversion)."""
from __future__ import annotations

import re

from .plurals import CATEGORIES

SYNTAX_CHARS = "{}#|"
_PLURAL_HEAD = re.compile(r"\{\s*(\w+)\s*,\s*plural\s*,", re.S)
_SELECTOR = re.compile(r"\s*(=\d+|offset:\s*\d+|[A-Za-z]+)\s*", re.S)



def matching_brace(text: str, start: int) -> int | None:
    """The index of the brace closing the one at `start`, honouring nesting and ICU quoting."""
    depth = 0
    position = start
    while position < len(text):
        char = text[position]
        if char == "'" and text[position + 1:position + 2] and text[position + 1] in SYNTAX_CHARS:
            closing = text.find("'", position + 1)
            position = len(text) if closing < 0 else closing + 1
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    return None


def parse_plural(text: str) -> tuple[str, dict[str, str]] | None:
    """`{n, plural, one{...} other{...}}` filling the whole text -> (variable, {category: text}).

    None when the text is not exactly one plural argument, or when it uses explicit `=N` selectors or
    an offset, which CLDR categories cannot hold without loss.
    """
    stripped = text.strip()
    head = _PLURAL_HEAD.match(stripped)
    if not head or matching_brace(stripped, 0) != len(stripped) - 1:
        return None
    forms: dict[str, str] = {}
    position, end = head.end(), len(stripped) - 1
    while stripped[position:end].strip():
        selector = _SELECTOR.match(stripped, position)
        if not selector or selector.group(1) not in CATEGORIES:
            return None
        opening = selector.end()
        closing = matching_brace(stripped, opening) if stripped[opening:opening + 1] == "{" else None
        if closing is None or closing > end:
            return None
        forms[selector.group(1)] = stripped[opening + 1:closing]
        position = closing + 1
    return (head.group(1), forms) if forms else None


def plural_message(variable: str, forms: dict[str, str]) -> str:
    """{category: text} as one ICU plural argument."""
    variants = " ".join(f"{name}{{{text}}}" for name, text in forms.items())
    return f"{{{variable}, plural, {variants}}}"
