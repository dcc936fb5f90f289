"""The service's JSON codec, apart from any file format: tolerant reading, fast writing as Loco prints JSON.

`load_json` reads a file (UTF-8/16 by BOM, `//` and `/* */` comments, a key given twice kept last with a
warning, the nesting limit of limits.py); `dump_json` writes every JSON file and renders every API answer
(app/jsonio.py); `nesting_depth` checks request bodies (app/requests.py); `encode_marked` and `utf8_object`
are the fast paths of large flat objects.
"""
from __future__ import annotations

import json
import re
from itertools import compress
from json.encoder import encode_basestring as _encode_string
from typing import Any, Iterable

from limits import MAX_NESTING_DEPTH, describe

from .errors import LimitExceeded, ParseError
from .reading import duplicate_key_warning


# One left-to-right pass: an unterminated string or comment runs to the end of the text instead of being
# retried from every later quote or slash (which made hostile inputs such as '/*a' * n quadratic).
_COMMENT_OR_STRING = re.compile(r'("(?:[^"\\]++|\\.)*+"?)|//[^\n]*+|/\*(?:[^*]++|\*(?!/))*+(?:\*/)?', re.S)


def load_json(data: bytes, warnings: list[str] | None = None) -> Any:
    """Parsed JSON (UTF-8/16/32 by BOM), tolerating comments; ParseError names line and column.

    A key given twice in one object keeps its last value, as JavaScript does; `warnings` receives a line
    for each such key, naming it by its dotted path and line.
    """
    text = _decode(data)
    duplicates: list[bool] = []
    try:
        value = _parse(text, duplicates)
    except json.JSONDecodeError:
        try:
            text = _strip_comments(text)
            value = _parse(text, duplicates)
        except json.JSONDecodeError as error:
            raise ParseError(f"invalid JSON: {error.msg} (column {error.colno})", error.lineno) from None
    if nesting_depth(value) > MAX_NESTING_DEPTH:
        raise LimitExceeded(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels {describe('max_nesting_depth')}")
    if duplicates and warnings is not None:
        warnings.extend(_duplicate_key_warnings(text))
    return value


def _parse(text: str, duplicates: list[bool]) -> Any:
    """The parsed value; `duplicates` gets an item when some object holds a key twice."""
    def checked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            duplicates.append(True)
        return result

    try:
        return json.loads(text, object_pairs_hook=checked)
    except RecursionError:
        raise LimitExceeded(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels "
                            f"{describe('max_nesting_depth')}") from None


_TOKEN = re.compile(r'"(?:[^"\\\n]++|\\.)*+"|[{}\[\]:,\n]')


def _duplicate_key_warnings(text: str) -> list[str]:
    """A warning per key given twice in one object (a second pass, run only when the parse met one).

    Walks the tokens of the (already valid) text keeping, per open object, its path and the line of each
    key, and per open array its path and the index of the current item.
    """
    warnings: list[str] = []
    line = 1
    stack: list[list[Any]] = []  # per open container: [path, {key: line} or None for an array, key or index]
    last_string = ""
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == "\n":
            line += 1
        elif token[0] == '"':
            last_string = token
        elif token == ":":  # the string before a colon is a key of the innermost object
            frame, key = stack[-1], json.loads(last_string)
            if key in frame[1]:
                warnings.append(duplicate_key_warning(frame[0] + key, line, frame[1][key]))
            frame[1][key], frame[2] = line, key
        elif token in "{[":
            path = f"{stack[-1][0]}{stack[-1][2]}." if stack else ""
            stack.append([path, {} if token == "{" else None, 0])
        elif token in "}]":
            stack.pop()
        elif stack[-1][1] is None:  # a comma between array items
            stack[-1][2] += 1
    return warnings


def nesting_depth(value: Any) -> int:
    """How deep containers nest in a parsed JSON/YAML value (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_NESTING_DEPTH:
            return depth  # deep enough to refuse: no need to walk the rest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _decode(data: bytes) -> str:
    """JSON bytes as text."""
    codec = "utf-8"
    for bom, name in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            codec = name
            break
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1 if codec.startswith("utf-8") else None
        raise ParseError(f"JSON is not valid {codec.upper().removesuffix('-SIG')}", line) from None


def _strip_comments(text: str) -> str:
    """Text with `//` and `/* */` comments blanked out (newlines kept so line numbers stay right)."""
    def blank(match: re.Match[str]) -> str:
        return match.group(1) or "\n" * match.group(0).count("\n")

    return _COMMENT_OR_STRING.sub(blank, text)


def dump_json(value: Any, indent: str = "    ", colon: str = ": ", final_newline: bool = True) -> str:
    """JSON as Loco prints it: 4-space indents, non-ASCII and slashes unescaped, final newline.

    Same output as json.dumps(value, indent=4, ensure_ascii=False), but without the pure-Python indenting
    encoder (several times slower): large objects go through the C encoder whole, other values piece by piece.
    Other layouts (Xcode's two spaces and `" : "`) only change `indent`, `colon` and `final_newline`.
    """
    parts: list[str] = []
    dump_into(value, parts, "\n", indent, colon)
    if final_newline:
        parts.append("\n")
    return "".join(parts)


def dump_into(value: Any, parts: list[str], newline: str, indent: str, colon: str) -> None:
    """Append the pretty JSON of a value; `newline` carries the current indentation."""
    if isinstance(value, str):
        parts.append(_encode_string(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + indent
        if len(value) >= _WHOLE_OBJECT_ITEMS:
            whole = _dump_whole(value, newline, indent, colon)
            if whole is not None:
                parts.append(whole)
                return
        separator = "{"
        for key, item in value.items():
            if type(item) is str:  # the common leaf, written without a recursive call
                parts.append(f"{separator}{inner}{_encode_string(str(key))}{colon}{_encode_string(item)}")
            else:
                parts.append(separator + inner + _encode_string(str(key)) + colon)
                dump_into(item, parts, inner, indent, colon)
            separator = ","
        parts.append(newline + "}")
    elif isinstance(value, list):
        if not value:
            parts.append("[]")
            return
        inner = newline + indent
        separator = "["
        for item in value:
            parts.append(separator + inner)
            dump_into(item, parts, inner, indent, colon)
            separator = ","
        parts.append(newline + "]")
    else:
        parts.append(json.dumps(value))


# Objects with this many items or more are encoded whole by the C encoder (below, piece by piece is cheaper).
_WHOLE_OBJECT_ITEMS = 16
# Values the C encoder writes exactly as `dump_into` does (exact types: subclasses may print otherwise).
_PLAIN_VALUE_TYPES = frozenset({str, type(None), bool, int, float})
_CONTAINER_TYPES = frozenset({dict, list})
MARK = "\x00"  # stands for a nested value in the C encoder's output, where it reads "\u0000"
_ENCODED_MARK = _encode_string(MARK)
_encoders: dict[tuple[str, str], json.JSONEncoder] = {}


def _dump_whole(value: dict[Any, Any], newline: str, indent: str, colon: str) -> str | None:
    """A non-empty object laid out as `dump_into` does, through one call of the C encoder: nested objects
    and arrays are replaced by a mark, and written in its place afterwards. None when some key or value is
    of a type `dump_into` writes differently (non-string keys, str subclasses...) or a text holds the mark."""
    if set(map(type, value)) != {str}:
        return None
    types = set(map(type, value.values()))
    nested: list[Any] = []
    if not types <= _PLAIN_VALUE_TYPES:
        if not types <= _PLAIN_VALUE_TYPES | _CONTAINER_TYPES:
            return None
        # C-level passes only: which values are containers, those values, and a copy with marks instead.
        containers = list(map(_CONTAINER_TYPES.__contains__, map(type, value.values())))
        nested = list(compress(value.values(), containers))
        value = {**value, **dict.fromkeys(compress(value, containers), MARK)}
    return encode_marked(value, nested, newline, indent, colon)


def encode_marked(value: dict[str, Any], nested: list[Any], newline: str, indent: str, colon: str,
                   tail: str = "") -> str | None:
    """A non-empty object whose values are scalars or the mark, laid out as `dump_into` does (then `tail`), through
    one call of the C encoder; the marks are replaced by the pretty JSON of `nested`, in order. None when some
    key or text is the mark itself."""
    inner = newline + indent
    encoder = _encoders.get((inner, colon))
    if encoder is None:
        encoder = _encoders[(inner, colon)] = json.JSONEncoder(
            ensure_ascii=False, check_circular=False, separators=("," + inner, colon))
    encoded = encoder.encode(value)  # `{"key": "text",<inner>"key": ...}`, one large string: few copies of it
    if not nested:
        return f"{{{inner}{encoded[1:-1]}{newline}}}{tail}"
    # Inside an encoded string a quote is always escaped, so a quoted mark is a whole key or value: ours,
    # unless some key or text is the mark itself.
    pieces = encoded.split(_ENCODED_MARK)
    if len(pieces) != len(nested) + 1:
        return None
    pieces[0] = "{" + inner + pieces[0][1:]
    pieces[-1] = pieces[-1][:-1] + newline + "}" + tail
    written = [pieces[0]]
    for item, piece in zip(nested, pieces[1:]):
        parts: list[str] = []
        dump_into(item, parts, inner, indent, colon)
        written += parts
        written.append(piece)
    return "".join(written)


# Control characters JSON escapes; two of them end keys and pairs in `utf8_object` (the mark is a third).
_CONTROL_BYTES = bytes(range(32))
_KEY_END, _PAIR_END, _BYTE_MARK = "\x01", "\x02", MARK.encode()


def utf8_object(keys: list[str], values: list[str | None], nested: list[dict[str, str]]) -> bytes | None:
    """The UTF-8 bytes of the flat object of unique keys and texts (or marks for `nested`, in order) that
    `encode_marked` writes, made with a few passes over the whole instead of encoding each string: valid when
    no key or text holds a control character (escaped in JSON as `\\n`, `\\u0001`...), so that quotes and
    backslashes are the only characters to escape. None otherwise, or when a text cannot be UTF-8."""
    if None in values:  # null is no string
        return None
    try:
        data = _PAIR_END.join(map(_KEY_END.join, zip(keys, values))).encode()  # type: ignore[arg-type]
    except UnicodeEncodeError:  # a lone surrogate: the pipeline reports it
        return None
    separators = 2 * len(keys) - 1 + len(nested)
    if len(data) - len(data.translate(None, _CONTROL_BYTES)) != separators:  # a key or text holds one
        return None
    if b"\\" in data:
        data = data.replace(b"\\", b"\\\\")
    if b'"' in data:
        data = data.replace(b'"', b'\\"')
    data = b'{\n    "' + data.replace(_KEY_END.encode(), b'": "').replace(_PAIR_END.encode(), b'",\n    "') + b'"\n}\n'
    if not nested:
        return data
    pieces = data.split(b'"' + _BYTE_MARK + b'"')
    written = [pieces[0]]
    for item, piece in zip(nested, pieces[1:]):
        parts: list[str] = []
        dump_into(item, parts, "\n    ", "    ", ": ")
        try:
            written.append("".join(parts).encode())
        except UnicodeEncodeError:
            return None
        written.append(piece)
    return b"".join(written)
