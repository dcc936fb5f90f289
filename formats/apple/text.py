"""Decoding Apple text files: UTF-8 or UTF-16/32 announced by a byte-order mark, never guessed."""
from __future__ import annotations

from ..errors import ParseError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"),
)


def decode_text(data: bytes, what: str) -> str:
    """Text of a file: UTF-8, or UTF-16/32 with a BOM; UTF-16 without a BOM is refused with its place.

    Byte-order marks repeated at the start (an editor that saved a file's BOM as text, as in real UTF-16
    Localizable.strings files) are dropped with the first: U+FEFF there is never content.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return _decoded(data, codec, what).lstrip("\ufeff")
    nul = data.find(b"\x00", 0, 4096)
    if nul >= 0:
        order = "little-endian" if nul % 2 else "big-endian"
        raise ParseError(
            f"{what} looks like UTF-16 ({order}) without a byte-order mark (NUL byte at offset {nul}); "
            "save it as UTF-8 or as UTF-16 with a BOM"
        )
    return _decoded(data, "utf-8", what)


def _decoded(data: bytes, codec: str, what: str) -> str:
    """The bytes decoded, or ParseError naming the line (UTF-8) or byte offset where decoding stopped."""
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        if codec.startswith("utf-8"):
            line = data.count(b"\n", 0, error.start) + 1
            raise ParseError(f"{what} is not valid UTF-8 (byte {error.start})", line) from None
        raise ParseError(f"{what} is not valid {codec.upper()} (byte {error.start})") from None
