"""Tag writes: create, put on many assets, rename, delete."""
from __future__ import annotations

from storage import operations as ops
from storage.trailers import Action, about

from ..context import now, write
from ..errors import ApiError


def create_tag(name: str) -> None:
    """A new tag (409 when the project has it)."""
    with write(f"Create tag {name.strip()}", Action.CREATE_TAG, about(tag=name.strip())) as tx:
        if not ops.create_tag(tx, name):
            raise ApiError(409, "Tag already exists")


def tag_assets(tag: str, ids: list[str]) -> None:
    """Put `tag` on every asset of `ids` in one commit (404 naming those the project lacks, and nothing done)."""
    with write(f"Tag {len(ids)} assets {tag}", Action.TAG_ASSETS, about(tag=tag)) as tx:
        missing = [asset_id for asset_id in ids if not tx.has_asset(asset_id)]
        if missing:
            raise ApiError(404, f"Asset not in project: {', '.join(missing[:10])}")
        for asset_id in ids:
            ops.tag_asset(tx, asset_id, tag, now())


def rename_tag(tag: str, name: str) -> None:
    with write(f"Rename tag {tag} to {name}", Action.RENAME_TAG, about(tag=tag)) as tx:
        ops.rename_tag(tx, tag, name, now())


def delete_tag(tag: str) -> None:
    with write(f"Delete tag {tag}", Action.DELETE_TAG, about(tag=tag)) as tx:
        ops.delete_tag(tx, tag, now())
