"""Asynchronous job progress in DATA/jobs/<id>.json, so that every worker process can report on it."""
from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import Invalid, NotFound

JOB_ID = re.compile(r"^[0-9a-f]{32}$")
KEEP_SECONDS = 7 * 24 * 3600  # finished jobs older than this are swept when a new one starts


@dataclass
class Job:
    id: str
    project: str
    progress: int = 0
    success: str = ""
    error: str = ""
    updated: float = 0.0


class JobStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def create(self, project: str) -> Job:
        self._sweep()
        job = Job(id=secrets.token_hex(16), project=project)
        self.save(job)
        return job

    def save(self, job: Job) -> None:
        job.updated = time.time()
        temp = self.directory / f".{job.id}.{os.getpid()}.tmp"
        temp.write_text(json.dumps(asdict(job)), "utf-8")
        os.replace(temp, self.directory / f"{job.id}.json")

    def update(self, job: Job, progress: int | None = None, success: str | None = None,
               error: str | None = None) -> None:
        if progress is not None:
            job.progress = max(job.progress, min(100, int(progress)))
        if success is not None:
            job.success = success
        if error is not None:
            job.error = error
        self.save(job)

    def get(self, job_id: str, project: str) -> Job:
        """A job of the given project (another project's job is as unknown as a missing one)."""
        if not job_id:
            raise Invalid("Empty job id")
        if not JOB_ID.match(job_id):
            raise NotFound("No such import job")
        try:
            job = Job(**json.loads((self.directory / f"{job_id}.json").read_text("utf-8")))
        except FileNotFoundError:
            raise NotFound("No such import job") from None
        if job.project != project:
            raise NotFound("No such import job")
        return job

    def _sweep(self) -> None:
        limit = time.time() - KEEP_SECONDS
        for path in self.directory.glob("*.json"):
            try:
                if path.stat().st_mtime < limit:
                    path.unlink()
            except FileNotFoundError:
                pass
