"""Keys replicated through a system repository: a Git repository beside the projects (DATA/cluster/system) whose
`main` holds `keys.json` (the key file's own format) and `revoked.json` (the ids of revoked keys, so that no stale
copy brings one back). Its recorded head lives in ZooKeeper like a project's; the controller (cluster.controller)
is its one writer.

The key commands are unchanged: `gloss key create` and `gloss key revoke` edit a node's DATA/keys.json as on a
single node. Every node looks at its key file every KEYS_ROUND seconds: what changed since the system state it
last applied (keys added, keys removed) goes to the controller, which applies it to the system repository,
commits, has another node fetch the commit, records the new head, and only then answers. Every node watches that
head and, when it moves, fetches it and writes the merged key file in place (under the key file's lock, keeping
its own changes not yet sent): a key revoked through one node is refused by every node a fraction of a second
later.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import asdict
from pathlib import Path

from storage.git.refs import BRANCH_REF
from storage.gitrepo import GitRepo
from storage.keys import KeyStore

from .replication import FETCH_CONFIG, SECRET_HEADER, SYSTEM, FetchFailed

KEYS_ROUND = 0.1  # seconds between a node's looks at its key file (a stat) and at the recorded system head
KEYS_FILE = "keys.json"
REVOKED_FILE = "revoked.json"
GIT_SECONDS = 60.0
# objects and refs flushed before a command reports success: the system repository's own durability
DURABLE = ("-c", "core.fsync=committed", "-c", "gc.auto=0")


def _records(raw: bytes | None) -> list[dict]:
    return json.loads(raw).get("keys", []) if raw else []


class SystemRepository:
    """The system repository of one node (plain git plumbing: it holds two small JSON files)."""

    def __init__(self, path: Path):
        self.path = path

    def _git(self, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.path), "GIT_TERMINAL_PROMPT": "0",
               "GIT_AUTHOR_NAME": "Gloss", "GIT_AUTHOR_EMAIL": "gloss@localhost",
               "GIT_COMMITTER_NAME": "Gloss", "GIT_COMMITTER_EMAIL": "gloss@localhost"}
        return subprocess.run(["git", *DURABLE, *args], cwd=self.path, input=input, capture_output=True,
                              check=check, timeout=GIT_SECONDS, env=env)

    def ensure(self) -> None:
        if not (self.path / ".git").is_dir():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                GitRepo.init(self.path).close()
            except FileExistsError:
                pass

    def head(self) -> str | None:
        result = self._git("rev-parse", "--verify", "-q", BRANCH_REF, check=False)
        return result.stdout.decode().strip() or None

    def has(self, commit: str) -> bool:
        return self._git("cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0

    def read(self, name: str, commit: str | None = None) -> bytes | None:
        commit = commit or self.head()
        if commit is None:
            return None
        result = self._git("show", f"{commit}:{name}", check=False)
        return result.stdout if result.returncode == 0 else None

    def state(self, commit: str | None = None) -> tuple[list[dict], set[str]]:
        """The keys and the revoked ids at a commit (the head by default)."""
        revoked = self.read(REVOKED_FILE, commit)
        return _records(self.read(KEYS_FILE, commit)), set(json.loads(revoked).get("revoked", []) if revoked else [])

    def commit(self, records: list[dict], revoked: set[str], message: str) -> str:
        """One commit on `main` holding these keys and revoked ids; its id."""
        entries = []
        for name, data in ((KEYS_FILE, {"keys": records}), (REVOKED_FILE, {"revoked": sorted(revoked)})):
            blob = self._git("hash-object", "-w", "--stdin",
                             input=(json.dumps(data, indent=2) + "\n").encode()).stdout.decode().strip()
            entries.append(f"100644 blob {blob}\t{name}")
        tree = self._git("mktree", input=("\n".join(entries) + "\n").encode()).stdout.decode().strip()
        parent = self.head()
        commit = self._git("commit-tree", tree, *(("-p", parent) if parent else ()), "-m", message
                           ).stdout.decode().strip()
        self.move(commit, parent)
        return commit

    def move(self, commit: str, expected: str | None) -> None:
        self._git("update-ref", BRANCH_REF, commit, expected or "")

    def fetch(self, source_url: str, secret: str) -> None:
        result = self._git(*FETCH_CONFIG, "-c", f"http.extraHeader={SECRET_HEADER}: {secret}", "fetch", "--quiet",
                           "--no-write-fetch-head", "--no-auto-gc", f"{source_url}/cluster/v1/git/{SYSTEM}",
                           BRANCH_REF, check=False)
        if result.returncode != 0:
            raise FetchFailed(result.stderr.decode("utf-8", "replace").strip()[-500:])


class KeyFile:
    """A node's DATA/keys.json seen against the system state it last applied."""

    def __init__(self, path: Path):
        self.path = path
        self.store = KeyStore(path)
        self.base: dict[str, dict] | None = None  # the system's keys as last applied, by id
        self.stamp: tuple[int, int, int] | None = None  # the key file as last looked at

    def touched(self) -> bool:
        """Whether the key file changed since the last look (a stat, not a read)."""
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int, int] | None = (info.st_mtime_ns, info.st_size, info.st_ino)
        except FileNotFoundError:
            stamp = None
        changed = stamp != self.stamp or stamp is None
        self.stamp = stamp
        return changed

    def local(self) -> list[dict]:
        return [asdict(record) for record in self.store.all()]

    def changes(self) -> tuple[list[dict], list[str]]:
        """Keys created here and key ids removed here since the last applied system state."""
        if self.base is None:
            return [], []
        local = {record["id"]: record for record in self.local()}
        added = [record for key_id, record in local.items() if key_id not in self.base]
        removed = [key_id for key_id in self.base if key_id not in local]
        return added, removed

    def apply(self, records: list[dict], revoked: set[str]) -> None:
        """Write the system's keys in place, with this node's changes not yet sent kept on top."""
        base = self.base if self.base is not None else {}  # (the first time, every local key is sent)

        def merged(current: list[dict]) -> list[dict]:
            local = {record["id"]: record for record in current}
            result = {record["id"]: record for record in records}
            for key_id, record in local.items():
                if key_id not in base and key_id not in revoked:
                    result.setdefault(key_id, record)
            for key_id in base:
                if key_id not in local:
                    result.pop(key_id, None)
            return list(result.values())

        self.store.rewrite(merged)
        self.base = {record["id"]: record for record in records}


