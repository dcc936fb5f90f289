"""Translation writes, shared by the API and the web pages: translate, erase, flag, unflag."""
from __future__ import annotations

from flask import g

from storage import operations as ops
from storage.snapshot import Snapshot
from storage.trailers import Action, Trailer, about

from ..context import now, write


def save_translation(asset_id: str, locale: str, text: str) -> Snapshot:
    """Store `text` as the translation (the next revision); an empty text marks it untranslated (Loco 1.0.29)."""
    if text == "":
        with write(f"Untranslate {asset_id} [{locale}]", Action.UNTRANSLATE,
                   about(asset_id, locale)) as tx:
            if tx.translation(asset_id, locale) is not None:
                ops.untranslate(tx, asset_id, locale)
        return tx.result
    with write(f"Translate {asset_id} [{locale}]", Action.TRANSLATE, about(asset_id, locale)) as tx:
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
