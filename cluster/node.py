"""A Gloss node of a cluster: the WSGI layer in front of the single-node application.

- Writes (API writes, Git pushes) are made by the project's leader. Another node forwards them there over
  HTTP, marked with the cluster secret; a forwarded request that finds no leader here answers 503 with
  Retry-After (never forwarded twice). The leader makes the write as a single node does (one commit, durable
  here), and has it taken by its followers (at least one must have it on disk; the pack leaves while this
  node's own round of fsync runs, _replicate_early), then, once both are done, records the new
  refs (main and every named branch: a write on ?branch=, a branch made, merged or deleted, a push to
  refs/heads/NAME) in ZooKeeper (compare-and-set, cluster.coordination), and only then answers. When the
  record fails (the leader was fenced, or ZooKeeper is out of reach) its branches go back to the recorded
  refs and the answer is 503 with Retry-After.
- Reads are served where every branch of the copy is at its recorded commit (or by the leader); a lagging or
  diverged copy forwards them to the leader, so a client always reads its own acknowledged writes, on any
  branch.
- /cluster/v1/ is the node-to-node surface (replicate, has, git) behind the secret, and `ready`, HAProxy's
  health check.
- An asynchronous import's progress is answered by the node running it (noted in ZooKeeper when it was
  accepted); once that node is gone, any node settles it from the recorded history: finished when the import's
  commit is there, failed otherwise.
A background round every second re-registers the node after a lost session, lets each follower catch up by
fetch, and has the leader record commits made outside a request (asynchronous imports).
"""
from __future__ import annotations

import base64
import binascii
import hmac
import http.client
import io
import json
import logging
import re
import subprocess
import threading
import time
import urllib.parse
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

from limits import JOB_KEEP_SECONDS
from storage.errors import Invalid
from storage.history import commit_with_trailer
from storage.jobs import COMMITTED, JOB_ID
from storage.git.refs import MAIN, RefMoved, check_branch_name
from storage.git.objects import pack_of
from storage.project import Project
from storage.store import PROJECT_ID, Store
from storage.trailers import Trailer
from storage.webhooks import HookStore

from .calls import Connections
from .config import ClusterConfig
from .controller import Controller
from .coordination import COORDINATION_ERRORS, Coordination, NodeInfo, Placement, Recorded
from .replication import (INLINE_PACK_BYTES, SECRET_HEADER, FetchFailed, UploadPack, adopt_refs, copy_from,
                          has_commit, pack_since, refs_of)
from .system import KEYS_ROUND, KeysSync
from .webhooks import PATH as HOOKS_PATH, HookCopies

log = logging.getLogger("gloss.cluster")
WsgiApp = Callable[[dict, Callable], Iterable[bytes]]
Answer = tuple[str, list[tuple[str, str]], bytes]
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# an import's progress lives where the import runs; a project's webhooks are copied to every node
# (cluster.webhooks), but their latest attempts are the leader's, which delivers
LEADER_READS = ("/api/import/progress/", "/api/webhooks")
SESSION_PATHS = ("/sign-in", "/sign-out")  # the dashboard's writes that touch no project (sessions are per node)
DASHBOARD_FILES = "/ui/static/"  # the dashboard's files: the same on every node, served here
FORWARDED_HEADER = "X-Gloss-Forwarded-By"
SIGNED_IN_HEADER = "X-Gloss-Signed-In"  # a forwarded dashboard request's key id (believed with the secret only)
FORWARD_SECONDS = 120.0
REPLICATE_SECONDS = 30.0
SYNC_SECONDS = 1.0
EARLY_KEPT = 8  # copies sent early kept per project for their write to take (ProjectState.early)
RETRY_AFTER = "1"
DELIVERY_LOOK_SECONDS = 0.25
JOB_PROGRESS = "/api/import/progress/"
JOB_SWEEP_SECONDS = 3600.0
NODE_GONE = "The node running the import stopped before its commit was recorded; nothing was imported"
COMMIT_TEXT = re.compile(r"[0-9a-f]{40}")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
              "proxy-authenticate"}


