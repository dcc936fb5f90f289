"""Git's own protocol between nodes: a follower fetches a project from its leader over smart HTTP.

The leader serves `git upload-pack` to the other nodes under /cluster/v1/git/<project> (authenticated by the
cluster secret, never by an API key: UploadPack below); the follower fetches `main` and the tags with objects
and refs fsync'd (`core.fsync=committed`), then moves its own branch with Gloss's durable ref update
(Project.adopt_head: the journal's round of fsync), so that a copy acknowledged to the leader survives a power
loss of the follower as a single node's commit does.
"""
from __future__ import annotations

import gzip
import io
import re
import subprocess
from pathlib import Path
from typing import Callable, Iterable

from storage.errors import NotFound
from storage.store import Store

SECRET_HEADER = "X-Gloss-Cluster-Secret"
FETCH_SECONDS = 120.0
# A write's new objects travel with the replication request up to this size (one round trip, two git
# processes); beyond, the follower fetches them (an import's big commit)
INLINE_PACK_BYTES = 4 * 1024 * 1024
GIT_PATH = re.compile(r"^/cluster/v1/git/([a-z0-9][a-z0-9-]{0,62}|_system)(/info/refs|/git-upload-pack)$")
SYSTEM = "_system"  # the system repository's name on that path (no project id starts with "_")
# fetched packs stay packs; objects and refs are flushed before git reports success; no gc in the middle
FETCH_CONFIG = ("-c", "fetch.unpackLimit=1", "-c", "core.fsync=committed", "-c", "gc.auto=0",
                "-c", "fetch.fsckObjects=true", "-c", "protocol.version=0")


class FetchFailed(Exception):
    """The follower could not fetch from the leader (the message is git's)."""


def fetch(repository: Path, leader_url: str, project: str, secret: str) -> None:
    """Fetch `main`'s commits and the tags of `project` from the leader into `repository` (no ref but tags
    moves: the caller moves `main` itself)."""
    command = ["git", *FETCH_CONFIG, "-c", f"http.extraHeader={SECRET_HEADER}: {secret}",
               "fetch", "--quiet", "--no-write-fetch-head", "--force", "--no-auto-gc",
               f"{leader_url}/cluster/v1/git/{project}", "refs/heads/main", "+refs/tags/*:refs/tags/*"]
    try:
        result = subprocess.run(command, cwd=repository, capture_output=True, timeout=FETCH_SECONDS,
                                env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin", "HOME": str(repository)})
    except subprocess.TimeoutExpired:
        raise FetchFailed(f"git fetch from {leader_url} took more than {FETCH_SECONDS:.0f} s") from None
    if result.returncode != 0:
        raise FetchFailed(result.stderr.decode("utf-8", "replace").strip()[-500:])


def pack_since(repository: Path, head: str, base: str | None) -> bytes | None:
    """A thin pack of the commits after `base` up to `head` (what a follower at `base` lacks), or None when it
    would be larger than INLINE_PACK_BYTES (the follower fetches it instead)."""
    revisions = f"{head}\n" + (f"^{base}\n" if base else "")
    result = subprocess.run(["git", "pack-objects", "--stdout", "--revs", "--thin", "-q"], cwd=repository,
                            input=revisions.encode(), capture_output=True, timeout=FETCH_SECONDS)
    if result.returncode != 0 or len(result.stdout) > INLINE_PACK_BYTES:
        return None
    return result.stdout


def take_pack(repository: Path, pack: bytes) -> bool:
    """Store a pack sent by the leader, its objects flushed to disk (missing bases completed from this copy);
    False when this copy lacks what the thin pack leans on."""
    result = subprocess.run(["git", "-c", "core.fsync=committed", "index-pack", "--stdin", "--fix-thin", "--strict"],
                            cwd=repository, input=pack, capture_output=True, timeout=FETCH_SECONDS)
    return result.returncode == 0


def copy_from(store: Store, project: str, leader_url: str, head: str, secret: str, pack: bytes | None = None) -> None:
    """Make this node's copy of `project` hold `head`: from the pack the leader sent, else fetched from the
    leader, then adopted durably. A head the leader gives is authoritative: a copy that went past it (a write
    replicated but never recorded) goes back."""
    replica = store.replica(project)
    target = head.encode("ascii")
    if replica.repo.head() == target:
        return
    try:
        replica.repo.read_commit(target)
    except KeyError:
        if not (pack and take_pack(replica.path, pack) and has_commit(store, project, head)):
            fetch(replica.path, leader_url, project, secret)
    replica.adopt_head(target)


def system_path(store: Store) -> Path:
    """The cluster's system repository (keys), beside the projects, never one of them."""
    return store.data_dir / "cluster" / "system"


def has_commit(store: Store, project: str, head: str) -> bool:
    try:
        store.project(project).repo.read_commit(head.encode("ascii"))
        return True
    except (NotFound, KeyError, ValueError):
        return False


def _pkt_line(text: str) -> bytes:
    data = text.encode()
    return b"%04x" % (len(data) + 4) + data


class UploadPack:
    """WSGI: `git upload-pack` (protocol v0, stateless) for the other nodes, which are authenticated before."""

    def __init__(self, store: Store):
        self.store = store

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        match = GIT_PATH.match(environ.get("PATH_INFO", ""))
        if not match:
            start_response("404 NOT FOUND", [("Content-Type", "text/plain")])
            return [b"not a replication path\n"]
        project, action = match.groups()
        path = system_path(self.store) if project == SYSTEM else self.store.projects_dir / project
        if not (path / ".git").is_dir():
            start_response("404 NOT FOUND", [("Content-Type", "text/plain")])
            return [b"no such project here\n"]
        if action == "/info/refs":
            refs = subprocess.run(["git", "upload-pack", "--stateless-rpc", "--advertise-refs", str(path)],
                                  capture_output=True, check=True, timeout=FETCH_SECONDS).stdout
            body = _pkt_line("# service=git-upload-pack\n") + b"0000" + refs
            kind = "application/x-git-upload-pack-advertisement"
        else:
            request = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)) \
                if environ.get("CONTENT_LENGTH") else environ["wsgi.input"].read()
            if environ.get("HTTP_CONTENT_ENCODING", "").lower() == "gzip":
                request = gzip.GzipFile(fileobj=io.BytesIO(request)).read()
            body = subprocess.run(["git", "upload-pack", "--stateless-rpc", str(path)], input=request,
                                  capture_output=True, check=True, timeout=FETCH_SECONDS).stdout
            kind = "application/x-git-upload-pack-result"
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))),
                                  ("Cache-Control", "no-cache")])
        return [body]
