"""Exceptions raised by the format layer: each says what went wrong; the HTTP layer alone maps them to statuses
(app/errors.py).

`FormatsError` is the package's base class (as `StorageError` is storage's): the app maps each to its
status. `ParseError` is the one readers raise for a file they cannot read.
"""
from __future__ import annotations


class FormatsError(Exception):
    """Base class of every error the format layer raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ParseError(FormatsError):
    """A file a reader cannot read (broken, unsafe, or missing what it needs): the message names the line or
    element where the file stops making sense."""

    def __init__(self, message: str, line: int | None = None) -> None:
        # The line number is both kept for callers and spelled out in the text a user reads.
        text = f"line {line}: {message}" if line is not None else message
        super().__init__(text)
        self.line = line
        self.reason = message


class TooLarge(ParseError):
    """Input beyond a format's size limit (the XML family refuses files above a fixed size)."""


class UnsupportedFormat(FormatsError):
    """An extension/variant combination (or an operation on it) that no registered format handles."""


class NothingExtracted(FormatsError):
    """The source parsed but held no translatable units (the convert API answers 204)."""


class OptionError(FormatsError):
    """An option value outside its vocabulary (index, order, collisions, breaks, printf...); lists the valid ones."""


class ExportError(FormatsError):
    """The catalogue cannot be rendered as asked (its data conflicts with the requested options)."""


class CharsetError(ExportError):
    """The requested charset is unknown or cannot hold a character of the export."""


class KeyCollision(ExportError):
    """Two units map to the same key (or a key and its dotted child) and collisions=fail was asked for."""


class LimitExceeded(FormatsError):
    """The input goes beyond one of the limits in limits.py (nesting, units, formula size, parse time)."""
