"""Gettext family: PO and POT (text) and MO (binary), read and written.

Mapping between the catalogue and gettext:
- msgid = the unit key (source text by default, `index=id` gives asset IDs), msgctxt = context,
  `#.` = notes, `#:` = references, `# ` = the target translation's comment.
- plural units: msgid_plural = the source's "other" form; msgstr[i] follow the target locale's CLDR
  forms in order, and the header's Plural-Forms comes from the same rules, so the two agree.
- flags: Loco's `fuzzy` is gettext's `fuzzy`; Loco's other flags (incorrect, incomplete,
  provisional, unapproved, rejected) have no gettext equivalent and are written as the custom flag
  `loco-<flag>` (msgfmt ignores unknown flags), which the reader maps back.
- a unit's printf style becomes `php-format`, `python-format`, `objc-format` or
  `java-printf-format` when msgids are texts (an asset ID is not a format string); ICU has no flag.
- MO holds no comments or flags; it keeps every translated unit (flagged ones included: pick
  `status=!fuzzy` to leave fuzzy ones out) and, in gettext fashion, no untranslated ones.
- Texts are written faithfully. gettext insists that msgid and msgstr agree on a leading/trailing
  newline, so a translation that disagrees with its msgid there (always possible when msgids are
  asset IDs) makes msgfmt refuse that entry; the file is not "fixed" behind the user's back.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from .banner import one_line
from .catalogue import FLAGS, Catalogue, Translation
from .errors import FormatError
from .options import ReadOptions
from .pipeline import Entry, ExportDocument
from .budget import check_time
from .charsets import text_codec
from .plurals import categories_for_indices, code_for_english_name, is_locale_code, locale_display_name, plural_rules
from .reading import CatalogueBuilder, requested_locale

FORMAT_FLAGS = {"php": "php-format", "python": "python-format", "objc": "objc-format", "java": "java-printf-format"}
_STYLE_OF_FLAG = {flag: style for style, flag in FORMAT_FLAGS.items()}
_LOCO_FLAG_PREFIX = "loco-"
_TEMPLATE_DATE = "YEAR-MO-DA HO:MI+ZONE"
_MO_MAGIC = 0x950412DE


@dataclass(slots=True)
class Message:
    """A gettext message as both PO and MO see it."""

    msgid: str
    msgstr: list[str] = field(default_factory=lambda: [""])
    msgctxt: str | None = None
    msgid_plural: str | None = None
    comments: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    line: int = 0


# --- writing ---------------------------------------------------------------------------------------


def header_fields(doc: ExportDocument) -> list[tuple[str, str]]:
    """The PO header in Loco's field order; templates use gettext's placeholder revision date."""
    locale = doc.locale
    rules = doc.rules(locale)
    created = doc.exported_at.strftime("%Y-%m-%d %H:%M%z")
    fields = [
        ("Project-Id-Version", doc.project or "Gloss"),
        ("Report-Msgid-Bugs-To", ""),
        ("POT-Creation-Date", created),
        ("PO-Revision-Date", _TEMPLATE_DATE if doc.template else created),
        ("Last-Translator", doc.options.exported_by),
        ("Language-Team", locale_display_name(locale) if locale else ""),
        ("Language", locale.replace("-", "_") if locale else ""),
        ("Plural-Forms", rules.header),
        ("MIME-Version", "1.0"),
        ("Content-Type", f"text/plain; charset={doc.charset_label}"),
        ("Content-Transfer-Encoding", "8bit"),
        ("X-Generator", "Gloss (Loco-compatible)"),
        ("X-Loco-Source-Locale", doc.source_locale),
    ]
    if locale:
        fields.append(("X-Loco-Target-Locale", locale))
    return [(name, one_line(value)) for name, value in fields]


def messages(doc: ExportDocument) -> list[Message]:
    """The gettext messages of an export document (header excluded)."""
    return [_message(entry, doc) for entry in doc.entries]


def _message(entry: Entry, doc: ExportDocument) -> Message:
    """One entry as a gettext message."""
    unit = entry.unit
    target = entry.translation(doc.locale)
    message = Message(
        msgid=entry.key,
        msgctxt=unit.context or None,
        notes=unit.notes.splitlines() if unit.notes else [],
        references=list(unit.references),
        comments=target.comment.splitlines() if target.comment else [],
    )
    if unit.plural:
        forms = doc.rules(doc.locale).forms
        source = entry.translation(doc.source_locale)
        message.msgid_plural = _source_plural(source, entry.key) if doc.index == "text" else entry.key
        message.msgstr = [_plural_form(target, name) for name in forms]
    else:
        message.msgstr = [target.text or ""]
    message.flags = _flags(entry, doc, target)
    return message


def _source_plural(source: Translation, default: str) -> str:
    """The msgid_plural text: the source's "other" form, else its last one."""
    if not source.plurals:
        return default
    return source.plurals.get("other") or list(source.plurals.values())[-1] or default


