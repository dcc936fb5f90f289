"""Placeholder styles (php, java, objc, python printf and ICU MessageFormat): detection and conversion.

A text is split into literal runs and `Placeholder`s, then rendered in the target style:

| meaning              | php / java      | objc      | python            | icu                     |
|----------------------|-----------------|-----------|-------------------|-------------------------|
| string, next arg     | %s              | %@        | %s                | {0}, {1}... (by order)  |
| string, argument 2   | %2$s            | %2$@      | %(2)s             | {1}                     |
| integer              | %d (%u, %x...)  | %d, %ld   | %d                | {0, number, integer}    |
| float                | %.2f            | %.2f      | %.2f              | {0, number}             |
| named argument       | %1$s (by order) | %1$@      | %(name)s          | {name}                  |
| literal percent      | %%              | %%        | %%                | %                       |
| literal brace        | {               | {         | {                 | '{'                     |

Rules: sequential printf arguments stay sequential between printf styles and become {0}, {1}... in
ICU; ICU arguments become positional printf (`{0}` -> `%1$s`), and `%1$s` -> `{0}`. Named arguments
keep their names where the target has names (python, icu) and are numbered by first appearance
otherwise. Python has no `%1$s`: out-of-order positions become `%(2)s`, in-order ones plain `%s`.
Flags, width and precision survive between printf styles and are dropped for ICU; length modifiers
(`%ld`) only exist in objc. ICU plural/select arguments are kept verbatim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from .catalogue import PRINTF_STYLES
from .icu import SYNTAX_CHARS, matching_brace

STYLES = PRINTF_STYLES  # php, java, objc, icu, python

# Flags exclude the space flag on purpose: "50% discount" must not read as the directive "% d".
_PRINTF_PATTERNS: dict[str, re.Pattern[str]] = {
    "php": re.compile(r"%(?:(?P<pos>[1-9]\d*)\$)?(?P<spec>(?:[-+0]|'.)*+\d*+(?:\.\d+)?)(?P<conv>[bcdeEfFgGosuxX%])"),
    "java": re.compile(r"%(?:(?P<pos>[1-9]\d*)\$)?(?P<spec>[-#+0,(]*+\d*+(?:\.\d+)?)(?P<conv>[bBhHsScCdoxXeEfgGaA%n])"),
    "objc": re.compile(
        r"%(?:(?P<pos>[1-9]\d*)\$)?(?P<spec>[-+0#']*+\d*+(?:\.\d+)?)(?P<len>hh|h|ll|l|q|L|z|t|j)?"
        r"(?P<conv>[@dDiuUxXoOfFeEgGaAcCsSp%])"
    ),
    "python": re.compile(r"%(?:\((?P<name>[^()]*+)\))?(?P<spec>[-+0#]*+\d*+(?:\.\d+)?)(?P<conv>[diouxXeEfFgGcrsa%])"),
}
# The same directives without groups, for findall: their texts as written (directive_texts).
_DIRECTIVE_TEXTS = {style: re.compile(re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern))
                    for style, pattern in _PRINTF_PATTERNS.items()}
_ICU_ARGUMENT = re.compile(r"\{\s*(?P<arg>\w+)\s*(?:,\s*(?P<type>\w+)\s*(?:,\s*(?P<style>[^{}]*+))?)?\}")
_ICU_COMPLEX_TYPES = {"plural", "select", "selectordinal"}

_KINDS = {
    **dict.fromkeys("sS@", "string"), **dict.fromkeys("diouxXDUObB", "integer"),
    **dict.fromkeys("feEFgGaA", "float"), **dict.fromkeys("cC", "char"),
}
_KEPT_CONVERSIONS = {
    "php": {"integer": "dubcoxX", "float": "eEfFgG"},
    "java": {"integer": "doxXb", "float": "eEfgGaA"},
    "objc": {"integer": "diuxXoDUO", "float": "feEgGaAF"},
    "python": {"integer": "diouxX", "float": "eEfFgG"},
}
_STRING_CONVERSION = {"php": "s", "java": "s", "objc": "@", "python": "s"}


@dataclass(frozen=True)
class Placeholder:
    """One argument reference: explicit 1-based position or name (else the next argument), its kind."""

    position: int | None
    name: str | None
    kind: str  # string, integer, float, char, other
    conversion: str = "s"
    spec: str = ""
    length: str = ""


@dataclass(frozen=True)
class _Verbatim:
    """Source text that must be copied unchanged (an ICU plural/select block)."""

    text: str


Token = str | Placeholder | _Verbatim


def detect_printf(text: str) -> str:
    """The placeholder style a text appears to use, or "" when it holds none."""
    if re.search(r"%(?:[1-9]\d*\$)?[-+0#']*+\d*+(?:\.\d+)?(?:hh|h|ll|l|q|L|z|t|j)?@", text):
        return "objc"
    if re.search(r"%\([^()]*+\)[-+0#]*+\d*+(?:\.\d+)?[diouxXeEfFgGcrsa]", text):
        return "python"
    if any(isinstance(token, Placeholder) for token in _parse_printf(text, "php")):
        return "php"
    if any(isinstance(token, (Placeholder, _Verbatim)) for token in _parse_icu(text)):
        return "icu"
    return ""


def placeholders(text: str, style: str) -> list[Placeholder]:
    """The argument references of a text in a given style."""
    if style in _PRINTF_PATTERNS:  # without the literal runs the checks never read (a quarter of their time)
        if "%" not in text:
            return []
        return [token for _, token in _printf_directives(text, style) if isinstance(token, Placeholder)]
    return [token for token in tokenise(text, style) if isinstance(token, Placeholder)]


def directive_texts(text: str, style: str) -> list[str]:
    """The `%` directives of a printf-style text as written (`%%` too): two texts with the same ones, in any
    order, have the same placeholders, which a comparison can tell without parsing them."""
    return _DIRECTIVE_TEXTS[style].findall(text) if "%" in text else []


def convert_printf(text: str, source_style: str, target_style: str) -> str:
    """The text with its placeholders (and escaped literals) rewritten from one style into another."""
    if not text or source_style == target_style or source_style not in STYLES or target_style not in STYLES:
        return text
    tokens = tokenise(text, source_style)
    if not any(isinstance(token, (Placeholder, _Verbatim)) for token in tokens) and "%" not in text and "'" not in text:
        return text
    return render(tokens, target_style, explicit=source_style == "icu")


def tokenise(text: str, style: str) -> list[Token]:
    """Literal runs (unescaped) and placeholders of a text in a style."""
    return _parse_icu(text) if style == "icu" else _parse_printf(text, style)


def _parse_printf(text: str, style: str) -> list[Token]:
    """Split a printf-style text; `%%` becomes a literal percent, java's `%n` a newline."""
    tokens: list[Token] = []
    position = 0
    for match, token in _printf_directives(text, style):
        tokens.append(text[position:match.start()])
        position = match.end()
        tokens.append(token)
    tokens.append(text[position:])
    return _merge_literals(tokens)


