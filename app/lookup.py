"""What a request names in the project: an asset, a locale; 404 when the project has none (routes and pages)."""
from __future__ import annotations

from storage.snapshot import Snapshot

from .context import path_value
from .errors import ApiError
from .locales import resolve_project_locale


def find_asset(snapshot: Snapshot, asset_id: str, exact: bool = False) -> str:
    """The asset a request names; in a path, `x.json` may be the asset `x` or, failing that, the asset
    `x.json` (`exact`: a form field, which has no suffix to strip)."""
    found = (asset_id if snapshot.has_asset(asset_id) else None) if exact else path_value(asset_id, snapshot.has_asset)
    if found is None:
        raise ApiError(404, "Asset not in project")
    return found


def find_locale(snapshot: Snapshot, code: str) -> str:
    """The project locale a request names, in any spelling (`fr_FR` finds `fr-FR`)."""
    found = resolve_project_locale(code, [record["code"] for record in snapshot.locales()])
    if found is None:
        raise ApiError(404, "Locale not in project")
    return found
