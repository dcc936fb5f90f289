"""ICU MessageFormat pieces shared by formats that carry ICU text (ARB plurals, printf conversion)."""
from __future__ import annotations

import re

from .plurals import CATEGORIES, with_other

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
    """{category: text} as one ICU plural argument, with the `other` clause ICU requires whatever the locale
    (the last form's text when the locale's integers never reach `other`, as for Polish)."""
    variants = " ".join(f"{name}{{{text}}}" for name, text in with_other(forms).items())
    return f"{{{variable}, plural, {variants}}}"


# --- validity and quoting ---------------------------------------------------------------------------
# ICU MessageFormat syntax (the MessagePattern grammar, apostrophe mode DOUBLE_OPTIONAL, which ICU4C,
# ICU4J and Flutter's gen-l10n with use-escaping share): `''` is one apostrophe; a `'` before `{` or `}`
# (or `#` inside a plural) opens a quoted literal that the next lone `'` closes (`|` is syntax only in
# ChoiceFormat, which ARB does not use).
_ARG_NAME = re.compile(r"\s*([0-9]+|[^\s{}'#|,=:\u0021-\u002f\u003a-\u0040\u005b-\u005e\u0060\u007b-\u007e]+)\s*")
_WORD = re.compile(r"\s*([A-Za-z]+)\s*")
_PLURAL_KEY = re.compile(r"\s*(=-?[0-9]+(?:\.[0-9]+)?|[A-Za-z]+)\s*")
_OFFSET = re.compile(r"\s*offset:\s*[0-9]+\s*")
_SIMPLE_TYPES = frozenset(("number", "date", "time", "spellout", "ordinal", "duration"))
_CHOICE_TYPES = frozenset(("plural", "selectordinal", "select"))


class _Invalid(Exception):
    pass


def is_valid_message(text: str, plural_form: bool = False) -> bool:
    """Whether the text parses as an ICU MessageFormat pattern (what an ICU-reading tool accepts), at the
    top level or as one form of a plural argument."""
    try:
        end = _message(text, 0, in_plural=plural_form)
    except _Invalid:
        return False
    return end == len(text)


def _message(text: str, position: int, in_plural: bool) -> int:
    """Parse message text and arguments from `position`; returns where an unmatched `}` (or the end) is."""
    length = len(text)
    while position < length:
        char = text[position]
        if char == "'":
            position = _after_apostrophe(text, position, in_plural)
        elif char == "{":
            position = _argument(text, position + 1)
        elif char == "}":
            return position
        else:
            position += 1
    return position


def _after_apostrophe(text: str, position: int, in_plural: bool) -> int:
    following = text[position + 1:position + 2]
    if following == "'":
        return position + 2
    if following and (following in "{}" or (in_plural and following == "#")):
        closing = position + 1
        while True:  # a quoted literal runs to the next lone apostrophe (or to the end of the text)
            closing = text.find("'", closing + 1)
            if closing < 0:
                return len(text)
            if text[closing + 1:closing + 2] != "'":
                return closing + 1
            closing += 1
    return position + 1


def _argument(text: str, position: int) -> int:
    """An argument after its `{`; returns the position after its `}`."""
    name = _ARG_NAME.match(text, position)
    if name is None:
        raise _Invalid
    position = name.end()
    if text[position:position + 1] == "}":
        return position + 1
    if text[position:position + 1] != ",":
        raise _Invalid
    kind = _WORD.match(text, position + 1)
    if kind is None:
        raise _Invalid
    position = kind.end()
    word = kind.group(1)
    if word in _CHOICE_TYPES:
        if text[position:position + 1] != ",":
            raise _Invalid
        return _choices(text, position + 1, plural=word != "select")
    if word not in _SIMPLE_TYPES:
        raise _Invalid
    if text[position:position + 1] == "}":
        return position + 1
    if text[position:position + 1] != ",":
        raise _Invalid
    return _style(text, position + 1)


def _style(text: str, position: int) -> int:
    """A simple argument's style (`short`, `::skeleton`, a pattern): balanced braces up to the closing `}`."""
    depth = 0
    while position < len(text):
        char = text[position]
        if char == "'":
            position = _after_apostrophe(text, position, in_plural=False)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return position + 1 if text[:position].rstrip()[-1:] != "," else _fail()
            depth -= 1
        position += 1
    raise _Invalid


def _choices(text: str, position: int, plural: bool) -> int:
    """`key {message}` pairs of a plural/selectordinal/select argument, which needs an `other`."""
    if plural:
        offset = _OFFSET.match(text, position)
        position = offset.end() if offset else position
    keys: set[str] = set()
    while True:
        key = (_PLURAL_KEY if plural else _WORD).match(text, position)
        if key is None:
            if text[position:].lstrip()[:1] == "}" and "other" in keys:
                return text.index("}", position) + 1
            raise _Invalid
        position = key.end()
        if text[position:position + 1] != "{":
            raise _Invalid
        position = _message(text, position + 1, in_plural=plural)
        if text[position:position + 1] != "}":
            raise _Invalid
        keys.add(key.group(1))
        position += 1


def _fail() -> int:
    raise _Invalid


def quote_literal(text: str) -> str:
    """The ICU pattern whose output is exactly `text`: apostrophes doubled, and the span from the first to
    the last brace quoted as one literal (quoting each brace apart would put a closing quote next to a
    doubled apostrophe, which reads as one more apostrophe)."""
    braces = [index for index, char in enumerate(text) if char in "{}"]
    if not braces:
        return text.replace("'", "''")
    first, last = braces[0], braces[-1] + 1
    return "'".join(part.replace("'", "''") for part in (text[:first], text[first:last], text[last:]))


def as_message(text: str, plural_form: bool = False) -> str:
    """The text itself when it is already a valid ICU pattern (placeholders kept), else its quoted literal."""
    return text if is_valid_message(text, plural_form) else quote_literal(text)


def literal_text(message: str, plural_form: bool = False) -> str:
    """What ICU shows of a message's literal text: quoted sections unquoted, `''` as one apostrophe;
    arguments stay as they are written."""
    out: list[str] = []
    position, length = 0, len(message)
    while position < length:
        char = message[position]
        if char != "'":
            out.append(char)
            position += 1
            continue
        following = message[position + 1:position + 2]
        if following == "'":
            out.append("'")
            position += 2
        elif following and (following in "{}" or (plural_form and following == "#")):
            position += 1
            while position < length:  # the quoted literal, up to the next lone apostrophe
                if message[position] == "'":
                    if message[position + 1:position + 2] != "'":
                        position += 1
                        break
                    position += 1
                out.append(message[position])
                position += 1
        else:
            out.append(char)
            position += 1
    return "".join(out)


def from_message(message: str, plural_form: bool = False) -> str:
    """The text to store for an ICU message read from a file: the inverse of `as_message`.

    A message whose quoting only makes literal braces (what `as_message` writes for text that is not ICU) is
    stored as the text it shows; any other message (placeholders, plurals) is stored as it is.
    """
    if "'" not in message:
        return message
    shown = literal_text(message, plural_form)
    return shown if shown != message and not is_valid_message(shown, plural_form) else message
