"""ICU resource bundle source files (`.txt`, the input of genrb).

    // comment
    fr {
        hello { "Bonjour" }
        menu { file { "Fichier" } }          // nested tables = dotted keys (menu.file)
        days { "lundi", "mardi" }            // arrays = index keys (days.0)
        count:int { 5 }                      // non-text resources are read and ignored
    }

Reading: the top table's name is the locale (`fr_CA` -> fr-CA; `root` = the requested or source
locale); `//` and `/* */` comments right before a string resource become its notes; quoted strings
with `\\uXXXX`, `\\UXXXXXXXX`, `\\xhh`, octal and C escapes, adjacent strings concatenated; unquoted
strings and keys; typed resources (`:string`, `:table`, `:array`, `:int`, `:intvector`, `:bin`,
`:alias`, `:import`, `:table(nofallback)`).

Writing: UTF-8 with a BOM (so genrb never guesses the charset), the banner as `//` lines, notes as
`//` lines above their key, strings quoted with `\\"`, `\\\\`, `\\n`, `\\t`, `\\r` and `\\uXXXX` for
other control characters.
"""
from __future__ import annotations

import re
from itertools import takewhile
from typing import Any

from ..banner import line_comments
from ..catalogue import Catalogue
from ..document import ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..reading import QUOTE_OR_BACKSLASH, ForwardLines
from .tree import Opaque, bundle_name, catalogue_of_tree, locale_of_bundle, tree_of_document

_UNQUOTED = re.compile(r"[^\s{}:,\"/]+")
_C_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", "e": "\x1b"}
_HEX = "0123456789abcdefABCDEF"
_BARE_KEY = re.compile(r"[A-Za-z0-9_\-]+")
_TEXT_TYPES = {"string", "table", "array", ""}


