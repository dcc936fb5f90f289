"""Apple `.strings` files: `"key" = "value";` pairs with C comments.

Reading: UTF-8, or UTF-16/32 with a BOM (UTF-16 without one is refused: Foundation cannot tell it
either). Comments since the previous entry become the entry's notes, except Loco's banner and its
`loco:<id>` lines. Keys and values may be quoted (with `\\"`, `\\\\`, `\\n`, `\\t`, `\\r`, `\\0`,
`\\U`/`\\u` + 4 hex digits, octal escapes) or bare words; `"key";` alone means the value is the key.
A unit whose text holds Objective-C placeholders (`%@`, `%1$@`, `%lld`) gets printf style objc.

Writing: UTF-8 (or the requested charset), Loco's banner as a block comment, then for each
translated unit its notes as `/* ... */` and `"key" = "value";`. Untranslated units are left out
(the app falls back to the development language); a plural unit arrives as its singular and plural-form
units, each an entry of its own (pipeline.plural_forms_apart: the format has no plural syntax).
"""
from __future__ import annotations

import re
from itertools import takewhile

from ..banner import block_comment
from ..catalogue import Catalogue, Translation
from ..document import ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..printf import detect_printf
from ..reading import QUOTE_OR_BACKSLASH, CatalogueBuilder, ForwardLines
from .text import decode_text

_BARE_WORD = re.compile(r"[A-Za-z0-9_.$:/\-]+")
_LOCO_ID = re.compile(r"^loco:[0-9a-f]{24}$")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_WRITE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}
_NEEDS_ESCAPE = re.compile(r'[\\"\n\t\r\0]')


class _Scanner:
    """A cursor over the text that knows its line number and reads the tokens of the grammar."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.comments: list[str] = []
        self.lines = ForwardLines(text)

    @property
    def line(self) -> int:
        """1-based line of the cursor."""
        return self.lines.at(self.position)

    def fail(self, message: str) -> ParseError:
        """A ParseError at the cursor's line."""
        return ParseError(message, self.line)

    def skip_space(self) -> None:
        """Skip whitespace and comments, collecting comment texts."""
        text = self.text
        while self.position < len(text):
            char = text[self.position]
            if char.isspace():
                self.position += 1
            elif text.startswith("/*", self.position):
                end = text.find("*/", self.position + 2)
                if end < 0:
                    raise self.fail("comment opened with /* is never closed")
                self.comments.append(text[self.position + 2:end])
                self.position = end + 2
            elif text.startswith("//", self.position):
                end = text.find("\n", self.position)
                end = len(text) if end < 0 else end
                self.comments.append(text[self.position + 2:end])
                self.position = end
            else:
                return

    def at_end(self) -> bool:
        """Whether only whitespace and comments remain."""
        self.skip_space()
        return self.position >= len(self.text)

    def peek(self) -> str:
        """The next significant character ("" at the end)."""
        self.skip_space()
        return self.text[self.position:self.position + 1]

    def expect(self, char: str, what: str) -> None:
        """Consume `char` or fail saying what was expected after what."""
        before = self.position  # an error points where the missing character belongs
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the file"
            raise ParseError(f"expected {char!r} {what}, found {shown}", self.text.count("\n", 0, before) + 1)
        self.position += 1

    def string(self, what: str) -> str:
        """A quoted string or a bare word."""
        char = self.peek()
        if char == '"':
            return self._quoted()
        match = _BARE_WORD.match(self.text, self.position)
        if not match:
            shown = repr(char) if char else "the end of the file"
            raise self.fail(f"expected {what} (a quoted string), found {shown}")
        self.position = match.end()
        return match.group(0)

    def _quoted(self) -> str:
        """The quoted string at the cursor, unescaped (its line is counted only for an error: counting it for
        every string made a file of many short strings quadratic)."""
        text, position = self.text, self.position + 1
        parts: list[str] = []
        while True:
            end = _next_special(text, position)
            if end < 0:
                raise ParseError("string opened with \" is never closed", self.line)
            parts.append(text[position:end])
            if text[end] == '"':
                self.position = end + 1
                return "".join(parts)
            escaped, position = _unescape(text, end + 1)
            parts.append(escaped)


