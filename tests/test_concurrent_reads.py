"""Readers in several threads of one process keep working while writes and repacks replace the packs."""
from __future__ import annotations

import subprocess
import threading

from storage import operations as ops
from storage.gitrepo import Person
from storage.snapshot import Snapshot
from storage.store import Store, utc_now

WRITER = Person("Writer", "writer@example.com")
ASSETS, WRITES, REPACK_EVERY, READERS = 3000, 40, 4, 3


def test_reader_threads_never_fail_while_repacks_delete_the_packs_they_read(tmp_path):
    """Regression: dulwich closed a pack another thread was reading (`BufferError: cannot close exported
    pointers exist`, a 500 under mixed load) when a repack had deleted it."""
    project = Store(tmp_path / "data").create_project("Mixed", "en", "English")
    with project.transaction(WRITER, "Assets", "create-asset") as tx:
        for i in range(ASSETS):
            ops.create_asset(tx, f"k{i}", utc_now(), text=f"text {i}")
    done = threading.Event()
    errors: list[BaseException] = []
    loads = [0] * READERS

    def read(number: int) -> None:
        while not done.is_set() or loads[number] == 0:
            try:
                snapshot = Snapshot.load(project.repo, project.repo.head(), None)  # reads every chunk
                assert len(list(snapshot.asset_ids())) == ASSETS
            except BaseException as error:  # noqa: BLE001 - collected and reported below
                errors.append(error)
                return
            loads[number] += 1

    readers = [threading.Thread(target=read, args=(n,)) for n in range(READERS)]
    for reader in readers:
        reader.start()
    try:
        for i in range(WRITES):
            with project.transaction(WRITER, "Write", "translate") as tx:
                ops.translate(tx, f"k{i}", "en", f"value {i}", None, utc_now())
            if i % REPACK_EVERY == 0:  # every pack is rewritten and the old ones deleted
                subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=project.path, check=True)
    finally:
        done.set()
        for reader in readers:
            reader.join()
    assert errors == []
    assert all(loads)