@dataclass
class Hooks:
    """What the node borrows from the application, which it may not import (app/ imports cluster/)."""

    project_of: Callable[[dict], str | None]  # the project an API request's key names (None: no valid key)
    call_application: Callable[[WsgiApp, dict, bytes], Answer]  # run a WSGI app on a request; its whole answer
    error_bytes: Callable[[int, str], bytes]  # Gloss's JSON error body
    session_of: Callable[[dict], tuple[str, str] | None]  # a dashboard request's (project, key id); None: signed out
    trust_session: Callable[[dict, str], None]  # a forwarded dashboard request: signed in with that key id


@dataclass
class ProjectState:
    """This node's own view of one project it leads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    epoch: int = 0  # bumped when the branch went back: writes made before then are not acknowledged
    led_version: int = -2  # the placement version this node aligned its copy to as leader
    # copies sent while this node's commit was being made durable: main's new head -> (refs, each follower's
    # answer to come), taken by _replicate (oldest forgotten beyond EARLY_KEPT: writes that never became durable)
    early: dict[str, tuple[dict[str, str], list[Future]]] = field(default_factory=dict)


def _git_project(path: str) -> str | None:
    """The project of a /git path (`/git/<project>.git/...`)."""
    parts = path.split("/", 3)
    if len(parts) < 3 or not parts[2].endswith(".git"):
        return None
    return parts[2][:-4]


class ClusterNode:
    def __init__(self, config: ClusterConfig, store: Store, hooks: Hooks, webhooks: HookStore | None = None):
        self.config = config
        self.store = store
        self.hooks = hooks
        self.coordination = Coordination(config.zookeeper, config.session_timeout)
        self.controller = Controller(self.coordination, config.node, config.replication, config.secret)
        self.upload_pack = UploadPack(store)
        self.app: WsgiApp | None = None
        self._states: dict[str, ProjectState] = {}
        store.before_durable = self._replicate_early
        self._states_lock = threading.Lock()
        self._connections = Connections()  # kept-alive node-to-node connections (forwards, replication)
        self._replicating = ThreadPoolExecutor(max_workers=8, thread_name_prefix="gloss-replicate")
        self._copying: dict[str, threading.Lock] = {}
        self._jobs_swept = 0.0  # when the controller last forgot old jobs
        self._delivery_looks: dict[str, tuple[float, str | None]] = {}  # project -> (when, head to deliver to)
        self.ready = threading.Event()
        self.stopped = threading.Event()
        self.keys = KeysSync(self.coordination, self.controller, config.node, config.url, config.secret,
                             store.data_dir, lambda url, method, path, body: self._call(
                                 url, method, path, body, {"Content-Type": "application/json"}, REPLICATE_SECONDS))
        self.webhooks = HookCopies(webhooks, self.coordination, config.node, lambda url, method, path, body, timeout:
                                   self._call(url, method, path, body, {"Content-Type": "application/json"}, timeout)
                                   ) if webhooks is not None else None

    def wrap(self, app: WsgiApp) -> "ClusterNode":
        self.app = app
        return self

    # ----------------------------------------------------------------- life
    def start(self) -> None:
        """Join the cluster (in the serving process, after the fork): session, projects, controller, rounds."""
        self.coordination.start()
        self._propose_new_projects()
        self.coordination.register(self.config.node, self.config.url)
        self.ready.set()
        self.controller.start()
        threading.Thread(target=self._rounds, name="gloss-cluster-sync", daemon=True).start()
        threading.Thread(target=self._key_rounds, name="gloss-cluster-keys", daemon=True).start()

    def _key_rounds(self) -> None:
        moved = threading.Event()  # the recorded system head moved: follow it now, not at the next round
        self.coordination.watch_system_head(lambda: moved.set())
        while not self.stopped.is_set():
            moved.wait(KEYS_ROUND)
            moved.clear()
            try:
                self.keys.round()
            except (*COORDINATION_ERRORS, FetchFailed, subprocess.SubprocessError, http.client.HTTPException,
                    ValueError) as error:
                log.info("cluster: keys: %r; trying again", error)

    def _rounds(self) -> None:
        while not self.stopped.wait(SYNC_SECONDS):
            try:
                if not self.coordination.registered(self.config.node):
                    self.ready.clear()
                    self.coordination.register(self.config.node, self.config.url)
                self.ready.set()
                self._propose_new_projects()
                projects = self.coordination.projects()
                for project in projects:
                    self._sync(project)
                if self.webhooks is not None:
                    self.webhooks.round(projects)
                if self.controller.leading.is_set() and time.monotonic() > self._jobs_swept + JOB_SWEEP_SECONDS:
                    self.coordination.sweep_jobs(JOB_KEEP_SECONDS)
                    self._jobs_swept = time.monotonic()
            except COORDINATION_ERRORS as error:
                self.ready.clear()
                log.info("cluster: %r; trying again", error)
            except Exception as error:  # (a round never dies: the next one tries again)
                log.warning("cluster: sync round: %r", error)

    def _propose_new_projects(self) -> None:
        """Make the projects created here (`gloss project create`) known to the cluster, with their head.

        Only once main exists: `create_project` makes the repository before its first commit, and a project
        proposed in between would be known with no recorded head, so the controller could give its lead to a
        node without a copy and this node's first commit would never be recorded."""
        known = set(self.coordination.projects())
        for project in self.store.project_ids():
            if project not in known:
                refs = refs_of(self.store.project(project))
                if MAIN in refs:
                    self.coordination.propose_project(project, refs)

    def _sync(self, project: str) -> None:
        """Catch up as a follower (fetch), or record as leader what was committed outside a request."""
        placement = self.coordination.placement(project)
        if placement.leader == self.config.node:
            state = self._state(project)
            self._align(project, placement, state)
            with state.lock:
                self._record_locked(project, state)
            return
        if self.config.node not in placement.followers:
            return
        recorded = self.coordination.recorded(project)
        leader = self.coordination.alive_nodes().get(placement.leader or "")
        if recorded.head and self._refs(project) != recorded.refs() and leader is not None \
                and not self._ahead(project, recorded.head):
            try:
                self._copy(project, leader.url, recorded.refs())
            except (FetchFailed, OSError, KeyError) as error:
                log.info("cluster: project %s: catching up from %s failed: %s", project, leader.id, error)

    def _ahead(self, project: str, recorded: str) -> bool:
        """Whether this copy went past the recorded head: a write the leader replicated and is recording
        now. Left alone: the leader records it, or rolls it back and says so at its next write."""
        local = self._head(project)
        return local is not None and local != recorded and self.store.project(project).repo.is_ancestor(recorded.encode("ascii"),
                                                                                   local.encode("ascii"))

    def _copy(self, project: str, leader_url: str, refs: dict[str, str], pack: bytes | None = None) -> None:
        with self._states_lock:
            lock = self._copying.setdefault(project, threading.Lock())
        with lock:
            copy_from(self.store, project, leader_url, refs, self.config.secret, pack)

    def delivery_head(self, project: Project) -> bytes | None:
        """Webhooks (app.webhooks): the recorded head of a project this node leads, once its copy holds it;
        None for the others (their leader delivers) and while ZooKeeper is out of reach. A commit not yet
        recorded, which may go back, is never delivered. Read at most every DELIVERY_LOOK_SECONDS."""
        now = time.monotonic()
        looked = self._delivery_looks.get(project.id)
        if looked is None or now - looked[0] > DELIVERY_LOOK_SECONDS:
            try:
                leads = self.coordination.placement(project.id).leader == self.config.node
                recorded = self.coordination.recorded(project.id).head if leads else None
            except COORDINATION_ERRORS:
                recorded = None
            looked = (now, recorded)
            self._delivery_looks[project.id] = looked
        head = looked[1]
        return head.encode("ascii") if head is not None and has_commit(self.store, project.id, head) else None

    # ----------------------------------------------------------------- requests
    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        assert self.app is not None
        path = environ.get("PATH_INFO", "")
        if path.startswith("/cluster/v1/"):
            return self._internal(path, environ, start_response)
        if path.startswith("/git/"):
            # Git's smart HTTP is two requests (refs, then pack): both go to the leader, so that the refs a
            # client is shown and the objects it then asks for come from one copy
            project, write = _git_project(path), True
        elif path.startswith("/api/") and not path.startswith("/api/convert"):
            project = self.hooks.project_of(environ)
            write = environ.get("REQUEST_METHOD") in WRITE_METHODS or path.startswith(LEADER_READS)
        elif path.startswith("/api/") or path in SESSION_PATHS or path.startswith(DASHBOARD_FILES):
            project, write = None, False
        else:
            project = self._dashboard_project(environ)
            write = environ.get("REQUEST_METHOD") in WRITE_METHODS
        if project is None or not PROJECT_ID.match(project):
            return self.app(environ, start_response)
        forwarded = self._authenticated(environ) and bool(environ.get("HTTP_X_GLOSS_FORWARDED_BY"))
        answer: Answer | None
        try:
            # a write's placement may come from the watched cache: its compare-and-set checks the version
            placement = self.coordination.placement(project, watched=write)
            if path.startswith(JOB_PROGRESS) and JOB_ID.match(path[len(JOB_PROGRESS):]):
                answer = self._job_progress(project, placement, environ, forwarded, path[len(JOB_PROGRESS):])
            elif write:
                answer = self._write(project, placement, environ, forwarded)
            else:
                answer = self._read(project, placement, environ, forwarded)
        except COORDINATION_ERRORS:
            answer = self._unavailable("This node cannot reach the cluster's coordination service; retry")
        if answer is None:
            return self.app(environ, start_response)
        start_response(answer[0], answer[1])
        return [answer[2]]

    def _dashboard_project(self, environ: dict) -> str | None:
        """A dashboard page or edit: the project of its session's key (None: signed out, answered here). Its
        edits are made by the project's leader and its pages read where the copy is current, as the API's;
        sessions are each node's own (HAProxy keeps a browser on one), so the node holding the session names
        its key to the leader, which believes it only with the cluster secret. The cookie and its form token
        are every node's (app.wire_cluster): the leader checks the form token as a single node does."""
        named = environ.pop("HTTP_" + SIGNED_IN_HEADER.upper().replace("-", "_"), None)
        if named and environ.get("HTTP_X_GLOSS_FORWARDED_BY") and self._authenticated(environ):
            self.hooks.trust_session(environ, named)
        signed_in = self.hooks.session_of(environ)
        if signed_in is None:
            return None
        environ["HTTP_" + SIGNED_IN_HEADER.upper().replace("-", "_")] = signed_in[1]  # (for the leader)
        return signed_in[0]

    def _read(self, project: str, placement: Placement, environ: dict, forwarded: bool) -> Answer | None:
        """None: serve here (this copy is current, or this node leads); else the leader's answer."""
        if placement.leader in (None, self.config.node) or forwarded:
            if placement.leader == self.config.node:
                self._align(project, placement, self._state(project))
            return None
        # every branch at its recorded commit: a read of any branch (?branch=) is current here
        if self._refs(project) == self.coordination.recorded(project).refs():
            return None
        return self._forward(placement, environ)

    def _write(self, project: str, placement: Placement, environ: dict, forwarded: bool) -> Answer:
        if placement.leader != self.config.node:
            if forwarded or placement.leader is None:
                return self._unavailable("This project has no leader at the moment (failover); retry shortly")
            return self._forward(placement, environ)
        state = self._state(project)
        self._align(project, placement, state)
        epoch = state.epoch
        body = _read_body(environ)
        answer = self.hooks.call_application(self.app, environ, body)  # type: ignore[arg-type]
        with state.lock:
            if state.epoch != epoch:
                return self._unavailable("The leader went back to the recorded head during this write; it was "
                                         "not kept: retry")
            refused = self._record_locked(project, state)
        if refused:
            return self._unavailable(refused)
        self._note_job(project, environ, answer)
        return answer

    def _note_job(self, project: str, environ: dict, answer: Answer) -> None:
        """An asynchronous import accepted here: say in ZooKeeper that this node runs it (_job_progress)."""
        if not (answer[0].startswith("201") and environ.get("PATH_INFO", "").startswith("/api/import/")):
            return
        try:
            job_id = json.loads(answer[2]).get("id")
            if isinstance(job_id, str) and JOB_ID.match(job_id):
                self.coordination.record_job(job_id, self.config.node, project)
        except (ValueError, AttributeError, *COORDINATION_ERRORS) as error:
            log.warning("cluster: import job of %s not recorded (its progress is the leader's alone): %r",
                        project, error)

    def _job_progress(self, project: str, placement: Placement, environ: dict, forwarded: bool,
                      job_id: str) -> Answer | None:
        """An import's progress: answered by the node running it; when that node is gone, settled from the
        recorded history (finished when its commit is there, failed otherwise), never left unknown."""
        node = self.coordination.job_node(job_id, project)
        if node is None:  # (not recorded: the leader answers, as it ran the import)
            return self._write(project, placement, environ, forwarded)
        if node == self.config.node:
            return None
        alive = self.coordination.alive_nodes(fresh=True)
        if node in alive:
            if forwarded:
                return self._unavailable("The node running this import moved; retry")
            return self._forward_to(alive[node], environ)
        if placement.leader == self.config.node:
            self._align(project, placement, self._state(project))
        elif self._refs(project) != self.coordination.recorded(project).refs():
            if forwarded or placement.leader is None:
                return self._unavailable("This project has no leader at the moment (failover); retry shortly")
            return self._forward(placement, environ)
        committed = commit_with_trailer(self.store.project(project), Trailer.JOB, job_id) is not None
        body = json.dumps({"progress": 100, "success": COMMITTED if committed else "",
                           "error": "" if committed else NODE_GONE}).encode()
        return "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body

    def _record_locked(self, project: str, state: ProjectState) -> str | None:
        """Under the project's state lock: replicate the local head and record it; the reason when it was not
        (then the branch is back at the recorded head)."""
        refs = self._refs(project)
        # from the watched cache: a stale answer fails the compare-and-set below (503), never acknowledges
        placement = self.coordination.placement(project, watched=True)
        recorded = self.coordination.recorded(project, watched=True)
        if MAIN not in refs or refs == recorded.refs():
            return None
        if placement.leader != self.config.node or placement.version != state.led_version:
            return self._roll_back(project, state, recorded, "This node no longer leads the project; retry")
        if not self._replicate(project, refs, recorded, placement, state):
            return self._roll_back(project, state, recorded, "No follower could take a copy of this write; it "
                                                             "was not kept: retry shortly")
        if self.config.pause_before_record:
            time.sleep(self.config.pause_before_record)
        try:
            recorded_now = self.coordination.record_head(project, refs, placement, recorded)
        except COORDINATION_ERRORS:
            recorded_now = False
        if not recorded_now:
            return self._roll_back(project, state, recorded, "This node could not record the write (it lost its "
                                                             "lead or its session); it was not kept: retry")
        return None

    def _roll_back(self, project: str, state: ProjectState, recorded: Recorded, reason: str) -> str:
        """Take the branch back to the recorded head (as ZooKeeper has it now, when reachable)."""
        try:
            recorded = self.coordination.recorded(project)
        except COORDINATION_ERRORS:
            pass
        if recorded.head:
            try:
                adopt_refs(self.store.project(project), recorded.refs())
            except (KeyError, RefMoved) as error:  # (the next write's alignment tries again)
                log.warning("cluster: project %s: going back to the recorded refs failed: %r", project, error)
        state.epoch += 1
        state.led_version = -2  # align again before the next write
        log.warning("cluster: project %s: rolled back to %s: %s", project, recorded.head, reason)
        return reason

    def _align(self, project: str, placement: Placement, state: ProjectState) -> None:
        """Newly leading: bring this copy to the recorded head (back from an unrecorded write, or forward by
        a fetch from a follower that has it) before serving anything."""
        if state.led_version == placement.version:
            return
        with state.lock:
            if state.led_version == placement.version:
                return
            recorded = self.coordination.recorded(project)
            wanted = recorded.refs()
            if recorded.head and self._refs(project) != wanted:
                if not all(has_commit(self.store, project, commit) for commit in wanted.values()):
                    alive = self.coordination.alive_nodes()
                    source = next((alive[n] for n in placement.followers if n in alive), None)
                    if source is None:
                        raise OSError("no copy of the recorded head is reachable")
                    self._copy(project, source.url, wanted)
                adopt_refs(self.store.project(project), wanted)
                state.epoch += 1
            state.led_version = placement.version

    def _replicate(self, project: str, refs: dict[str, str], recorded: Recorded, placement: Placement,
                   state: ProjectState) -> bool:
        """Have every alive follower take `refs` (every branch; the new objects sent along, or fetched); True
        when at least one has them on disk. A copy sent while the commit was made durable here counts when it
        was taken (_replicate_early); else it is sent again now, the follower fetching what it lacked."""
        with self._states_lock:
            early = state.early.pop(refs[MAIN], None)
        if early is not None and early[0] == refs and any([answer.result() for answer in early[1]]):
            return True
        alive = self.coordination.alive_nodes()
        targets = [alive[n] for n in placement.followers if n in alive]
        if not targets:
            return False
        pack = pack_since(self.store.project(project), refs.values(), recorded.refs().values())
        results = list(self._replicating.map(lambda node: self._replicate_to(node, project, refs, pack), targets))
        return any(results)

    def _replicate_early(self, project: str, branch: str, base: bytes | None, tip: bytes,
                         objects: dict[str, tuple[int, bytes]]) -> None:
        """Storage's hook as a commit group is about to be made durable here (storage.project): when this node
        leads the project and the group continues main's recorded head, its pack goes to the followers now,
        so that their round of fsync overlaps this node's. Nothing is acknowledged by it: the write is still
        recorded (compare-and-set) only after this node's commit is durable (_record_locked), so a commit
        that does not become durable here leaves at most a follower ahead of the recorded head, as a
        compare-and-set that fails does (the next write, or the controller's alignment, takes it back)."""
        try:
            state = self._states.get(project)
            if branch != MAIN or base is None or state is None:
                return
            placement = self.coordination.placement(project, watched=True)
            recorded = self.coordination.recorded(project, watched=True)
            if placement.leader != self.config.node or placement.version != state.led_version \
                    or recorded.head != base.decode("ascii"):
                return
            pack = pack_of(objects)
            alive = self.coordination.alive_nodes()
            targets = [alive[n] for n in placement.followers if n in alive]
            if len(pack) > INLINE_PACK_BYTES or not targets:
                return  # (a big commit is fetched by the followers once it is durable here)
            refs = {**recorded.refs(), MAIN: tip.decode("ascii")}
            answers = [self._replicating.submit(self._replicate_to, node, project, refs, pack) for node in targets]
            with self._states_lock:
                state.early[refs[MAIN]] = (refs, answers)
                while len(state.early) > EARLY_KEPT:
                    state.early.pop(next(iter(state.early)))
        except Exception as error:  # (never the write's failure: it is replicated after, as without this)
            log.info("cluster: project %s: no early copy: %r", project, error)

    def _replicate_to(self, node: NodeInfo, project: str, refs: dict[str, str], pack: bytes | None) -> bool:
        head = refs[MAIN]
        body = json.dumps({"project": project, "refs": refs, "leader": self.config.node,
                           "leader_url": self.config.url,
                           "pack": base64.b64encode(pack).decode() if pack else None}).encode()
        try:
            status, _, payload = self._call(node.url, "POST", "/cluster/v1/replicate", body,
                                            {"Content-Type": "application/json"}, REPLICATE_SECONDS)
            if status.startswith("200 ") and json.loads(payload).get("refs") == refs:
                return True
            log.warning("cluster: %s did not take %s of %s: %s %s", node.id, head, project, status, payload[:200])
            return False
        except (OSError, ValueError, http.client.HTTPException) as error:
            log.warning("cluster: replicating %s to %s failed: %r", project, node.id, error)
            return False

    # ----------------------------------------------------------------- node to node
    def _authenticated(self, environ: dict) -> bool:
        given = environ.get("HTTP_" + SECRET_HEADER.upper().replace("-", "_"), "")
        return hmac.compare_digest(given.encode(), self.config.secret.encode())

    def _internal(self, path: str, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if path == "/cluster/v1/ready":
            ready = self.ready.is_set() and self.coordination.connected()
            return _json(start_response, 200 if ready else 503, {"node": self.config.node, "ready": ready})
        if not self._authenticated(environ):
            return self._error(start_response, 403, "Node-to-node calls need the cluster secret")
        if path.startswith("/cluster/v1/git/"):
            return self.upload_pack(environ, start_response)
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        if path == "/cluster/v1/has":
            project, commit = query.get("project", [""])[0], query.get("commit", [""])[0]
            if not PROJECT_ID.match(project):
                return self._error(start_response, 400, "Bad project id")
            head, has = self._holds(project, commit)
            return _json(start_response, 200, {"head": head, "has": has})
        if path == "/cluster/v1/replicate" and environ.get("REQUEST_METHOD") == "POST":
            return self._take_copy(environ, start_response)
        if path in ("/cluster/v1/keys", "/cluster/v1/system") and environ.get("REQUEST_METHOD") == "POST":
            return self._system_call(path, environ, start_response)
        if path == HOOKS_PATH and self.webhooks is not None:
            return self._hooks_call(environ, query, start_response)
        return self._error(start_response, 404, "No such node-to-node call")

    def _holds(self, project: str, commit: str) -> tuple[str | None, bool]:
        """/cluster/v1/has, the controller's question before it gives this node the lead: the copy's main head
        and whether it holds `commit`. Asked about the recorded head, every recorded branch counts: `has` needs
        all their commits here, and the head is None unless every branch is at its recorded commit, so that a
        copy with a stale branch is never taken for a current one."""
        head = self._head(project)
        has = bool(commit) and has_commit(self.store, project, commit)
        try:
            recorded = self.coordination.recorded(project)
        except COORDINATION_ERRORS:
            return head, has
        if commit and commit == recorded.head:
            wanted = recorded.refs()
            has = has and all(has_commit(self.store, project, each) for each in wanted.values())
            if head == recorded.head and self._refs(project) != wanted:
                head = None
        return head, has

    def _system_call(self, path: str, environ: dict, start_response: Callable) -> Iterable[bytes]:
        """The controller taking a node's key changes, or a node fetching a system commit before it is recorded."""
        try:
            request = json.loads(_read_body(environ))
            if path == "/cluster/v1/keys":
                added, removed = list(request["add"]), [str(key_id) for key_id in request["remove"]]
                if not all(isinstance(record, dict) and "id" in record for record in added):
                    raise ValueError("bad key records")
                head = self.keys.change(added, removed)
            else:
                self.keys.fetch_objects(str(request["source"]))
                head = None
        except (ValueError, KeyError, TypeError):
            return self._error(start_response, 400, "Bad system request")
        except (FetchFailed, subprocess.SubprocessError, *COORDINATION_ERRORS) as error:
            return self._error(start_response, 503, str(error))
        return _json(start_response, 200, {"head": head})

    def _hooks_call(self, environ: dict, query: dict, start_response: Callable) -> Iterable[bytes]:
        """A project's webhooks between nodes (cluster.webhooks): the leader's copy given (GET) or taken (POST)."""
        assert self.webhooks is not None
        try:
            if environ.get("REQUEST_METHOD") == "POST":
                status, answer = self.webhooks.take(json.loads(_read_body(environ)))
            else:
                project = query.get("project", [""])[0]
                if not PROJECT_ID.match(project):
                    return self._error(start_response, 400, "Bad project id")
                status, answer = self.webhooks.answer(project, query.get("digest", [""])[0])
        except ValueError:
            return self._error(start_response, 400, "Bad webhooks request")
        except COORDINATION_ERRORS:
            return self._error(start_response, 503, "No coordination service")
        if "error" in answer:
            return self._error(start_response, status, answer["error"])
        return _json(start_response, status, answer)

    def _take_copy(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        try:
            request = json.loads(_read_body(environ))
            project, leader, leader_url = str(request["project"]), str(request["leader"]), str(request["leader_url"])
            refs = {str(name): str(commit) for name, commit in dict(request["refs"]).items()}
            if MAIN not in refs or not all(COMMIT_TEXT.fullmatch(commit) for commit in refs.values()):
                raise ValueError("bad refs")
            for name in refs:
                check_branch_name(name)
            pack = base64.b64decode(request["pack"], validate=True) if request.get("pack") else None
        except (ValueError, KeyError, TypeError, binascii.Error, Invalid):
            return self._error(start_response, 400, "Bad replication request")
        if not PROJECT_ID.match(project):
            return self._error(start_response, 400, "Bad project id")
        try:
            follows = self._follows(project, leader, watched=True) or self._follows(project, leader)
        except COORDINATION_ERRORS:
            return self._error(start_response, 503, "No coordination service")
        if not follows:
            return self._error(start_response, 409, "Not a follower of that leader")
        try:
            self._copy(project, leader_url, refs, pack)
        except (FetchFailed, OSError, KeyError, RefMoved) as error:
            return self._error(start_response, 502, f"Fetch failed: {error}")
        return _json(start_response, 200, {"head": self._head(project), "refs": self._refs(project)})

    def _follows(self, project: str, leader: str, watched: bool = False) -> bool:
        """Whether this node follows `leader` for the project: a fenced leader's copy never overwrites the new
        leader's, nor reaches a follower of another leader. The watched placement (a ZooKeeper read less
        on every replicated write) may lag a change by a notification: a copy it lets through from a leader
        just fenced leaves this copy ahead of the recorded head at most, as a copy whose compare-and-set
        then fails does, and the next copy or this node's alignment as leader takes it back; a refusal is
        made on a fresh read only."""
        placement = self.coordination.placement(project, watched=watched)
        return placement.leader == leader and self.config.node in placement.followers

    def _forward(self, placement: Placement, environ: dict) -> Answer:
        """The leader's answer to this request, or 503 when the leader cannot be reached."""
        leader = self.coordination.alive_nodes().get(placement.leader or "")
        if leader is None:
            return self._unavailable("The project's leader is not reachable (failover); retry shortly")
        return self._forward_to(leader, environ)

    def _forward_to(self, leader: NodeInfo, environ: dict) -> Answer:
        """Another node's answer to this request (the project's leader, or the node running a job)."""
        headers = {name[5:].replace("_", "-").title(): value for name, value in environ.items()
                   if name.startswith("HTTP_") and name[5:].replace("_", "-").lower() not in HOP_BY_HOP}
        # the Host header is kept: the leader's answer names URLs as the client sees them (an import's Location)
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        headers[FORWARDED_HEADER] = self.config.node
        target = urllib.parse.quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""))
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        try:
            return self._call(leader.url, environ["REQUEST_METHOD"], target, _read_body(environ), headers,
                              FORWARD_SECONDS)
        except (OSError, http.client.HTTPException):
            return self._unavailable("The project's leader stopped answering; the write may or may not have been "
                                     "made: read it back before retrying")

    def _call(self, base_url: str, method: str, target: str, body: bytes, headers: dict[str, str],
              timeout: float) -> Answer:
        response = self._connections.call(base_url, method, target, body,
                                          {**headers, SECRET_HEADER: self.config.secret,
                                           "Content-Length": str(len(body))}, timeout)
        payload = response.read()
        kept = [(name, value) for name, value in response.getheaders() if name.lower() not in HOP_BY_HOP]
        kept = [(name, value) for name, value in kept if name.lower() != "content-length"]
        kept.append(("Content-Length", str(len(payload))))
        return f"{response.status} {response.reason}", kept, payload

    # ----------------------------------------------------------------- helpers
    def _state(self, project: str) -> ProjectState:
        with self._states_lock:
            return self._states.setdefault(project, ProjectState())

    def _head(self, project: str) -> str | None:
        try:
            head = self.store.project(project).repo.head()
        except Exception:  # (no copy here: NotFound)
            return None
        return head.decode("ascii") if head else None

    def _refs(self, project: str) -> dict[str, str]:
        """Every branch of this node's copy and its commit (none when there is no copy here)."""
        try:
            return refs_of(self.store.project(project))
        except Exception:  # (no copy here: NotFound)
            return {}

    def _error(self, start_response: Callable, status: int, message: str) -> list[bytes]:
        """A node-to-node call refused, in Gloss's one JSON error body (app.errors, through the hooks)."""
        return _answer(start_response, status, self.hooks.error_bytes(status, message))

    def _unavailable(self, message: str) -> Answer:
        body = self.hooks.error_bytes(503, message)
        return "503 SERVICE UNAVAILABLE", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                           ("Retry-After", RETRY_AFTER)], body


def _read_body(environ: dict) -> bytes:
    """The whole request body, read once and put back for whoever reads it next."""
    cached = environ.get("gloss.cluster.body")
    if cached is None:
        length = environ.get("CONTENT_LENGTH")
        stream = environ["wsgi.input"]
        cached = stream.read(int(length)) if length and length.isdigit() else stream.read()
        environ["gloss.cluster.body"] = cached
        environ["CONTENT_LENGTH"] = str(len(cached))
    environ["wsgi.input"] = io.BytesIO(cached)
    return cached


def _json(start_response: Callable, status: int, data: dict) -> list[bytes]:
    return _answer(start_response, status, json.dumps(data).encode())


def _answer(start_response: Callable, status: int, body: bytes) -> list[bytes]:
    reason = http.client.responses.get(status, "")
    start_response(f"{status} {reason.upper()}", [("Content-Type", "application/json"),
                                                  ("Content-Length", str(len(body)))])
    return [body]
