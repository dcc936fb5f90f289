"""Nothing is lost: concurrent writer processes and writers killed mid-write, checked with git itself."""
from __future__ import annotations

import errno
import io
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from storage.git import objects, refs, worktree
from storage import operations as ops
from storage.gitrepo import Person
from storage.journal import SLOT_SIZE, Journal
from storage.store import Store, utc_now
from tests.support import assert_fsck_clean, REPO_ROOT, git, poll_until, wait_until

WRITER = Person("Writer", "writer@example.com")
PROCESSES, WRITES = 8, 50


def _project_with(tmp_path, name: str, ids: list[str]):
    """A new store with one project holding the assets `ids`: (store, project)."""
    store = Store(tmp_path / "data")
    project = store.create_project(name, "en", "English")
    _create_assets(project, ids)
    return store, project


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
    ids = ["shared"] + [f"p{n}.{i}" for n in range(PROCESSES) for i in range(WRITES)]
    store, project = _project_with(tmp_path, "Busy", ids)
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
    assert_fsck_clean(project.path)


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
    def idle() -> bool:
        busy = False
        for proc in Path("/proc").iterdir():
            try:
                busy |= proc.name.isdigit() and os.readlink(proc / "cwd") == str(repo)
            except OSError:
                continue
        return not busy

    wait_until(idle, timeout, message="a process of the killed writer still works in the repository")


def _acknowledged(output: str) -> dict[str, str]:
    acked: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].startswith("value "):
            acked[parts[0]] = parts[1]
    return acked


def test_writer_killed_mid_write_leaves_a_consistent_repository_with_every_acknowledged_write(tmp_path):
    store, project = _project_with(tmp_path, "Crashy", [f"k{i}" for i in range(200)])
    script = CRASH_WRITER.format(root=str(REPO_ROOT), data=str(store.data_dir), project=project.id)
    for delay in (0.01, 0.25, 0.5, 0.75):
        writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        first = writer.stdout.readline()  # writing has started (start-up time varies with the machine's load)
        time.sleep(delay)  # the behaviour under test: kills at different moments of the writes, not a wait
        os.kill(writer.pid, signal.SIGKILL)
        output, _ = writer.communicate()
        output = first + output
        acked = _acknowledged(output)
        assert acked, "the writer made no write before it was killed"
        _wait_for_orphaned_maintenance(project.path)
        assert_fsck_clean(project.path)
        snapshot = Store(store.data_dir).project(project.id).snapshot()
        for asset_id, value in acked.items():
            entry = snapshot.translation(asset_id, "en")
            # the acknowledged value, or a later one whose write finished but was not yet printed
            assert int(entry["text"].split()[1]) >= int(value.split()[1])
    survivor = Store(store.data_dir).project(project.id)
    with survivor.transaction(WRITER, "after the crash", "translate") as tx:
        ops.translate(tx, "k0", "en", "after", None, utc_now())
    assert git(project.path, "status", "--porcelain") == ""
    assert_fsck_clean(project.path)


def test_crash_between_moving_the_ref_and_updating_the_working_tree_is_repaired_by_the_next_write(tmp_path):
    store, project = _project_with(tmp_path, "Torn", ["a", "b"])
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
    assert_fsck_clean(project.path)
    assert '"committed but not checked out"' in (Path(project.path) / "locales/en/0000.json").read_text()


def _record_fsyncs(monkeypatch) -> list[str]:
    """Wrap os.fsync and os.replace: every flushed file or directory by path, and every rename as
    `rename -> <target>`, in the order they completed."""
    flushed: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def recording_fsync(fd: int) -> None:
        real_fsync(fd)
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))

    def recording_replace(source, target) -> None:
        real_replace(source, target)
        flushed.append(f"rename -> {target}")

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    return flushed


