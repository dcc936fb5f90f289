"""Asset writes: create, edit, delete, plural forms, tags on one asset."""
from __future__ import annotations

from typing import Any

from flask import g

from storage import operations as ops
from storage.snapshot import Snapshot
from storage.trailers import Action, Trailer, about

from ..context import now, write


def create_asset(asset_id: str, text: str | None, fields: dict[str, Any]) -> tuple[Snapshot, str]:
    """A new asset, named `asset_id` or (when empty) after its source `text`; (committed snapshot, its ID)."""
    if asset_id:
        ops.check_addressable(asset_id)
    with write(f"Add asset {asset_id or (text or '')[:60]}", Action.CREATE_ASSET) as tx:
        if not asset_id:
            asset_id = ops.unique_asset_id(tx, text or "")
        tx.trailers.append((Trailer.ASSET, asset_id))
        ops.create_asset(tx, asset_id, now(), text=text, type=fields.get("type") or "text",
                         context=fields.get("context", ""), notes=fields.get("notes", ""),
                         default=fields.get("default") or "translated", actor=g.actor)
    return tx.result, asset_id


def edit_asset(asset_id: str, changes: dict[str, Any]) -> tuple[Snapshot, str]:
    """Patch an asset's properties (a new `id` renames it); (committed snapshot, its final ID)."""
    if isinstance(changes.get("id"), str):
        ops.check_addressable(changes["id"])
    with write(f"Edit asset {asset_id}", Action.EDIT_ASSET, about(asset_id)) as tx:
        final_id = ops.patch_asset(tx, asset_id, changes, now())
    return tx.result, final_id


def delete_asset(asset_id: str) -> None:
    with write(f"Delete asset {asset_id}", Action.DELETE_ASSET, about(asset_id)) as tx:
        ops.delete_asset(tx, asset_id)


def add_plural(asset_id: str, pid: str, text: str | None) -> tuple[Snapshot, str]:
    """A plural form of `asset_id` (named `pid`, or after its asset when empty); (committed snapshot, its ID)."""
    pid = ops.check_addressable(pid) if pid else ""
    with write(f"Add plural form to {asset_id}", Action.ADD_PLURAL, about(asset_id)) as tx:
        pid = ops.add_plural(tx, asset_id, now(), pid=pid, text=text, actor=g.actor)
        tx.trailers.append((Trailer.PLURAL, pid))
    return tx.result, pid


def unlink_plural(asset_id: str, pid: str) -> None:
    with write(f"Unlink plural {pid} from {asset_id}", Action.UNLINK_PLURAL, about(asset_id, plural=pid)) as tx:
        ops.unlink_plural(tx, asset_id, pid, now())


def tag_asset(asset_id: str, tag: str) -> Snapshot:
    with write(f"Tag {asset_id} {tag}", Action.TAG_ASSET, about(asset_id, tag=tag)) as tx:
        ops.tag_asset(tx, asset_id, tag, now())
    return tx.result


def untag_asset(asset_id: str, tag: str) -> None:
    with write(f"Untag {asset_id} {tag}", Action.UNTAG_ASSET, about(asset_id, tag=tag)) as tx:
        ops.untag_asset(tx, asset_id, tag, now())
