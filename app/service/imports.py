"""Imports: a file read, then applied to the project in one commit (prepared outside the project lock).

A big file is read and applied in a child process (IMPORT_APART_BYTES): it opens the project from the data
directory and commits as another worker process would (the store is safe for several processes), sends its
progress and its report back, and exits with every temporary of the import. Not on a cluster node, whose
commits go through its replication (Store.before_durable), nor where the process has no data directory.
"""
from __future__ import annotations

import pickle
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Callable

import formats
from limits import IMPORT_APART_BYTES
from storage.gitrepo import MAIN, Person
from storage.keys import KeyStore
from storage.operations import Actor
from storage.project import Project
from storage.snapshot import Snapshot
from storage.store import Store
from storage.trailers import Action, Trailer

from ..context import is_live_key, now
from ..exchange import Importer, ImportOptions, ImportReport

formats.preload_in_children(__name__)  # a big import's child starts with this module and what it imports loaded


def run_import(target: Project, ext: str, variant: str, data: bytes, options: ImportOptions,
               read_options: formats.ReadOptions, author: Person, actor: Actor, progress: Callable[[float], None] = lambda fraction: None,
               job_id: str = "", branch: str = MAIN, apart_in: tuple[Path, Path] | None = None) -> tuple[ImportReport, Snapshot]:
    """Parse, then apply in one transaction: one commit however many units, nothing on any error.

    The apply is prepared outside the project lock and committed only if the head did not move meanwhile
    (Project.prepared_write), so other writes to the project wait for the commit, not for the import.
    An asynchronous import's commit carries a `Job:` trailer, so that its job can be settled after a crash.
    `branch`: the branch it is committed on (the request's, app.context.branch). `apart_in`: the data
    directory and the key file, for a big file's import in a child process (see the module).
    """
    if apart_in is not None and len(data) >= IMPORT_APART_BYTES and target.before_durable is None:
        return _import_apart(target, apart_in, (ext, variant, data, options, read_options, author, actor, job_id,
                                                branch), progress)
    with formats.collector_off():  # the whole job: its objects are acyclic, and a pass over them stalls the worker
        return _import(target, ext, variant, data, options, read_options, author, actor, progress, job_id, branch,
                       is_live_key)


def _import(target: Project, ext: str, variant: str, data: bytes, options: ImportOptions,
            read_options: formats.ReadOptions, author: Person, actor: Actor, progress: Callable[[float], None],
            job_id: str, branch: str, is_live: Callable[[str], bool]) -> tuple[ImportReport, Snapshot]:
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
                                       is_live_key=is_live, branch=branch)
    return report, tx.result


def _import_apart(target: Project, apart_in: tuple[Path, Path], work: tuple,
                  progress: Callable[[float], None]) -> tuple[ImportReport, Snapshot]:
    """run_import's work in a child process: its progress passed on, its error raised here, and the snapshot
    of the commit it made (or found: nothing changed) read from Git."""
    context = formats.child_context()
    ours, theirs = context.Pipe()
    child = context.Process(target=_import_in_child, args=(theirs, *apart_in, target.id, work),  # type: ignore[attr-defined]
                            name="gloss-import", daemon=True)
    child.start()
    theirs.close()
    try:
        message = ours.recv()
        while message[0] == "progress":
            progress(message[1])
            message = ours.recv()
    except (EOFError, ConnectionError) as error:  # killed from outside, out of memory
        raise RuntimeError(f"the import's child process ended without an answer: {error!r}") from None
    finally:
        child.join()
        ours.close()
    if message[0] == "error":
        raise message[1]
    if message[0] == "crash":
        raise RuntimeError(f"the import's child process failed:\n{message[1]}")
    report, commit = message[1], message[2]
    return report, target.snapshot_at(commit)


def _import_in_child(connection: Connection, data_dir: Path, keys_path: Path, project_id: str, work: tuple) -> None:
    """The child's side: the project opened from the data directory, the import made, its report sent."""
    ext, variant, data, options, read_options, author, actor, job_id, branch = work
    try:
        target = Store(data_dir).project(project_id)
        with formats.collector_off():
            report, result = _import(target, ext, variant, data, options, read_options, author, actor,
                                     lambda fraction: connection.send(("progress", fraction)), job_id, branch,
                                     KeyStore(keys_path).is_live)
        answer: tuple = ("done", report, result.commit)
    except Exception as error:  # raised again in the parent, answered as there (a 4xx, or a 500 for a fault)
        answer = ("error", error) if _travels(error) else ("crash", traceback.format_exc())
    connection.send(answer)
    connection.close()


def _travels(error: Exception) -> bool:
    """Whether an exception survives the trip to the parent (pickled, then made again there)."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return False
    return True
