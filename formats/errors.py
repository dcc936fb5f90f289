"""Exceptions raised by the format layer; each carries the HTTP status the API should answer with.

`FormatsError` is the package's base class (as `StorageError` is storage's): the app answers any of them by its
status. `ParseError` is the one readers raise for a file they cannot read.
"""
from __future__ import annotations


class FormatsError(Exception):
    """Base class of every error the format layer raises on purpose."""

    http_status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ParseError(FormatsError):
    """A file a reader cannot read (broken, unsafe, or missing what it needs): the message names the line or
    element where the file stops making sense."""

    http_status = 422

    def __init__(self, message: str, line: int | None = None) -> None:
        # The line number is both kept for callers and spelled out in the text a user reads.
        text = f"line {line}: {message}" if line is not None else message
        super().__init__(text)
        self.line = line
        self.reason = message


class TooLarge(ParseError):
    """Input beyond a format's size limit (the XML family refuses files above a fixed size)."""

    http_status = 413


class UnsupportedFormat(FormatsError):
    """An extension/variant combination (or an operation on it) that no registered format handles."""

    http_status = 400


class NothingExtracted(FormatsError):
    """The source parsed but held no translatable units (the convert API answers 204)."""

    http_status = 204


class OptionError(FormatsError):
    """An option value outside its vocabulary (index, order, collisions, breaks, printf...); lists the valid ones."""

    http_status = 400


class ExportError(FormatsError):
    """The catalogue cannot be rendered as asked (its data conflicts with the requested options)."""

    http_status = 400


class CharsetError(ExportError):
    """The requested charset is unknown or cannot hold a character of the export."""

    http_status = 406


class KeyCollision(ExportError):
    """Two units map to the same key (or a key and its dotted child) and collisions=fail was asked for."""

    http_status = 409


class LimitExceeded(FormatsError):
    """The input goes beyond one of the limits in limits.py (nesting, units, formula size, parse time)."""

    http_status = 422
