"""The demo project: replays sample_repo/demo.json through the storage API, one commit per history step."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from storage import operations as ops
from storage.gitrepo import Person
from storage.keys import KeyStore
from storage.project import Project
from storage.store import Store, utc_now
from storage.trailers import Action

from .locales import display_name

SAMPLE = Path(__file__).resolve().parent.parent / "sample_repo" / "demo.json"
OWNER = ops.Actor(1, "Demo Owner", "owner@acme.example")


def _utc(stamp: datetime) -> str:
    return stamp.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def seed_demo(store: Store, keys: KeyStore, sample: Path = SAMPLE) -> tuple[Project, str]:
    """Create the demo project with its history and return it with a new full-access key."""
    data = json.loads(sample.read_text("utf-8"))
    first = datetime.fromisoformat(data["history"][0]["date"]) - timedelta(days=2)
    owner = Person(OWNER.name, OWNER.email)
    project = store.create_project(data["name"], data["source"], display_name(data["source"]), owner,
                                   when=first.timestamp())
    when = first + timedelta(hours=1)
    with project.transaction(owner, "Add locales " + ", ".join(data["locales"][1:]), Action.ADD_LOCALE,
                             when=when.timestamp()) as tx:
        for code in data["locales"][1:]:
            ops.add_locale(tx, code, display_name(code))
    when += timedelta(hours=1)
    with project.transaction(owner, f"Add {len(data['assets'])} assets with their English text", Action.CREATE_ASSET,
                             when=when.timestamp()) as tx:
        for asset in data["assets"]:
            _create_asset(tx, asset, _utc(when))
    users: dict[str, ops.Actor] = {}
    for step in data["history"]:
        _replay(project, step, users)
    return project, owner_key(keys, project)


def owner_key(keys: KeyStore, project: Project) -> str:
    """A new full-access key of the demo project's owner."""
    key, _ = keys.create(project.id, "full", OWNER.name, OWNER.email, utc_now())
    return key


def _create_asset(tx, asset: dict, now: str) -> None:
    fields = dict(text=asset["text"], type=asset["type"], context=asset["context"], notes=asset["notes"],
                  printf=asset["printf"], tags=asset["tags"], actor=OWNER)
    if asset.get("plural_of"):
        ops.add_plural(tx, asset["plural_of"], now, pid=asset["id"], text=asset["text"], actor=OWNER)
        ops.patch_asset(tx, asset["id"], {"notes": asset["notes"]}, now)
        for tag in asset["tags"]:
            ops.tag_asset(tx, asset["id"], tag, now)
    else:
        ops.create_asset(tx, asset["id"], now, **fields)


def _replay(project: Project, step: dict, users: dict[str, ops.Actor]) -> None:
    author = step["author"]
    actor = users.setdefault(author["email"], ops.Actor(100 + len(users), author["name"], author["email"]))
    stamp = datetime.fromisoformat(step["date"])
    now = _utc(stamp)
    with project.transaction(Person(author["name"], author["email"]), step["message"], Action.SEED,
                             when=stamp.timestamp()) as tx:
        for locale, texts in step.get("translations", {}).items():
            for asset_id, text in texts.items():
                ops.translate(tx, asset_id, locale, text, actor, now)
        for locale, flags in step.get("flags", {}).items():
            for asset_id, flag in flags.items():
                ops.flag(tx, asset_id, locale, flag, actor, now)
