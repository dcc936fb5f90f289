"""ICU binary resource bundles (`.res`, as genrb writes and ICU's ures_open / derb read them).

Layout (ICU "ResB" data, little-endian, UTF-16):

    header   uint16 headerSize, 0xDA 0x27, UDataInfo {size, reserved, isBigEndian, charsetFamily,
             sizeofUChar=2, reserved, "ResB", formatVersion[4], dataVersion[4]}, zero padding
    data     Resource root; int32 indexes[length, keysTop, resourcesTop, bundleTop, maxTableLength,
             attributes, 16BitTop, poolChecksum...]; key strings (NUL-terminated, invariant chars);
             from formatVersion 2 a 16-bit unit area; then 32-bit aligned resources.

A Resource is a 32-bit word: type in the top 4 bits, offset (or value) in the lower 28. Offsets of
32-bit resources count 32-bit units from the root word, offsets of 16-bit resources count 16-bit
units from the start of the 16-bit area, key offsets count bytes from the root word.

| type | name        | content                                                                    |
|------|-------------|----------------------------------------------------------------------------|
| 0    | STRING      | int32 length, UTF-16 units, NUL (offset 0 = "")                            |
| 1    | BINARY      | int32 length, bytes                                                        |
| 2    | TABLE       | uint16 count, uint16 key offsets, padding, Resource items                  |
| 3    | ALIAS       | like STRING                                                                |
| 4    | TABLE32     | int32 count, int32 key offsets, Resource items                             |
| 5    | TABLE16     | (16-bit area) count, key offsets, 16-bit string items                     |
| 6    | STRING_V2   | (16-bit area) NUL-terminated, or length in 1-3 lead units 0xDC00-0xDFFF    |
| 7    | INT         | 28-bit signed value                                                        |
| 8    | ARRAY       | int32 count, Resource items                                                |
| 9    | ARRAY16     | (16-bit area) count, 16-bit string items                                   |
| 14   | INT_VECTOR  | int32 count, int32 values                                                  |

Reading accepts all of these (formatVersion 1 to 3, without pool bundles). Writing uses
formatVersion 2 with STRING, TABLE and, when a table's keys outgrow 16-bit offsets, TABLE32; keys in
each table sorted by their bytes, as ICU's binary search requires. A `.res` holds no bundle name, so
the locale comes from the request.
"""
from __future__ import annotations

import struct
from typing import Any

from limits import MAX_NESTING_DEPTH

from ..catalogue import Catalogue
from ..document import ExportDocument
from ..errors import ExportError, ParseError
from ..options import ReadOptions
from .tree import Opaque, catalogue_of_tree, tree_of_document

STRING, BINARY, TABLE, ALIAS, TABLE32, TABLE16, STRING_V2, INT, ARRAY, ARRAY16 = range(10)
INT_VECTOR = 14
_INDEX_LENGTH, _KEYS_TOP, _RESOURCES_TOP, _BUNDLE_TOP, _MAX_TABLE_LENGTH, _ATTRIBUTES, _16BIT_TOP = range(7)
_POOL_FLAGS = 6  # URES_ATT_IS_POOL_BUNDLE | URES_ATT_USES_POOL_BUNDLE
_HEADER_SIZE = 32
_DATA_VERSION = bytes((1, 4, 0, 0))


# --- reading ---------------------------------------------------------------------------------------


