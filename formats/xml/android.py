"""Android string resources (`res/values-fr/strings.xml`), read and written.

- `<string name=key>`: text with Android's escapes (`\\'`, `\\"`, `\\\\`, `\\n`, `\\t`, `\\uXXXX`, a leading
  `\\@` or `\\?`); spaces Android would collapse or trim are written `\\u0020`. Texts with more than one
  non-positional placeholder (`%s ... %d`) get `formatted="false"`, as aapt demands.
- `<plurals name=key>` of `<item quantity="one|few|...">` (CLDR categories) = a plural unit.
- `<string-array name=key>` of `<item>`s = units `key[0]`, `key[1]`... (written back as one array).
- HTML inside a string (`<b>`, `<xliff:g>`) is kept as markup text and the unit typed `html`; an `html`
  unit whose text is well-formed markup is written as markup, any other text is escaped. CDATA reads as text.
- `translatable="false"` strings are not translatable, so they are not imported.
- The comment right before an element = the unit's notes, and notes are written back that way.
Android files do not name their locale (the folder `values-fr` does): the locale option or the source.
"""
from __future__ import annotations

import re
from copy import deepcopy

from lxml import etree

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..plurals import CATEGORIES
from ..reading import CatalogueBuilder, plural_translation
from .parsing import (
    banner_comment, comment, escape_attribute, escape_text, has_markup, inner_markup, local_name, parse_fragment,
    parse_xml,
)

