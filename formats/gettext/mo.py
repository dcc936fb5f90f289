"""MO: the compiled binary catalogue, written (little-endian, no hash table) and read (either byte order)."""
from __future__ import annotations

import re
import struct

from ..catalogue import Catalogue
from ..charsets import text_codec
from ..document import ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..pipeline import encode_header_text
from .common import Message, catalogue_of, header_fields, messages

_MO_MAGIC = 0x950412DE


def write_mo(doc: ExportDocument) -> bytes:
    """A little-endian MO file of the translated messages, sorted as gettext expects."""
    header = "".join(f"{name}: {value}\n" for name, value in header_fields(doc))
    pairs = [(b"", encode_header_text(header, doc.charset))]
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


# --- reading MO ------------------------------------------------------------------------------------


def read_mo(data: bytes, options: ReadOptions) -> Catalogue:
    """A compiled MO file as a catalogue."""
    return catalogue_of(parse_mo(data), options)


def parse_mo(data: bytes) -> list[Message]:
    """The messages of an MO file (either byte order)."""
    if len(data) < 28:
        raise ParseError(f"not an MO file: {len(data)} bytes is shorter than the 28-byte header")
    order = _mo_byte_order(data)
    revision, count, originals_at, translations_at = struct.unpack(order + "4I", data[4:20])
    if revision >> 16 > 1:
        raise ParseError(f"unsupported MO revision {revision >> 16}")
    raw = [
        (_mo_string(data, order, originals_at, i), _mo_string(data, order, translations_at, i)) for i in range(count)
    ]
    charset = _mo_charset(raw)
    return [_mo_message(original, translated, charset, number) for number, (original, translated) in enumerate(raw, 1)]


def _mo_byte_order(data: bytes) -> str:
    """`<` or `>` from the magic number, or ParseError."""
    if struct.unpack("<I", data[:4])[0] == _MO_MAGIC:
        return "<"
    if struct.unpack(">I", data[:4])[0] == _MO_MAGIC:
        return ">"
    raise ParseError(f"not an MO file: bad magic number 0x{data[:4].hex()}")


def _mo_string(data: bytes, order: str, table_at: int, index: int) -> bytes:
    """String number `index` of a string table, bounds-checked."""
    row_at = table_at + 8 * index
    if row_at + 8 > len(data):
        raise ParseError(f"MO entry {index + 1}: string table runs past the end of the file")
    length, offset = struct.unpack(order + "2I", data[row_at:row_at + 8])
    if offset + length > len(data):
        raise ParseError(f"MO entry {index + 1}: string at offset {offset} runs past the end of the file")
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
                    raise ParseError(f"unknown charset {name[:40]!r} in the MO header: it must name a text "
                                      "encoding")
                return codec
    return "utf-8"


def _mo_message(original: bytes, translated: bytes, charset: str, number: int) -> Message:
    """One MO pair as a message: context before EOT, plural forms separated by NUL."""
    try:
        key, value = original.decode(charset), translated.decode(charset)
    except (UnicodeDecodeError, LookupError):
        raise ParseError(f"MO entry {number}: text is not valid {charset}") from None
    context, _, msgid = key.rpartition("\x04") if "\x04" in key else (None, "", key)
    msgid, _, plural = msgid.partition("\0")
    return Message(
        msgid=msgid, msgctxt=context, msgid_plural=plural if "\0" in key else None,
        msgstr=value.split("\0"), line=number,
    )