class _Reader:
    """Bounds-checked access to the data part of a .res file; every error names the byte offset."""

    def __init__(self, data: bytes, base: int) -> None:
        self.data = data
        self.base = base  # file offset of the root word
        self.keys_limit = 0
        self.units16 = 0  # file offset of the 16-bit area
        self.units16_end = 0
        # Resources visited: a genuine file references each container once, so more visits than bytes means
        # tables pointing at each other (a crafted file that would otherwise expand exponentially).
        self.budget = len(data)

    def fail(self, message: str, offset: int) -> ParseError:
        """ParseError naming the file offset."""
        return ParseError(f"ICU .res file is truncated or corrupt: {message} (byte {offset} of {len(self.data)})")

    def need(self, offset: int, size: int, what: str) -> None:
        """Fail unless bytes [offset, offset+size) exist."""
        if offset < 0 or offset + size > len(self.data):
            raise self.fail(f"{what} runs past the end of the file", offset)

    def int32(self, offset: int, what: str) -> int:
        self.need(offset, 4, what)
        return struct.unpack_from("<i", self.data, offset)[0]

    def uint32(self, offset: int, what: str) -> int:
        self.need(offset, 4, what)
        return struct.unpack_from("<I", self.data, offset)[0]

    def uint16(self, offset: int, what: str) -> int:
        self.need(offset, 2, what)
        return struct.unpack_from("<H", self.data, offset)[0]

    def utf16(self, offset: int, length: int, what: str) -> str:
        """`length` UTF-16 units at offset."""
        self.need(offset, 2 * length, what)
        try:
            return self.data[offset:offset + 2 * length].decode("utf-16-le", "surrogatepass").encode(
                "utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise self.fail(f"{what} holds an unpaired surrogate", offset) from None

    def key(self, offset: int) -> str:
        """The NUL-terminated key at a byte offset from the root."""
        if offset >= self.keys_limit:
            raise self.fail(f"key offset {offset} points outside the key area (pool bundles are not supported)",
                            self.base + offset)
        start = self.base + offset
        end = self.data.find(b"\x00", start, self.base + self.keys_limit)
        if end < 0:
            raise self.fail("a key is not terminated", start)
        return self.data[start:end].decode("ascii", "replace")

    def string16(self, offset16: int) -> str:
        """A STRING_V2 at a 16-bit offset."""
        position = self.units16 + 2 * offset16
        if position >= self.units16_end and offset16:
            raise self.fail(f"16-bit string offset {offset16} is outside the 16-bit area", position)
        first = self.uint16(position, "a string")
        if not 0xDC00 <= first <= 0xDFFF:
            end = position
            while self.uint16(end, "a NUL-terminated string"):
                end += 2
            return self.utf16(position, (end - position) // 2, "a string")
        if first < 0xDFEF:
            return self.utf16(position + 2, first & 0x3FF, "a string")
        if first < 0xDFFF:
            length = ((first - 0xDFEF) << 16) | self.uint16(position + 2, "a string length")
            return self.utf16(position + 4, length, "a string")
        length = (self.uint16(position + 2, "a string length") << 16) | self.uint16(position + 4, "a string length")
        return self.utf16(position + 6, length, "a string")

    def resource(self, word: int, depth: int = 0) -> Any:
        """The value of a Resource word."""
        self.budget -= 1
        if depth > MAX_NESTING_DEPTH or self.budget < 0:
            raise self.fail("resources nest too deeply or refer to each other in a loop", self.base)
        kind, offset = word >> 28, word & 0x0FFFFFFF
        at = self.base + 4 * offset
        if kind in (STRING, ALIAS):
            if kind == STRING and offset == 0:
                return ""
            length = self.int32(at, "a string length")
            value = self.utf16(at + 4, length, "a string")
            return value if kind == STRING else Opaque("alias", value)
        if kind == STRING_V2:
            return self.string16(offset)
        if kind == INT:
            return Opaque("int", offset - (1 << 28) if offset & (1 << 27) else offset)
        if kind == BINARY:
            length = self.int32(at, "a binary length") if offset else 0
            self.need(at + 4, length, "a binary")
            return Opaque("bin", self.data[at + 4:at + 4 + length].hex())
        if kind == INT_VECTOR:
            count = self.int32(at, "an int vector length") if offset else 0
            self.need(at + 4, 4 * count, "an int vector")
            return Opaque("intvector", list(struct.unpack_from(f"<{count}i", self.data, at + 4)))
        if kind in (TABLE, TABLE32, TABLE16):
            return self.table(kind, offset, at, depth)
        if kind in (ARRAY, ARRAY16):
            return self.array(kind, offset, at, depth)
        raise self.fail(f"unknown resource type {kind}", at)

    def table(self, kind: int, offset: int, at: int, depth: int) -> dict[str, Any]:
        """A TABLE, TABLE32 or TABLE16."""
        if offset == 0 and kind != TABLE16:
            return {}
        if kind == TABLE:
            count = self.uint16(at, "a table")
            keys = [self.uint16(at + 2 + 2 * i, "table keys") for i in range(count)]
            items_at = at + 2 + 2 * (count + (~count & 1))
            items = [self.uint32(items_at + 4 * i, "table items") for i in range(count)]
        elif kind == TABLE32:
            count = self.int32(at, "a table")
            if count < 0 or at + 8 * count > len(self.data):
                raise self.fail(f"a table of {count} items runs past the end of the file", at)
            keys = [self.int32(at + 4 + 4 * i, "table keys") for i in range(count)]
            items = [self.uint32(at + 4 + 4 * count + 4 * i, "table items") for i in range(count)]
        else:
            start = self.units16 + 2 * offset
            count = self.uint16(start, "a 16-bit table")
            keys = [self.uint16(start + 2 + 2 * i, "table keys") for i in range(count)]
            items = [(STRING_V2 << 28) | self.uint16(start + 2 + 2 * (count + i), "table items") for i in range(count)]
        return {self.key(key): self.resource(item, depth + 1) for key, item in zip(keys, items)}

    def array(self, kind: int, offset: int, at: int, depth: int) -> list[Any]:
        """An ARRAY or ARRAY16."""
        if kind == ARRAY:
            if offset == 0:
                return []
            count = self.int32(at, "an array")
            if count < 0 or at + 4 * count > len(self.data):
                raise self.fail(f"an array of {count} items runs past the end of the file", at)
            items = [self.uint32(at + 4 + 4 * i, "array items") for i in range(count)]
        else:
            start = self.units16 + 2 * offset
            count = self.uint16(start, "a 16-bit array")
            items = [(STRING_V2 << 28) | self.uint16(start + 2 + 2 * i, "array items") for i in range(count)]
        return [self.resource(item, depth + 1) for item in items]


def _check_header(data: bytes) -> tuple[int, int]:
    """(header size, format version major) after checking the ICU data header of a ResB file."""
    if len(data) < 24:
        raise ParseError(f"ICU .res file is truncated: {len(data)} bytes, shorter than its 24-byte header")
    header_size, magic1, magic2 = struct.unpack_from("<HBB", data, 0)
    if (magic1, magic2) != (0xDA, 0x27):
        raise ParseError("not an ICU .res file: the header does not start with ICU's magic bytes DA 27 (byte 2)")
    big_endian, charset_family, uchar_size = data[8], data[9], data[10]
    if data[12:16] != b"ResB":
        raise ParseError(f"not an ICU resource bundle: data format {data[12:16]!r} instead of 'ResB' (byte 12)")
    if big_endian or charset_family or uchar_size != 2:
        raise ParseError("ICU .res file is big-endian or EBCDIC; only little-endian ASCII bundles are read (byte 8)")
    version = data[16]
    if not 1 <= version <= 3:
        raise ParseError(f"ICU .res formatVersion {version} is not supported (1 to 3 are) (byte 16)")
    if header_size < 24 or header_size + 4 > len(data):
        raise ParseError(f"ICU .res file is truncated: its header announces {header_size} bytes of "
                          f"{len(data)} in the file (byte 0)")
    return header_size, version


def read_res(data: bytes, options: ReadOptions) -> Catalogue:
    """A binary resource bundle as units of the requested locale."""
    base, version = _check_header(data)
    reader = _Reader(data, base)
    root = reader.uint32(base, "the root resource")
    if version > 1 or data[17] >= 1:
        length = reader.int32(base + 4, "the index table") & 0xFF
        if length <= _MAX_TABLE_LENGTH:
            raise reader.fail(f"the index table has only {length} entries", base + 4)
        indexes = [reader.int32(base + 4 + 4 * i, "the index table") for i in range(length)]
        if 4 * indexes[_BUNDLE_TOP] > len(data) - base:
            raise reader.fail(f"the bundle announces {4 * indexes[_BUNDLE_TOP]} bytes of data but only "
                              f"{len(data) - base} follow the header", len(data))
        if length > _ATTRIBUTES and indexes[_ATTRIBUTES] & _POOL_FLAGS:
            raise ParseError("ICU .res file uses a pool bundle (genrb --usePoolBundle), which is not supported")
        reader.keys_limit = 4 * indexes[_KEYS_TOP]
        reader.units16 = base + reader.keys_limit
        reader.units16_end = base + 4 * indexes[_16BIT_TOP] if length > _16BIT_TOP else reader.units16
    else:
        reader.keys_limit = len(data) - base
    if root >> 28 not in (TABLE, TABLE32, TABLE16, ARRAY, ARRAY16):
        raise reader.fail("the root resource is not a table", base)
    tree = reader.resource(root)
    if isinstance(tree, list):
        tree = {str(index): item for index, item in enumerate(tree)}
    return catalogue_of_tree(tree, options, None)


# --- writing ---------------------------------------------------------------------------------------


class _Writer:
    """Lays out keys then resources (32-bit units from the root word) of one bundle."""

    def __init__(self, key_area_start: int) -> None:
        self.keys = bytearray()
        self.key_offsets: dict[str, int] = {}
        self.key_area_start = key_area_start  # byte offset of the key area from the root
        self.resources: list[bytes] = []
        self.units = 0  # 32-bit units of resources so far (offsets are fixed once keys are known)
        self.max_table = 0
        self.strings: dict[str, int] = {}

    def key(self, name: str) -> int:
        """Byte offset (from the root) of a key, added once."""
        found = self.key_offsets.get(name)
        if found is None:
            found = self.key_offsets[name] = self.key_area_start + len(self.keys)
            self.keys += name.encode("ascii") + b"\x00"
        return found

    def collect_keys(self, table: dict[str, Any]) -> None:
        """Every key of the tree, before any resource, so that the resources' start is known."""
        for name in sorted(table, key=_key_bytes):
            self.key(name)
            if isinstance(table[name], dict):
                self.collect_keys(table[name])

    def add(self, block: bytes) -> int:
        """Append a 4-byte aligned block; returns its offset in 32-bit units from the resources' start."""
        offset = self.units
        self.resources.append(block)
        self.units += len(block) // 4
        return offset

    def string(self, text: str, first_unit: int) -> int:
        """Resource word of a string (shared when repeated)."""
        if not text:
            return STRING << 28
        if text not in self.strings:
            units = text.encode("utf-16-le", "surrogatepass")
            block = struct.pack("<i", len(units) // 2) + units + b"\x00\x00"
            block += b"\x00" * (-len(block) % 4)
            self.strings[text] = first_unit + self.add(block)
        return (STRING << 28) | self.strings[text]

    def table(self, table: dict[str, Any], first_unit: int) -> int:
        """Resource word of a table, its children written first."""
        names = sorted(table, key=_key_bytes)
        items = []
        for name in names:
            value = table[name]
            items.append(self.table(value, first_unit) if isinstance(value, dict) else self.string(value, first_unit))
        self.max_table = max(self.max_table, len(names))
        offsets = [self.key_offsets[name] for name in names]
        if len(names) < 0x10000 and all(offset < 0x10000 for offset in offsets):
            head = struct.pack(f"<H{len(names)}H", len(names), *offsets)
            head += b"\x00" * (-len(head) % 4)
            block, kind = head + struct.pack(f"<{len(items)}I", *items), TABLE
        else:
            block = struct.pack(f"<i{len(names)}i{len(items)}I", len(names), *offsets, *items)
            kind = TABLE32
        if first_unit + self.units >= 1 << 28:
            raise ExportError("the bundle is too large for an ICU .res file (256 MiB of resources)")
        return (kind << 28) | (first_unit + self.add(block))


def _key_bytes(name: str) -> bytes:
    """A key's sort key: ICU looks keys up by binary search over their bytes."""
    return name.encode("ascii")


def _data_header() -> bytes:
    """The ICU data header of a little-endian ASCII "ResB" formatVersion 2 file."""
    info = struct.pack("<HHBBBB4s4s4s", 20, 0, 0, 0, 2, 0, b"ResB", bytes((2, 0, 0, 0)), _DATA_VERSION)
    header = struct.pack("<HBB", _HEADER_SIZE, 0xDA, 0x27) + info
    return header + b"\x00" * (_HEADER_SIZE - len(header))


def res_bytes(tree: dict[str, Any]) -> bytes:
    """A complete .res file of a table of strings and nested tables."""
    index_length = 7
    writer = _Writer(key_area_start=4 * (1 + index_length))
    writer.collect_keys(tree)
    keys = bytes(writer.keys) + b"\xaa" * (-len(writer.keys) % 4)
    keys_top = 1 + index_length + len(keys) // 4  # in 32-bit units from the root
    root = writer.table(tree, keys_top) if tree else TABLE << 28
    bundle_top = keys_top + writer.units
    indexes = [index_length, keys_top, bundle_top, bundle_top, writer.max_table, 0, keys_top]
    data = struct.pack("<I7i", root, *indexes) + keys + b"".join(writer.resources)
    return _data_header() + data


def write_res(doc: ExportDocument) -> bytes:
    """The exported locale as a binary resource bundle."""
    return res_bytes(tree_of_document(doc))
