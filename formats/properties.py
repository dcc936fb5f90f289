"""Java `.properties`, read and written the way `java.util.Properties.load` understands them.

Writing: `key = value` lines; ISO-8859-1 by default with every non-ASCII character as `\\uXXXX` (so the
file reads the same as Latin-1 and as UTF-8: `Properties.load(InputStream)` and Java 9+
`PropertyResourceBundle` agree); with a Unicode `charset` characters are written as they are. Notes are
`#` lines right above their key, untranslated units are left out (a missing key is what untranslated
means to a ResourceBundle). A value holding MessageFormat arguments (`{0}`, `{1,number}`) has its
apostrophes doubled (`''`) as MessageFormat requires; plural units are written as one ICU plural argument
`{0, plural, one{...} other{...}}`.

Reading: UTF-8 when the bytes are valid UTF-8, else ISO-8859-1; `=`, `:` or whitespace separators; `\\`
continuation lines; `#`/`!` comment blocks right above a key become its notes; `\\uXXXX` (surrogate pairs
joined) and the other escapes; a malformed `\\u` escape is kept as written. Apostrophes doubled in values
with arguments are undoubled, and a value that is exactly one ICU plural argument is a plural unit.
"""
from __future__ import annotations

import re

from .catalogue import Catalogue, Translation
from .document import Entry, ExportDocument
from .errors import ParseError
from .icu import parse_plural, plural_message
from .options import ReadOptions
from .reading import CatalogueBuilder, check_line_lengths, plural_translation

_UNICODE = ("utf-8", "utf-16", "utf-32", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
# A MessageFormat argument: `{0}`, `{1,number,integer}`, `{0, plural, ...}`.
_ARGUMENT = re.compile(r"\{\s*\d+\s*[,}]")
_PLURAL_ARGUMENT = "0"
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|u[0-9A-Fa-f]{0,3}(?![0-9A-Fa-f])|.)", re.S)
_NAMED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_U_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_WHITESPACE = " \t\f"


# --- reading ---------------------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    """UTF-8 when the bytes are valid UTF-8 (as Java 9+ resource bundles read them), else ISO-8859-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("iso-8859-1")


def _unescape_one(match: re.Match[str]) -> str:
    """The character an escape sequence stands for."""
    body = match.group(1)
    if body[0] == "u":
        return chr(int(body[1:], 16)) if len(body) == 5 else match.group(0)
    return _NAMED.get(body, body)


def unescape(text: str) -> str:
    """Text with properties escapes resolved and UTF-16 surrogate pairs joined."""
    if "\\" not in text:
        return text
    text = _ESCAPE.sub(_unescape_one, text)
    if _SURROGATE.search(text):  # pairs joined; a lone one stays, for read_file to refuse (never replaced)
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def _continued(line: str) -> bool:
    """Whether a line ends with an odd number of backslashes (the next line continues it)."""
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def logical_lines(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, kind, content): kind "entry" with continuations joined, "comment", or "blank"."""
    result: list[tuple[int, str, str]] = []
    physical = re.split(r"\r\n|\r|\n", text)
    index = 0
    while index < len(physical):
        number, line = index + 1, physical[index].lstrip(_WHITESPACE)
        index += 1
        if not line:
            result.append((number, "blank", ""))
            continue
        if line[0] in "#!":
            result.append((number, "comment", line[1:].strip()))
            continue
        parts = []
        while _continued(line) and index < len(physical):
            parts.append(line[:-1])
            line = physical[index].lstrip(_WHITESPACE)
            index += 1
        parts.append(line[:-1] if _continued(line) else line)
        result.append((number, "entry", "".join(parts)))
    return result


def split_entry(line: str) -> tuple[str, str]:
    """A logical line's raw (still escaped) key and value, per the separators Properties.load accepts."""
    position, length = 0, len(line)
    while position < length:
        char = line[position]
        if char == "\\":
            position += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        position += 1
    key = line[:position]
    rest = line[position:].lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":") and (position >= length or line[position] in _WHITESPACE + "=:"):
        rest = rest[1:].lstrip(_WHITESPACE)
    return key, rest