def _printf_directives(text: str, style: str) -> Iterator[tuple[re.Match[str], str | Placeholder]]:
    """Each `%` directive of a printf-style text: its match, and what it stands for (a placeholder, or the
    literal `%` of `%%`, the newline of java's `%n`)."""
    for match in _PRINTF_PATTERNS[style].finditer(text):
        conversion = match.group("conv")
        if conversion == "%":
            yield match, "%"
        elif conversion == "n" and style == "java":
            yield match, "\n"
        else:
            groups = match.groupdict()
            number = groups.get("pos")
            yield match, Placeholder(
                position=int(number) if number else None,
                name=groups.get("name"),
                kind=_KINDS.get(conversion, "other"),
                conversion=conversion,
                spec=groups.get("spec") or "",
                length=groups.get("len") or "",
            )


def _parse_icu(text: str) -> list[Token]:
    """Split an ICU MessageFormat text: quoted literals unquoted, simple arguments as placeholders."""
    tokens: list[Token] = []
    literal: list[str] = []
    position, length = 0, len(text)
    while position < length:
        char = text[position]
        if char == "'":
            position = _read_icu_quote(text, position, literal)
        elif char == "{":
            end = matching_brace(text, position)
            if end is None:  # unbalanced: keep as text rather than fail an export
                literal.append(text[position:])
                break
            tokens.append("".join(literal))
            literal = []
            tokens.append(_icu_argument(text[position:end + 1]))
            position = end + 1
        else:
            literal.append(char)
            position += 1
    tokens.append("".join(literal))
    return _merge_literals(tokens)


def _read_icu_quote(text: str, position: int, literal: list[str]) -> int:
    """Consume an apostrophe at position (ICU DOUBLE_OPTIONAL rules); returns the next position."""
    following = text[position + 1:position + 2]
    if following == "'":
        literal.append("'")
        return position + 2
    if not following or following not in SYNTAX_CHARS:
        literal.append("'")
        return position + 1
    position += 1
    while position < len(text):
        if text[position] == "'":
            if text[position + 1:position + 2] == "'":
                literal.append("'")
                position += 2
                continue
            return position + 1
        literal.append(text[position])
        position += 1
    return position


