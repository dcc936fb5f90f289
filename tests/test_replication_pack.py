"""A write's objects go from a leader's copy to a follower's as one Git pack built and stored in process
(cluster.replication.pack_since, GitRepo.unpacked, adopt_refs), checked through Git itself."""
from __future__ import annotations

import shutil

import pytest

from cluster.replication import adopt_refs, pack_since, refs_of
from storage import operations as ops
from storage.gitrepo import Person
from storage.git import maintenance
from storage.git.objects import pack_of
from storage.store import Store, utc_now
from tests.support import assert_fsck_clean, git, wait_until

ALICE = Person("Alice Martin", "alice@example.com")
ACTOR = ops.Actor(7, "Alice Martin", "alice@example.com")


def create(project, asset_id: str, text: str) -> None:
    with project.transaction(ALICE, f"Add {asset_id}", "create-asset", [("Asset", asset_id)]) as tx:
        ops.create_asset(tx, asset_id, utc_now(), text=text, actor=ACTOR)


@pytest.fixture
def copies(tmp_path):
    """A leader's project and a follower's byte-identical copy of it."""
    leader = Store(tmp_path / "leader").create_project("Shop", "en", "English")
    create(leader, "home.title", "Welcome")
    shutil.copytree(tmp_path / "leader", tmp_path / "follower")
    return leader, Store(tmp_path / "follower").project(leader.id)


def test_a_follower_takes_the_leaders_new_commits_from_the_pack_alone_and_git_finds_it_whole(copies):
    leader, follower = copies
    recorded = refs_of(leader)
    create(leader, "home.subtitle", "Hello")
    create(leader, "cart.total", "Total")
    pack = pack_since(leader, refs_of(leader).values(), recorded.values())
    objects = follower.repo.unpacked(pack) if pack is not None else None
    assert objects is not None
    adopt_refs(follower, refs_of(leader), objects)
    assert git(follower.path, "rev-parse", "main") == git(leader.path, "rev-parse", "main")
    assert_fsck_clean(follower.path)


def test_a_pack_leaning_on_objects_the_follower_lacks_is_refused(copies):
    leader, follower = copies
    create(leader, "home.subtitle", "Hello")
    middle = refs_of(leader)
    create(leader, "cart.total", "Total")
    pack = pack_since(leader, refs_of(leader).values(), middle.values())  # the follower lacks `middle`
    assert pack is not None and follower.repo.unpacked(pack) is None
    assert not follower.repo.objects.has(refs_of(leader)["main"].encode())


def test_a_torn_pack_is_refused(copies):
    leader, follower = copies
    recorded = refs_of(leader)
    create(leader, "home.subtitle", "Hello")
    pack = pack_since(leader, refs_of(leader).values(), recorded.values())
    assert pack is not None
    assert follower.repo.unpacked(pack[:-30] + pack[-20:]) is None
    assert follower.repo.unpacked(b"PACK") is None
    assert follower.repo.unpacked(pack_of({})) == {}


def test_a_follower_rolls_up_the_packs_of_the_writes_it_adopted_as_a_writer_does(copies, monkeypatch):
    monkeypatch.setattr(maintenance, "GC_EVERY", 5)
    monkeypatch.setattr(maintenance, "MAINTENANCE_LULL", 0.1)
    leader, follower = copies
    for number in range(6):  # each write adopted on its own, as replication sends them: a pack each
        recorded = refs_of(leader)
        create(leader, f"item.{number}", f"Item {number}")
        pack = pack_since(leader, refs_of(leader).values(), recorded.values())
        adopt_refs(follower, refs_of(leader), follower.repo.unpacked(pack) if pack is not None else None)
    packs = follower.path / ".git" / "objects" / "pack"
    wait_until(lambda: len(list(packs.glob("*.pack"))) <= 2, timeout=30)
    assert git(follower.path, "rev-parse", "main") == git(leader.path, "rev-parse", "main")
    assert_fsck_clean(follower.path)
