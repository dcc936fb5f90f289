"""What the nodes agree on, in ZooKeeper (kazoo), and nothing else: the data stays in Git.

    /gloss/nodes/<node>                   ephemeral: the node is alive; {"url", "pid"}
    /gloss/projects/<project>/placement   {"leader": node, "followers": [node, ...]}; its version fences leaders
    /gloss/projects/<project>/head        the recorded refs: main's head (40 hex digits), then one line
                                          `NAME COMMIT` per other branch; moved by compare-and-set
    /gloss/jobs/<job id>                  {"node": node, "project": project}: where an asynchronous import runs
    /gloss/controller                     kazoo's Lock recipe: the one node that places projects (cluster.controller)

A leader records a new head with one ZooKeeper transaction: the placement's version must still be the one it
led under (no other node took the lead meanwhile) and the head's version the one it read (no other write was
recorded meanwhile). A leader frozen past its session, or cut off, therefore never records anything once a
follower took over: the controller's placement update bumped the version it checks.
"""
from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.protocol.states import EventType, WatchedEvent, ZnodeStat
from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError, ZookeeperError

from storage.git.refs import MAIN

ROOT = "/gloss"
NODES = f"{ROOT}/nodes"
PROJECTS = f"{ROOT}/projects"
CONTROLLER = f"{ROOT}/controller"
SYSTEM_HEAD = f"{ROOT}/system/head"  # the system repository's recorded head (cluster.system)
JOBS = f"{ROOT}/jobs"  # /gloss/jobs/<job id>: {"node", "project"}, the node running an asynchronous import
CONNECT_SECONDS = 10.0
ALIVE_CACHE_SECONDS = 0.5
# What a ZooKeeper call may raise when the service is out of reach or refused the call (fencing included)
COORDINATION_ERRORS = (KazooException, ZookeeperError, OSError)


@dataclass(frozen=True)
class Placement:
    leader: str | None
    followers: tuple[str, ...] = ()
    version: int = -1  # the placement znode's version (-1: no placement yet)

    def nodes(self) -> tuple[str, ...]:
        return ((self.leader,) if self.leader else ()) + self.followers

    def encode(self) -> bytes:
        return json.dumps({"leader": self.leader, "followers": list(self.followers)}).encode()


@dataclass(frozen=True)
class Recorded:
    head: str | None  # None: nothing recorded yet (a project's: its main)
    version: int = -1
    branches: tuple[tuple[str, str], ...] = ()  # a project's other branches: (name, commit), in name order

    def refs(self) -> dict[str, str]:
        """Every recorded branch of a project and its commit, main included."""
        return {**({MAIN: self.head} if self.head else {}), **dict(self.branches)}


def encode_refs(refs: dict[str, str]) -> bytes:
    """A project's branches as recorded: main's head first (what `gloss cluster status` shows), then one line
    `NAME COMMIT` per other branch in name order (Git refuses spaces in branch names)."""
    lines = [refs.get(MAIN, "")] + [f"{name} {commit}" for name, commit in sorted(refs.items()) if name != MAIN]
    return "\n".join(lines).encode()


def decode_refs(raw: bytes, version: int) -> Recorded:
    head, *others = raw.decode().split("\n")
    branches = tuple(sorted((name, commit) for name, _, commit in (line.partition(" ") for line in others) if commit))
    return Recorded(head or None, version, branches)


@dataclass
class NodeInfo:
    id: str
    url: str
    pid: int
    extra: dict = field(default_factory=dict)


def placement_path(project: str) -> str:
    return f"{PROJECTS}/{project}/placement"


def head_path(project: str) -> str:
    return f"{PROJECTS}/{project}/head"


