"""Imports: a file read, then applied to the project in one commit (prepared outside the project lock)."""
from __future__ import annotations

from typing import Callable

import formats
from storage.gitrepo import MAIN, Person
from storage.operations import Actor
from storage.project import Project
from storage.snapshot import Snapshot
from storage.trailers import Action, Trailer

from ..context import is_live_key, now
from ..exchange import Importer, ImportOptions, ImportReport


def run_import(target: Project, ext: str, variant: str, data: bytes, options: ImportOptions,
               read_options: formats.ReadOptions, author: Person, actor: Actor, progress: Callable[[float], None] = lambda fraction: None,
               job_id: str = "", branch: str = MAIN) -> tuple[ImportReport, Snapshot]:
    """Parse, then apply in one transaction: one commit however many units, nothing on any error.

    The apply is prepared outside the project lock and committed only if the head did not move meanwhile
    (Project.prepared_write), so other writes to the project wait for the commit, not for the import.
    An asynchronous import's commit carries a `Job:` trailer, so that its job can be settled after a crash.
    `branch`: the branch it is committed on (the request's, app.context.branch).
    """
    with formats.collector_off():  # the whole job: its objects are acyclic, and a pass over them stalls the worker
        return _import(target, ext, variant, data, options, read_options, author, actor, progress, job_id, branch)


def _import(target: Project, ext: str, variant: str, data: bytes, options: ImportOptions,
            read_options: formats.ReadOptions, author: Person, actor: Actor, progress: Callable[[float], None],
            job_id: str, branch: str) -> tuple[ImportReport, Snapshot]:
    snapshot = target.snapshot(branch)
    read_options.source_locale = snapshot.source_locale
    read_options.namespace = read_options.namespace or snapshot.name  # as exports default it
    catalogue = formats.read_file(ext, variant, data, read_options)
    progress(0.3)
    summary = f"Import {ext} file ({len(catalogue.units)} units)"
    trailers: list[tuple[str, str]] = [(Trailer.FORMAT, ext)]
    if job_id:
        trailers.append((Trailer.JOB, job_id))

    def prepare(tx):
        if options.index == "id":
            formats.restore_keys(catalogue, ext, variant, tx.base.asset_ids())  # (tx has no change yet)
        importer = Importer(tx, options, actor, now(), lambda fraction: progress(0.3 + 0.6 * fraction))
        report = importer.apply(catalogue)
        report.warnings[:0] = catalogue.warnings  # the reader's words first, then the importer's
        tx.trailers.append((Trailer.LOCALE, ",".join(sorted(report.locales)) or "-"))
        return report

    report, tx = target.prepared_write(prepare, author, summary, Action.IMPORT, trailers, committer=author,
                                       is_live_key=is_live_key, branch=branch)
    return report, tx.result
