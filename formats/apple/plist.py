"""Property lists, XML (`plist`) and binary (`bplist`, also `blist` on import), through `plistlib`.

Reading: the top level is a dictionary; every string leaf is a unit, nested dictionaries and arrays
giving dotted keys (`CFBundleURLTypes.0.CFBundleURLName`); a dictionary whose keys are all CLDR
plural categories is one plural unit. Numbers, booleans, dates and data are not text and are skipped.
Writing: a flat dictionary key -> text of the target locale; plural units as {category: text};
untranslated units left out (a plist has no null).
"""
from __future__ import annotations

import plistlib
import struct
from typing import Any
from xml.parsers.expat import ExpatError

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ExportError, ParseError
from ..nesting import is_plural_object
from ..nesting import fold
from ..options import ReadOptions
from ..reading import CatalogueBuilder, plural_translation

BINARY_MAGIC = b"bplist00"
_TRAILER = struct.Struct(">6xBBQQQ")  # the last 32 bytes of a binary plist


def load_plist(data: bytes) -> Any:
    """The value of an XML or binary property list; ParseError names the line or byte where it breaks."""
    if data.startswith(BINARY_MAGIC):
        check_binary_layout(data)
    elif data.lstrip()[:1] not in (b"<", b""):
        raise ParseError("not a property list: expected XML (<?xml ... <plist>) or binary (bplist00)", 1)
    try:
        return plistlib.loads(data)
    except ExpatError as error:
        raise ParseError(f"invalid XML in property list: {_expat_reason(error)} (column {error.offset})",
                          error.lineno) from None
    except (plistlib.InvalidFileException, ValueError, TypeError, KeyError, IndexError, OverflowError,
            struct.error, UnicodeDecodeError, RecursionError) as error:
        kind = "binary property list" if data.startswith(BINARY_MAGIC) else "property list"
        raise ParseError(f"invalid {kind}: {error or type(error).__name__}") from None


def _expat_reason(error: ExpatError) -> str:
    """Expat's message without its own ': line x, column y' suffix (the ParseError says the line)."""
    return str(error).split(":")[0]


def check_binary_layout(data: bytes) -> None:
    """Refuse a truncated or corrupt binary plist with the byte offsets that do not fit.

    The trailer (last 32 bytes) gives the offset table's position and size; every offset in the table
    must point inside the object area. plistlib's own message does not say where the file breaks.
    """
    size = len(data)
    if size < len(BINARY_MAGIC) + _TRAILER.size:
        raise ParseError(f"binary property list is truncated: {size} bytes, too short for the 32-byte trailer")
    offset_size, ref_size, count, top, table_offset = _TRAILER.unpack_from(data, size - _TRAILER.size)
    trailer_start = size - _TRAILER.size
    if offset_size not in (1, 2, 4, 8) or ref_size not in (1, 2, 4, 8):
        raise ParseError(f"binary property list is truncated or corrupt: no valid trailer at byte {trailer_start}")
    table_end = table_offset + count * offset_size
    if table_offset < len(BINARY_MAGIC) or table_end > trailer_start:
        raise ParseError(
            f"binary property list is truncated or corrupt: its offset table (bytes {table_offset}-{table_end}) "
            f"does not fit before the trailer at byte {trailer_start}"
        )
    if top >= count:
        raise ParseError(f"binary property list is corrupt: top object {top} of {count} objects")
    for index in range(count):
        start = table_offset + index * offset_size
        offset = int.from_bytes(data[start:start + offset_size], "big")
        if not len(BINARY_MAGIC) <= offset < table_offset:
            raise ParseError(
                f"binary property list is truncated or corrupt: object {index} at byte {offset} lies outside "
                f"the object area (bytes {len(BINARY_MAGIC)}-{table_offset})"
            )


def top_dictionary(value: Any, what: str) -> dict[str, Any]:
    """The top-level dictionary of a property list, or ParseError."""
    if not isinstance(value, dict):
        raise ParseError(f"{what}: the top level must be a dictionary, found {type(value).__name__}")
    return value


def _text_leaves(tree: dict[str, Any]) -> list[tuple[str, Any]]:
    """(dotted key, leaf) pairs whose leaf is a string or a plural dictionary."""
    return [(key, value) for key, value in fold(tree, is_plural_object) if isinstance(value, str) or
            is_plural_object(value)]


def read_plist(data: bytes, options: ReadOptions) -> Catalogue:
    """An XML or binary property list (both are recognised by their first bytes)."""
    tree = top_dictionary(load_plist(data), "property list")
    builder = CatalogueBuilder(options, "id")
    for key, value in _text_leaves(tree):
        if isinstance(value, str):
            builder.add(key, Translation(text=value))
        else:
            builder.add(key, plural_translation(value, builder.locale), plural=True)
    return builder.build()


def _value(entry: Entry, doc: ExportDocument) -> str | dict[str, str] | None:
    """An entry's plist value in the target locale: text, {category: text}, or None when untranslated."""
    locale = doc.locale or doc.source_locale
    if doc.template:
        return entry.translation(doc.source_locale).text or entry.key
    if entry.unit.plural:
        return entry.plural_forms(locale, doc.rules(locale).forms) or None
    return entry.translation(locale).text


def plist_tree(doc: ExportDocument) -> dict[str, Any]:
    """The flat dictionary written by both plist flavours."""
    tree: dict[str, Any] = {}
    for entry in doc.entries:
        value = _value(entry, doc)
        if value is not None:
            tree[entry.key] = value
    return tree


def dump_plist(value: Any, fmt: plistlib.PlistFormat) -> bytes:
    """plistlib's output; ExportError when a text holds what XML cannot (control characters)."""
    try:
        return plistlib.dumps(value, fmt=fmt, sort_keys=False)
    except (ValueError, TypeError, OverflowError) as error:
        raise ExportError(f"cannot write a property list: {error}") from None


def xml_plist(value: Any, banner: list[str]) -> bytes:
    """An XML plist with Loco's banner as a comment after the DOCTYPE."""
    data = dump_plist(value, plistlib.FMT_XML)
    if not banner:
        return data
    comment = "\n".join(" " + line.replace("--", "- -") for line in banner)
    head, _, rest = data.partition(b"<plist")
    return head + f"<!--\n{comment}\n-->\n".encode() + b"<plist" + rest


def write_plist(doc: ExportDocument) -> bytes:
    """XML property list."""
    return xml_plist(plist_tree(doc), doc.banner)


def write_bplist(doc: ExportDocument) -> bytes:
    """Binary property list (no room for a banner)."""
    return dump_plist(plist_tree(doc), plistlib.FMT_BINARY)