class Coordination:
    """One node's ZooKeeper session and the few reads and compare-and-sets the cluster makes."""

    def __init__(self, hosts: str, session_timeout: float, client: KazooClient | None = None):
        # reads are retried briefly across a reconnection (a request then waits a second at most); writes
        # never are: a compare-and-set whose answer was lost has an unknown outcome, which the caller handles
        self.zk = client or KazooClient(hosts=hosts, timeout=session_timeout,
                                        connection_retry={"max_tries": -1, "max_delay": 1.0},
                                        command_retry={"max_tries": 4, "delay": 0.05, "max_delay": 0.4})
        self.session_lost = threading.Event()  # set when a session ends (the node re-registers itself)
        self._alive: tuple[float, dict[str, NodeInfo]] | None = None
        self._alive_watched = False  # a watch on the nodes' list is armed and saw no change since _alive was read
        self._nodes_changes = 0  # that watch's events
        # the write path's placements and heads, kept current by ZooKeeper's watches (see _watched)
        self._watched: dict[str, tuple[bytes, ZnodeStat]] = {}
        self._watched_lock = threading.Lock()
        self._generation = 0  # bumped when the connection is suspended or lost: the watches may be gone
        self.zk.add_listener(self._on_state)

    def _on_state(self, state: str) -> None:
        if state != KazooState.CONNECTED:
            with self._watched_lock:
                self._watched.clear()
                self._generation += 1
                self._alive_watched = False
        if state == KazooState.LOST:
            self.session_lost.set()

    def _watched_get(self, path: str) -> tuple[bytes, ZnodeStat]:
        """A znode's data and stat, from the cache that ZooKeeper's watch keeps current, else read now (and
        watched from then on). What the cache answers may lag a change by a notification's travel (ms):
        the write path alone reads it, where the compare-and-set transaction still checks both versions, so a
        stale answer costs a 503 at worst, never a wrong acknowledgement. Raises NoNodeError."""
        cached = self._watched.get(path)
        if cached is not None:
            return cached
        generation = self._generation
        data, stat = self.zk.retry(self.zk.get, path, watch=self._on_change)
        self._remember(path, data, stat, generation)
        return data, stat

    def _remember(self, path: str, data: bytes, stat: ZnodeStat, generation: int) -> None:
        """Keep a znode's newest data (never an older version over a newer one), unless the session was
        suspended since it was read (its watch may be gone)."""
        with self._watched_lock:
            if generation != self._generation:
                return
            cached = self._watched.get(path)
            if cached is None or cached[1].version <= stat.version:
                self._watched[path] = (data, stat)

    def _on_change(self, event: WatchedEvent) -> None:
        """A watched znode changed: read it again, watched again, without blocking kazoo's event thread."""
        generation = self._generation
        if event.type != EventType.CHANGED:
            with self._watched_lock:
                self._watched.pop(event.path, None)
            return

        def read(result) -> None:
            try:
                data, stat = result.get_nowait()
            except Exception:  # (NoNodeError, connection loss: the next read reads it directly)
                with self._watched_lock:
                    self._watched.pop(event.path, None)
                return
            self._remember(event.path, data, stat, generation)

        try:
            self.zk.get_async(event.path, watch=self._on_change).rawlink(read)
        except COORDINATION_ERRORS:  # (the client is closing)
            with self._watched_lock:
                self._watched.pop(event.path, None)

    def start(self) -> None:
        self.zk.start(timeout=CONNECT_SECONDS)
        chroot = self.zk.chroot  # `host:port/path`: several clusters on one ZooKeeper, each under its path
        if chroot:
            self.zk.chroot = ""
            try:
                self.zk.ensure_path(chroot)
            finally:
                self.zk.chroot = chroot
        for path in (NODES, PROJECTS):
            self.zk.ensure_path(path)

    def stop(self) -> None:
        try:
            self.zk.stop()
            self.zk.close()
        except COORDINATION_ERRORS:
            pass

    def connected(self) -> bool:
        return self.zk.connected

    # ----------------------------------------------------------------- nodes
    def register(self, node: str, url: str) -> None:
        """The node's ephemeral znode (again after a lost session); its presence is the node's liveness."""
        data = json.dumps({"url": url, "pid": os.getpid()}).encode()
        try:
            self.zk.create(f"{NODES}/{node}", data, ephemeral=True)
        except NodeExistsError:
            # ours from this session (a retried create), or a dead session's not yet expired: take it over
            _, stat = self.zk.get(f"{NODES}/{node}")
            if stat.ephemeralOwner != self.zk.client_id[0]:
                self.zk.delete(f"{NODES}/{node}")
                self.zk.create(f"{NODES}/{node}", data, ephemeral=True)

    def registered(self, node: str) -> bool:
        try:
            _, stat = self.zk.get(f"{NODES}/{node}")
        except NoNodeError:
            return False
        return stat.ephemeralOwner == self.zk.client_id[0]

    def _get(self, path: str):
        return self.zk.retry(self.zk.get, path)

    def alive_nodes(self, fresh: bool = False) -> dict[str, NodeInfo]:
        """The nodes holding a session, as read at most ALIVE_CACHE_SECONDS ago or since when a watch on the
        list saw no change (a write's replication and a forward each need them: a node gone meanwhile just
        fails its call); `fresh` reads them now."""
        cached = self._alive
        if not fresh and cached is not None and (self._alive_watched
                                                 or time.monotonic() - cached[0] < ALIVE_CACHE_SECONDS):
            return dict(cached[1])
        generation, changes = self._generation, self._nodes_changes
        self._alive_watched = False
        nodes = self._read_alive_nodes()
        with self._watched_lock:
            self._alive = (time.monotonic(), nodes)
            self._alive_watched = generation == self._generation and changes == self._nodes_changes
        return dict(nodes)

    def _on_nodes_change(self, event: WatchedEvent) -> None:
        """A node came or went (or re-registered): the next alive_nodes() reads the list again."""
        with self._watched_lock:
            self._nodes_changes += 1
            self._alive_watched = False

    def _read_alive_nodes(self) -> dict[str, NodeInfo]:
        nodes: dict[str, NodeInfo] = {}
        for name in self.zk.retry(self.zk.get_children, NODES, watch=self._on_nodes_change):
            try:
                raw, _ = self._get(f"{NODES}/{name}")
            except NoNodeError:
                continue  # gone between the listing and the read
            info = json.loads(raw)
            nodes[name] = NodeInfo(name, info["url"], int(info.get("pid", 0)))
        return nodes

    # ----------------------------------------------------------------- projects
    def projects(self) -> list[str]:
        return sorted(self.zk.retry(self.zk.get_children, PROJECTS))

    def placement(self, project: str, watched: bool = False) -> Placement:
        """A project's placement, read now, or `watched`: from the write path's cache (see _watched_get)."""
        try:
            raw, stat = (self._watched_get if watched else self._get)(placement_path(project))
        except NoNodeError:
            return Placement(None)
        data = json.loads(raw or b"{}")
        return Placement(data.get("leader"), tuple(data.get("followers", ())), stat.version)

    def set_placement(self, project: str, placement: Placement, expected_version: int) -> bool:
        """Compare-and-set a project's placement (the controller's only write); False when it changed."""
        try:
            if expected_version < 0:
                self.zk.create(placement_path(project), placement.encode(), makepath=True)
            else:
                self.zk.set(placement_path(project), placement.encode(), version=expected_version)
            return True
        except (NodeExistsError, NoNodeError):
            return False
        except ZookeeperError as error:  # BadVersionError
            if type(error).__name__ == "BadVersionError":
                return False
            raise

    def recorded(self, project: str, watched: bool = False) -> Recorded:
        """A project's recorded refs, read now, or `watched`: from the write path's cache (see _watched_get)."""
        try:
            raw, stat = (self._watched_get if watched else self._get)(head_path(project))
        except NoNodeError:
            return Recorded(None)
        return decode_refs(raw, stat.version)

    def propose_project(self, project: str, refs: dict[str, str]) -> None:
        """Make a project known with this node's branches, unless it is known already (a node starting up)."""
        try:
            self.zk.create(head_path(project), encode_refs(refs), makepath=True)
        except NodeExistsError:
            pass

    def record_head(self, project: str, refs: dict[str, str], placement: Placement, recorded: Recorded) -> bool:
        """The compare-and-set of a write: True when `refs` (every branch) are now the recorded ones.

        One transaction: the placement is still the one this leader leads under, and the head is still the
        one it read. False when either moved (fenced); raises when ZooKeeper is out of reach (unknown outcome).
        """
        transaction = self.zk.transaction()
        transaction.check(placement_path(project), placement.version)
        if recorded.version < 0:
            transaction.create(head_path(project), encode_refs(refs))
        else:
            transaction.set_data(head_path(project), encode_refs(refs), version=recorded.version)
        generation = self._generation
        results = transaction.commit()
        if any(isinstance(result, Exception) for result in results):
            return False
        if isinstance(results[-1], ZnodeStat):  # the head's new version: the next write compares with it
            self._remember(head_path(project), encode_refs(refs), results[-1], generation)
        return True

    def record_job(self, job_id: str, node: str, project: str) -> None:
        """Note which node runs an asynchronous import, so that any node can answer for it (cluster.node)."""
        self.zk.create(f"{JOBS}/{job_id}", json.dumps({"node": node, "project": project}).encode(), makepath=True)

    def job_node(self, job_id: str, project: str) -> str | None:
        """The node that runs (or ran) a job of `project`; None when the cluster has no record of it."""
        try:
            raw, _ = self._get(f"{JOBS}/{job_id}")
        except NoNodeError:
            return None
        record = json.loads(raw or b"{}")
        return record.get("node") if record.get("project") == project else None

    def sweep_jobs(self, older_than: float) -> None:
        """Forget the jobs noted more than `older_than` seconds ago (their records are gone from the nodes too)."""
        try:
            children = self.zk.get_children(JOBS)
        except NoNodeError:
            return
        for job_id in children:
            try:
                _, stat = self.zk.get(f"{JOBS}/{job_id}")
                if stat.ctime / 1000 < time.time() - older_than:
                    self.zk.delete(f"{JOBS}/{job_id}")
            except NoNodeError:
                continue

    def system_head(self) -> Recorded:
        try:
            raw, stat = self._get(SYSTEM_HEAD)
        except NoNodeError:
            return Recorded(None)
        return Recorded(raw.decode() or None, stat.version)

    def record_system_head(self, head: str, recorded: Recorded) -> bool:
        """Compare-and-set of the system repository's head (the controller's writes)."""
        try:
            if recorded.version < 0:
                self.zk.create(SYSTEM_HEAD, head.encode(), makepath=True)
            else:
                self.zk.set(SYSTEM_HEAD, head.encode(), version=recorded.version)
            return True
        except NodeExistsError:
            return False
        except ZookeeperError as error:
            if type(error).__name__ == "BadVersionError":
                return False
            raise

    def controller(self) -> str | None:
        """The node holding the controller's lock, if any."""
        contenders = self.zk.retry(self.controller_lock("").contenders)
        return contenders[0] if contenders else None

    def controller_lock(self, node: str):
        """kazoo's Lock recipe on the controller's znode (cluster.controller holds it)."""
        return self.zk.Lock(CONTROLLER, node)

    def watch_system_head(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever the system repository's recorded head changes (kazoo's DataWatch)."""
        self.zk.DataWatch(SYSTEM_HEAD)(lambda data, stat: callback())

    def watch_nodes(self, callback: Callable[[list[str]], None]) -> None:
        """Call `callback` with the alive nodes' ids now and whenever they change."""
        self.zk.ChildrenWatch(NODES)(callback)
