"""The data directory: project repositories, their lock files and the key file, side by side.

    DATA/keys.json            hashed API keys (never inside a project repository)
    DATA/projects/<id>/       one Git repository (with working tree) per project
    DATA/locks/<id>.lock      the project's cross-process write lock
    DATA/jobs/                asynchronous job progress, readable from every worker process
"""
from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

from limits import IDLE_PROJECT_SECONDS, MAX_OPEN_ASSETS, MAX_OPEN_PACK_FILES, MAX_OPEN_PROJECTS

from .errors import Conflict, NotFound
from .gitrepo import GitRepo, Person
from .memorygroups import FILE as MEMORY_GROUPS_FILE, MemoryGroups
from .project import BeforeDurable, Project
from .snapshot import DEFAULT_CHUNK_SIZE
from .trailers import Action

PROJECT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
SERVICE = Person("Gloss", "gloss@localhost")
BUDGET_CHECK_SECONDS = 1.0  # how often a request of a project already open looks at the file budget and idlers
IDLE_CHECK_SECONDS = 5.0  # how often a worker that gets no request closes its idle projects' files


def utc_now() -> str:
    """ISO 8601 UTC timestamp with seconds precision, the form every record uses."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def iso_from_timestamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).replace(microsecond=0).isoformat()


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48]
    return slug or "project"


class Store:
    """Opens projects by id; one Project object per id per process, so its snapshot cache is shared.

    Only the MAX_OPEN_PROJECTS most recently used projects stay open, holding MAX_OPEN_PACK_FILES pack files
    and snapshots of MAX_OPEN_ASSETS assets together at most (the one in use may exceed them), and a project
    idle for IDLE_PROJECT_SECONDS closes its files (see limits.py): a worker serving thousands of projects
    keeps its memory and descriptors bounded. An evicted project is
    dropped, never invalidated: a request still holding it goes on (reopening what it reads, its writes
    still excluded by the project's file lock), and the next request opens it afresh.
    """

    def __init__(self, data_dir: Path | str, committer: Person = SERVICE):
        self.data_dir = Path(data_dir)
        self.projects_dir = self.data_dir / "projects"
        self.locks_dir = self.data_dir / "locks"
        self.jobs_dir = self.data_dir / "jobs"
        self.memory_groups = MemoryGroups(self.data_dir / MEMORY_GROUPS_FILE)  # projects sharing their memory
        for directory in (self.projects_dir, self.locks_dir, self.jobs_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self.committer = committer
        self._projects: OrderedDict[str, Project] = OrderedDict()  # least recently used first
        self._last_used: dict[str, float] = {}  # project id -> time.monotonic() of its last request
        self._next_check = 0.0
        # projects this process opened before: a crash's leftovers were repaired then (at their first open),
        # so an evicted project opened again skips that check
        self._opened_before: set[str] = set()
        self._lock = threading.Lock()
        self.max_open_projects = MAX_OPEN_PROJECTS
        self.max_open_pack_files = MAX_OPEN_PACK_FILES
        self.max_open_assets = MAX_OPEN_ASSETS
        self.idle_seconds = IDLE_PROJECT_SECONDS
        self._watcher_pid: int | None = None
        self._before_durable: BeforeDurable | None = None

    @property
    def before_durable(self) -> BeforeDurable | None:
        """The hook every project calls before it makes a commit group durable (see storage.project)."""
        return self._before_durable

    @before_durable.setter
    def before_durable(self, hook: BeforeDurable | None) -> None:
        with self._lock:
            self._before_durable = hook
            for project in self._projects.values():
                project.before_durable = hook

    def project_ids(self) -> list[str]:
        return sorted(p.name for p in self.projects_dir.iterdir()
                      if PROJECT_ID.match(p.name) and (p / ".git").is_dir())

    def project(self, project_id: str) -> Project:
        now = time.monotonic()
        with self._lock:
            project = self._projects.get(project_id)
            if project is not None:
                self._touch(project_id, now)
                if now >= self._next_check:
                    self._keep_within_budget(now)
                return project
        if not PROJECT_ID.match(project_id) or not (self.projects_dir / project_id / ".git").is_dir():
            raise NotFound(f"No project {project_id!r}")
        with self._lock:
            project = self._projects.get(project_id)
            if project is None:
                project = Project(project_id, self.projects_dir / project_id,
                                  self.locks_dir / f"{project_id}.lock", self.committer,
                                  checked_after_crash=project_id in self._opened_before)
                project.before_durable = self._before_durable
                self._projects[project_id] = project
                self._opened_before.add(project_id)
            self._touch(project_id, now)
            self._keep_within_budget(now)
            self._watch_idle_projects()
        return project

    def _watch_idle_projects(self) -> None:
        """Start, once per process, a thread that closes idle projects' files when no request comes to do it."""
        if self._watcher_pid == os.getpid():
            return
        self._watcher_pid = os.getpid()  # (a forked worker starts its own)
        threading.Thread(target=_close_idle_files, args=(weakref.ref(self),), name="gloss-idle-projects",
                         daemon=True).start()

    def open_files(self) -> int:
        """The pack files the open projects hold."""
        with self._lock:
            return sum(project.open_files() for project in self._projects.values())

    def _touch(self, project_id: str, now: float) -> None:
        self._projects.move_to_end(project_id)
        self._last_used[project_id] = now

    def _keep_within_budget(self, now: float) -> None:
        """Under the store lock: evict the least recently used projects beyond the budget (never the one just
        asked for, the last, nor one whose writes hold its lock), and close the files of the idle ones."""
        self._next_check = now + BUDGET_CHECK_SECONDS
        count = len(self._projects)
        sizes = {project_id: (project.open_files(), project.cached_assets())
                 for project_id, project in self._projects.items()}
        files, assets = sum(size[0] for size in sizes.values()), sum(size[1] for size in sizes.values())
        for project_id in list(self._projects)[:-1]:
            if (count <= self.max_open_projects and files <= self.max_open_pack_files
                    and assets <= self.max_open_assets):
                break
            if self._projects[project_id].writing():  # evicted at a later look, once its writes are done
                continue
            count, files, assets = count - 1, files - sizes[project_id][0], assets - sizes[project_id][1]
            self._evict(project_id)
        for project_id in list(self._projects):
            if now - self._last_used[project_id] < self.idle_seconds:
                break  # the rest were used more recently still
            self._projects[project_id].close_files()  # (nothing to do when they are closed already)

    def _evict(self, project_id: str) -> None:
        project = self._projects.pop(project_id)
        del self._last_used[project_id]
        project.close_files()

    def create_project(self, name: str, source: str, source_name: str, owner: Person = SERVICE,
                       project_id: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                       when: float | None = None) -> Project:
        """Create a repository whose first commit holds only project.json (source locale, no assets)."""
        project_id = project_id or self._free_id(slugify(name))
        if not PROJECT_ID.match(project_id):
            raise Conflict(f"Invalid project id {project_id!r}")
        path = self.projects_dir / project_id
        try:
            GitRepo.init(path).close()  # the project below opens its own
        except FileExistsError:
            raise Conflict(f"Project {project_id!r} already exists") from None
        project = self.project(project_id)
        created = iso_from_timestamp(when) if when else utc_now()
        with project.transaction(owner, f"Create project {name}", Action.CREATE_PROJECT, when=when) as tx:
            tx.meta.update({
                "id": project_id, "name": name, "source": source, "created": created,
                "chunk_size": chunk_size, "next_seq": 0,
                "locales": [{"code": source, "name": source_name}], "tags": [],
            })
        return project

    def replica(self, project_id: str) -> Project:
        """The project, made an empty repository first when this data directory has none: a copy that a
        cluster node is about to fetch from another (cluster.replication)."""
        if not PROJECT_ID.match(project_id):
            raise Conflict(f"Invalid project id {project_id!r}")
        try:
            GitRepo.init(self.projects_dir / project_id).close()
        except FileExistsError:
            pass
        return self.project(project_id)

    def _free_id(self, base: str) -> str:
        candidate, counter = base, 2
        while (self.projects_dir / candidate).exists():
            candidate, counter = f"{base}-{counter}", counter + 1
        return candidate


def _close_idle_files(store_ref: "weakref.ref[Store]") -> None:
    """Every few seconds, the store's budget and idle check, until the store itself is gone."""
    while True:
        time.sleep(IDLE_CHECK_SECONDS)
        store = store_ref()
        if store is None:
            return
        try:
            with store._lock:
                store._keep_within_budget(time.monotonic())
        except Exception:  # (the interpreter exiting beneath it): the next request checks again
            pass
        del store  # holds no reference while it sleeps
