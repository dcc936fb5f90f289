"""Locale writes: add, edit (code, name), delete."""
from __future__ import annotations

from storage import operations as ops
from storage.snapshot import Snapshot
from storage.trailers import Action, about

from ..context import write
from ..locales import display_name


def add_locale(code: str) -> Snapshot:
    """A new locale named as CLDR names it; the committed snapshot."""
    with write(f"Add locale {code}", Action.ADD_LOCALE, about(locale=code)) as tx:
        ops.add_locale(tx, code, display_name(code))
    return tx.result


def edit_locale(locale: str, new_code: str | None, name: str | None) -> tuple[Snapshot, str]:
    """A new code and/or name for a locale; (committed snapshot, its final code)."""
    with write(f"Edit locale {locale}", Action.EDIT_LOCALE, about(locale=locale)) as tx:
        final = ops.patch_locale(tx, locale, new_code, name)
    return tx.result, final


def delete_locale(locale: str) -> None:
    with write(f"Delete locale {locale}", Action.DELETE_LOCALE, about(locale=locale)) as tx:
        ops.delete_locale(tx, locale)