def _plural_form(translation: Translation, name: str) -> str:
    """A target plural form; a plural unit translated without forms fills them with its text."""
    if translation.plurals:
        return translation.plurals.get(name, "")
    return translation.text or ""


def _flags(entry: Entry, doc: ExportDocument, target: Translation) -> list[str]:
    """The `#,` flags: fuzzy, loco-<flag>, and a format flag when msgids are texts."""
    flags = []
    if target.flag == "fuzzy":
        flags.append("fuzzy")
    elif target.flag:
        flags.append(_LOCO_FLAG_PREFIX + target.flag)
    style = doc.options.printf or entry.unit.printf
    if doc.index == "text" and style in FORMAT_FLAGS:
        flags.append(FORMAT_FLAGS[style])
    return flags


_PO_ESCAPES = str.maketrans({
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v",
    **{chr(code): f"\\{code:03o}" for code in range(32) if chr(code) not in "\n\t\r\a\b\f\v"},
})


def _po_string(keyword: str, text: str) -> str:
    """`keyword "text"`, multi-line texts split after each newline as gettext tools do."""
    escaped = text.translate(_PO_ESCAPES)
    if "\\n" not in escaped[:-2]:
        return f'{keyword} "{escaped}"\n'
    lines = escaped.split("\\n")
    pieces = [piece + "\\n" for piece in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return f'{keyword} ""\n' + "".join(f'"{piece}"\n' for piece in pieces)


def _po_message(message: Message) -> str:
    """One message in PO syntax."""
    parts = [f"# {line}".rstrip() + "\n" for line in message.comments]
    parts += [f"#. {line}".rstrip() + "\n" for line in message.notes]
    parts += [f"#: {reference}\n" for reference in message.references]
    if message.flags:
        parts.append("#, " + ", ".join(message.flags) + "\n")
    if message.msgctxt is not None:
        parts.append(_po_string("msgctxt", message.msgctxt))
    parts.append(_po_string("msgid", message.msgid))
    if message.msgid_plural is None:
        parts.append(_po_string("msgstr", message.msgstr[0]))
    else:
        parts.append(_po_string("msgid_plural", message.msgid_plural))
        parts += [_po_string(f"msgstr[{index}]", text) for index, text in enumerate(message.msgstr)]
    return "".join(parts)


def write_po(doc: ExportDocument) -> str:
    """A PO file (a POT when the document is a template: every msgstr empty)."""
    header = "".join(f"{name}: {value}\n" for name, value in header_fields(doc))
    parts = [f"# {line}".rstrip() + "\n" for line in doc.banner]
    parts.append(_po_string("msgid", ""))
    parts.append(_po_string("msgstr", header))
    for message in messages(doc):
        parts.append("\n")
        parts.append(_po_message(message))
    return "".join(parts)


def write_mo(doc: ExportDocument) -> bytes:
    """A little-endian MO file of the translated messages, sorted as gettext expects."""
    header = "".join(f"{name}: {value}\n" for name, value in header_fields(doc))
    pairs = [(b"", header.encode(doc.charset))]
    for message in messages(doc):
        if not any(message.msgstr) and not doc.template:
            continue  # MO has no untranslated messages: lookups fall back to the msgid
        pairs.append((_mo_key(message).encode(doc.charset), "\0".join(message.msgstr).encode(doc.charset)))
    pairs.sort(key=lambda pair: pair[0])
    return _mo_bytes(pairs)


def _mo_key(message: Message) -> str:
    """The MO original string: context EOT msgid, plus NUL msgid_plural for plurals."""
    key = message.msgid if message.msgctxt is None else f"{message.msgctxt}\x04{message.msgid}"
    return key if message.msgid_plural is None else f"{key}\0{message.msgid_plural}"


def _mo_bytes(pairs: list[tuple[bytes, bytes]]) -> bytes:
    """MO layout: header, originals table, translations table, no hash table, then the strings."""
    count = len(pairs)
    originals_at = 28
    translations_at = originals_at + 8 * count
    strings_at = translations_at + 8 * count
    tables_o, tables_t, blob = [], [], bytearray()
    for original, _ in pairs:
        tables_o.append((len(original), strings_at + len(blob)))
        blob += original + b"\0"
    for _, translated in pairs:
        tables_t.append((len(translated), strings_at + len(blob)))
        blob += translated + b"\0"
    head = struct.pack("<7I", _MO_MAGIC, 0, count, originals_at, translations_at, 0, strings_at)
    table = b"".join(struct.pack("<2I", *row) for row in tables_o + tables_t)
    return head + table + bytes(blob)


# --- reading PO ------------------------------------------------------------------------------------

_LINES = re.compile(r"\r\n|\r|\n")
_KEYWORD = re.compile(r"(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])?\s*(.*)$")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*+)"')
_ESCAPE = re.compile(r"\\(?:[0-7]{1,3}|x[0-9A-Fa-f]+|.)", re.S)
_SIMPLE_ESCAPES = {"\\" + code: char for code, char in {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "?": "?",
}.items()}