def has_arguments(text: str) -> bool:
    """Whether a text holds MessageFormat arguments (then apostrophes are doubled in the file)."""
    return "{" in text and _ARGUMENT.search(text) is not None


def read_properties(data: bytes, options: ReadOptions) -> Catalogue:
    """Units from a .properties file: one per key, in file order."""
    text = _decode(data)
    check_line_lengths(text)
    builder = CatalogueBuilder(options, "id")
    comments: list[str] = []
    seen: dict[str, int] = {}
    for number, kind, content in logical_lines(text):
        if kind == "comment":
            comments.append(_U_ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), content))
            continue
        if kind == "blank":
            comments = []
            continue
        raw_key, raw_value = split_entry(content)
        key, value = unescape(raw_key), unescape(raw_value)
        if key in seen:
            raise ParseError(f"duplicate key {key!r} (first at line {seen[key]})", number)
        seen[key] = number
        _add(builder, key, value, "\n".join(comments))
        comments = []
    return builder.build()


def _add(builder: CatalogueBuilder, key: str, value: str, notes: str) -> None:
    """One key: a plural unit when the value is one ICU plural argument, else a text."""
    if has_arguments(value):
        value = value.replace("''", "'")
    plural = parse_plural(value) if "plural" in value else None
    if plural is not None:
        builder.add(key, plural_translation(plural[1], builder.locale), notes=notes, plural=True)
    else:
        builder.add(key, Translation(text=value), notes=notes)


# --- writing ---------------------------------------------------------------------------------------

_KEY_SPECIAL = re.compile(r"[\\=:#! \t\n\r\f]")
_VALUE_SPECIAL = re.compile(r"[\\\t\n\r\f]|^ ")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WRITE_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}


def _u_escape(char: str) -> str:
    """`\\uXXXX` for one character (two, as a UTF-16 surrogate pair, beyond the BMP)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"


def _special(match: re.Match[str]) -> str:
    """The escape of a character that has a meaning in keys or values."""
    char = match.group(0)
    return _WRITE_NAMED.get(char) or "\\" + char


def escape(text: str, is_key: bool, ascii_only: bool) -> str:
    """A key or value as written in the file."""
    text = (_KEY_SPECIAL if is_key else _VALUE_SPECIAL).sub(_special, text)
    text = _CONTROL.sub(lambda match: _u_escape(match.group(0)), text)
    if ascii_only:
        text = _NON_ASCII.sub(lambda match: _u_escape(match.group(0)), text)
    return text


def _comment(line: str, ascii_only: bool) -> str:
    """A note line as a `#` comment (non-ASCII as `\\uXXXX` when the file is ASCII, undone on reading)."""
    line = _CONTROL.sub(lambda match: _u_escape(match.group(0)), f"# {line}".rstrip())
    return _NON_ASCII.sub(lambda match: _u_escape(match.group(0)), line) if ascii_only else line


def message_format(text: str) -> str:
    """A text as a MessageFormat pattern: apostrophes doubled when it has arguments."""
    return text.replace("'", "''") if has_arguments(text) else text


def entry_text(entry: Entry, doc: ExportDocument) -> str | None:
    """The text a unit is written with: its translation, plural forms as ICU, None when untranslated."""
    locale = doc.locale
    if doc.template:
        return ""
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        return message_format(plural_message(_PLURAL_ARGUMENT, forms)) if forms else None
    translation = entry.translations.get(locale) if locale else None
    if translation is None or translation.text is None:
        return None
    return message_format(translation.text)


def write_properties(doc: ExportDocument) -> str:
    """The .properties text (the pipeline encodes it; non-ASCII is escaped unless the charset is Unicode)."""
    ascii_only = doc.charset not in _UNICODE
    lines = [f"# {line}".rstrip() for line in doc.banner]
    if lines:
        lines.append("")
    for entry in doc.entries:
        text = entry_text(entry, doc)
        if text is None:
            continue
        if entry.unit.notes and not doc.options.no_comments:
            lines.extend(_comment(line, ascii_only) for line in entry.unit.notes.splitlines())
        lines.append(f"{escape(entry.key, True, ascii_only)} = {escape(text, False, ascii_only)}")
    return "\n".join(lines) + "\n"
