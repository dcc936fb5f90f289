"""Errors raised by the storage layer; the HTTP layer maps each to a status code."""


class StorageError(Exception):
    """Base class; `status` is the HTTP status the API answers with."""

    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(StorageError):
    status = 404


class Conflict(StorageError):
    status = 409


class Invalid(StorageError):
    status = 422


class Busy(StorageError):
    """Someone else (a git process) holds a lock long enough that the write gives up; retrying later works."""

    status = 503