def _icu_argument(source: str) -> Token:
    """A `{...}` block as a placeholder, or verbatim when it is a plural/select or unrecognised."""
    match = _ICU_ARGUMENT.fullmatch(source)
    if not match or (match.group("type") or "").lower() in _ICU_COMPLEX_TYPES:
        return _Verbatim(source)
    argument, kind_name, style = match.group("arg"), (match.group("type") or "").lower(), match.group("style")
    if kind_name == "number":
        kind = "integer" if (style or "").strip().lower() == "integer" else "float"
    else:
        kind = "string"
    is_number = argument.isdigit()
    return Placeholder(
        position=int(argument) + 1 if is_number else None,
        name=None if is_number else argument,
        kind=kind,
        conversion={"integer": "d", "float": "f"}.get(kind, "s"),
    )


def _merge_literals(tokens: list[Token]) -> list[Token]:
    """Adjacent literal strings joined, empty ones dropped."""
    merged: list[Token] = []
    for token in tokens:
        if isinstance(token, str):
            if not token:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += token
                continue
        merged.append(token)
    return merged


def render(tokens: list[Token], style: str, explicit: bool = False) -> str:
    """Tokens written in a style; `explicit` forces positional printf output (arguments were numbered)."""
    numbers = _argument_numbers(tokens)
    has_positions = explicit or any(
        isinstance(token, Placeholder) and (token.position or token.name is not None) for token in tokens
    )
    in_order = numbers == list(range(1, len(numbers) + 1))
    parts: list[str] = []
    for token, number in _with_numbers(tokens, numbers):
        if isinstance(token, str):
            parts.append(_escape_literal(token, style))
        elif isinstance(token, _Verbatim):
            parts.append(token.text)
        elif style == "icu":
            parts.append(_render_icu(token, number))
        else:
            parts.append(_render_printf(token, number, style, has_positions, in_order))
    return "".join(parts)


def _argument_numbers(tokens: list[Token]) -> list[int]:
    """The 1-based argument number of each placeholder: explicit, by name (first appearance) or sequential."""
    numbers: list[int] = []
    names: dict[str, int] = {}
    sequential = 0
    for token in tokens:
        if not isinstance(token, Placeholder):
            continue
        if token.position is not None:
            numbers.append(token.position)
        elif token.name is not None and token.name.isdigit():
            numbers.append(int(token.name))  # python %(2)s written for a positional %2$s
        elif token.name is not None:
            numbers.append(names.setdefault(token.name, len(names) + 1))
        else:
            sequential += 1
            numbers.append(sequential)
    return numbers


def _with_numbers(tokens: list[Token], numbers: list[int]):
    """Pairs of (token, its argument number or 0 for non-placeholders)."""
    remaining = iter(numbers)
    for token in tokens:
        yield token, next(remaining) if isinstance(token, Placeholder) else 0


def _render_printf(token: Placeholder, number: int, style: str, positional: bool, in_order: bool) -> str:
    """One placeholder as a printf directive of the target style."""
    conversion = _target_conversion(token, style)
    length = token.length if style == "objc" else ""
    if style == "python":
        if token.name is not None and not token.name.isdigit():
            return f"%({token.name}){token.spec}{conversion}"
        if positional and not in_order:
            return f"%({number}){token.spec}{conversion}"
        return f"%{token.spec}{conversion}"
    prefix = f"{number}$" if positional else ""
    return f"%{prefix}{token.spec}{length}{conversion}"


def _target_conversion(token: Placeholder, style: str) -> str:
    """The conversion character for the placeholder's kind in the target printf style."""
    kept = _KEPT_CONVERSIONS[style]
    if token.kind in ("integer", "float"):
        return token.conversion if token.conversion in kept[token.kind] else ("d" if token.kind == "integer" else "f")
    if token.kind == "char":
        return "c"
    if style == "python" and token.conversion == "r":
        return "r"
    return _STRING_CONVERSION[style]


def _render_icu(token: Placeholder, number: int) -> str:
    """One placeholder as an ICU argument."""
    argument = token.name if token.name is not None and not token.name.isdigit() else str(number - 1)
    if token.kind == "integer":
        return "{" + argument + ", number, integer}"
    if token.kind == "float":
        return "{" + argument + ", number}"
    return "{" + argument + "}"


def _escape_literal(text: str, style: str) -> str:
    """Literal text escaped for the style: `%` doubled for printf, braces quoted for ICU."""
    if style != "icu":
        return text.replace("%", "%%")
    out: list[str] = []
    for position, char in enumerate(text):
        following = text[position + 1:position + 2]
        # An apostrophe is doubled when ICU could read it as opening a quote (also at the end of the run,
        # where a placeholder's brace may follow).
        if char == "'" and (not following or following == "'" or following in SYNTAX_CHARS):
            out.append("''")
        elif char in "{}":
            out.append(f"'{char}'")
        else:
            out.append(char)
    return "".join(out)
