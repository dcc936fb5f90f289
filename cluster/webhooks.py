"""Webhooks on a cluster: every node holds a copy of each project's hooks, the single node's own file
(DATA/webhooks/<project>.json: URL, events, secret, cursor, failures, attempts), so that the node taking a
project's lead after a failover goes on delivering from the cursor it was given.

A project's leader is the one writer of its hooks: the API's hook requests are forwarded there, and only the
leader delivers (cluster.node.delivery_head). Each change is copied to every other alive node before the
leader saves it (HookStore.mirror). Creating or deleting a hook must reach every alive follower (one of them
leads next), or it is refused with 503 and saved nowhere it matters. The deliverer's changes (cursor, failures,
attempts) are copied as well as they can be: a copy that missed one holds an older cursor, and a new leader
starting from it delivers those commits again, in order and with the same webhook-ids (at least once, as a
single node after a crash). A node takes a copy only from the project's current leader (a fenced leader's late
copy is refused), and every node that does not lead a project asks its leader every PULL_SECONDS whether its
copy is current: a node restarted, or one a copy missed, catches up.

The secrets travel only on the node-to-node surface (behind the cluster secret) and are kept as a single node
keeps them: in the data directory, 0600, outside every repository (like keys, which the system repository
holds outside the projects).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import http.client
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from storage.errors import Busy
from storage.store import PROJECT_ID
from storage.webhooks import HookStore

from .coordination import COORDINATION_ERRORS, Coordination, NodeInfo

log = logging.getLogger("gloss.cluster")
PATH = "/cluster/v1/webhooks"
PULL_SECONDS = 5.0  # how often a node that does not lead a project checks its copy of the hooks with the leader
CALL_SECONDS = 2.0  # one copy to one node: a node frozen meanwhile holds a hook change (or a delivery) this long
# (base URL, method, target, body, timeout) -> (status line, headers, body)
Call = Callable[[str, str, str, bytes, float], tuple[str, list[tuple[str, str]], bytes]]


def digest(data: bytes | None) -> str:
    """What two copies compare: the file's SHA-256 ("" when the project has no hook)."""
    return hashlib.sha256(data).hexdigest() if data is not None else ""


def _encoded(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data is not None else None


def _decoded(text: object) -> bytes | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("bad hooks data")
    return base64.b64decode(text, validate=True)


class HookCopies:
    """One node's part: copy its changes as leader, take the leader's copies, catch up by asking."""

    def __init__(self, hooks: HookStore, coordination: Coordination, node: str, call: Call):
        self.hooks = hooks
        self.coordination = coordination
        self.node = node
        self.call = call
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gloss-hook-copies")
        self._pulled = 0.0  # when this node last checked its copies
        hooks.mirror = self.push

    # ----------------------------------------------------------------- the leader
    def push(self, project: str, data: bytes | None, required: bool) -> None:
        """HookStore.mirror: copy a change to every other alive node before it is saved here; a required one
        (a hook made or deleted) raises Busy unless every alive follower took it."""
        try:
            placement = self.coordination.placement(project)
            alive = self.coordination.alive_nodes()
        except COORDINATION_ERRORS:
            if required:
                raise Busy("This node cannot reach the cluster's coordination service; retry") from None
            return
        if placement.leader != self.node:
            if required:
                raise Busy("This node no longer leads the project; retry")
            return
        targets = [info for node, info in alive.items() if node != self.node]
        body = json.dumps({"project": project, "leader": self.node, "data": _encoded(data)}).encode()
        took = dict(zip([info.id for info in targets], self._pool.map(lambda info: self._send(info, body), targets)))
        followers = [node for node in placement.followers if node in alive]
        if required and not (followers and all(took.get(node) for node in followers)):
            raise Busy("The project's followers could not take the webhook change; nothing was changed: retry")

    def _send(self, node: NodeInfo, body: bytes) -> bool:
        try:
            status, _, payload = self.call(node.url, "POST", PATH, body, CALL_SECONDS)
        except (OSError, http.client.HTTPException) as error:
            log.info("cluster: copying webhooks to %s failed: %r", node.id, error)
            return False
        if not status.startswith("200 "):
            log.info("cluster: %s did not take the webhooks: %s %s", node.id, status, payload[:200])
        return status.startswith("200 ")

    def answer(self, project: str, known: str) -> tuple[int, dict]:
        """GET /cluster/v1/webhooks: the leader's copy for a node whose copy's digest is `known`."""
        if self.coordination.placement(project).leader != self.node:
            return 409, {"error": "This node does not lead the project"}
        data = self.hooks.raw(project)
        now = digest(data)
        return 200, ({"digest": now} if now == known else {"digest": now, "data": _encoded(data)})

    # ----------------------------------------------------------------- the others
    def take(self, request: dict) -> tuple[int, dict]:
        """POST /cluster/v1/webhooks: the leader's change, kept when it comes from the current leader."""
        try:
            project, leader, data = str(request["project"]), str(request["leader"]), _decoded(request.get("data"))
        except (KeyError, TypeError, ValueError, binascii.Error):
            return 400, {"error": "Bad webhooks copy"}
        if not PROJECT_ID.match(project):  # (it names a file)
            return 400, {"error": "Bad project id"}
        if self.coordination.placement(project).leader != leader or leader == self.node:
            return 409, {"error": "Not from the project's leader"}
        try:
            self.hooks.replace(project, data)
        except (ValueError, TypeError, AttributeError):
            return 400, {"error": "Bad webhooks copy"}
        return 200, {"digest": digest(data)}

    def round(self, projects: list[str]) -> None:
        """Every PULL_SECONDS: bring this node's copy of each project it does not lead to the leader's."""
        if time.monotonic() - self._pulled < PULL_SECONDS:
            return
        self._pulled = time.monotonic()
        alive = self.coordination.alive_nodes()
        for project in projects:
            leader = alive.get(self.coordination.placement(project).leader or "")
            if leader is None or leader.id == self.node:
                continue
            try:
                self._pull(project, leader)
            except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError, binascii.Error) as error:
                log.info("cluster: project %s: checking the webhooks with %s failed: %r", project, leader.id, error)

    def _pull(self, project: str, leader: NodeInfo) -> None:
        local = self.hooks.raw(project)
        status, _, payload = self.call(leader.url, "GET", f"{PATH}?project={project}&digest={digest(local)}", b"",
                                       CALL_SECONDS)
        if not status.startswith("200 "):
            return
        answer = json.loads(payload)
        if answer["digest"] != digest(local):
            # kept only when no copy from the leader came meanwhile: an answer read before a change made
            # since never takes it back
            self.hooks.replace(project, _decoded(answer["data"]), expected=local)