class _Parser:
    """Recursive-descent reader of the genrb syntax; errors name the line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.comments: list[str] = []
        self.notes: dict[str, str] = {}
        self.lines = ForwardLines(text)

    @property
    def line(self) -> int:
        """1-based line of the cursor."""
        return self.lines.at(self.position)

    def fail(self, message: str) -> ParseError:
        """A ParseError at the cursor."""
        return ParseError(message, self.line)

    def skip(self) -> None:
        """Skip whitespace and comments, remembering the comments."""
        text = self.text
        while self.position < len(text):
            if text[self.position].isspace():
                self.position += 1
            elif text.startswith("//", self.position):
                end = text.find("\n", self.position)
                end = len(text) if end < 0 else end
                self.comments.append(text[self.position + 2:end].strip())
                self.position = end
            elif text.startswith("/*", self.position):
                end = text.find("*/", self.position + 2)
                if end < 0:
                    raise self.fail("comment opened with /* is never closed")
                body = text[self.position + 2:end]
                self.comments.extend(re.sub(r"^\s*\*(?: |$)", "", line).strip() for line in body.splitlines())
                self.position = end + 2
            else:
                return

    def peek(self) -> str:
        """The next significant character ("" at the end)."""
        self.skip()
        return self.text[self.position:self.position + 1]

    def expect(self, char: str, context: str) -> None:
        """Consume `char` or fail."""
        before = self.position  # an error points where the missing character belongs
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the file"
            raise ParseError(f"expected {char!r} {context}, found {shown}", self.text.count("\n", 0, before) + 1)
        self.position += 1

    def word(self, what: str) -> str:
        """A quoted string or an unquoted word."""
        if self.peek() == '"':
            return self.quoted()
        match = _UNQUOTED.match(self.text, self.position)
        if not match:
            found = self.peek()
            raise self.fail(f"expected {what}, found {found!r}" if found else f"expected {what}, found the end of the file")
        self.position = match.end()
        return match.group(0)

    def quoted(self) -> str:
        """A quoted string starting at the cursor, unescaped."""
        text, position = self.text, self.position + 1
        parts: list[str] = []
        while True:
            special = QUOTE_OR_BACKSLASH.search(text, position)
            if special is None:
                raise ParseError('string opened with " is never closed', self.line)
            end = special.start()
            parts.append(text[position:end])
            if text[end] == '"':
                self.position = end + 1
                return "".join(parts)
            char, position = unescape(text, end + 1, self)
            parts.append(char)

    def take_notes(self) -> str:
        """The comments read since the last resource, as notes (the banner excluded)."""
        lines = [line for line in self.comments if line]
        self.comments = []
        if lines and lines[0].startswith("Loco ") and " export" in lines[0]:
            return ""
        return "\n".join(lines)

    # --- grammar ---

    def bundle(self) -> tuple[str, dict[str, Any]]:
        """`name[:table] { ... }` and nothing after it."""
        name = self.word("the bundle name (e.g. root or fr)")
        kind = self.type_suffix()
        if kind not in ("", "table"):
            raise self.fail(f"the top-level resource must be a table, not :{kind}")
        self.take_notes()
        self.expect("{", f"after the bundle name {name!r}")
        tree = self.table_body(name_prefix="")
        self.expect("}", f"to close the bundle {name!r}")
        if self.peek():
            raise self.fail("unexpected text after the end of the bundle")
        return name, tree

    def type_suffix(self) -> str:
        """`:type` or `:type(option)` after a key, or ""."""
        if self.peek() != ":":
            return ""
        self.position += 1
        match = re.compile(r"\s*([A-Za-z0-9]+)(\([^)]*\))?").match(self.text, self.position)
        if not match:
            raise self.fail("expected a resource type after ':'")
        self.position = match.end()
        return match.group(1).lower()

    def table_body(self, name_prefix: str) -> dict[str, Any]:
        """Resources `key[:type] { value }` until the closing brace."""
        table: dict[str, Any] = {}
        while self.peek() not in ("}", ""):
            key = self.word("a resource key")
            kind = self.type_suffix()
            notes = self.take_notes()
            line = self.line
            self.expect("{", f"after the key {key!r}")
            value = self.value(kind, f"{name_prefix}{key}.")
            self.expect("}", f"to close the resource {key!r} opened on line {line}")
            if key in table:
                raise ParseError(f"duplicate key {key!r}", line)
            table[key] = value
            if notes and isinstance(value, str):
                self.notes[name_prefix + key] = notes
        return table

    def value(self, kind: str, prefix: str) -> Any:
        """The value between braces, by declared type or by its shape."""
        if kind in ("int", "integer"):
            return Opaque("int", self.word("an integer"))
        if kind in ("intvector", "bin", "binary", "alias", "import", "include", "process"):
            return Opaque(kind, self.raw_until_brace())
        if kind not in _TEXT_TYPES:
            raise self.fail(f"unknown resource type :{kind}")
        first = self.peek()
        if first == "}":
            return "" if kind == "string" else ({} if kind != "array" else [])
        if first == "{":
            return self.array_items(prefix)
        if kind == "table":
            return self.table_body(prefix)
        start = self.position
        word = self.word("a string or a key")
        following = self.peek()
        if kind != "array" and following in ("{", ":"):
            self.position = start  # a key: this is a table
            return self.table_body(prefix)
        strings = [self.concatenated(word)]
        is_array = kind == "array"
        while self.peek() == ",":
            is_array = True
            self.position += 1
            if self.peek() == "}":
                break
            strings.append(self.concatenated(self.word("an array item")))
        return strings if is_array else strings[0]

    def concatenated(self, first: str) -> str:
        """A string and the quoted strings written right after it (genrb joins them)."""
        parts = [first]
        while self.peek() == '"':
            parts.append(self.quoted())
        return "".join(parts)

    def array_items(self, prefix: str) -> list[Any]:
        """An array of braced items: `{ "a" } { "b" }`."""
        items: list[Any] = []
        while self.peek() == "{":
            line = self.line
            self.position += 1
            items.append(self.value("", f"{prefix}{len(items)}."))
            self.expect("}", f"to close the array item opened on line {line}")
            if self.peek() == ",":
                self.position += 1
        return items

    def raw_until_brace(self) -> str:
        """The raw text of a non-text resource up to its closing brace."""
        end = self.text.find("}", self.position)
        if end < 0:
            raise self.fail("resource is never closed with '}'")
        raw = self.text[self.position:end].strip()
        self.position = end
        return raw


def unescape(text: str, position: int, parser: _Parser) -> tuple[str, int]:
    """The character(s) of the escape after a backslash at position-1, and where reading resumes."""
    char = text[position:position + 1]
    if not char:
        raise parser.fail("backslash at the end of the file")
    if char in "uUx":
        digits, after = _hex_digits(text, position + 1, char)
        if digits is None:
            parser.position = position
            raise parser.fail(f"invalid escape \\{text[position:position + 9].split()[0]}")
        code = int(digits, 16)
        if 0xD800 <= code < 0xDC00 and text[after:after + 2] == "\\u":
            low = text[after + 2:after + 6]
            if len(low) == 4 and all(c in _HEX for c in low) and 0xDC00 <= int(low, 16) < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)), after + 6
        if code > 0x10FFFF:
            parser.position = position
            raise parser.fail(f"escape \\{char}{digits} is beyond Unicode")
        return chr(code), after
    if char in "01234567":
        digits = char + "".join(takewhile("01234567".__contains__, text[position + 1:position + 3]))
        return chr(int(digits, 8)), position + len(digits)
    return _C_ESCAPES.get(char, char), position + 1


def _hex_digits(text: str, start: int, char: str) -> tuple[str | None, int]:
    """The hex digits of a \\u (4), \\U (8), \\x (1-2) or \\x{...} escape and where they end; None if invalid."""
    if char == "x" and text[start:start + 1] == "{":
        end = text.find("}", start)
        digits = text[start + 1:end] if end > 0 else ""
        return (digits if digits and all(c in _HEX for c in digits) else None), end + 1
    match = re.compile(f"[0-9a-fA-F]{{{'1,2' if char == 'x' else 4 if char == 'u' else 8}}}").match(text, start)
    return (match.group(0), match.end()) if match else (None, start)


def read_txt(data: bytes, options: ReadOptions) -> Catalogue:
    """A genrb source file as units of its bundle's locale."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        data = data.decode("utf-16").encode("utf-8")
    elif b"\x00" in data[:4096]:
        raise ParseError("ICU resource source looks like UTF-16 without a byte-order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ParseError(f"ICU resource source is not valid UTF-8 (byte {error.start})",
                          data.count(b"\n", 0, error.start) + 1) from None
    parser = _Parser(text)
    name, tree = parser.bundle()
    return catalogue_of_tree(tree, options, locale_of_bundle(name), parser.notes)