def read_po(data: bytes, options: ReadOptions) -> Catalogue:
    """A PO or POT file as a catalogue (obsolete `#~` entries are ignored)."""
    return _catalogue(parse_po(decode_po(data)), options)


def decode_po(data: bytes) -> str:
    """The PO text decoded with the charset its header declares (UTF-8 when it declares none)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode(data, "utf-16")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    match = re.search(rb"charset=\s*([A-Za-z0-9_.:-]+)", data[:16384])
    charset = match.group(1).decode("ascii") if match else "utf-8"
    if charset.upper() == "CHARSET":  # the placeholder of fresh templates
        charset = "utf-8"
    return _decode(data, charset)


def _decode(data: bytes, charset: str) -> str:
    """Bytes decoded, with FormatError naming the line of the first undecodable byte."""
    codec = text_codec(charset)
    if codec is None:
        raise FormatError(f"unknown charset {charset[:40]!r} in the Content-Type header: it must name a text "
                          "encoding")
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise FormatError(f"bytes not valid in the declared charset {charset}", line) from None


def parse_po(text: str) -> list[Message]:
    """PO text as messages in file order, the header entry included.

    A whole-entry regular expression handles well-formed files quickly; anything it does not cover
    goes through the line-by-line parser, which accepts the same syntax and names the line of an error.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    fast = _parse_po_fast(text)
    return fast if fast is not None else parse_po_lines(text)


def parse_po_lines(text: str) -> list[Message]:
    """PO text parsed line by line (the reference parser, with line numbers in errors)."""
    parser = _PoParser()
    for number, line in enumerate(_LINES.split(text), 1):
        parser.feed(line.strip(), number)
        if number % 8192 == 0:
            check_time()
    return parser.finish()


_STRING = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'  # "unrolled loop" form: far faster in Python's re
_STRINGS = rf"{_STRING}(?:[ \t]*\n[ \t]*{_STRING})*"
_ENTRY = re.compile(
    rf"""(?P<comments>(?:[ \t]*+\#(?!~)[^\n]*+\n)*+)
    [ \t]*(?:msgctxt[ \t]+(?P<ctx>{_STRINGS})[ \t]*\n[ \t]*)?
    msgid[ \t]+(?P<id>{_STRINGS})[ \t]*\n
    (?:[ \t]*msgid_plural[ \t]+(?P<plural>{_STRINGS})[ \t]*\n)?
    (?:[ \t]*msgstr[ \t]+(?P<str>{_STRINGS})[ \t]*(?:\n|\Z)
     |(?P<strs>(?:[ \t]*msgstr\[\d+\][ \t]+{_STRINGS}[ \t]*(?:\n|\Z))+))""",
    re.X,
)
_MSGSTR = re.compile(rf"msgstr(?:\[(\d+)\])?[ \t]+({_STRINGS})")
_STRING_BODY = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"')
_COMMENTS = re.compile(r"(?:[ \t]*+\#(?!~)[^\n]*+\n)*+")  # the comment lines the entry pattern may start with
_GAP_LINE = re.compile(r"[ \t]*+(?:\#~[^\n]*+)?(?:\n|\Z)|[ \t]*+\#[^\n]*+\Z")


