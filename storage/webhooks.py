"""Webhooks: the events a commit raises, and the hooks of each project, kept beside the repositories.

    DATA/webhooks/<project>.json     the project's hooks: URL, events, secret, cursor, failures, recent attempts

A hook's cursor is a commit id of the project's branch: the last commit delivered to it (or, for a new hook,
the head when it was made). Delivery (app/webhooks.py) walks the first-parent history after the cursor and
moves the cursor only once the receiver accepted a delivery, so nothing a hook should hear of is lost by a
crash: a commit is delivered again at worst. The secrets are here, never in a repository (like DATA/keys.json);
the file is replaced atomically (temp file, fsync, rename, directory fsync) under a lock every process shares.
On a cluster, `HookStore.mirror` copies every change to the other nodes before it is saved here (cluster.webhooks).
"""
from __future__ import annotations

import base64
import binascii
import json
import secrets
import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable

from filelock import FileLock

from limits import MAX_WEBHOOKS_PER_PROJECT, WEBHOOK_DELIVERIES_KEPT, describe

from .errors import Invalid, NotFound
from .git import durable
from .trailers import Action
from .watched import WatchedJson

TEXTS_CHANGED = "translation.changed"
BRANCH_MERGED = "branch.merged"
# The events a hook may subscribe to, in the order a delivery lists them.
EVENTS = (TEXTS_CHANGED, "asset.created", "asset.changed", "asset.deleted", "locale.added", "locale.removed",
          "import.finished", "push.applied", BRANCH_MERGED)

# The one table from a commit's Action trailer to the events it raises. A commit whose action is not here
# (creating the project, renaming a locale, creating an empty tag) raises none, except that any commit that
# changed a translation's entry also raises `translation.changed` (an asset created with its source text, a
# locale renamed with its texts). The branches' merge is plugged in by its action name, Action.MERGE_BRANCH.
EVENTS_OF_ACTION: dict[str, tuple[str, ...]] = {
    Action.TRANSLATE: (TEXTS_CHANGED,),
    Action.UNTRANSLATE: (TEXTS_CHANGED,),
    Action.FLAG: (TEXTS_CHANGED,),
    Action.UNFLAG: (TEXTS_CHANGED,),
    Action.CREATE_ASSET: ("asset.created",),
    Action.EDIT_ASSET: ("asset.changed",),
    Action.ADD_PLURAL: ("asset.changed",),
    Action.UNLINK_PLURAL: ("asset.changed",),
    Action.TAG_ASSET: ("asset.changed",),
    Action.UNTAG_ASSET: ("asset.changed",),
    Action.TAG_ASSETS: ("asset.changed",),
    Action.RENAME_TAG: ("asset.changed",),
    Action.DELETE_TAG: ("asset.changed",),
    Action.DELETE_ASSET: ("asset.deleted",),
    Action.ADD_LOCALE: ("locale.added",),
    Action.DELETE_LOCALE: ("locale.removed",),
    Action.IMPORT: ("import.finished",),
    Action.PUSH: ("push.applied",),
    Action.MERGE_BRANCH: (BRANCH_MERGED,),
}


def events_of(action: str, changed_texts: bool) -> tuple[str, ...]:
    """The events a commit raises, in EVENTS order."""
    raised = set(EVENTS_OF_ACTION.get(action, ()))
    if changed_texts:
        raised.add(TEXTS_CHANGED)
    return tuple(event for event in EVENTS if event in raised)


def parse_events(given: str | Iterable[str] | None) -> list[str]:
    """A hook's events from a comma-separated list (or a list): `*`, nothing or an empty list mean all."""
    names = given.split(",") if isinstance(given, str) else list(given or [])
    names = [name.strip() for name in names if isinstance(name, str) and name.strip()]
    if not names or "*" in names:
        return ["*"]
    unknown = sorted(set(names) - set(EVENTS))
    if unknown:
        raise Invalid(f"Unknown event {unknown[0]!r}: events are {', '.join(EVENTS)} (or *)")
    return [event for event in EVENTS if event in names]


@dataclass
class Hook:
    """One hook as stored (the secret included: never rendered but once, when the hook is made)."""

    id: str
    url: str
    events: list[str]
    secret: str  # whsec_<base64>, Standard Webhooks' form
    cursor: str  # the last commit delivered (the head when the hook was made)
    created: str
    coalesce: float = 0.0  # seconds: the commits made in this window after the first one go in one delivery
    failures: int = 0  # failed attempts since the last success
    failing_since: float | None = None  # time of the first of those failures
    next_attempt: float = 0.0  # no attempt before this time (the backoff)
    failing: bool = False  # still failing after webhook_retry_seconds
    deliveries: list[dict[str, Any]] = field(default_factory=list)  # the latest attempts, newest first

    def wants(self, events: Iterable[str]) -> list[str]:
        """The events of this list the hook subscribed to."""
        return [event for event in events if "*" in self.events or event in self.events]

    def public(self) -> dict[str, Any]:
        """What the API shows of the hook: everything but the secret and the attempts."""
        shown = {name: value for name, value in asdict(self).items() if name not in ("secret", "deliveries")}
        shown["last_delivery"] = self.deliveries[0] if self.deliveries else None
        return shown

    def record(self, attempt: dict[str, Any]) -> None:
        self.deliveries = [attempt, *self.deliveries][:WEBHOOK_DELIVERIES_KEPT]

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Hook":
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in record.items() if name in known})


ANY = object()  # HookStore.replace whatever the file holds


