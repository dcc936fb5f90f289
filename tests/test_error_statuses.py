"""Storage and formats errors say what went wrong; app/errors.py alone maps them to HTTP statuses."""
from __future__ import annotations

import inspect

import pytest

import formats.errors
import storage.errors
from app.errors import status_of_error
from formats.errors import CharsetError, KeyCollision, NothingExtracted, ParseError, TooLarge, UnsupportedFormat
from storage.errors import Busy, DiskFull, Invalid, NotFound, StorageUnavailable, storage_fault
from storage.git.refs import RefMoved
from storage.receive import Refused

LAYER_ERRORS = [cls for module in (storage.errors, formats.errors)
                for _, cls in inspect.getmembers(module, inspect.isclass)
                if issubclass(cls, Exception) and cls.__module__ == module.__name__]


@pytest.mark.parametrize("error_class", LAYER_ERRORS, ids=lambda cls: cls.__name__)
def test_no_storage_or_formats_error_carries_an_http_status(error_class: type) -> None:
    assert not {"status", "http_status"} & set(vars(error_class))


@pytest.mark.parametrize(("error", "status"), [
    (NotFound("x"), 404), (Invalid("x"), 422), (Busy("x"), 503), (RefMoved("x"), 409), (Refused("x"), 400),
    (DiskFull("x"), 507), (StorageUnavailable("x"), 503),
    (ParseError("x", 3), 422), (TooLarge("x"), 413), (UnsupportedFormat("x"), 400), (NothingExtracted("x"), 204),
    (CharsetError("x"), 406), (KeyCollision("x"), 409),
], ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value))
def test_the_api_answers_each_layer_error_with_its_status(error: Exception, status: int) -> None:
    assert status_of_error(error) == status


@pytest.mark.parametrize(("errno_name", "status"), [("ENOSPC", 507), ("EROFS", 503), ("EACCES", 503), ("EIO", 503)])
def test_a_refusing_disk_is_answered_by_what_it_refused(errno_name: str, status: int) -> None:
    import errno

    fault = storage_fault(OSError(getattr(errno, errno_name), "refused"))
    assert fault is not None and status_of_error(fault) == status
