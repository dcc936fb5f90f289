"""Git's own protocol between nodes: a follower fetches a project from its leader over smart HTTP.

The leader serves `git upload-pack` to the other nodes under /cluster/v1/git/<project> (authenticated by the
cluster secret, never by an API key: UploadPack below); the follower fetches `main` and the tags with objects
and refs fsync'd (`core.fsync=committed`), then moves its own branches (main, and every named branch, which
the leader's write may have made, moved or deleted) with Gloss's durable ref update
(Project.adopt_head: the journal's round of fsync), so that a copy acknowledged to the leader survives a power
loss of the follower as a single node's commit does.

A write's own objects travel with the leader's replication request instead, as a Git pack built in the
leader's process (pack_since) and taken by the follower's (GitRepo.unpacked: checked as fsck checks them),
stored with the branch's move in its one round of fsync (adopt_refs); a follower lacking what that pack
leans on fetches as above.
"""
from __future__ import annotations

import gzip
import io
import re
import subprocess
from pathlib import Path
from typing import Callable, Iterable

from storage.errors import NotFound
from storage.git.refs import HEADS, MAIN
from storage.project import Project
from storage.store import Store

SECRET_HEADER = "X-Gloss-Cluster-Secret"
FETCH_SECONDS = 120.0
# A write's new objects travel with the replication request up to this size and this many commits (one round
# trip, no process forked); beyond, the follower fetches them (an import's big commit, a long-absent follower)
INLINE_PACK_BYTES = 4 * 1024 * 1024
INLINE_PACK_COMMITS = 64
GIT_PATH = re.compile(r"^/cluster/v1/git/([a-z0-9][a-z0-9-]{0,62}|_system)(/info/refs|/git-upload-pack)$")
SYSTEM = "_system"  # the system repository's name on that path (no project id starts with "_")
# fetched packs stay packs; objects and refs are flushed before git reports success; no gc in the middle
FETCH_CONFIG = ("-c", "fetch.unpackLimit=1", "-c", "core.fsync=committed", "-c", "gc.auto=0",
                "-c", "fetch.fsckObjects=true", "-c", "protocol.version=0")


class FetchFailed(Exception):
    """The follower could not fetch from the leader (the message is git's)."""


def fetch(repository: Path, leader_url: str, project: str, secret: str, branches: Iterable[str] = (MAIN,)) -> None:
    """Fetch the commits of `branches` and the tags of `project` from the leader into `repository` (no ref but
    tags moves: the caller moves the branches itself, adopt_refs)."""
    wanted = [HEADS + name for name in sorted(set(branches))]
    command = ["git", *FETCH_CONFIG, "-c", f"http.extraHeader={SECRET_HEADER}: {secret}",
               "fetch", "--quiet", "--no-write-fetch-head", "--force", "--no-auto-gc",
               f"{leader_url}/cluster/v1/git/{project}", *wanted, "+refs/tags/*:refs/tags/*"]
    try:
        result = subprocess.run(command, cwd=repository, capture_output=True, timeout=FETCH_SECONDS,
                                env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin", "HOME": str(repository)})
    except subprocess.TimeoutExpired:
        raise FetchFailed(f"git fetch from {leader_url} took more than {FETCH_SECONDS:.0f} s") from None
    if result.returncode != 0:
        raise FetchFailed(result.stderr.decode("utf-8", "replace").strip()[-500:])


def pack_since(project: Project, heads: Iterable[str], bases: Iterable[str]) -> bytes | None:
    """A pack of the commits after `bases` up to `heads` and the objects they changed (what a follower at
    `bases` lacks), built in this process (a `git pack-objects` fork was 6-16 ms of every write); None when
    it would be larger than INLINE_PACK_BYTES or span more than INLINE_PACK_COMMITS (the follower fetches)."""
    pack = project.repo.pack_since([head.encode("ascii") for head in set(heads)],
                                   [base.encode("ascii") for base in set(bases)], INLINE_PACK_COMMITS)
    return pack if pack is not None and len(pack) <= INLINE_PACK_BYTES else None


def refs_of(project: Project) -> dict[str, str]:
    """Every branch of a copy (main included) and its commit; a ref torn by a crash is left out."""
    refs = {}
    for name in project.repo.branch_names():
        head = project.repo.named_branch(name).valid_head()
        if head is not None:
            refs[name] = head.decode("ascii")
    return refs


def adopt_refs(project: Project, refs: dict[str, str], objects: dict[str, tuple[int, bytes]] | None = None) -> None:
    """Bring every branch of a copy to `refs` (whose commits are here or among `objects`), durably: main by
    Project.adopt_head, the others moved by compare-and-swap, made, or deleted when `refs` lacks them; the
    first branch that moves stores `objects` in its own round of fsync. Raises KeyError when a commit is
    missing, RefMoved when a branch moved meanwhile (the next round tries again). A copy that moved counts as
    a commit for the repack schedule, as a writer's commit does: each adopted write is a pack of its own, and
    a follower that never rolled them up held 400 packs after 400 writes, its object look-ups (the checks of
    every replicated pack) slowing with each one (storage.git.maintenance)."""
    for commit in refs.values():
        if objects is None or commit not in objects:
            project.repo.read_commit(commit.encode("ascii"))
    moved = False
    if MAIN in refs:
        moved = project.repo.head() != refs[MAIN].encode("ascii")
        project.adopt_head(refs[MAIN].encode("ascii"), objects=objects if moved else None)
        objects = None if moved else objects
    for name in project.repo.branch_names():
        if name != MAIN and name not in refs:
            branch = project.repo.named_branch(name)
            current = branch.head()
            if current is not None:
                branch.delete(current)
    for name, commit in refs.items():
        if name != MAIN:
            branch = project.repo.named_branch(name)
            current = branch.head()
            if current != commit.encode("ascii"):
                branch.move_head(commit.encode("ascii"), current, objects=objects)
                objects, moved = None, True
    if moved:
        project.repo.note_commit()


def copy_from(store: Store, project: str, leader_url: str, refs: dict[str, str], secret: str,
              pack: bytes | None = None) -> None:
    """Make this node's copy of `project` hold `refs` (every branch): from the pack the leader sent, else
    fetched from the leader, then adopted durably. Refs the leader gives are authoritative: a copy that went
    past them (a write replicated but never recorded) goes back."""
    replica = store.replica(project)
    if refs_of(replica) == refs:
        return
    # the pack first: a write's commit is in it, and looking for a commit that is not here yet probes every
    # pack of the copy (a follower holds hundreds between two repacks)
    objects = replica.repo.unpacked(pack) if pack else None
    if not all(commit in (objects or ()) or has_commit(store, project, commit) for commit in refs.values()):
        objects = None
        fetch(replica.path, leader_url, project, secret, refs)
    adopt_refs(replica, refs, objects)


def system_path(store: Store) -> Path:
    """The cluster's system repository (keys), beside the projects, never one of them."""
    return store.data_dir / "cluster" / "system"


def has_commit(store: Store, project: str, head: str) -> bool:
    """Whether this node's copy holds the commit (a presence check: reading a missing object waits 10 ms for
    a concurrent repack before it gives up, which every replicated write paid)."""
    try:
        return store.project(project).repo.objects.has(head.encode("ascii"))
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
