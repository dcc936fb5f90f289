"""Nothing is lost: concurrent writer processes and writers killed mid-write, checked with git itself."""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from storage import operations as ops
from storage.gitrepo import Person
from storage.store import Store, utc_now
from tests.support import REPO_ROOT, git

WRITER = Person("Writer", "writer@example.com")
PROCESSES, WRITES = 8, 50


def _create_assets(project, ids):
    with project.transaction(WRITER, "Assets", "create-asset") as tx:
        for asset_id in ids:
            ops.create_asset(tx, asset_id, utc_now(), text=asset_id)


def _writer_process(data_dir: str, project_id: str, number: int) -> None:
    project = Store(data_dir).project(project_id)
    actor = ops.Actor(number, f"w{number}", "")
    for i in range(WRITES):
        with project.transaction(WRITER, f"w{number} #{i}", "translate") as tx:
            ops.translate(tx, f"p{number}.{i}", "en", f"value {number}/{i}", actor, utc_now())
            ops.translate(tx, "shared", "en", f"last {number}/{i}", actor, utc_now())


def test_eight_processes_writing_fifty_times_lose_no_update(tmp_path):
    store = Store(tmp_path / "data")
    project = store.create_project("Busy", "en", "English")
    _create_assets(project, ["shared"] + [f"p{n}.{i}" for n in range(PROCESSES) for i in range(WRITES)])
    before = int(git(project.path, "rev-list", "--count", "HEAD"))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer_process, args=(str(store.data_dir), project.id, n))
               for n in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert int(git(project.path, "rev-list", "--count", "HEAD")) == before + PROCESSES * WRITES
    assert git(project.path, "rev-list", "--min-parents=2", "HEAD") == ""  # linear history
    snapshot = Store(store.data_dir).project(project.id).snapshot()
    for n in range(PROCESSES):
        for i in range(WRITES):
            assert snapshot.translation(f"p{n}.{i}", "en")["text"] == f"value {n}/{i}"
    # every write bumped the shared translation: a lost read-modify-write would show as a smaller revision
    assert snapshot.translation("shared", "en")["rev"] == 1 + PROCESSES * WRITES
    assert git(project.path, "status", "--porcelain") == ""
    git(project.path, "fsck", "--strict")


CRASH_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from storage import operations as ops
    from storage.gitrepo import Person
    from storage.store import Store, utc_now
    project = Store({data!r}).project({project!r})
    for i in range(100000):
        with project.transaction(Person("W", "w@x"), "write", "translate") as tx:
            ops.translate(tx, "k%d" % (i % 200), "en", "value %d" % i, None, utc_now())
        print("k%d value %d" % (i % 200, i), flush=True)   # acknowledged: the transaction returned
""")


def _wait_for_orphaned_maintenance(repo: Path, timeout: float = 30) -> None:
    """A killed writer may leave its background `git repack` running; fsck must not race with it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        busy = False
        for proc in Path("/proc").iterdir():
            try:
                busy |= proc.name.isdigit() and os.readlink(proc / "cwd") == str(repo)
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.05)


def _acknowledged(output: str) -> dict[str, str]:
    acked: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].startswith("value "):
            acked[parts[0]] = parts[1]
    return acked


def test_writer_killed_mid_write_leaves_a_consistent_repository_with_every_acknowledged_write(tmp_path):
    store = Store(tmp_path / "data")
    project = store.create_project("Crashy", "en", "English")
    _create_assets(project, [f"k{i}" for i in range(200)])
    script = CRASH_WRITER.format(root=str(REPO_ROOT), data=str(store.data_dir), project=project.id)
    for delay in (0.01, 0.25, 0.5, 0.75):
        writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        first = writer.stdout.readline()  # writing has started (start-up time varies with the machine's load)
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)
        output, _ = writer.communicate()
        output = first + output
        acked = _acknowledged(output)
        assert acked, "the writer made no write before it was killed"
        _wait_for_orphaned_maintenance(project.path)
        git(project.path, "fsck", "--strict")
        snapshot = Store(store.data_dir).project(project.id).snapshot()
        for asset_id, value in acked.items():
            entry = snapshot.translation(asset_id, "en")
            # the acknowledged value, or a later one whose write finished but was not yet printed
            assert int(entry["text"].split()[1]) >= int(value.split()[1])
    survivor = Store(store.data_dir).project(project.id)
    with survivor.transaction(WRITER, "after the crash", "translate") as tx:
        ops.translate(tx, "k0", "en", "after", None, utc_now())
    assert git(project.path, "status", "--porcelain") == ""
    git(project.path, "fsck", "--strict")


def test_crash_between_moving_the_ref_and_updating_the_working_tree_is_repaired_by_the_next_write(tmp_path):
    store = Store(tmp_path / "data")
    project = store.create_project("Torn", "en", "English")
    _create_assets(project, ["a", "b"])
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from storage import gitrepo, operations as ops
        from storage.store import Store, utc_now
        gitrepo.GitRepo.update_worktree = lambda *args, **kwargs: os._exit(9)  # die after the ref moved
        project = Store({str(store.data_dir)!r}).project({project.id!r})
        with project.transaction(gitrepo.Person("W", "w@x"), "torn", "translate") as tx:
            ops.translate(tx, "a", "en", "committed but not checked out", None, utc_now())
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9
    assert git(project.path, "status", "--porcelain") != ""  # the working tree lags behind HEAD
    assert Store(store.data_dir).project(project.id).snapshot().translation("a", "en")["text"] == \
        "committed but not checked out"
    survivor = Store(store.data_dir).project(project.id)
    with survivor.transaction(WRITER, "next", "translate") as tx:
        ops.translate(tx, "b", "en", "next", None, utc_now())
    assert git(project.path, "status", "--porcelain") == ""
    git(project.path, "fsck", "--strict")
    assert '"committed but not checked out"' in (Path(project.path) / "locales/en/0000.json").read_text()