def _parse_po_fast(text: str) -> list[Message] | None:
    """Messages of a well-formed PO text, or None when anything needs the line parser's judgement."""
    messages: list[Message] = []
    position, length = 0, len(text)
    while position < length:
        match = _ENTRY.match(text, position)
        if match is None:
            # Anchored at each position, never searched: a search retried the entry pattern from every
            # line of a long comment block (quadratic). When the pattern fails at a comment block, it fails
            # from every later line of that block too, so skip the block, then one blank or `#~` line.
            block = _COMMENTS.match(text, position).end()
            gap = _GAP_LINE.match(text, block)
            if gap is None:
                return messages if block == length else None
            position = gap.end()
            continue
        try:
            message = _fast_message(match)
        except FormatError:  # a bad escape: let the line parser report it with its line number
            return None
        if message is None:
            return None
        messages.append(message)
        position = match.end()
    return messages


def _fast_message(match: re.Match[str]) -> Message | None:
    """One regex-matched entry as a message (None if its msgstr kind or indices are off)."""
    comments, context, msgid, plural, single, several = match.groups()
    if plural is None:
        if single is None:
            return None
        # Inline fast case of _strings_value: one string without escapes (most msgstrs).
        msgstr = [single[1:-1] if "\\" not in single and "\n" not in single else _strings_value(single)]
    else:
        if several is None:
            return None
        strings = _MSGSTR.findall(several)
        if [index for index, _ in strings] != [str(i) for i in range(len(strings))]:
            return None
        msgstr = [_strings_value(value) for _, value in strings]
    message = Message(
        msgid[1:-1] if "\\" not in msgid and "\n" not in msgid else _strings_value(msgid), msgstr,
        None if context is None else _strings_value(context),
        None if plural is None else _strings_value(plural), [], [], [], [], 0,
    )
    if comments:
        _comments_into(message, comments)
    return message


def _strings_value(strings: str) -> str:
    """The value of one or more adjacent quoted strings (already validated by the entry regex)."""
    body = strings[1:-1]
    if "\n" in body:
        body = "".join(_STRING_BODY.findall(strings))
    return body if "\\" not in body else _unescape_all(body, None)


def _unescape_all(body: str, number: int | None) -> str:
    """A string body with its C escapes resolved (plain replacements for the everyday ones)."""
    if "\\\\" not in body:
        # Without an escaped backslash, the common escapes cannot overlap, so replace() is exact.
        body = body.replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t")
        if "\\" not in body:
            return body
    return _ESCAPE.sub(lambda match: _unescape(match, number), body)


_COMMENT_LINE = re.compile(r"[ \t]*#([^\n]?)([^\n]*)\n")  # the entry regex ends every comment line with \n


def _comment_into(message: Message, line: str) -> None:
    """File one stripped comment line into the message."""
    if line:
        _file_comment(message, line[1:2], line[2:])


def _comments_into(message: Message, block: str) -> None:
    """File every comment line of a block (as matched by the entry regex) into the message."""
    if block.startswith("#:") and block.count("\n") == 1:  # the most common block: one reference line
        message.references.extend(block[2:].split())
        return
    for kind, rest in _COMMENT_LINE.findall(block):
        _file_comment(message, kind, rest)


def _file_comment(message: Message, kind: str, rest: str) -> None:
    """One comment by its marker: `#.` notes, `#:` references, `#,` flags, `#|` ignored, else translator."""
    if kind == ".":
        message.notes.append(rest.strip())
    elif kind == ":":
        message.references.extend(rest.split())
    elif kind == ",":
        message.flags.extend(flag.strip() for flag in rest.split(",") if flag.strip())
    elif kind != "|":  # `#|` previous msgid: of no use to a translation store
        message.comments.append((rest if kind == " " else kind + rest).rstrip())


