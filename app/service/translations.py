"""Translation writes, shared by the API and the web pages: translate, erase, flag, unflag."""
from __future__ import annotations

from flask import g

from storage import TranslationRecord
from storage import operations as ops
from storage.snapshot import Snapshot
from storage.transaction import Transaction
from storage.trailers import Action, Trailer, about

from ..context import now, write
from ..errors import ApiError


class TextChanged(ApiError):
    """A save that started from a text which is no longer the stored one: nothing was written (409)."""

    def __init__(self, current: TranslationRecord | None):
        super().__init__(409, "The translation changed since you started: nothing was saved")
        self.current = current  # the stored entry (None: untranslated meanwhile)


def _require_started_from(tx: Transaction, asset_id: str, locale: str, started_from: str | None) -> None:
    """Checked inside the write, under the project's lock: a save never overwrites a text its author has not
    seen. `started_from` None: no check (the API's plain POST)."""
    current = tx.translation(asset_id, locale)
    if started_from is None:
        return
    stored = current["text"] if current else ""
    if stored.replace("\r\n", "\n") != started_from.replace("\r\n", "\n"):  # a form sends line breaks as CRLF
        raise TextChanged(current)


def save_translation(asset_id: str, locale: str, text: str, started_from: str | None = None) -> Snapshot:
    """Store `text` as the translation (the next revision); an empty text marks it untranslated (Loco 1.0.29).

    `started_from`: the text the writer saw ("" for none); when the stored one differs, TextChanged.
    """
    if text == "":
        with write(f"Untranslate {asset_id} [{locale}]", Action.UNTRANSLATE,
                   about(asset_id, locale)) as tx:
            _require_started_from(tx, asset_id, locale, started_from)
            if tx.translation(asset_id, locale) is not None:
                ops.untranslate(tx, asset_id, locale)
        return tx.result
    with write(f"Translate {asset_id} [{locale}]", Action.TRANSLATE, about(asset_id, locale)) as tx:
        _require_started_from(tx, asset_id, locale, started_from)
        entry = ops.translate(tx, asset_id, locale, text, g.actor, now())
        tx.trailers.append((Trailer.REVISION, str(entry["rev"])))
    return tx.result


def erase_translation(asset_id: str, locale: str) -> Snapshot:
    """Delete a translation (the API's DELETE: the entry is gone, whatever it held)."""
    with write(f"Erase {asset_id} [{locale}]", Action.UNTRANSLATE, about(asset_id, locale)) as tx:
        ops.untranslate(tx, asset_id, locale)
    return tx.result


def set_flag(asset_id: str, locale: str, name: str) -> Snapshot:
    with write(f"Flag {asset_id} [{locale}] as {name}", Action.FLAG, about(asset_id, locale, flag=name)) as tx:
        ops.flag(tx, asset_id, locale, name, g.actor, now())
    return tx.result


def clear_flag(asset_id: str, locale: str) -> Snapshot:
    with write(f"Unflag {asset_id} [{locale}]", Action.UNFLAG, about(asset_id, locale)) as tx:
        ops.unflag(tx, asset_id, locale)
    return tx.result