def test_an_acknowledged_write_flushed_its_pack_index_and_journaled_ref_before_the_answer(api, demo, monkeypatch):
    project, _ = demo
    git_dir = str(project.path / ".git")
    flushed = _record_fsyncs(monkeypatch)
    status, _ = api.post("/api/translations/home.title/fr", data="Accueil durable".encode())
    assert status == 200
    answered = list(flushed)  # what was on disk when the answer came back

    def first(predicate) -> int:
        return next(i for i, path in enumerate(answered) if predicate(path))

    head = _head(project)
    pack = first(lambda p: p.startswith(f"{git_dir}/objects/pack/tmp_pack_"))
    pack_index = first(lambda p: p.startswith(f"{git_dir}/objects/pack/tmp_idx_"))
    names = first(lambda p: p == f"{git_dir}/objects/pack")  # the directory holding their (temp) names
    journal = first(lambda p: p == f"{git_dir}/gloss-journal")
    ref = first(lambda p: p == f"rename -> {git_dir}/refs/heads/main")
    visible = first(lambda p: p.startswith(f"rename -> {git_dir}/objects/pack/pack-"))
    # the pack and the journal naming the new head are durable before the pack or the branch is visible
    assert max(pack, pack_index, names, journal) < min(visible, ref)
    latest, _ = Journal(project.path / ".git").read()
    assert latest.head == head and latest.packs and "locales/fr/0000.json" in latest.paths
    assert git(project.path, "show", f"{head}:locales/fr/0000.json").count("Accueil durable") == 1
    assert git(project.path, "status", "--porcelain") == ""


def test_pending_working_tree_files_and_directories_are_flushed_by_a_later_commit(api, demo, monkeypatch):
    project, _ = demo
    monkeypatch.setattr(refs, "PENDING_PATHS", 3)  # a new locale's file and two directories
    assert api.post("/api/locales", data={"code": "pt-BR"})[0] == 201
    assert api.post("/api/translations/home.title/pt-BR", data="Bem-vindo".encode())[0] == 200
    latest, _ = Journal(project.path / ".git").read()
    assert set(latest.paths) == {"locales/pt-BR/0000.json", "locales/pt-BR/", "locales/"}
    flushed = _record_fsyncs(monkeypatch)
    assert api.post("/api/translations/home.title/fr", data="Bienvenue".encode())[0] == 200
    assert str(project.path / "locales" / "pt-BR" / "0000.json") in flushed  # the oldest first
    assert api.post("/api/translations/home.title/de", data="Willkommen".encode())[0] == 200
    assert str(project.path / "locales") in flushed  # a directory that gained a name
    latest, _ = Journal(project.path / ".git").read()
    assert set(latest.paths) == {"locales/pt-BR/", "locales/fr/0000.json", "locales/de/0000.json"}


def test_at_most_the_pending_limit_of_written_files_waits_for_a_flush(api, demo, monkeypatch):
    project, _ = demo
    monkeypatch.setattr(refs, "PENDING_PATHS", 3)
    for code in ("es", "it", "nl", "sv"):
        assert api.post("/api/locales", data={"code": code})[0] == 201
        assert api.post(f"/api/translations/home.title/{code}", data=code.encode())[0] == 200
        latest, _ = Journal(project.path / ".git").read()
        assert 0 < len(latest.paths) <= 3


WRITER_SCRIPT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {root!r})
    from storage import gitrepo, operations as ops
    from storage.git import durable, objects
    from storage.store import Store, utc_now
    {patch}
    project = Store({data!r}).project({project!r})
    with project.transaction(gitrepo.Person("W", "w@x"), "write", "translate") as tx:
        ops.translate(tx, "a", "en", {text!r}, None, utc_now())