class _PoParser:
    """Line-driven state machine over PO syntax; FormatError names the offending line."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.current = Message(msgid="", msgstr=[])
        self.seen: list[str] = []  # keywords of the current message, in order
        self.target: tuple[str, int] | None = None  # field receiving continuation strings
        self.in_obsolete = False

    def feed(self, line: str, number: int) -> None:
        """Consume one stripped line."""
        if not line:
            return
        if line.startswith("#~"):
            self._close_if_complete(number)
            self.target = None
            return
        if line[0] == "#":
            self._comment(line, number)
        elif line[0] == '"':
            self._continuation(line, number)
        else:
            self._keyword(line, number)

    def _comment(self, line: str, number: int) -> None:
        """A comment line: starts a new message when the current one is complete."""
        self._close_if_complete(number)
        if self.seen:
            raise FormatError(
                f"comment inside the message starting at line {self.current.line}, before its msgstr", number
            )
        self.target = None
        _comment_into(self.current, line)
        if not self.current.line:
            self.current.line = number

    def _keyword(self, line: str, number: int) -> None:
        """msgctxt, msgid, msgid_plural, msgstr or msgstr[n] with its first string."""
        match = _KEYWORD.match(line)
        if not match:
            raise FormatError(f"unexpected text {line[:40]!r}: expected msgctxt, msgid, msgstr or a string", number)
        keyword, index, rest = match.groups()
        if keyword in ("msgctxt", "msgid"):
            self._close_if_complete(number)
        self._check_order(keyword, index, number)
        value = _unquote(rest, number)
        message = self.current
        if not message.line:
            message.line = number
        if keyword == "msgctxt":
            message.msgctxt = value
        elif keyword == "msgid":
            message.msgid = value
        elif keyword == "msgid_plural":
            message.msgid_plural = value
        else:
            position = int(index) if index is not None else 0
            if position != len(message.msgstr):
                raise FormatError(f"msgstr[{position}] out of order (expected msgstr[{len(message.msgstr)}])", number)
            message.msgstr.append(value)
        self.seen.append(keyword)
        self.target = (keyword, int(index) if index is not None else 0)

    def _check_order(self, keyword: str, index: str | None, number: int) -> None:
        """Keywords must come as msgctxt? msgid msgid_plural? msgstr..., with [n] exactly for plurals."""
        seen = self.seen
        if keyword == "msgctxt" and seen:
            raise FormatError("msgctxt must come before msgid", number)
        if keyword == "msgid" and "msgid" in seen:
            raise FormatError("second msgid in one message (missing msgstr?)", number)
        if keyword in ("msgid_plural", "msgstr") and "msgid" not in seen:
            raise FormatError(f"{keyword} without a preceding msgid", number)
        if keyword == "msgid_plural" and ("msgid_plural" in seen or "msgstr" in seen):
            raise FormatError("misplaced msgid_plural", number)
        if keyword == "msgstr":
            plural = "msgid_plural" in seen
            if plural and index is None:
                raise FormatError("plural message needs msgstr[n], found plain msgstr", number)
            if not plural and index is not None:
                raise FormatError(f"msgstr[{index}] on a message without msgid_plural", number)
            if not plural and "msgstr" in seen:
                raise FormatError("second msgstr in one message", number)

    def _continuation(self, line: str, number: int) -> None:
        """A string line continuing the last keyword's value."""
        if self.target is None:
            raise FormatError("string without a keyword before it", number)
        value = _unquote(line, number)
        keyword, index = self.target
        message = self.current
        if keyword == "msgstr":
            message.msgstr[index] += value
        else:
            setattr(message, keyword, getattr(message, keyword) + value)

    def _close_if_complete(self, number: int) -> None:
        """Store the current message once it has its msgstr (a new message is starting)."""
        if "msgstr" not in self.seen:
            return
        self.messages.append(self.current)
        self.current = Message(msgid="", msgstr=[])
        self.seen = []
        self.target = None

    def finish(self) -> list[Message]:
        """All messages, after checking the last one is complete."""
        if self.seen and "msgstr" not in self.seen:
            raise FormatError("file ends inside a message without msgstr", self.current.line)
        if self.seen:
            self.messages.append(self.current)
        return self.messages


def _unquote(rest: str, number: int) -> str:
    """The value of a `"..."` token with C escapes resolved."""
    rest = rest.strip()
    body = rest[1:-1]
    # Fast path: no inner quote and no backslash means nothing to check or resolve.
    if len(rest) < 2 or rest[0] != '"' or rest[-1] != '"' or "\\" in body or '"' in body:
        match = _QUOTED.fullmatch(rest)
        if not match:
            raise FormatError(f"malformed string {rest[:40]!r} (unbalanced quote or trailing text)", number)
        body = match.group(1)
        if "\\" in body:
            return _unescape_all(body, number)
    return body


