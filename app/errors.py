"""One error type for the HTTP layer and the handlers that render every failure as `{"status", "error"}`."""
from __future__ import annotations

import json

from flask import Flask
from werkzeug.exceptions import HTTPException

from formats.errors import (CharsetError, ExportError, FormatsError, KeyCollision, LimitExceeded, NothingExtracted,
                            OptionError, ParseError, TooLarge, UnsupportedFormat)
from storage.errors import (Busy, Conflict, DiskFull, Invalid, NotFound, StorageError, StorageUnavailable,
                            storage_fault)

from limits import describe

from .jsonio import render


# How the API answers each error of the layers below: they say what went wrong, this table alone says which
# HTTP status that is. An error takes the status of its nearest class here (a subclass may differ from its base).
STATUS_OF: dict[type[Exception], int] = {
    StorageError: 400, NotFound: 404, Conflict: 409, Invalid: 422, Busy: 503, DiskFull: 507,
    StorageUnavailable: 503,
    FormatsError: 400, ParseError: 422, TooLarge: 413, UnsupportedFormat: 400, NothingExtracted: 204,
    OptionError: 400, ExportError: 400, CharsetError: 406, KeyCollision: 409, LimitExceeded: 422,
}


def status_of_error(error: StorageError | FormatsError) -> int:
    """The HTTP status that answers an error of storage or formats."""
    return next(STATUS_OF[cls] for cls in type(error).__mro__ if cls in STATUS_OF)


class ApiError(Exception):
    """An HTTP error with a message for the client."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def error_payload(status: int, message: str) -> dict[str, int | str]:
    """The service's one error shape: `{"status": <code>, "error": "<what is wrong>"}`."""
    return {"status": status, "error": message}


def error_bytes(status: int, message: str) -> bytes:
    """The error shape as a JSON body, for answers made outside Flask (the HTTP server's own refusals, Git over
    HTTP, the writer relay)."""
    return (json.dumps(error_payload(status, message)) + "\n").encode()


def error_response(status: int, message: str, headers: dict[str, str] | None = None):
    response = render(error_payload(status, message), status)
    if status == 401:
        response.status = "401 Authorization Required"  # Loco's reason phrase; one client looks for it
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(error: ApiError):
        return error_response(error.status, error.message, error.headers)

    @app.errorhandler(StorageError)
    def _storage_error(error: StorageError):
        return error_response(status_of_error(error), error.message)

    @app.errorhandler(FormatsError)
    def _format_error(error: FormatsError):
        return error_response(status_of_error(error), error.message)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException):
        messages = {404: "Not found", 405: "Method not allowed",
                    413: f"Request body too large {describe('max_body_bytes')}"}
        allowed = getattr(error, "valid_methods", None)
        headers = {"Allow": ", ".join(allowed)} if allowed else None
        message = getattr(error, "gloss_message", None) or messages.get(error.code or 500, error.description or error.name)
        return error_response(error.code or 500, message, headers)

    @app.errorhandler(OSError)
    def _os_error(error: OSError):
        fault = storage_fault(error)
        if fault is None:
            return _unexpected(error)
        app.logger.warning("storage fault: %s", fault.message)
        return error_response(status_of_error(fault), fault.message, {"Retry-After": "60"})

    @app.errorhandler(RecursionError)
    def _too_deep(error: RecursionError):
        return error_response(400, f"Input nested too deeply {describe('max_nesting_depth')}")

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):
        app.logger.exception("unhandled error")
        return error_response(500, "Internal error")