XLIFF_NAMESPACE = "urn:oasis:names:tc:xliff:document:1.2"
_PREFIXES = {XLIFF_NAMESPACE: "xliff"}
_ARRAY_ITEM = re.compile(r"^(.+)\[(\d+)\]$")
_NAME_INVALID = re.compile(r"[^A-Za-z0-9_.]")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t"}
_JAVA_KEYWORDS = frozenset(
    "abstract assert boolean break byte case catch char class const continue default do double else enum extends "
    "false final finally float for goto if implements import instanceof int interface long native new null package "
    "private protected public return short static strictfp super switch synchronized this throw throws transient "
    "true try void volatile while".split()
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# What follows a `%`: another `%` (a literal), `N$` (a positional argument) or anything else (non-positional).
_ARGUMENT = re.compile(r"%(%|\d+\$|)")


# --- reading ---------------------------------------------------------------------------------------


def read_android(data: bytes, options: ReadOptions) -> Catalogue:
    """`<resources>` of strings, plurals and string arrays."""
    root = parse_xml(data, "Android XML")
    if local_name(root) != "resources":
        raise ParseError(f"expected a <resources> root element, found <{local_name(root)}>", root.sourceline)
    builder = CatalogueBuilder(options, "id")
    for element in root:
        kind = local_name(element)
        if kind not in ("string", "plurals", "string-array") or element.get("translatable") == "false":
            continue
        name = element.get("name")
        if not name:
            raise ParseError(f"<{kind}> without a name attribute", element.sourceline)
        notes = _preceding_comments(element)
        if kind == "string":
            text, html = android_text(element)
            unit = builder.add(_key(builder, name, text), Translation(text), notes=notes)
            unit.type = "html" if html else "text"
        elif kind == "plurals":
            forms = {}
            for item in element:
                if local_name(item) == "item" and item.get("quantity") in CATEGORIES:
                    forms[item.get("quantity")] = android_text(item)[0]
            translation = plural_translation(forms, builder.locale)
            builder.add(_key(builder, name, next(iter(forms.values()), name)), translation, notes=notes, plural=True)
        else:
            items = [item for item in element if local_name(item) == "item"]
            for index, item in enumerate(items):
                text = android_text(item)[0]
                builder.add(_key(builder, f"{name}[{index}]", text), Translation(text), notes=notes)
    return builder.build()


def _key(builder: CatalogueBuilder, name: str, text: str) -> str:
    """The name, or the text when the file is read by source text."""
    return text if builder.by_text and text else name


def _preceding_comments(element: etree._Element) -> str:
    """The comments directly before an element (no other element between), oldest first."""
    found = []
    node = element.getprevious()
    # A blank line between a comment and the element makes the comment a standalone one.
    while node is not None and isinstance(node, etree._Comment) and not _BLANK_LINE.search(node.tail or ""):
        found.append((node.text or "").strip())
        node = node.getprevious()
    return "\n".join(reversed([text for text in found if text]))


def android_text(element: etree._Element) -> tuple[str, bool]:
    """The text of a string or item, Android escapes resolved; whether it held markup."""
    if not has_markup(element):
        return unescape(element.text or ""), False
    copy = deepcopy(element)
    slots = [(node, attribute) for node, attribute in _text_slots(copy) if getattr(node, attribute)]
    quoted = False
    for index, (node, attribute) in enumerate(slots):  # escapes apply to text, never to tags or attributes
        text, quoted = _unescaped(getattr(node, attribute), index == 0, index == len(slots) - 1, quoted)
        setattr(node, attribute, text)
    return inner_markup(copy, _PREFIXES), True


def unescape(raw: str) -> str:
    """Android's reading of a resource string: quotes keep whitespace, other whitespace runs collapse."""
    if "\\" not in raw and '"' not in raw and not re.search(r"\s", raw):
        return raw
    return _unescaped(raw, True, True, False)[0]


def _unescaped(raw: str, trim_start: bool, trim_end: bool, quoted: bool) -> tuple[str, bool]:
    """One text segment read the Android way, and whether a quote is still open at its end."""
    parts: list[str | None] = []
    position, length = 0, len(raw)
    while position < length:
        char = raw[position]
        if char == "\\" and position + 1 < length:
            match = _ESCAPE.match(raw, position)
            assert match is not None  # a backslash with any character after it
            code = match.group(1)
            parts.append(chr(int(code[1:], 16)) if len(code) == 5 and code[0] == "u" else _SIMPLE.get(code, code))
            position = match.end()
            continue
        if char == '"':
            quoted = not quoted
        elif char in " \t\r\n" and not quoted:
            end = position
            while end < length and raw[end] in " \t\r\n":
                end += 1
            parts.append(None)  # a collapsible space, dropped at both ends
            position = end
            continue
        else:
            parts.append(char)
        position += 1
    while trim_start and parts and parts[0] is None:
        parts.pop(0)
    while trim_end and parts and parts[-1] is None:
        parts.pop()
    return "".join(" " if part is None else part for part in parts), quoted


# --- writing ---------------------------------------------------------------------------------------


def android_key(key: str) -> str:
    """A resource name aapt accepts: letters, digits, `_` and `.`, not starting with a digit (`[n]` kept)."""
    match = _ARRAY_ITEM.match(key)
    base, suffix = (match.group(1), f"[{match.group(2)}]") if match else (key, "")
    base = _NAME_INVALID.sub("_", base) or "_"
    if base[0].isdigit() or base[0] == ".":
        base = "_" + base
    # Names become Java fields of R.string: a dotted segment may not be a Java keyword.
    base = ".".join(part + "_" if part in _JAVA_KEYWORDS else part for part in base.split("."))
    return base + suffix


def escape(text: str, first: bool = True, last: bool = True) -> str:
    """Text in Android's escaped spelling, XML-escaped; first/last: whether it starts/ends the string."""
    return escape_text(android_escape(text, first, last))


def android_escape(text: str, first: bool = True, last: bool = True) -> str:
    """Text with Android's backslash escapes (no XML escaping)."""
    out = []
    end = len(text) - 1
    for index, char in enumerate(text):
        if char in "\\'\"":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char in "@?" and index == 0 and first:
            out.append("\\" + char)
        elif char == " " and ((index == 0 and first) or (index == end and last) or (index and text[index - 1] == " ")):
            out.append("\\u0020")  # a space Android would trim or collapse
        elif char < " " or char in "\x7f\ufffe\uffff":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def _text_slots(element: etree._Element):
    """(node, "text"|"tail") pairs of a fragment in document order."""
    yield element, "text"
    for node in element:
        yield from _text_slots(node)
        yield node, "tail"


def _markup_text(text: str) -> str | None:
    """Well-formed HTML text with Android escapes applied to its text nodes, or None when not well-formed."""
    holder = parse_fragment(text, {"xliff": XLIFF_NAMESPACE})
    if holder is None:
        return None
    slots = [(node, attribute) for node, attribute in _text_slots(holder) if getattr(node, attribute)]
    for index, (node, attribute) in enumerate(slots):
        value = getattr(node, attribute)
        starts = index == 0 and text.startswith(value)
        ends = index == len(slots) - 1 and text.endswith(value)
        setattr(node, attribute, android_escape(value, starts, ends))
    return inner_markup(holder, _PREFIXES)


def _string_content(text: str, html: bool) -> str:
    """A string's XML content: markup for well-formed html units, escaped text otherwise."""
    if html:
        markup = _markup_text(text)
        if markup is not None:
            return markup
    return escape(text)


def _formatted(text: str) -> str:
    """` formatted="false"` when aapt would refuse the text: several arguments, one of them not positional.

    Like aapt, every `%` not followed by `%` starts an argument (`%n` and a literal `50% off` included).
    """
    if "%" not in text:
        return ""
    arguments = [match.group(1) for match in _ARGUMENT.finditer(text) if match.group(1) != "%"]
    return ' formatted="false"' if len(arguments) > 1 and "" in arguments else ""


def write_android(doc: ExportDocument) -> str:
    """`<resources>` with strings, plurals and string arrays of the target locale (untranslated left out)."""
    locale = doc.locale or doc.source_locale
    blocks: list[str | tuple[str]] = []  # element text, or (array name,) where an array goes
    arrays: dict[str, list[tuple[int, Entry]]] = {}
    for entry in doc.entries:
        match = _ARRAY_ITEM.match(entry.key)
        if match and not entry.unit.plural:
            items = arrays.setdefault(match.group(1), [])
            if not items:
                blocks.append((match.group(1),))  # the array is written where its first item was
            items.append((int(match.group(2)), entry))
        else:
            blocks.append(_element(doc, entry, locale))
    body = "".join(block if isinstance(block, str) else _array(block[0], arrays[block[0]], locale) for block in blocks)
    return (
        f'<?xml version="1.0" encoding="{doc.charset_label.lower()}"?>\n{banner_comment(doc.banner)}'
        f'<resources xmlns:xliff="{XLIFF_NAMESPACE}">\n{body}</resources>\n'
    )


def _notes(entry: Entry) -> str:
    """The unit's notes as a comment line before its element."""
    return f"    <!-- {comment(entry.unit.notes)} -->\n" if entry.unit.notes else ""


def _element(doc: ExportDocument, entry: Entry, locale: str) -> str:
    """A <string> or <plurals> element ("" when untranslated)."""
    name = escape_attribute(entry.key)
    html = entry.unit.type == "html"
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        if not forms:
            return ""
        items = "".join(
            f'        <item quantity="{category}"{_formatted(text)}>{_string_content(text, html)}</item>\n'
            for category, text in forms.items()
        )
        return f'{_notes(entry)}    <plurals name="{name}">\n{items}    </plurals>\n'
    text = entry.translation(locale).text
    if text is None:
        return ""
    content = _string_content(text, html)
    return f'{_notes(entry)}    <string name="{name}"{_formatted(text)}>{content}</string>\n'


def _array(name: str, items: list[tuple[int, Entry]], locale: str) -> str:
    """A <string-array> of the items `name[0]`, `name[1]`... in index order (untranslated items empty)."""
    rows = []
    for _, entry in sorted(items, key=lambda pair: pair[0]):
        text = entry.translation(locale).text or ""
        rows.append(f"        <item{_formatted(text)}>{_string_content(text, entry.unit.type == 'html')}</item>\n")
    heading = f'{_notes(items[0][1])}    <string-array name="{escape_attribute(name)}">\n'
    return f'{heading}{"".join(rows)}    </string-array>\n'