def quote(text: str) -> str:
    """A genrb string literal."""
    out = ['"']
    for char in text:
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _key(key: str) -> str:
    """A key bare when it is a plain word, else quoted."""
    return key if _BARE_KEY.fullmatch(key) else quote(key)


def _write_table(table: dict[str, Any], notes: dict[str, str], prefix: str, indent: str, out: list[str]) -> None:
    """Lines of a table's resources."""
    for key, value in table.items():
        path = prefix + key
        if notes.get(path):
            out.extend(f"{indent}// {line}".rstrip() + "\n" for line in notes[path].splitlines())
        if isinstance(value, dict):
            out.append(f"{indent}{_key(key)} {{\n")
            _write_table(value, notes, path + ".", indent + "    ", out)
            out.append(f"{indent}}}\n")
        else:
            out.append(f"{indent}{_key(key)} {{ {quote(value)} }}\n")


def write_txt(doc: ExportDocument) -> str:
    """The exported locale as one genrb table named after it (`root` for a template)."""
    locale = doc.locale or doc.source_locale
    name = "root" if doc.template else bundle_name(locale)
    notes = {".".join(entry.path or (entry.key,)): entry.unit.notes for entry in doc.entries if entry.unit.notes}
    if doc.options.no_comments:
        notes = {}
    bom = "\ufeff" if doc.charset.replace("_", "-").lower().startswith("utf-8") else ""
    out = [bom, line_comments(doc.banner, "// ")] if doc.banner else [bom]
    out.append(f"{name} {{\n")
    _write_table(tree_of_document(doc), notes, "", "    ", out)
    out.append("}\n")
    return "".join(out)
