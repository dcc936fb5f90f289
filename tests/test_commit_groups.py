"""Commit groups: writers of one process that queue up behind each other commit one on top of the other and
become durable together, each still its own commit, none answered before its commit is durable."""
from __future__ import annotations

import threading

import pytest

from storage import operations as ops
from storage.errors import Invalid
from storage.gitrepo import Person
from storage.store import Store, utc_now
from tests.support import assert_fsck_clean, git, wait_until

ACTOR = ops.Actor(7, "Alice Martin", "alice@example.com")
TICK = 0.002  # threads of this process wait for each other: a short poll keeps these tests quick


@pytest.fixture
def project(tmp_path):
    project = Store(tmp_path / "data").create_project("Shop", "en", "English")
    with project.transaction(Person("Alice", "alice@example.com"), "Add key", "create-asset") as tx:
        ops.create_asset(tx, "greeting", utc_now(), text="Hello", actor=ACTOR)
    return project


def count_ref_moves(project, monkeypatch) -> list[bytes]:
    moves: list[bytes] = []
    move_head = project.repo.move_head

    def counting(commit, *args, **kwargs):
        moves.append(commit)
        return move_head(commit, *args, **kwargs)

    monkeypatch.setattr(project.repo, "move_head", counting)
    return moves


class Writers:
    """A first writer held inside its transaction until `queued` more writers wait behind it."""

    def __init__(self, project, queued: int, body=None):
        self.project = project
        self.release = threading.Event()
        self.results: dict[int, object] = {}
        self.heads_at_return: dict[int, bytes] = {}
        self.body = body or (lambda number, tx: ops.create_asset(tx, f"key{number}", utc_now(), text=f"t{number}",
                                                                  actor=ACTOR))
        self.threads = [threading.Thread(target=self.write, args=(0,))]
        self.threads += [threading.Thread(target=self.write, args=(n,)) for n in range(1, queued + 1)]

    def write(self, number: int) -> None:
        author = Person(f"Writer {number}", f"w{number}@example.com")
        try:
            with self.project.transaction(author, f"Write {number}", "create-asset") as tx:
                if number == 0:
                    self.release.wait(10)
                self.body(number, tx)
            self.results[number] = tx.result.commit
            self.heads_at_return[number] = self.project.repo.head()
        except Exception as error:  # noqa: BLE001 - the test inspects it
            self.results[number] = error

    def run(self) -> None:
        self.threads[0].start()
        wait_until(lambda: self.project._group is not None, interval=TICK)
        for thread in self.threads[1:]:
            thread.start()
        wait_until(lambda: self.project._waiting == len(self.threads) - 1, interval=TICK)
        self.release.set()
        for thread in self.threads:
            thread.join(20)


def test_queued_writers_each_get_their_own_commit_and_share_one_ref_update(project, monkeypatch):
    moves = count_ref_moves(project, monkeypatch)
    writers = Writers(project, queued=4)
    writers.run()
    commits = [writers.results[n] for n in range(5)]
    assert all(isinstance(commit, bytes) for commit in commits), commits
    assert len(moves) < 5  # at least two of the five commits became durable in one ref update
    log = git(project.path, "log", "--format=%an|%s", "-6").splitlines()
    assert sorted(log[:5]) == sorted(f"Writer {n}|Write {n}" for n in range(5))
    assert git(project.path, "rev-list", "--count", "HEAD").strip() == "7"  # create, add key, five writes
    for number in range(5):  # nobody was answered before their commit was on the branch
        git(project.path, "merge-base", "--is-ancestor", commits[number].decode(),
            writers.heads_at_return[number].decode())
    assert {f"key{n}" for n in range(5)} <= set(Store(project.path.parent.parent).project(project.id).snapshot().asset_ids())
    assert_fsck_clean(project.path)
    assert git(project.path, "status", "--porcelain") == ""


def test_a_writer_whose_change_is_refused_leaves_the_others_of_its_group_committed(project):
    def body(number, tx):
        if number == 2:
            raise Invalid("refused on purpose")
        ops.create_asset(tx, f"key{number}", utc_now(), text="t", actor=ACTOR)

    writers = Writers(project, queued=3, body=body)
    writers.run()
    assert isinstance(writers.results[2], Invalid)
    assert all(isinstance(writers.results[n], bytes) for n in (0, 1, 3))
    ids = set(project.snapshot().asset_ids())
    assert {"key0", "key1", "key3"} <= ids and "key2" not in ids
    assert_fsck_clean(project.path)


def test_when_a_group_cannot_be_made_durable_no_writer_of_it_is_answered_and_nothing_is_written(project,
                                                                                                monkeypatch):
    head = project.repo.head()

    def failing(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(project.repo, "move_head", failing)
    writers = Writers(project, queued=3)
    writers.run()
    assert all(isinstance(writers.results[n], OSError) for n in range(4)), writers.results
    assert project.repo.head() == head and project.snapshot().commit == head
    monkeypatch.undo()
    with project.transaction(Person("Bob", "bob@example.com"), "Later", "create-asset") as tx:
        ops.create_asset(tx, "later", utc_now(), text="t", actor=ACTOR)
    assert set(project.snapshot().asset_ids()) == {"greeting", "later"}
    assert_fsck_clean(project.path)


def test_a_write_that_starts_its_own_group_lets_the_pending_group_answer_first(project):
    finished = threading.Event()
    first_in = threading.Event()
    order: list[str] = []

    def small() -> None:
        with project.transaction(Person("Small", "s@example.com"), "Small", "create-asset") as tx:
            first_in.set()
            wait_until(lambda: project._waiting == 1, interval=TICK)
            ops.create_asset(tx, "small", utc_now(), text="t", actor=ACTOR)
        order.append("small answered")
        finished.set()

    def big() -> None:
        with project.transaction(Person("Big", "b@example.com"), "Import", "import", first_in_group=True) as tx:
            finished.wait(10)  # a long import: the small write, made before it, is answered meanwhile
            order.append("import still running")
            ops.create_asset(tx, "big", utc_now(), text="t", actor=ACTOR)

    threads = [threading.Thread(target=small), threading.Thread(target=big)]
    threads[0].start()
    first_in.wait(10)
    threads[1].start()
    for thread in threads:
        thread.join(20)
    assert order == ["small answered", "import still running"]
    assert git(project.path, "log", "--format=%s", "-2").splitlines() == ["Import", "Small"]


def test_a_reader_of_the_writing_process_gets_the_published_tip_without_loading_it_from_git(project, monkeypatch):
    from storage.snapshot import Snapshot

    loads: list[bytes] = []
    load = Snapshot.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Snapshot, "load", classmethod(lambda cls, repo, head, *rest: loads.append(head) or
                                                      load(cls, repo, head, *rest)))
    seen: list[object] = []
    move_head = project.repo.move_head

    def move_then_read(commit, *args, **kwargs):
        move_head(commit, *args, **kwargs)
        # the branch has moved: a reader in this process now sees a new head before the writer is done
        reader = threading.Thread(target=lambda: seen.append(project.snapshot()))
        reader.start()
        reader.join(0.2)  # it waits for the writer's snapshot instead of loading the commit from Git

    monkeypatch.setattr(project.repo, "move_head", move_then_read)
    with project.transaction(Person("Bob", "bob@example.com"), "Edit", "translate") as tx:
        ops.translate(tx, "greeting", "en", "Hi", ACTOR, utc_now())
    wait_until(lambda: seen, interval=TICK)
    assert seen[0] is project.snapshot() and project.snapshot().commit == project.repo.head()
    assert loads == []
