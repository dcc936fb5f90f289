"""PO and POT read: a one-pass scan for files in the everyday shape; any doubt sends the whole file to the
careful parsers (an entry regex, then the line parser that names the line where a file is broken)."""
from __future__ import annotations

import re
from itertools import chain, compress, islice
from operator import itemgetter

from ..budget import check_time
from ..catalogue import Catalogue
from ..charsets import text_codec
from ..errors import ParseError
from ..options import ReadOptions
from .common import Message, MessageReader, catalogue_of, header_fields_of

_LINES = re.compile(r"\r\n|\r|\n")
_KEYWORD = re.compile(r"(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])?\s*(.*)$")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*+)"')
_ESCAPE = re.compile(r"\\(?:[0-7]{1,3}|x[0-9A-Fa-f]+|.)", re.S)
_SIMPLE_ESCAPES = {"\\" + code: char for code, char in {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "?": "?",
}.items()}


def read_po(data: bytes, options: ReadOptions) -> Catalogue:
    """A PO or POT file as a catalogue (obsolete `#~` entries are ignored).

    Files in the everyday shape are scanned in one pass straight into units; any doubt about an entry
    (other spacing, obsolete entries, a suspicious string) sends the whole file through `parse_po`.
    """
    text = _one_newline_kind(decode_po(data))
    scanned = _scan_po(text)
    if scanned is not None:
        try:
            return _catalogue_of_scan(scanned, options)
        except _Unsure:
            pass
    return catalogue_of(parse_po(text), options)


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
    """Bytes decoded, with ParseError naming the line of the first undecodable byte."""
    codec = text_codec(charset)
    if codec is None:
        raise ParseError(f"unknown charset {charset[:40]!r} in the Content-Type header: it must name a text "
                          "encoding")
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ParseError(f"bytes not valid in the declared charset {charset}", line) from None


def parse_po(text: str) -> list[Message]:
    """PO text as messages in file order, the header entry included.

    A whole-entry regular expression handles well-formed files quickly; anything it does not cover
    goes through the line-by-line parser, which accepts the same syntax and names the line of an error.
    """
    text = _one_newline_kind(text)
    fast = _parse_po_fast(text)
    return fast if fast is not None else parse_po_lines(text)