def merge_change(records: list[dict], revoked: set[str], added: list[dict],
                 removed: list[str]) -> tuple[list[dict], set[str]]:
    """The controller's rule: a removed id is revoked for good; an added key joins unless revoked or known."""
    revoked = revoked | set(removed)
    known = {record["id"] for record in records}
    kept = [record for record in records if record["id"] not in revoked]
    kept += [record for record in added if record.get("id") not in known and record.get("id") not in revoked]
    return kept, revoked


class KeysSync:
    """One node's part in replicating keys: send its changes, follow the recorded head; and the controller's
    part: apply changes to the system repository, have another node fetch them, record the head."""

    def __init__(self, coordination, controller, node: str, url: str, secret: str, data_dir: Path, call):
        self.coordination = coordination
        self.controller = controller
        self.node = node
        self.url = url
        self.secret = secret
        self.repo = SystemRepository(data_dir / "cluster" / "system")
        self.keys = KeyFile(data_dir / "keys.json")
        self.call = call  # (base URL, method, path, body bytes) -> (status line, headers, body)
        self._writing = threading.Lock()
        self.applied: str | None = None  # the system head whose keys this node's key file holds

    # ----------------------------------------------------------------- every node
    def round(self) -> None:
        """Follow the recorded head (fetch, move, write the key file), then send this node's changes."""
        recorded = self.coordination.system_head()
        if recorded.head is None:
            if self.controller.leading.is_set():
                self.repo.ensure()
                self._bootstrap(recorded)
            return
        if self.applied != recorded.head:
            self.repo.ensure()
            if self.repo.head() != recorded.head:
                if not self.repo.has(recorded.head):
                    self.repo.fetch(self._controller_url(), self.secret)
                self.repo.move(recorded.head, self.repo.head())
            self.keys.apply(*self.repo.state(recorded.head))
            self.applied = recorded.head
        if not self.keys.touched():
            return
        added, removed = self.keys.changes()
        if added or removed:
            body = json.dumps({"add": added, "remove": removed}).encode()
            status, _, payload = self.call(self._controller_url(), "POST", "/cluster/v1/keys", body)
            if not status.startswith("200 "):
                self.keys.stamp = None  # look again next round
                raise FetchFailed(f"the controller did not take the key changes: {status} {payload[:200]!r}")

    def _controller_url(self) -> str:
        controller = self.coordination.controller()
        node = self.coordination.alive_nodes().get(controller or "")
        if node is None:
            raise FetchFailed("no controller at the moment")
        return node.url

    def _bootstrap(self, recorded) -> None:
        """The first controller makes the system repository from its own key file (every node started with
        a copy of the same one; keys only some nodes hold are sent by them as changes)."""
        with self._writing:
            if self.repo.head() is None:
                records = self.keys.local()
                self.repo.commit(records, set(), "Keys of the cluster")
            self.coordination.record_system_head(self.repo.head() or "", recorded)

    def fetch_objects(self, source_url: str) -> None:
        """Another node's request (the controller's): hold a new system commit on disk before it is recorded."""
        self.repo.ensure()
        self.repo.fetch(source_url, self.secret)

    # ----------------------------------------------------------------- the controller
    def change(self, added: list[dict], removed: list[str]) -> str:
        """Apply a node's key changes: commit, copy to another node, record; the recorded head. Raises
        FetchFailed (nothing recorded, the commit undone) when it cannot be kept."""
        if not self.controller.leading.is_set():
            raise FetchFailed("this node is not the controller")
        with self._writing:
            recorded = self.coordination.system_head()
            if recorded.head is None or self.repo.head() != recorded.head:
                raise FetchFailed("the system repository here is not at the recorded head yet")
            records, revoked = self.repo.state()
            kept, now_revoked = merge_change(records, revoked, added, removed)
            if kept == records and now_revoked == revoked:
                return recorded.head
            commit = self.repo.commit(kept, now_revoked, f"Keys: {len(added)} added, {len(removed)} revoked")
            copied = False
            for node in self.coordination.alive_nodes().values():
                if node.id == self.node:
                    continue
                body = json.dumps({"source": self.url}).encode()
                try:
                    status, _, _ = self.call(node.url, "POST", "/cluster/v1/system", body)
                    copied = status.startswith("200 ")
                except OSError:
                    copied = False
                if copied:
                    break
            if not copied or not self.coordination.record_system_head(commit, recorded):
                self.repo.move(recorded.head, commit)
                raise FetchFailed("the key change could not be copied to another node or recorded")
            return commit
