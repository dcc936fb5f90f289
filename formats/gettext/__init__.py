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
TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing

from .common import FORMAT_FLAGS, Message, header_fields, messages, parse_header
from .po_reader import _parse_po_fast, decode_po, parse_po, parse_po_lines, read_po
from .po_writer import po_body, po_head, write_po

__all__ = [
    "FORMAT_FLAGS", "Message", "header_fields", "messages", "parse_header", "parse_mo", "read_mo", "write_mo",
    "_parse_po_fast", "decode_po", "parse_po", "parse_po_lines", "po_body", "po_head", "read_po",
    "write_po",
]

if TYPE_CHECKING:
    from .mo import parse_mo, read_mo, write_mo


def __getattr__(name: str) -> object:
    """The MO functions, imported on first use: converting PO files never needs them."""
    if name in ("parse_mo", "read_mo", "write_mo"):
        from . import mo

        return getattr(mo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