""")


def _write_in_a_process(store, project, text: str, patch: str = "") -> int:
    script = WRITER_SCRIPT.format(root=str(REPO_ROOT), data=str(store.data_dir), project=project.id,
                                  text=text, patch=patch)
    return subprocess.run([sys.executable, "-c", script]).returncode


def _head(project) -> str:
    return git(project.path, "rev-parse", "HEAD").strip()


def _reopened(store, project):
    """The project as a new process sees it (its first use runs the crash recovery)."""
    return Store(store.data_dir).project(project.id)


def _assert_consistent(project) -> None:
    assert git(project.path, "status", "--porcelain") == ""
    assert_fsck_clean(project.path)


# A crash after the round but before the renames is what a power loss leaves when the renames were not yet on
# disk: the journal, the pack under its temp names and the working tree files of earlier writes are.
DIE_AFTER_THE_ROUND = "objects.ObjectStore.publish_pack = lambda *args: os._exit(9)"
# A crash in the round: what a power loss leaves when the round did not finish is any part of it.
DIE_IN_THE_ROUND = "durable.flush_all_to_disk = lambda *args, **kwargs: os._exit(9)"


def test_a_commit_whose_renames_were_lost_after_its_round_is_recovered_from_the_journal(tmp_path):
    store, project = _project_with(tmp_path, "Lost", ["a"])
    before = _head(project)
    assert _write_in_a_process(store, project, "durable before the crash", DIE_AFTER_THE_ROUND) == 9
    assert _head(project) == before  # the branch did not move
    reopened = _reopened(store, project)
    assert reopened.snapshot().translation("a", "en")["text"] == "durable before the crash"
    assert git(project.path, "rev-parse", "HEAD~1").strip() == before
    _assert_consistent(project)
    assert not list((project.path / ".git" / "objects" / "pack").glob("tmp_*"))


def test_a_lost_ref_rename_and_pack_renames_of_an_acknowledged_write_are_replayed(tmp_path):
    store, project = _project_with(tmp_path, "Replay", ["a"])
    before = _head(project)
    assert _write_in_a_process(store, project, "acknowledged") == 0
    latest, _ = Journal(project.path / ".git").read()
    pack_dir = project.path / ".git" / "objects" / "pack"
    temp_pack, temp_index, name = latest.packs[0]
    # as if the power went before the renames reached the disk: old ref, the pack under its temp names
    os.replace(pack_dir / f"{name}.pack", pack_dir / temp_pack)
    os.replace(pack_dir / f"{name}.idx", pack_dir / temp_index)
    (project.path / ".git" / "refs" / "heads" / "main").write_text(before + "\n")
    assert _reopened(store, project).snapshot().translation("a", "en")["text"] == "acknowledged"
    assert _head(project) == latest.head
    _assert_consistent(project)


def test_a_ref_that_lost_several_renames_is_moved_to_the_journaled_head(tmp_path):
    """Ref renames are not flushed on their own (the journal holds the head): after a power loss the ref may
    show any older commit of the branch."""
    store, project = _project_with(tmp_path, "Several", ["a"])
    oldest = _head(project)
    for text in ("one", "two", "three"):
        assert _write_in_a_process(store, project, text) == 0
    latest, _ = Journal(project.path / ".git").read()
    (project.path / ".git" / "refs" / "heads" / "main").write_text(oldest + "\n")
    assert _reopened(store, project).snapshot().translation("a", "en")["text"] == "three"
    assert _head(project) == latest.head
    _assert_consistent(project)


def test_a_round_torn_by_a_crash_leaves_the_previous_commit_and_a_clean_repository(tmp_path):
    store, project = _project_with(tmp_path, "Torn round", ["a"])
    assert _write_in_a_process(store, project, "kept") == 0
    before = _head(project)
    assert _write_in_a_process(store, project, "never acknowledged", DIE_IN_THE_ROUND) == 9
    for temp in (project.path / ".git" / "objects" / "pack").glob("tmp_pack_*"):
        temp.write_bytes(temp.read_bytes()[:20])  # the pack's data did not reach the disk
    reopened = _reopened(store, project)
    assert reopened.snapshot().translation("a", "en")["text"] == "kept"
    assert _head(project) == before
    with reopened.transaction(WRITER, "after", "translate") as tx:  # sweeps the torn temp files
        ops.translate(tx, "a", "en", "after", None, utc_now())
    assert not list((project.path / ".git" / "objects" / "pack").glob("tmp_*"))
    _assert_consistent(project)


def test_a_torn_journal_slot_falls_back_to_the_slot_before(tmp_path):
    store, project = _project_with(tmp_path, "Torn slot", ["a"])
    before = _head(project)
    assert _write_in_a_process(store, project, "never acknowledged", DIE_IN_THE_ROUND) == 9
    journal = Journal(project.path / ".git")
    latest, previous = journal.read()
    assert latest.head != before and previous.head == before
    with open(journal.path, "r+b") as handle:  # the slot being written was torn
        handle.seek((latest.seq % 2) * SLOT_SIZE + 10)
        handle.write(b"\0" * 100)
    assert journal.read()[0].seq == previous.seq
    assert _reopened(store, project).snapshot().translation("a", "en")["text"] == "a"
    assert _head(project) == before
    _assert_consistent(project)


def test_working_tree_files_and_an_index_torn_by_a_power_loss_are_repaired_on_the_next_start(tmp_path):
    store, project = _project_with(tmp_path, "Torn files", ["a"])
    assert _write_in_a_process(store, project, "in the working tree") == 0
    latest, _ = Journal(project.path / ".git").read()
    torn = project.path / "locales" / "en" / "0000.json"
    assert "locales/en/0000.json" in latest.paths  # written after its round: not flushed yet
    torn.write_bytes(bytes(len(torn.read_bytes())))  # its blocks never reached the disk
    index = project.path / ".git" / "index"
    index.write_bytes(index.read_bytes()[:-30])
    _reopened(store, project)
    assert '"in the working tree"' in torn.read_text()
    _assert_consistent(project)
    assert Journal(project.path / ".git").read()[0].settled  # everything flushed since


def test_a_process_forked_after_writing_still_flushes_its_writes(tmp_path):
    """The fsync thread pool belongs to the process that made it: a forked worker (gunicorn) gets its own."""
    store = Store(tmp_path / "data")
    project = store.create_project("Forked", "en", "English")
    _create_assets(project, ["a"])  # the parent's pool now exists
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            with Store(store.data_dir).project(project.id).transaction(WRITER, "child", "translate") as tx:
                ops.translate(tx, "a", "en", "from the child", None, utc_now())
            os._exit(0)
        except BaseException:
            os._exit(1)
    def exited() -> tuple[int, int] | None:
        pid, status = os.waitpid(child, os.WNOHANG)
        return (pid, status) if pid else None

    done = poll_until(exited, timeout=120)
    if not done:  # the child waits forever on flush threads that do not exist in it
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        raise AssertionError("the forked writer hung while flushing its files")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    assert Store(store.data_dir).project(project.id).snapshot().translation("a", "en")["text"] == "from the child"


def test_a_recovery_that_fails_at_start_leaves_reads_working_and_the_next_write_retries_it(tmp_path, monkeypatch):
    import errno

    store, project = _project_with(tmp_path, "Read-only", ["a"])
    (project.path / ".git" / "gloss-checkout").write_text("0" * 40 + "\n")  # the working tree must be resynced
    real_resync = worktree.WorkTree.resync

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(worktree.WorkTree, "resync", read_only)
    reopened = _reopened(store, project)  # no exception: the failure is logged
    assert reopened.snapshot().translation("a", "en")["text"] == "a"
    monkeypatch.setattr(worktree.WorkTree, "resync", real_resync)
    with reopened.transaction(WRITER, "later", "translate") as tx:
        ops.translate(tx, "a", "en", "later", None, utc_now())
    _assert_consistent(project)


def _spares(project) -> list[str]:
    return sorted(path.name for path in (project.path / ".git").glob("gloss-spare-*"))


def test_a_commit_leaves_spare_temp_files_that_the_next_one_takes_and_a_killed_writers_spares_are_swept(tmp_path):
    store, project = _project_with(tmp_path, "Spares", ["a"])
    dead = project.path / ".git" / "gloss-spare-999999999-pack.tmp"  # a writer killed with its spares
    dead.touch()
    project = _reopened(store, project)
    _create_assets(project, ["b"])  # a process's first write sweeps what dead writers left
    made = _spares(project)
    assert dead.name not in made and len(made) == 4  # the ref lock's, the pack's two, the index's
    with project.transaction(WRITER, "next", "translate") as tx:
        ops.translate(tx, "a", "en", "next", None, utc_now())
    assert _spares(project) == made  # taken by that commit, made again after it
    assert _reopened(store, project).snapshot().translation("a", "en")["text"] == "next"
    _assert_consistent(project)


class _FullDisk(io.FileIO):
    """A file on a disk that refuses every byte (what a full file system answers)."""

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_pack_the_full_disk_refused_leaves_no_temp_file_though_closing_it_fails_again(api, demo, monkeypatch):
    project, _ = demo
    before = _head(project)
    # buffered like open(): the pack waits in the buffer, its flush fails, and so does close() flushing it again
    monkeypatch.setattr(objects, "open", lambda path, mode: io.BufferedWriter(_FullDisk(path, "w")), raising=False)
    status, body = api.post("/api/translations/home.title/fr", data="Plein".encode())
    assert status == 507 and "full" in body["error"]
    pack_dir = project.path / ".git" / "objects" / "pack"
    assert sorted(path.name for path in pack_dir.iterdir() if "tmp" in path.name) == []
    assert _head(project) == before
    monkeypatch.undo()
    assert api.post("/api/translations/home.title/fr", data="Plus plein".encode())[0] == 200
    _assert_consistent(project)