def _next_special(text: str, position: int) -> int:
    """Index of the next `"` or backslash from position, -1 when there is none (one search that stops at the
    first of the two: finding each separately scanned to the closing quote after every escape)."""
    match = QUOTE_OR_BACKSLASH.search(text, position)
    return -1 if match is None else match.start()


def _unescape(text: str, position: int) -> tuple[str, int]:
    """The character(s) an escape starting after its backslash stands for, and where reading resumes."""
    char = text[position:position + 1]
    if char in ("U", "u"):
        digits = text[position + 1:position + 5]
        if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
            code = int(digits, 16)
            after = position + 5
            low = _low_surrogate(text, after) if 0xD800 <= code < 0xDC00 else None
            if low is not None:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), after + 6
            return chr(code), after
        return char, position + 1
    if char in "01234567" and char:
        digits = char + "".join(takewhile("01234567".__contains__, text[position + 1:position + 3]))
        return chr(int(digits, 8)), position + len(digits)
    return _SIMPLE_ESCAPES.get(char, char), position + 1


def _low_surrogate(text: str, position: int) -> int | None:
    """The low surrogate of a `\\UDCxx` escape at position, if one follows."""
    match = re.match(r"\\[Uu]([dD][c-fC-F][0-9a-fA-F]{2})", text[position:position + 6])
    return int(match.group(1), 16) if match else None


def _notes(comments: list[str]) -> str:
    """Translator notes from the comments before an entry, without banners, Loco IDs and ` * ` gutters."""
    lines: list[str] = []
    for comment in comments:
        body = [re.sub(r"^\s*\*(?: |$)", "", line).strip() for line in comment.strip().splitlines()]
        if body and body[0].startswith("Loco ") and " export" in body[0]:
            continue  # Loco's banner
        lines.extend(line for line in body if line and not _LOCO_ID.match(line))
    return "\n".join(lines)


def parse_strings(text: str) -> list[tuple[str, str, str, int]]:
    """(key, value, notes, line) for every entry of a .strings text; ParseError names the line."""
    scanner = _Scanner(text)
    entries: list[tuple[str, str, str, int]] = []
    while not scanner.at_end():
        notes = _notes(scanner.comments)
        scanner.comments = []
        line = scanner.line
        key = scanner.string("a key")
        if scanner.peek() == ";":
            value = key  # `"key";` is shorthand for `"key" = "key";`
        else:
            scanner.expect("=", f"after the key {key!r}")
            value = scanner.string(f"the value of {key!r}")
        scanner.expect(";", f"after the value of {key!r}")
        entries.append((key, value, notes, line))
    return entries


def read_strings(data: bytes, options: ReadOptions) -> Catalogue:
    """A .strings file as a catalogue of the file's locale."""
    builder = CatalogueBuilder(options, "id")
    for key, value, notes, _line in parse_strings(decode_text(data, ".strings file")):
        printf = "objc" if detect_printf(value) == "objc" else ""
        builder.add(key, Translation(text=value), notes=notes, printf=printf)
    return builder.build()


def quote(text: str) -> str:
    """A string literal as .strings (and old-style plists) spell it."""
    if _NEEDS_ESCAPE.search(text):
        text = _NEEDS_ESCAPE.sub(lambda match: _WRITE_ESCAPES[match.group(0)], text)
    return f'"{text}"'


def note_comment(notes: str) -> str:
    """Notes as a block comment that cannot be closed early by the text."""
    return "/* " + notes.replace("*/", "* /") + " */\n"


def write_strings(doc: ExportDocument) -> str:
    """The target locale's translated units as `"key" = "value";` lines."""
    parts = [block_comment(doc.banner, "/*") + "\n"] if doc.banner else []
    locale = doc.locale or doc.source_locale
    for entry in doc.entries:
        text = entry.translation(locale).text  # "" in a template: the pipeline empties source texts
        if text is None:
            continue
        if entry.unit.notes and not doc.options.no_comments:
            parts.append(note_comment(entry.unit.notes))
        parts.append(f"{quote(entry.key)} = {quote(text)};\n\n")
    return "".join(parts)
