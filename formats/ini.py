"""INI files: `key = "text"` lines, sections as key prefixes (`[menu]` + `open` = `menu.open`).

Writing: the banner as `;; ` lines, keys without a dot first, then one `[section]` per dotted prefix (the
key up to its last dot); values double-quoted, with `\\\\`, `\\"`, `\\$`, `\\n` and `\\r` escapes (tabs stay as
they are); a blank translation is `key = ""`, an untranslated one `key =`; plural forms as PHP arrays
`key[one] = "..."`; notes as `; ` lines above their key.

What each reader gets back (tests/formats/test_ini.py proves it for arbitrary keys and texts):
- PHP's `parse_ini_string`, normal scanner: every text exactly, except that a line break comes back as the two
  characters of its escape (`\\n`, `\\r`); the escaped `$` is what keeps `${...}` from being read as a variable.
- PHP's raw scanner and Python's `configparser` (strict, `interpolation=None`, `optionxform=str`): the text
  between the quotes as written, escapes included. A literal line break inside quotes, as Loco writes it,
  would make the raw scanner and configparser refuse the whole file.
- Gloss itself: every text exactly.
A text holding U+0000 cannot be written at all (PHP's scanner stops there): the export is refused (400).
Keys: INI has no quoting for keys, so a key the readers cannot hold is rewritten (`ini_key`), and two keys
that meet are a key collision like any other: characters PHP or configparser give a meaning to
(`=:;#[]\\"'?{}|&~!()^$`, white space, control characters) become `_`; a name (the part after the last dot)
that PHP reads as a constant (`null`, `yes`, `no`, `true`, `false`, `on`, `off`, `none`, in any case) or
that is empty gets a trailing `_`; an empty section becomes `_`, and configparser's `DEFAULT`, `DEFAULT_`.

Reading: `;`/`#` comments (a block right above a key becomes its notes), `[section]` headers (a
section may reappear), double-quoted values with the escapes above, single-quoted values taken as they
are, bare values trimmed (empty = untranslated), `key[form] = ...` plural forms and `key[] = ...` lists.
A key given twice keeps its last value, as PHP does, and the import answer warns naming both lines.
"""
from __future__ import annotations

import re

from .catalogue import Catalogue, Translation, Unit
from .document import Entry, ExportDocument
from .errors import ExportError, ParseError
from .options import ReadOptions
from .plurals import CATEGORIES
from .reading import CatalogueBuilder, check_line_lengths, decode_utf8, duplicate_key_warning, plural_translation

_SECTION = re.compile(r"\[([^\]]*)\]\s*(?:[;#].*)?")
_ENTRY = re.compile(r"([^=\[\]]+?)\s*(?:\[([^\]]*)\])?\s*=\s*(.*)", re.S)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"\s*(?:[;#].*)?|\'([^\']*)\'\s*(?:[;#].*)?', re.S)
_QUOTED_START = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', re.S)  # a quoted string closed on its line
_CLOSES = re.compile(r'(?:[^"\\]|\\.)*"', re.S)  # the continuation line that closes an open quote
_READ_ESCAPE = re.compile(r"\\(.)", re.S)
_READ_NAMED = {"n": "\n", "r": "\r", "t": "\t"}
_LINES = re.compile(r"\r\n|\r|\n")  # not str.splitlines: \x1c-\x1e, \x85, \u2028... are text here
_KEY_UNSAFE = re.compile(r"[\s\x00-\x20=:;#\[\]\\\"'?{}|&~!()^$\x7f]")  # \s: configparser strips Unicode spaces
# Names PHP's INI scanner reads as constants, in any case: `no = "x"` is a syntax error there.
_PHP_INI_CONSTANTS = frozenset(("null", "yes", "no", "true", "false", "on", "off", "none"))
# configparser's section of defaults: every other section would inherit its keys.
_CONFIGPARSER_DEFAULTS = "DEFAULT"


# --- reading ---------------------------------------------------------------------------------------


def _value(raw: str, number: int, lines: list[str]) -> tuple[str | None, int]:
    """The text of the value that starts on line `number`, and the number of its last line.

    Double-quoted with escapes, and then it may run over several lines (Loco writes line breaks inside the
    quotes); single-quoted literally; bare, trimmed, empty = None. A value that merely starts with a quoted
    word (`"Surround" puts the bar…`) is bare text, quotes included, as configparser and PHP's raw scanner
    read it.
    """
    raw = raw.strip()
    if raw[:1] == '"' and _QUOTED_START.match(raw) is None:  # the quote stays open past this line
        raw, number = _joined_quoted(raw, number, lines)
    match = _QUOTED.fullmatch(raw) if raw[:1] in ('"', "'") else None
    if match is not None and match.group(2) is not None:
        return match.group(2), number
    if match is not None:
        return _READ_ESCAPE.sub(lambda escape: _READ_NAMED.get(escape.group(1), escape.group(1)),
                                match.group(1)), number
    if raw[:1] == "'" and _QUOTED_START.match(raw) is None:
        raise ParseError("unterminated or malformed quoted value", number)
    bare = re.split(r"\s[;#]", raw, maxsplit=1)[0].strip()
    return bare or None, number


def _joined_quoted(raw: str, number: int, lines: list[str]) -> tuple[str, int]:
    """A double-quoted value whose quote is still open at the end of line `number`, joined up to its close."""
    parts = [raw]
    for last in range(number, len(lines)):  # lines[number] is the line after line `number` (1-based)
        parts.append(lines[last])
        if _CLOSES.match(lines[last]):
            return "\n".join(parts).strip(), last + 1
    raise ParseError("unterminated or malformed quoted value", number)


