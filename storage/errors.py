"""Errors raised by the storage layer: each says what went wrong; the HTTP layer alone maps them to statuses
(app/errors.py)."""


class StorageError(Exception):
    """Base class: a request storage refuses as it stands."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(StorageError):
    """What the request names does not exist."""


class Conflict(StorageError):
    """The request contradicts what exists (a duplicate, a moved head)."""


class Invalid(StorageError):
    """A value storage would not keep."""


class Busy(StorageError):
    """Someone else (a git process) holds a lock long enough that the write gives up; retrying later works."""


class StorageFault(StorageError):
    """The disk refused a write: nothing was changed, and retrying later may work."""


class DiskFull(StorageFault):
    """The data directory has no space (or quota) left."""


class StorageUnavailable(StorageFault):
    """The data directory cannot be written (read-only, not permitted, input/output error)."""


def storage_fault(error: OSError) -> StorageFault | None:
    """The client-facing meaning of an OSError from the data directory, or None for an unexpected one."""
    import errno

    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"Insufficient storage: the data directory is full ({reason}); nothing was changed")
    if error.errno == errno.EROFS:
        return StorageUnavailable(f"Storage unavailable: the data directory is read-only ({reason}); nothing "
                                  "was changed")
    if error.errno in (errno.EACCES, errno.EPERM):
        return StorageUnavailable(f"Storage unavailable: the data directory is not writable ({reason}); nothing "
                                  "was changed")
    if error.errno == errno.EIO:
        return StorageUnavailable(f"Storage unavailable: input/output error ({reason})")
    return None
