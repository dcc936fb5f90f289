"""API keys: only a SHA-256 digest of each key is stored, in DATA/keys.json, outside every project repository.

Keys are 192-bit random tokens, so a fast unsalted digest is enough (there is nothing to brute-force), and
verification compares the digest against every stored one with `hmac.compare_digest`, without early exit.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from filelock import FileLock

from .errors import Invalid, NotFound
from .git.durable import replace_durably
from .operations import Actor
from .watched import WatchedJson

# What each type of key may do, the one statement of it (the API, the dashboard, Git over HTTP and the
# OpenAPI document ask here): "read" project data, "export" files (build pipelines hold export keys), "write".
KINDS = ("read", "export", "write")
ACCESS_ALLOWS: dict[str, frozenset[str]] = {
    "full": frozenset({"read", "export", "write"}),
    "readonly": frozenset({"read", "export"}),
    "export": frozenset({"export"}),
}
ACCESS_TYPES = tuple(ACCESS_ALLOWS)


def access_types_allowed(kind: str) -> list[str]:
    """The key types that may do `kind`."""
    return [access for access in ACCESS_TYPES if kind in ACCESS_ALLOWS[access]]


@dataclass(frozen=True)
class ApiKey:
    """What a key grants. `id` is a public handle for listing and revoking; the key itself is never stored."""

    id: str
    digest: str
    access: str
    project: str
    user_id: int
    user_name: str
    user_email: str
    created: str

    def may(self, kind: str) -> bool:
        """Whether this key may do `kind` ("read", "export" or "write")."""
        return kind in ACCESS_ALLOWS.get(self.access, ())

    def actor(self) -> Actor:
        """The key's user, for whom the key's writes are made."""
        return Actor(self.user_id, self.user_name, self.user_email)


def digest_of(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyTable(NamedTuple):
    """The key file's records, and the same by digest (a host with thousands of keys compared a presented key
    with each of them, at every request)."""

    records: list[ApiKey]
    by_digest: dict[str, ApiKey]


def key_table(data: dict) -> KeyTable:
    records = [ApiKey(**record) for record in data.get("keys", [])]
    return KeyTable(records, {record.digest: record for record in records})  # (the last of equal digests wins)


class KeyStore:
    """The key file, re-read only when it changes on disk (another process may have written it)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = FileLock(str(self.path) + ".lock", thread_local=False)
        self._file: WatchedJson[KeyTable] = WatchedJson(self.path, key_table, KeyTable([], {}))

    # ----------------------------------------------------------------- reading
    def all(self) -> list[ApiKey]:
        return self._file.read().records

    def verify(self, key: str) -> ApiKey | None:
        """The record of a presented key, or None. The digest finds the one candidate record (a look-up keyed
        by the SHA-256 of the key, which tells an attacker nothing of a stored key); the comparison that decides
        stays constant-time."""
        if not key or len(key) > 256:
            return None
        presented = digest_of(key)
        found = self._file.read().by_digest.get(presented)
        return found if found is not None and hmac.compare_digest(found.digest, presented) else None

    def is_live(self, candidate: str) -> bool:
        """Whether `candidate` is a key in force: texts holding one are refused, by pushes and API writes alike
        (storage.fields.refuse_keys)."""
        return digest_of(candidate) in self._file.read().by_digest

    def by_id(self, key_id: str) -> ApiKey | None:
        """The record of a live key named by its public id (what a dashboard session remembers)."""
        return next((record for record in self.all() if record.id == key_id), None)

    def for_project(self, project: str) -> list[ApiKey]:
        return [record for record in self.all() if record.project == project]

    # ----------------------------------------------------------------- writing
    def create(self, project: str, access: str = "full", user_name: str = "", user_email: str = "",
               created: str = "") -> tuple[str, ApiKey]:
        """Make a new key; returns the key (shown once) and its stored record."""
        if access not in ACCESS_TYPES:
            raise Invalid(f"access must be one of {', '.join(ACCESS_TYPES)}")
        key = _new_secret()
        with self._lock:
            records = self._load_records()
            user_id = self._user_id(records, user_name, user_email)
            record = ApiKey(id="k" + secrets.token_hex(4), digest=digest_of(key), access=access, project=project,
                            user_id=user_id, user_name=user_name or "API user", user_email=user_email,
                            created=created)
            records.append(asdict(record))
            self._save_records(records)
        return key, record

    def revoke(self, key_or_id: str) -> ApiKey:
        """Remove a key, named by the key itself or by its public id."""
        digest = digest_of(key_or_id)
        with self._lock:
            records = self._load_records()
            keep = [r for r in records if not (hmac.compare_digest(r["digest"], digest) or r["id"] == key_or_id)]
            if len(keep) == len(records):
                raise NotFound("No such key")
            removed = next(r for r in records if r not in keep)
            self._save_records(keep)
        return ApiKey(**removed)

    def rewrite(self, change: Callable[[list[dict]], list[dict]]) -> None:
        """Under the key file's lock, replace its records by `change(records)`: a cluster node writing the keys
        the cluster agreed on (cluster.system), with its own changes not yet sent kept by `change`."""
        with self._lock:
            self._save_records(change(self._load_records()))

    @staticmethod
    def _user_id(records: list[dict], name: str, email: str) -> int:
        """The same person keeps one numeric id across keys (Loco's User.id is an integer)."""
        for record in records:
            if (record["user_email"], record["user_name"]) == (email, name or "API user"):
                return record["user_id"]
        return max((record["user_id"] for record in records), default=0) + 1

    def _load_records(self) -> list[dict]:
        try:
            return json.loads(self.path.read_text("utf-8")).get("keys", [])
        except FileNotFoundError:
            return []

    def _save_records(self, records: list[dict]) -> None:
        # durable, and readable by the owner only from the temp file's creation on
        replace_durably(self.path, (json.dumps({"keys": records}, indent=2) + "\n").encode("utf-8"), 0o600)


def _new_secret() -> str:
    """32 URL-safe characters (just under 192 random bits) that never start with "-".

    A key that starts with a dash reads as an option to command-line tools (`gloss key revoke -x...`,
    `git -c` helpers, many scripts): one key in 64 would be awkward to pass on a command line.
    """
    while True:
        key = secrets.token_urlsafe(24)
        if not key.startswith("-"):
            return key