def read_ini(data: bytes, options: ReadOptions) -> Catalogue:
    """Units of an INI file, keys prefixed with their section."""
    text = decode_utf8(data, "INI file")
    check_line_lengths(text)
    builder = CatalogueBuilder(options, "id")
    section = ""
    comments: list[str] = []
    seen: dict[str, int] = {}
    plurals: dict[str, dict[str, str | None]] = {}
    lists: dict[str, int] = {}
    singles: dict[str, Unit] = {}
    warnings: list[str] = []
    lines = _LINES.split(text)
    number = 0
    while number < len(lines):
        number += 1
        stripped = lines[number - 1].strip()
        if not stripped:
            comments = []
            continue
        if stripped.startswith(";;"):  # the banner
            continue
        if stripped[0] in ";#":
            comments.append(stripped[1:].strip())
            continue
        header = _SECTION.fullmatch(stripped)
        if header:
            section, comments = header.group(1).strip(), []
            continue
        match = _ENTRY.fullmatch(stripped)
        if match is None:
            raise ParseError(f"expected `key = value` or `[section]`, found {stripped[:40]!r}", number)
        name, index, raw = match.groups()
        key = f"{section}.{name.strip()}" if section else name.strip()
        if index == "":  # key[] = value: the next list item
            position = lists.get(key, 0)
            lists[key] = position + 1
            key, index = f"{key}.{position}", None
        full = f"{key}[{index}]" if index is not None else key
        first = seen.get(full)
        if first is not None:
            warnings.append(duplicate_key_warning(full, number, first))
        seen[full] = number
        value, number = _value(raw, number, lines)
        if index is not None and index in CATEGORIES:
            forms = plurals.get(key)
            if forms is None:
                forms = plurals[key] = {}
                builder.add(key, notes="\n".join(comments), plural=True)
            forms[index] = value
        elif first is not None:  # the last value wins, at the first one's place
            _replace_target(singles[full], builder.locale, value)
        else:
            target = None if value is None else Translation(text=value)
            singles[full] = builder.add(f"{key}.{index}" if index is not None else key, target,
                                        notes="\n".join(comments))
        comments = []
    locale = builder.locale
    for unit in builder.units:
        if unit.plural:
            translation = plural_translation(plurals[unit.key], locale)
            if translation is not None:
                builder.add_translation(unit, locale, translation)
    catalogue = builder.build()
    catalogue.warnings.extend(warnings)
    return catalogue


def _replace_target(unit: Unit, locale: str, value: str | None) -> None:
    """A key given again: its unit takes the later value (None: untranslated)."""
    if value is None:
        unit.translations.pop(locale, None)
    else:
        unit.translations[locale] = Translation(text=value)


# --- writing ---------------------------------------------------------------------------------------

_WRITE_ESCAPE = re.compile(r'[\\"$\n\r]')
_WRITE_NAMED = {"\\": "\\\\", '"': '\\"', "$": "\\$", "\n": "\\n", "\r": "\\r"}


def ini_key(key: str) -> str:
    """A key PHP (both scanners) and configparser read as written (the rules are in the module docstring)."""
    section, dot, name = _KEY_UNSAFE.sub("_", key).rpartition(".")
    if not name or name.lower() in _PHP_INI_CONSTANTS:
        name += "_"
    if not dot:
        return name
    if not section or section == _CONFIGPARSER_DEFAULTS:
        section += "_"
    return f"{section}.{name}"


def quote(text: str, key: str) -> str:
    """A double-quoted INI value (PHP's scanner ends a file at a NUL byte, so none can be written)."""
    if "\x00" in text:
        raise ExportError(f"{key!r} holds the character U+0000, which INI cannot carry")
    return '"' + _WRITE_ESCAPE.sub(lambda match: _WRITE_NAMED[match.group(0)], text) + '"'


def _lines(entry: Entry, name: str, doc: ExportDocument) -> list[str]:
    """The `name = value` line(s) of one unit, with its notes above."""
    lines: list[str] = []
    if entry.unit.notes and not doc.options.no_comments:
        lines.extend(f"; {line}".rstrip() for line in entry.unit.notes.splitlines())
    locale = doc.locale
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms) if locale else {}
        if forms:
            return lines + [f"{name}[{form}] = {quote(text, entry.key)}" for form, text in forms.items()]
    translation = entry.translations.get(locale) if locale else None
    if translation is None or translation.text is None:
        return lines + [f"{name} ="]
    return lines + [f"{name} = {quote(translation.text, entry.key)}"]


def write_ini(doc: ExportDocument) -> str:
    """Top-level keys, then a section per dotted prefix, in order of first appearance."""
    out = [f";; {line}".rstrip() for line in doc.banner]
    top: list[str] = []
    sections: dict[str, list[str]] = {}
    for entry in doc.entries:
        section, _, name = entry.key.rpartition(".")
        if section:
            sections.setdefault(section, []).extend(_lines(entry, name, doc))
        else:
            top.extend(_lines(entry, name, doc))
    if out and (top or sections):
        out.append("")
    out.extend(top)
    for section, lines in sections.items():
        if out and out[-1] != "":
            out.append("")
        out.append(f"[{section}]")
        out.extend(lines)
    return "\n".join(out) + "\n"
