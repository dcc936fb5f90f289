"""Which codec names are character sets: Python's codec registry also holds bytes-to-bytes transforms
(base64, hex, zlib, rot13) and special codecs (idna, punycode, undefined) that are not file encodings."""
from __future__ import annotations

import codecs
import re

# Text codecs that are nonetheless no file encoding: host names, escapes, and the always-failing one.
_NOT_FILE_ENCODINGS = {"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "mbcs", "oem",
                       "utf-7"}


def text_codec(name: str) -> str | None:
    """The Python codec name of a real text encoding, or None for an unknown name or a non-text codec.

    >>> text_codec("latin-1"), text_codec("rot13"), text_codec("base64"), text_codec("idna")
    ('iso8859-1', None, None, None)
    """
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name.replace("_", "-") in _NOT_FILE_ENCODINGS:
        return None
    return info.name


def charset_label(codec_name: str) -> str:
    """A codec name spelled the way file headers do (UTF-8, ISO-8859-15, windows-1252)."""
    match = re.fullmatch(r"iso8859-(\d+)", codec_name)
    if match:
        return f"ISO-8859-{match.group(1)}"
    match = re.fullmatch(r"cp(125\d)", codec_name)
    if match:
        return f"windows-{match.group(1)}"
    return codec_name.upper()
