"""Dashboard sign-in sessions, kept server side in DATA/sessions/, outside every project repository.

A browser holds only a random session id. The server keeps one small file per session, named by the SHA-256
digest of the id (ids are 256-bit random tokens, so a fast unsalted digest is enough, and the id itself never
becomes a path): it holds the id of the API key the session signed in with and when it started; the file's
modification time is when the session was last used.

Every operation is one atomic file-system call (create by rename, `utime`, `unlink`), so no lock is needed and
every worker process sees a sign-out, an expiry or a revocation at its very next request: a session exists
exactly as long as its file does. Expired sessions are refused when presented and swept from time to time.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from limits import SESSION_IDLE_SECONDS, SESSION_MAX_SECONDS

SESSIONS_DIR = "sessions"
# A session's last use is written at most this often (a page view must not always cost a metadata write),
# so an idle lifetime is kept to within this much.
TOUCH_SECONDS = 60.0
# A process sweeps the directory at most this often (at a sign-in, which is rare).
SWEEP_SECONDS = 600.0
NEW_PREFIX = ".new-"  # a session file being written; renamed into place when whole


@dataclass(frozen=True)
class Lifetime:
    """How long a session lives: `idle` seconds after its last use, `max` seconds after sign-in at most."""

    idle: float = SESSION_IDLE_SECONDS
    max: float = SESSION_MAX_SECONDS


class SessionStore:
    """The sessions of one data directory; `clock` (seconds since the epoch) is settable for tests."""

    def __init__(self, data_dir: Path, lifetime: Lifetime = Lifetime(), clock: Callable[[], float] = time.time):
        self.directory = Path(data_dir) / SESSIONS_DIR
        self.lifetime = lifetime
        self.clock = clock
        self._last_sweep = float("-inf")

    def start(self, key_id: str) -> str:
        """A new session of the key `key_id`; returns its id (given to the browser, never stored)."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        session_id = secrets.token_urlsafe(32)
        now = self.clock()
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=NEW_PREFIX)  # 0600
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"key": key_id, "started": now}, handle)
        os.utime(temp, (now, now))
        os.replace(temp, self._path(session_id))
        return session_id

    def resolve(self, session_id: str) -> str | None:
        """The key id of a live session, noting its use; None when unknown, ended or expired (then removed)."""
        path = self._path(session_id)
        found = self._read(path)
        if found is None:
            return None
        key_id, started, seen = found
        now = self.clock()
        if self._expired(now, started, seen):
            _remove(path)
            return None
        if now - seen > min(TOUCH_SECONDS, self.lifetime.idle / 10):
            try:
                os.utime(path, (now, now))
            except FileNotFoundError:  # signed out by another request meanwhile
                return None
        return key_id

    def end(self, session_id: str) -> None:
        _remove(self._path(session_id))

    def end_for_key(self, key_id: str) -> int:
        """End every session of a key (it was revoked); returns how many there were."""
        return self.sweep(keep=lambda owner: owner != key_id, force=True)

    def sweep(self, keep: Callable[[str], bool] = lambda key_id: True, force: bool = False) -> int:
        """Remove expired sessions and those whose key id `keep` refuses; returns how many were removed.

        Unless forced, does nothing when this process swept less than SWEEP_SECONDS ago."""
        now = self.clock()
        if not force and now - self._last_sweep < SWEEP_SECONDS:
            return 0
        self._last_sweep = now
        removed = 0
        for path in self._files():
            if path.name.startswith(NEW_PREFIX):
                gone = _age(path, now) > self.lifetime.idle  # left behind by a crash mid-write
            else:
                found = self._read(path)
                gone = found is None or self._expired(now, found[1], found[2]) or not keep(found[0])
            if gone and _remove(path):
                removed += 1
        return removed

    # ----------------------------------------------------------------- helpers
    def _path(self, session_id: str) -> Path:
        return self.directory / hashlib.sha256(session_id.encode("utf-8")).hexdigest()

    def _files(self) -> list[Path]:
        try:
            return list(self.directory.iterdir())
        except FileNotFoundError:
            return []

    def _expired(self, now: float, started: float, seen: float) -> bool:
        return now - seen > self.lifetime.idle or now - started > self.lifetime.max

    @staticmethod
    def _read(path: Path) -> tuple[str, float, float] | None:
        """(key id, started, last used) of a session file; None when there is none or it is unreadable."""
        try:
            seen = path.stat().st_mtime
            record = json.loads(path.read_bytes())
            return str(record["key"]), float(record["started"]), seen
        except (OSError, ValueError, KeyError, TypeError):
            return None


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _remove(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False