def _unescape(match: re.Match[str], number: int | None) -> str:
    """One backslash escape."""
    simple = _SIMPLE_ESCAPES.get(match.group())
    if simple is not None:
        return simple
    sequence = match.group()[1:]
    if sequence[0] in "01234567":
        return chr(int(sequence, 8))
    if sequence[0] == "x" and len(sequence) > 1:
        return chr(int(sequence[1:], 16))
    raise FormatError(f"invalid escape sequence \\{sequence}", number)


# --- reading MO ------------------------------------------------------------------------------------


def read_mo(data: bytes, options: ReadOptions) -> Catalogue:
    """A compiled MO file as a catalogue."""
    return _catalogue(parse_mo(data), options)


def parse_mo(data: bytes) -> list[Message]:
    """The messages of an MO file (either byte order)."""
    if len(data) < 28:
        raise FormatError(f"not an MO file: {len(data)} bytes is shorter than the 28-byte header")
    order = _mo_byte_order(data)
    revision, count, originals_at, translations_at = struct.unpack(order + "4I", data[4:20])
    if revision >> 16 > 1:
        raise FormatError(f"unsupported MO revision {revision >> 16}")
    raw = [
        (_mo_string(data, order, originals_at, i), _mo_string(data, order, translations_at, i)) for i in range(count)
    ]
    charset = _mo_charset(raw)
    return [_mo_message(original, translated, charset, number) for number, (original, translated) in enumerate(raw, 1)]


def _mo_byte_order(data: bytes) -> str:
    """`<` or `>` from the magic number, or FormatError."""
    if struct.unpack("<I", data[:4])[0] == _MO_MAGIC:
        return "<"
    if struct.unpack(">I", data[:4])[0] == _MO_MAGIC:
        return ">"
    raise FormatError(f"not an MO file: bad magic number 0x{data[:4].hex()}")


def _mo_string(data: bytes, order: str, table_at: int, index: int) -> bytes:
    """String number `index` of a string table, bounds-checked."""
    row_at = table_at + 8 * index
    if row_at + 8 > len(data):
        raise FormatError(f"MO entry {index + 1}: string table runs past the end of the file")
    length, offset = struct.unpack(order + "2I", data[row_at:row_at + 8])
    if offset + length > len(data):
        raise FormatError(f"MO entry {index + 1}: string at offset {offset} runs past the end of the file")
    return data[offset:offset + length]


def _mo_charset(raw: list[tuple[bytes, bytes]]) -> str:
    """The charset named by the header entry (empty original), UTF-8 by default."""
    for original, translated in raw:
        if original == b"":
            match = re.search(rb"charset=\s*([A-Za-z0-9_.:-]+)", translated)
            if match and match.group(1).upper() != b"CHARSET":
                name = match.group(1).decode("ascii")
                codec = text_codec(name)
                if codec is None:
                    raise FormatError(f"unknown charset {name[:40]!r} in the MO header: it must name a text "
                                      "encoding")
                return codec
    return "utf-8"


def _mo_message(original: bytes, translated: bytes, charset: str, number: int) -> Message:
    """One MO pair as a message: context before EOT, plural forms separated by NUL."""
    try:
        key, value = original.decode(charset), translated.decode(charset)
    except (UnicodeDecodeError, LookupError):
        raise FormatError(f"MO entry {number}: text is not valid {charset}") from None
    context, _, msgid = key.rpartition("\x04") if "\x04" in key else (None, "", key)
    msgid, _, plural = msgid.partition("\0")
    return Message(
        msgid=msgid, msgctxt=context, msgid_plural=plural if "\0" in key else None,
        msgstr=value.split("\0"), line=number,
    )


# --- messages -> catalogue -------------------------------------------------------------------------


def parse_header(text: str) -> dict[str, str]:
    """`Name: value` lines of a header msgstr as a dict."""
    fields = {}
    for line in text.split("\n"):
        name, colon, value = line.partition(":")
        if colon and name.strip():
            fields[name.strip()] = value.strip()
    return fields


