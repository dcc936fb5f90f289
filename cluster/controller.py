"""The controller: one node at a time (kazoo's Lock recipe) places projects and moves leadership.

Every half second it looks at the alive nodes and every project's placement:
- a project without placement gets a leader among the nodes holding its recorded head (the one leading the
  fewest projects) and followers up to the replication factor, spread the same way;
- a project whose leader's session ended gets as leader a follower that holds the recorded head (one whose
  head equals it first; one that went past it, with a write replicated but never recorded, goes back to it
  when it takes the lead); the old leader stays listed as a follower, so that, restarted, it catches up by
  fetch (cluster.node's sync);
- a project with fewer alive followers than the replication factor wants gets more.
Every change is a compare-and-set of the placement: a controller that lost its session meanwhile (frozen, cut
off) changes nothing, and the version it bumps is what fences the old leader (cluster.coordination).
"""
from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections import Counter
from typing import Callable

from .coordination import COORDINATION_ERRORS, Coordination, NodeInfo, Placement
from .replication import SECRET_HEADER

log = logging.getLogger("gloss.cluster")
ROUND_SECONDS = 0.5
ASK_SECONDS = 2.0


def ask_head(node: NodeInfo, project: str, commit: str | None, secret: str) -> tuple[str | None, bool]:
    """A node's head of `project` and whether it holds `commit`; (None, False) when it does not answer."""
    url = f"{node.url}/cluster/v1/has?project={project}&commit={commit or ''}"
    request = urllib.request.Request(url, headers={SECRET_HEADER: secret})
    try:
        with urllib.request.urlopen(request, timeout=ASK_SECONDS) as answer:
            data = json.loads(answer.read())
        return data.get("head"), bool(data.get("has"))
    except (OSError, ValueError):
        return None, False


class Controller:
    def __init__(self, coordination: Coordination, node: str, replication: int, secret: str,
                 ask: Callable[[NodeInfo, str, str | None, str], tuple[str | None, bool]] = ask_head):
        self.coordination = coordination
        self.node = node
        self.replication = replication
        self.secret = secret
        self.ask = ask
        self.stopped = threading.Event()
        self.leading = threading.Event()  # set while this node holds the lock (it writes the system repository)

    def start(self) -> None:
        threading.Thread(target=self._run, name="gloss-cluster-controller", daemon=True).start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                lock = self.coordination.controller_lock(self.node)
                if not lock.acquire(timeout=2.0):
                    continue
                try:
                    self.leading.set()
                    while lock.is_acquired and self.coordination.connected() and not self.stopped.is_set():
                        self.reconcile()
                        time.sleep(ROUND_SECONDS)
                finally:
                    self.leading.clear()
                    try:
                        lock.release()
                    except COORDINATION_ERRORS:
                        pass
            except COORDINATION_ERRORS as error:
                log.info("controller: %r; standing again", error)
                time.sleep(ROUND_SECONDS)

    def reconcile(self) -> None:
        """One round over every project (see the module's docstring)."""
        alive = self.coordination.alive_nodes(fresh=True)  # (failover decisions read them now)
        if not alive:
            return
        placements = {project: self.coordination.placement(project) for project in self.coordination.projects()}
        leading = Counter(p.leader for p in placements.values() if p.leader in alive)
        holding = Counter(node for p in placements.values() for node in p.nodes() if node in alive)
        changed = False
        for project, placement in placements.items():
            try:
                wanted = self._wanted(project, placement, alive, leading, holding)
            except COORDINATION_ERRORS:
                raise
            except Exception as error:  # one project's trouble never stops the others' failover
                log.warning("controller: project %s: %r", project, error)
                continue
            if wanted is not None and wanted != placement:
                if self.coordination.set_placement(project, wanted, placement.version):
                    changed = True
                    log.info("controller: project %s: leader %s, followers %s", project, wanted.leader,
                             ",".join(wanted.followers))
                    for node in set(wanted.nodes()) - set(placement.nodes()):
                        holding[node] += 1
                    if wanted.leader is not None and wanted.leader != placement.leader:
                        leading[wanted.leader] += 1
        if not changed:  # a quiet round: spread the leaders, one move at a time
            self._rebalance(placements, alive, leading)

    def _rebalance(self, placements: dict[str, Placement], alive: dict[str, NodeInfo], leading: Counter) -> None:
        """Move one leadership from the node leading the most projects to the one leading the fewest, when they
        differ by more than one: to a follower at the recorded head (the move fences the old leader's writes
        in flight, answered 503), else make that node a follower first (it catches up by fetch; a later round
        moves the lead). A node that joins so receives leaderships."""
        counts = {node: leading[node] for node in alive}
        most = max(counts, key=lambda node: (counts[node], node))
        least = min(counts, key=lambda node: (counts[node], node))
        if counts[most] - counts[least] <= 1:
            return
        mine = [(project, placement) for project, placement in sorted(placements.items()) if placement.leader == most]
        for project, placement in mine:
            if least in placement.followers:
                recorded = self.coordination.recorded(project).head
                if self.ask(alive[least], project, recorded, self.secret)[0] == recorded:
                    followers = tuple(node for node in placement.followers if node != least) + (most,)
                    if self.coordination.set_placement(project, Placement(least, followers), placement.version):
                        log.info("controller: project %s: lead moved from %s to %s", project, most, least)
                    return
        for project, placement in mine:
            if least not in placement.followers:
                self.coordination.set_placement(project, Placement(most, placement.followers + (least,)),
                                                placement.version)
                return

    def _wanted(self, project: str, placement: Placement, alive: dict[str, NodeInfo], leading: Counter,
                holding: Counter) -> Placement | None:
        recorded = self.coordination.recorded(project).head
        leader = placement.leader
        followers = [node for node in placement.followers]
        if leader not in alive:
            candidates = followers if placement.leader else sorted(alive, key=lambda n: (leading[n], n))
            chosen = self._successor(project, recorded, [n for n in candidates if n in alive], alive)
            if chosen is None:
                return None  # nobody holds the recorded head: wait (a 503 meanwhile, never a lost write)
            followers = [n for n in followers if n != chosen] + ([leader] if leader else [])
            leader = chosen
        alive_followers = [n for n in followers if n in alive]
        spare = sorted((n for n in alive if n != leader and n not in followers), key=lambda n: (holding[n], n))
        while len(alive_followers) < self.replication - 1 and spare:
            added = spare.pop(0)
            followers.append(added)
            alive_followers.append(added)
        return Placement(leader, tuple(followers), placement.version)

    def _successor(self, project: str, recorded: str | None, candidates: list[str],
                   alive: dict[str, NodeInfo]) -> str | None:
        """The first candidate whose head is the recorded one, else the first that holds it."""
        holders = []
        for node in candidates:
            head, has = self.ask(alive[node], project, recorded, self.secret)
            if head == recorded and (head is not None or has or recorded is None):
                return node
            if has:
                holders.append(node)
        return holders[0] if holders else None