class HookStore:
    """The hooks of every project, one file per project, re-read only when it changes on disk."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._watched: dict[str, WatchedJson[list[Hook]]] = {}  # the deliverer's cached looks, per project
        self._cache_lock = threading.Lock()
        # Called with every change before it is saved here: (project, the file's new bytes or None when the
        # project has no hook left, whether the change must reach the other copies). A cluster node sets it
        # (cluster.webhooks); raising refuses the change, nothing saved.
        self.mirror: Callable[[str, bytes | None, bool], None] | None = None

    def _path(self, project: str) -> Path:
        return self.directory / f"{project}.json"

    def projects(self) -> list[str]:
        """The projects that have hooks."""
        return sorted(path.name[:-5] for path in self.directory.glob("*.json"))

    def hooks(self, project: str, cached: bool = False) -> list[Hook]:
        """The project's hooks (copies: change them through `update`). `cached`: as last read by this process
        unless the file's stamp changed, for the deliverer's frequent looks; a stamp can stay the same across a
        change (an inode reused within one tick of the file system's clock), so such a look may be outdated:
        what it decides is checked again on a fresh read."""
        path = self._path(project)
        if not cached:
            return self._load(path)
        watched = self._watched.get(project)
        if watched is None:
            with self._cache_lock:
                watched = self._watched.setdefault(project, WatchedJson(path, _hooks_in, []))
        return [Hook.from_record(asdict(hook)) for hook in watched.read()]

    def hook(self, project: str, hook_id: str) -> Hook:
        found = next((hook for hook in self.hooks(project) if hook.id == hook_id), None)
        if found is None:
            raise NotFound("No such webhook")
        return found

    def add(self, project: str, url: str, events: list[str], secret: str, cursor: str, created: str,
            coalesce: float = 0.0) -> Hook:
        hook = Hook(id="wh" + secrets.token_hex(6), url=url, events=events, secret=secret, cursor=cursor,
                    created=created, coalesce=coalesce)

        def add_one(hooks: list[Hook]) -> None:
            if len(hooks) >= MAX_WEBHOOKS_PER_PROJECT:
                raise Invalid(f"Too many webhooks in this project {describe('max_webhooks_per_project')}")
            hooks.append(hook)

        self._change(project, add_one, required=True)
        return hook

    def remove(self, project: str, hook_id: str) -> None:
        def remove_one(hooks: list[Hook]) -> None:
            kept = [hook for hook in hooks if hook.id != hook_id]
            if len(kept) == len(hooks):
                raise NotFound("No such webhook")
            hooks[:] = kept

        self._change(project, remove_one, required=True)

    def update(self, project: str, hook_id: str, change: Callable[[Hook], None]) -> Hook:
        """Apply `change` to the stored hook (NotFound when it was deleted meanwhile); the hook as saved. The
        deliverer's changes (cursor, failures): a copy elsewhere that misses one only delivers again."""
        changed: list[Hook] = []

        def update_one(hooks: list[Hook]) -> None:
            hook = next((hook for hook in hooks if hook.id == hook_id), None)
            if hook is None:
                raise NotFound("No such webhook")
            change(hook)
            changed.append(hook)

        self._change(project, update_one)
        return changed[0]

    def raw(self, project: str) -> bytes | None:
        """The project's file as stored (None: no hook): what a cluster node copies to the others."""
        try:
            return self._path(project).read_bytes()
        except FileNotFoundError:
            return None

    def replace(self, project: str, data: bytes | None, expected: bytes | None | object = ANY) -> bool:
        """Take another copy's file whole (a cluster node, from the project's leader), checked and durable;
        with `expected`, only if the file here still holds that (False otherwise)."""
        if data is not None:
            _hooks_in(json.loads(data))  # (a file this store could not read is refused before it is kept)
        path = self._path(project)
        with FileLock(str(path) + ".lock"):
            if expected is not ANY and self.raw(project) != expected:
                return False
            self._write(path, data)
        return True

    # ----------------------------------------------------------------- the file
    def _change(self, project: str, change: Callable[[list[Hook]], None], required: bool = False) -> None:
        path = self._path(project)
        with FileLock(str(path) + ".lock"):
            hooks = self._load(path)
            change(hooks)
            data = _encode(hooks) if hooks else None
            if self.mirror is not None:
                self.mirror(project, data, required)
            self._write(path, data)

    @staticmethod
    def _write(path: Path, data: bytes | None) -> None:
        """Replace the file atomically and durably (a crash leaves the old file or the new one, whole), or
        remove it."""
        if data is None:
            durable.unlink_quietly(path)
        else:
            durable.replace_durably(path, data, 0o600)

    @staticmethod
    def _load(path: Path) -> list[Hook]:
        try:
            return _hooks_in(json.loads(path.read_bytes()))
        except FileNotFoundError:
            return []



def _encode(hooks: list[Hook]) -> bytes:
    return json.dumps({"hooks": [asdict(hook) for hook in hooks]}, ensure_ascii=False).encode("utf-8")


def _hooks_in(data: Any) -> list[Hook]:
    """The hooks a project's file holds."""
    return [Hook.from_record(record) for record in data.get("hooks", [])]


SECRET_PREFIX = "whsec_"
SECRET_BYTES = (24, 64)  # Standard Webhooks asks for 24 to 64 random bytes


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def check_secret(secret: str) -> str:
    """A secret a caller gave, checked: `whsec_` and the base64 of 24 to 64 bytes."""
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not secret.startswith(SECRET_PREFIX) or not SECRET_BYTES[0] <= len(key) <= SECRET_BYTES[1]:
        raise Invalid(f"secret must be {SECRET_PREFIX} and the base64 of {SECRET_BYTES[0]} to {SECRET_BYTES[1]} "
                      "random bytes (Standard Webhooks), or left out to have one made")
    return secret