def _one_newline_kind(text: str) -> str:
    """Text with DOS and Mac line ends turned into \\n."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


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
            comments = _COMMENTS.match(text, position)
            assert comments is not None  # the pattern also matches no comment at all
            block = comments.end()
            gap = _GAP_LINE.match(text, block)
            if gap is None:
                return messages if block == length else None
            position = gap.end()
            continue
        try:
            message = _fast_message(match)
        except ParseError:  # a bad escape: let the line parser report it with its line number
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
    if "\n" in body:  # each string on its own: an escape never spans two (`"\\x41" "1"` is "A1", as in C)
        return "".join([_unescape_all(piece, None) if "\\" in piece else piece
                        for piece in _STRING_BODY.findall(strings)])
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


def _reference_line(block: str) -> list[str] | None:
    """The references of a comment block that is one `#:` line (the most common block), else None."""
    if block.startswith("#:") and block.count("\n") == 1:
        return block[2:].split()
    return None


def _plain_comments(block: str) -> tuple[str, list[str]] | None:
    """(notes, references) of a comment block holding no flags and no translator comments, else None."""
    references = _reference_line(block)
    if references is not None:
        return "", references
    sorted_out = Message("")
    _comments_into(sorted_out, block)
    if sorted_out.flags or sorted_out.comments:
        return None
    return "\n".join(sorted_out.notes), sorted_out.references


def _comments_into(message: Message, block: str) -> None:
    """File every comment line of a block (as matched by the entry regex) into the message."""
    references = _reference_line(block)
    if references is not None:
        message.references.extend(references)
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


# --- reading PO: the everyday shape in one pass ----------------------------------------------------------


class _Unsure(Exception):
    """The scan met something it leaves to the careful parsers (which accept it or name the line)."""


# One quoted string filling the rest of its line, whose last quote no lone backslash escapes; its inside is
# checked when its value is taken (`_values`), which is cheaper than checking it character by character here.
# Possessive: never re-entered.
_LINE_STRING = r'"[^\n]++(?:(?<=[^\\]")|(?<=\\\\"))'
_SCAN_STRINGS = rf"{_LINE_STRING}(?:\n{_LINE_STRING})*+"
# An entry exactly as gettext tools and Gloss write it: comment lines, then keywords at the start of their
# lines, one space before the first string, continued strings on lines of their own, entries apart by blank
# lines. Anything else (other spacing, `#~` obsolete lines, stray text) is caught whole by `rest`: since one
# of the two branches matches at every position, `split` never searches ahead, so the scan is linear.
# The comments Gloss writes for most entries (none, or a one-line note already stripped, then one line of
# references) are taken apart here as `note` and `refs`; any other comment block is kept whole as `comments`.
_SCAN_ENTRY = re.compile(
    rf"""\n*+(?:(?:\#\.\ (?P<note>\S[^\n]*+(?<=\S))\n)?(?:\#:\ (?P<refs>[^\n]*+)\n)?
       |(?P<comments>(?:\#(?!~)[^\n]*+\n)*+))
    (?:msgctxt\ (?P<ctx>{_SCAN_STRINGS})\n)?
    msgid\ (?P<id>{_SCAN_STRINGS})\n
    (?:msgid_plural\ (?P<plural>{_SCAN_STRINGS})\n(?P<strs>(?:msgstr\[\d+\]\ {_SCAN_STRINGS}(?:\n|\Z))++)
      |msgstr\ (?P<str>{_SCAN_STRINGS})(?:\n|\Z))
    |(?P<rest>[\s\S]+)""",
    re.X,
)
_SCAN_GROUPS = 9  # groups of _SCAN_ENTRY: `split` gives them per entry after the (always empty) gap before it
_SCAN_MSGSTR = re.compile(rf"msgstr\[(\d+)\] ({_SCAN_STRINGS})")
_ESCAPED_BODY = re.compile(r'(?:[^"\\]++|\\.)*+')
_WIDE_ESCAPE = re.compile(r"\\[0-7x]")  # octal and hex escapes: their length depends on what follows
# Stand-ins while many strings are unescaped at once; a text holding any of them is left to the careful path.
_ITEM_END, _BACKSLASH, _QUOTE = "\x00", "\x01", "\x02"


class _Scan:
    """The entries of a PO text in the everyday shape, column by column (None where an entry has no such part).

    notes, references: the comments of an entry in the shape Gloss writes (a stripped `#.` note line, a `#:`
    line), else comments: its comment block (`#` lines, each ending with a newline); contexts, msgids,
    plurals: strings as matched (`"a"`, or `"a"\n"b"` continued); msgstrs: `msgstr[n]` lines of plural
    entries; msgstr: the msgstr of singular entries.
    """

    def __init__(self, parts: list[str | None]) -> None:
        step = _SCAN_GROUPS + 1
        columns = [parts[group::step] for group in range(1, _SCAN_GROUPS)]
        self.notes, self.references, self.comments = columns[:3]
        self.contexts, self.msgids, self.plurals, self.msgstrs, self.msgstr = columns[3:]

    def __len__(self) -> int:
        return len(self.msgids)

    def block(self, row: int) -> str:
        """The comment block of an entry, as written in the file."""
        note, references = self.notes[row], self.references[row]
        if note is None and references is None:
            return self.comments[row] or ""
        return (f"#. {note}\n" if note is not None else "") + (f"#: {references}\n" if references is not None else "")

    def delete(self, row: int) -> None:
        """Forget one entry (the header, once read)."""
        for column in (self.notes, self.references, self.comments, self.contexts, self.msgids, self.plurals,
                       self.msgstrs, self.msgstr):
            del column[row]


def _scan_po(text: str) -> _Scan | None:
    """The entries of a PO text in the everyday shape, or None when some part of it is not."""
    if _ITEM_END in text or _BACKSLASH in text or _QUOTE in text:
        return None
    parts: list[str | None] = _SCAN_ENTRY.split(text)
    rest = parts[-2] if len(parts) > 1 else None
    if rest is not None:
        if rest.strip("\n"):
            return None
        del parts[-(_SCAN_GROUPS + 1):]  # only blank lines after the last entry
    scan = _Scan(parts)
    return scan if len(scan) else None  # no entry at all: the careful parsers say what the file is


def _catalogue_of_scan(scan: _Scan, options: ReadOptions) -> Catalogue:
    """Scanned entries as a catalogue, the same as `catalogue_of(parse_po(text))` gives; _Unsure on any doubt.

    Strings are unescaped column by column; entries without flags or translator comments (most of a file) go
    to the reader as columns, the others as messages.
    """
    keys = _values(scan.msgids)  # type: ignore[arg-type]  # every entry has a msgid
    header_at = _header_index(keys, scan.contexts)
    header = None
    if header_at is not None:
        # Apart from the others: its lines and escapes would send the whole msgstr column the longer way.
        header = _scanned_message(scan.block(header_at), None, keys[header_at], scan.plurals[header_at],
                                  scan.msgstrs[header_at], _values([scan.msgstr[header_at] or '""'])[0])
        scan.delete(header_at)
        del keys[header_at]
    contexts = _values_or_empty(scan.contexts)  # "" for none: the header is the only entry where that matters
    texts = _values([text or '""' for text in scan.msgstr])
    reader = MessageReader(header_fields_of(header), options, lambda: any(
        any(_scanned_message(scan.block(row), contexts[row], keys[row], scan.plurals[row], scan.msgstrs[row],
                             texts[row]).msgstr) for row in range(len(keys))))
    notes = [note or "" for note in scan.notes]
    references = [line.split() if line else [] for line in scan.references]
    messages, plurals = _messages_of_odd_rows(scan, keys, contexts, texts, notes, references)
    reader.add_columns(keys, texts, contexts, notes, references, messages, plurals)
    return reader.build()


def _messages_of_odd_rows(scan: _Scan, keys: list[str], contexts: list[str], texts: list[str],
                          notes: list[str], references: list[list[str]]
                          ) -> tuple[dict[int, Message], dict[int, tuple[str, list[str]]]]:
    """Row -> message for the entries that are not a plain message in the shape Gloss writes (flags, translator
    comments: a comment block of other notes and references only is filed into `notes` and `references`
    instead), and row -> (msgid_plural, msgstr[n] strings) for the plain plural ones."""
    plurals, comments = scan.plurals, scan.comments
    messages: dict[int, Message] = {}
    rows = range(len(plurals))
    plural_rows = list(compress(rows, plurals))  # a scanned string is never empty: present means true
    for row in compress(rows, comments):
        block: str = comments[row]  # type: ignore[assignment]  # compress: a comment block is there
        if plurals[row] is None:
            notes_and_references = _plain_comments(block)
            if notes_and_references is not None:
                notes[row], references[row] = notes_and_references
            else:
                messages[row] = _scanned_message(block, contexts[row], keys[row], None, None, texts[row])
    plain_plurals: dict[int, tuple[str, list[str]]] = {}
    if not plural_rows:
        return messages, plain_plurals
    # The msgstr[n] lines of every plural entry, read and unescaped at once, as the other columns: a line
    # starts each form (a newline never is inside a string), and the scan took whole lines.
    blocks: list[str] = [scan.msgstrs[row] for row in plural_rows]  # type: ignore[misc]
    counts = [block.count("\nmsgstr[") + 1 for block in blocks]
    lines = _SCAN_MSGSTR.findall("".join(blocks))
    if list(map(itemgetter(0), lines)) != list(chain.from_iterable(map(_form_indices, counts))):
        raise _Unsure  # out of order: the line parser names the line
    forms = iter(_values(list(map(itemgetter(1), lines))))
    plural_texts = _values([plurals[row] for row in plural_rows])  # type: ignore[misc]
    for row, count, plural_text in zip(plural_rows, counts, plural_texts):
        comment_block = comments[row]
        if comment_block is None:  # comments in the shape Gloss writes, already in the columns
            plain_plurals[row] = (plural_text, list(islice(forms, count)))
        else:
            messages[row] = message = Message(keys[row], list(islice(forms, count)), contexts[row], plural_text,
                                              [], [], [], [], 0)
            _comments_into(message, comment_block)
    return messages, plain_plurals


def _form_indices(count: int) -> list[str]:
    """The indices `msgstr[n]` lines must have, in order: "0", "1"..."""
    if count < len(_FORM_INDICES):
        return _FORM_INDICES[count]
    return [str(index) for index in range(count)]


_FORM_INDICES = [[str(index) for index in range(count)] for count in range(8)]


def _header_index(keys: list[str], contexts: list[str | None]) -> int | None:
    """Where the header entry is: the first with an empty msgid and no msgctxt."""
    found = -1
    try:
        while True:
            found = keys.index("", found + 1)
            if contexts[found] is None:
                return found
    except ValueError:
        return None


def _scanned_message(block: str, context: str | None, key: str, plural: str | None, msgstrs: str | None,
                     text: str) -> Message:
    """A scanned entry (its msgid, msgctxt and singular msgstr already unescaped) as a message."""
    if msgstrs is not None:
        strings = _SCAN_MSGSTR.findall(msgstrs)
        if [index for index, _ in strings] != [str(i) for i in range(len(strings))]:
            raise _Unsure  # out of order: the line parser names the line
        forms = _values([value for _, value in strings])
    else:
        forms = [text]
    message = Message(key, forms, context, None if plural is None else _values([plural])[0], [], [], [], [], 0)
    if block:
        _comments_into(message, block)
    return message


def _values_or_empty(strings: list[str | None]) -> list[str]:
    """`_values` of a column where some entries have no such string (those get "")."""
    if strings.count(None) == len(strings):
        return [""] * len(strings)
    present = iter(_values([value for value in strings if value is not None]))
    return ["" if value is None else next(present) for value in strings]


def _values(strings: list[str]) -> list[str]:
    """The values of scanned strings (`"a"`, or `"a"\n"b"` continued on lines), unescaped all at once.

    One pass of C-level counts and replaces over their concatenation instead of Python steps per string.
    Without escaped backslashes, every backslash starts an escape, and no line's last quote is escaped (the
    scan takes no such line), so the quotes that are neither a line's first nor its last must all be escaped
    ones; with escaped backslashes, see `_values_with_escaped_backslashes`. Any bare quote: _Unsure.
    """
    if not strings:
        return []
    joined = _ITEM_END.join(strings)
    if joined[0] != '"' or joined[-1] != '"':
        raise _Unsure
    # The joined strings keep their outer quotes (a copy without them would be one more large string).
    text = joined
    escaped_quotes = 0
    backslashes = joined.count("\\") if "\\" in joined else 0  # `in` is a far quicker scan than `count`
    if backslashes:
        text = joined.replace('\\"', '"')
        escaped_quotes = len(joined) - len(text)
        # A backslash before each quote and nowhere else (the usual case) spares a slow search.
        if backslashes != escaped_quotes and "\\\\" in joined:
            return _values_with_escaped_backslashes(joined, strings)
    breaks = joined.count("\n") if "\n" in joined else 0  # each joins the lines of a string: `"a"\n"b"`
    if joined.count('"') != 2 * (len(strings) + breaks) + escaped_quotes:
        raise _Unsure
    if breaks:
        text = text.replace('"\n"', "")
    if backslashes != escaped_quotes:
        resolved = _resolve_escapes(text)
        if resolved is None:
            return [_scan_value(value) for value in strings]
        text = resolved
    # Escapes give no NUL here (octal and hex ones went the other way), so each `"NUL"` is a separator.
    values = text.split(f'"{_ITEM_END}"')
    values[0] = values[0][1:]
    values[-1] = values[-1][:-1]
    return values


def _values_with_escaped_backslashes(joined: str, strings: list[str]) -> list[str]:
    """`_values` of joined strings that hold escaped backslashes: those, then escaped quotes, are set aside as
    stand-ins, so that any quote left inside a string is a bare one."""
    joined = joined.replace("\\\\", _BACKSLASH)
    if '\\"' in joined:
        joined = joined.replace('\\"', _QUOTE)
    if '"\n"' in joined:  # no string holds a newline, so every `"\n"` joins a continued string's lines
        joined = joined.replace('"\n"', "")
    inner = joined[1:-1].replace(f'"{_ITEM_END}"', _ITEM_END)
    if '"' in inner or joined[0] != '"' or joined[-1] != '"':
        raise _Unsure
    if "\\" in inner:
        resolved = _resolve_escapes(inner)
        if resolved is None:
            return [_scan_value(value) for value in strings]
        inner = resolved
    if _QUOTE in inner:
        inner = inner.replace(_QUOTE, '"')
    if _BACKSLASH in inner:
        inner = inner.replace(_BACKSLASH, "\\")
    return inner.split(_ITEM_END)


def _resolve_escapes(inner: str) -> str | None:
    """Joined string bodies with their escapes resolved (escaped backslashes and quotes already set aside);
    None when some are octal or hex escapes, whose length depends on what follows: `\\1` ending one line and
    `2` starting the next are two characters, joined they would be one, so such strings go one by one."""
    if _WIDE_ESCAPE.search(inner):
        return None
    inner = inner.replace("\\n", "\n").replace("\\t", "\t")
    if "\\" in inner:
        try:
            inner = _ESCAPE.sub(lambda match: _unescape(match, None), inner)
        except ParseError:  # an unknown escape: the line parser names its line
            raise _Unsure from None
    return inner


def _scan_value(strings: str) -> str:
    """The value of one scanned string, line by line (strings with octal or hex escapes)."""
    pieces = strings[1:-1].split('"\n"')
    for piece in pieces:
        if _ESCAPED_BODY.fullmatch(piece) is None:
            raise _Unsure
    try:
        return "".join([_unescape_all(piece, None) if "\\" in piece else piece for piece in pieces])
    except ParseError:
        raise _Unsure from None


class _PoParser:
    """Line-driven state machine over PO syntax; ParseError names the offending line."""

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
            raise ParseError(
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
            raise ParseError(f"unexpected text {line[:40]!r}: expected msgctxt, msgid, msgstr or a string", number)
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
                raise ParseError(f"msgstr[{position}] out of order (expected msgstr[{len(message.msgstr)}])", number)
            message.msgstr.append(value)
        self.seen.append(keyword)
        self.target = (keyword, int(index) if index is not None else 0)

    def _check_order(self, keyword: str, index: str | None, number: int) -> None:
        """Keywords must come as msgctxt? msgid msgid_plural? msgstr..., with [n] exactly for plurals."""
        seen = self.seen
        if keyword == "msgctxt" and seen:
            raise ParseError("msgctxt must come before msgid", number)
        if keyword == "msgid" and "msgid" in seen:
            raise ParseError("second msgid in one message (missing msgstr?)", number)
        if keyword in ("msgid_plural", "msgstr") and "msgid" not in seen:
            raise ParseError(f"{keyword} without a preceding msgid", number)
        if keyword == "msgid_plural" and ("msgid_plural" in seen or "msgstr" in seen):
            raise ParseError("misplaced msgid_plural", number)
        if keyword == "msgstr":
            plural = "msgid_plural" in seen
            if plural and index is None:
                raise ParseError("plural message needs msgstr[n], found plain msgstr", number)
            if not plural and index is not None:
                raise ParseError(f"msgstr[{index}] on a message without msgid_plural", number)
            if not plural and "msgstr" in seen:
                raise ParseError("second msgstr in one message", number)

    def _continuation(self, line: str, number: int) -> None:
        """A string line continuing the last keyword's value."""
        if self.target is None:
            raise ParseError("string without a keyword before it", number)
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
            raise ParseError("file ends inside a message without msgstr", self.current.line)
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
            raise ParseError(f"malformed string {rest[:40]!r} (unbalanced quote or trailing text)", number)
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
    raise ParseError(f"invalid escape sequence \\{sequence}", number)
