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


class StorageFault(StorageError):
    """The disk refused a write (full, read-only, not permitted); `status` says which."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def storage_fault(error: OSError) -> StorageFault | None:
    """The client-facing meaning of an OSError from the data directory, or None for an unexpected one."""
    import errno

    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFault(f"Insufficient storage: the data directory is full ({reason}); nothing was "
                            "changed", 507)
    if error.errno == errno.EROFS:
        return StorageFault(f"Storage unavailable: the data directory is read-only ({reason}); nothing "
                            "was changed", 503)
    if error.errno in (errno.EACCES, errno.EPERM):
        return StorageFault(f"Storage unavailable: the data directory is not writable ({reason}); nothing "
                            "was changed", 503)
    if error.errno == errno.EIO:
        return StorageFault(f"Storage unavailable: input/output error ({reason})", 503)
    return None