def _catalogue(parsed: list[Message], options: ReadOptions) -> Catalogue:
    """Messages turned into units through the shared builder."""
    header_message = next((m for m in parsed if m.msgid == "" and m.msgctxt is None), None)
    headers = parse_header(header_message.msgstr[0]) if header_message and header_message.msgstr else {}
    body = [m for m in parsed if m is not header_message]
    detected = _detected_locale(headers)
    if requested_locale(options) is None and detected is None and any(any(m.msgstr) for m in body):
        raise FormatError(
            "the file does not say its language (no Language or X-Loco-Target-Locale header); "
            "give the locale option"
        )
    builder = CatalogueBuilder(options, "text", detected, headers.get("X-Loco-Source-Locale") or None)
    plural_names = _PluralNames(builder.locale, headers.get("Plural-Forms", ""))
    for message in body:
        _add_message(builder, message, plural_names)
    return builder.build(headers, project=headers.get("Project-Id-Version", ""))


class _PluralNames:
    """CLDR names of msgstr[i] for one locale and Plural-Forms header, cached per form count."""

    def __init__(self, locale: str, plural_forms: str) -> None:
        self.locale = locale
        match = re.search(r"nplurals\s*=\s*(\d+)", plural_forms)
        digits = match.group(1) if match else "0"
        self.nplurals = int(digits) if len(digits) <= 6 else 10 ** 6  # any huge count is refused as too many
        equation = re.search(r"plural\s*=\s*([^;]+)", plural_forms)
        self.equation = equation.group(1).strip() if equation else None
        self._cache: dict[int, list[str]] = {}

    def names(self, count: int) -> list[str | None]:
        """Names for `count` msgstr forms; forms beyond a declared nplurals are None (gettext never uses them)."""
        wanted = self.nplurals or count
        if wanted not in self._cache:
            equation = self.equation if wanted == self.nplurals else None
            self._cache[wanted] = categories_for_indices(self.locale, wanted, equation)
        names: list[str | None] = list(self._cache[wanted][:count])
        return names + [None] * (count - len(names))


def _add_message(builder: CatalogueBuilder, message: Message, names: _PluralNames) -> None:
    """One message as a unit (target translation, source forms for plurals, flags, comments)."""
    flags = message.flags
    flag = _loco_flag(flags) if flags else ""
    printf = next((_STYLE_OF_FLAG[f] for f in flags if f in _STYLE_OF_FLAG), "") if flags else ""
    comment = "\n".join(message.comments) if message.comments else ""
    plural = message.msgid_plural is not None
    if plural:
        forms = {name: text for name, text in zip(names.names(len(message.msgstr)), message.msgstr) if text and name}
        text = next(iter(forms.values()), None)
        source = _source_forms(builder.source_locale, message) if builder.by_text else None
    else:
        forms, text, source = {}, message.msgstr[0] or None, None
    target = Translation(text, forms, flag, comment) if text is not None or flag or comment else None
    builder.add(
        message.msgid, target, context=message.msgctxt or "", notes="\n".join(message.notes) if message.notes else "",
        source=source, plural=plural, references=message.references, printf=printf,
    )


def _source_forms(source_locale: str, message: Message) -> Translation:
    """Source plural forms from msgid/msgid_plural: the first form is the msgid, the others the plural."""
    forms = plural_rules(source_locale).forms
    plural_text = message.msgid_plural or ""
    plurals = {name: message.msgid if position == 0 else plural_text for position, name in enumerate(forms)}
    return Translation(text=message.msgid, plurals=plurals)


def _loco_flag(flags: list[str]) -> str:
    """The Loco flag of gettext flags: loco-<flag> wins over fuzzy."""
    for flag in flags:
        if flag.startswith(_LOCO_FLAG_PREFIX) and flag[len(_LOCO_FLAG_PREFIX):] in FLAGS:
            return flag[len(_LOCO_FLAG_PREFIX):]
    return "fuzzy" if "fuzzy" in flags else ""


def _detected_locale(headers: dict[str, str]) -> str | None:
    """The file's language: X-Loco-Target-Locale, else Language (a code, or an English name)."""
    for name in ("X-Loco-Target-Locale", "Language"):
        value = headers.get(name, "").strip()
        if value and is_locale_code(value):
            return value
    return code_for_english_name(headers.get("Language", "").strip())
