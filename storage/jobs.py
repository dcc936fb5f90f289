"""Asynchronous job progress in DATA/jobs/<id>.json, so that every worker process can report on it.

A job records the process running it. A job read while unfinished whose process is gone (killed, crashed,
restarted) is settled at once: finished when its commit exists (the import commit carries a `Job:`
trailer), failed otherwise. A progress record is therefore never stuck.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable

from limits import JOB_KEEP_SECONDS

from .errors import Invalid, NotFound

JOB_ID = re.compile(r"^[0-9a-f]{32}$")
INTERRUPTED = "The import was interrupted (the server process stopped) before it committed; nothing was imported"
COMMITTED = "The import was committed; the server process stopped before it could report the details"


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name (state first, start time at index 19); [] when
    there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_token(pid: int) -> str:
    """`pid:start-time`, unique to one process even when the pid is reused (start time from /proc)."""
    fields = _stat_fields(pid)
    return f"{pid}:{fields[19].decode() if len(fields) > 19 else ''}"


def process_alive(token: str) -> bool:
    """Whether the process a token names still runs. A zombie does not: a worker killed with its master is
    reparented, and until something reaps it (a container's first process may never) its /proc entry stays,
    start time and all; its job would be reported running forever."""
    pid_text, _, start = token.partition(":")
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if start:
        fields = _stat_fields(pid)
        return len(fields) > 19 and fields[19].decode() == start and fields[0] not in (b"Z", b"X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Job:
    id: str
    project: str
    progress: int = 0
    success: str = ""
    error: str = ""
    updated: float = 0.0
    owner: str = ""  # process_token of the process running the job

    @property
    def finished(self) -> bool:
        return bool(self.success or self.error)


class JobStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def create(self, project: str) -> Job:
        self._sweep()
        job = Job(id=secrets.token_hex(16), project=project, owner=process_token(os.getpid()))
        self.save(job)
        return job

    def save(self, job: Job) -> None:
        job.updated = time.time()
        temp = self.directory / f".{job.id}.{os.getpid()}.tmp"
        try:
            temp.write_text(json.dumps(asdict(job)), "utf-8")
            os.replace(temp, self.directory / f"{job.id}.json")
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    def update(self, job: Job, progress: int | None = None, success: str | None = None,
               error: str | None = None) -> None:
        if progress is not None:
            job.progress = max(job.progress, min(100, int(progress)))
        if success is not None:
            job.success = success
        if error is not None:
            job.error = error
        self.save(job)

    def get(self, job_id: str, project: str, committed: Callable[[str], bool] = lambda job_id: False) -> Job:
        """A job of the given project (another project's job is as unknown as a missing one).

        `committed(job_id)` tells whether the job's commit exists; it settles a job whose process died.
        """
        if not job_id:
            raise Invalid("Empty job id")
        if not JOB_ID.match(job_id):
            raise NotFound("No such import job")
        try:
            record = json.loads((self.directory / f"{job_id}.json").read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            raise NotFound("No such import job") from None
        known = {field.name for field in fields(Job)}
        job = Job(**{name: value for name, value in record.items() if name in known})
        if job.project != project:
            raise NotFound("No such import job")
        if not job.finished and not process_alive(job.owner):
            self._settle(job, committed(job.id))
        return job

    def _settle(self, job: Job, committed: bool) -> None:
        """Finish a job whose process died: success when its commit exists, else failure."""
        if committed:
            self.update(job, progress=100, success=COMMITTED)
        else:
            self.update(job, progress=100, error=INTERRUPTED)

    def _sweep(self) -> None:
        limit = time.time() - JOB_KEEP_SECONDS
        for path in self.directory.glob("*.json"):
            try:
                if path.stat().st_mtime < limit:
                    path.unlink()
            except FileNotFoundError:
                pass
        for path in self.directory.glob(".*.tmp"):  # temp records of killed processes
            try:
                if path.stat().st_mtime < time.time() - 3600:
                    path.unlink()
            except FileNotFoundError:
                pass
