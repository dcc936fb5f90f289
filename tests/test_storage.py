"""The Git-backed project store, checked through Git itself."""
from __future__ import annotations

import json
import time

import pytest
from dulwich.object_store import DiskObjectStore

from storage import AssetRecord, LocaleRecord, ProjectMeta, TranslationRecord, UserRef
from storage import operations as ops
from storage.errors import Conflict, NotFound
from storage.gitrepo import Person
from storage.history import revisions
from storage.store import Store, utc_now
from tests.support import assert_fsck_clean, git, wait_until

ALICE = Person("Alice Martin", "alice@example.com")
ACTOR = ops.Actor(7, "Alice Martin", "alice@example.com")


@pytest.fixture
def project(tmp_path):
    store = Store(tmp_path / "data")
    project = store.create_project("Shop", "en", "English")
    with project.transaction(ALICE, "Add French", "add-locale") as tx:
        ops.add_locale(tx, "fr", "French")
    return project


def translate(project, asset_id, locale, text):
    with project.transaction(ALICE, f"Translate {asset_id}", "translate",
                             [("Asset", asset_id), ("Locale", locale)]) as tx:
        return ops.translate(tx, asset_id, locale, text, ACTOR, utc_now())


def create(project, asset_id, text):
    with project.transaction(ALICE, f"Add {asset_id}", "create-asset", [("Asset", asset_id)]) as tx:
        ops.create_asset(tx, asset_id, utc_now(), text=text, actor=ACTOR)


def test_every_transaction_is_exactly_one_commit_with_author_committer_and_trailers(project):
    before = int(git(project.path, "rev-list", "--count", "HEAD"))
    create(project, "home.title", "Welcome")
    translate(project, "home.title", "fr", "Bienvenue")
    assert int(git(project.path, "rev-list", "--count", "HEAD")) == before + 2
    log = git(project.path, "log", "-1", "--format=%an <%ae>|%cn|%B")
    author, committer, body = log.split("|", 2)
    assert author == "Alice Martin <alice@example.com>"
    assert committer == "Gloss"
    assert "Asset: home.title\nLocale: fr\nAction: translate" in body
    assert body.startswith("Translate home.title\n\n")


def test_catalogue_files_are_canonical_json_with_one_asset_per_line(project):
    for asset_id, text in [("a.b", "One"), ("x/../../etc", "Two"), ("ünï \"q\"", "Three\nlines")]:
        create(project, asset_id, text)
    data = (project.path / "locales" / "en" / "0000.json").read_text("utf-8")
    assert json.loads(data)["ünï \"q\""]["text"] == "Three\nlines"
    lines = data.splitlines()
    assert lines[0] == "{" and lines[-1] == "}" and len(lines) == 5  # braces + one line per asset
    assert not (project.path / "etc").exists()  # asset IDs never become file names
    files = git(project.path, "ls-files").split()
    assert files == ["assets/0000.json", "locales/en/0000.json", "project.json"]


def assert_shape(record: dict, shape) -> None:
    """`record` has every field the TypedDict `shape` requires and none it does not declare."""
    assert shape.__required_keys__ <= record.keys() <= shape.__required_keys__ | shape.__optional_keys__, record


def test_every_stored_record_has_the_fields_its_typed_shape_declares_and_no_other(project):
    pushed_by = ops.Actor(8, "Bob", "bob@example.com", pusher=ops.Actor(9, "Key user", "key@example.com"))
    with project.transaction(ALICE, "Records", "import") as tx:
        ops.create_asset(tx, "cart", utc_now(), text="Cart", tags=["shop"], meta={"x": 1}, actor=ACTOR)
        plural = ops.add_plural(tx, "cart", utc_now(), text="Carts", actor=ACTOR)
        ops.translate(tx, "cart", "fr", "Panier", pushed_by, utc_now())
        ops.flag(tx, "cart", "fr", "fuzzy", ACTOR, utc_now())

    def read(path: str) -> dict:
        return json.loads((project.path / path).read_text("utf-8"))

    meta = read("project.json")
    assert_shape(meta, ProjectMeta)
    for locale in meta["locales"]:
        assert_shape(locale, LocaleRecord)
    assets = read("assets/0000.json")
    assert set(assets) == {"cart", plural} and {"plurals", "meta"} <= assets["cart"].keys()
    for record in assets.values():
        assert_shape(record, AssetRecord)
    entries = [*read("locales/en/0000.json").values(), *read("locales/fr/0000.json").values()]
    assert {"author", "pusher", "flag", "flagged", "flagger"} <= entries[-1].keys()
    for entry in entries:
        assert_shape(entry, TranslationRecord)
        for user in ("author", "pusher", "flagger"):
            if user in entry:
                assert_shape(entry[user], UserRef)


def test_changing_one_translation_is_a_one_line_diff(project):
    for i in range(20):
        create(project, f"key.{i}", f"Text {i}")
    for i in range(20):
        translate(project, f"key.{i}", "fr", f"Texte {i}")
    translate(project, "key.7", "fr", "Texte sept")
    diff = git(project.path, "diff", "--numstat", "HEAD~1", "HEAD")
    assert diff.strip() == "1\t1\tlocales/fr/0000.json"


def test_working_tree_equals_head_after_writes_and_fsck_is_clean(project):
    create(project, "k", "v")
    translate(project, "k", "fr", "w")
    with project.transaction(ALICE, "Delete", "delete-asset") as tx:
        ops.delete_asset(tx, "k")
    assert git(project.path, "status", "--porcelain") == ""
    assert_fsck_clean(project.path)
    assert not (project.path / "locales" / "fr").exists()


def test_a_failed_transaction_changes_nothing(project):
    create(project, "k", "v")
    head = project.repo.head()
    with pytest.raises(Conflict):
        with project.transaction(ALICE, "Two assets", "create-asset") as tx:
            ops.create_asset(tx, "new", utc_now(), text="fresh")
            ops.create_asset(tx, "k", utc_now(), text="duplicate")
    assert project.repo.head() == head
    assert not project.snapshot().has_asset("new")
    assert git(project.path, "status", "--porcelain") == ""


def test_assets_are_split_into_chunks_so_a_write_touches_one_file(tmp_path):
    project = Store(tmp_path / "d").create_project("Big", "en", "English", chunk_size=10)
    with project.transaction(ALICE, "Bulk", "import") as tx:
        for i in range(35):
            ops.create_asset(tx, f"id{i}", utc_now(), text=f"t{i}")
    assert git(project.path, "ls-files", "assets").split() == [f"assets/000{i}.json" for i in range(4)]
    translate(project, "id23", "en", "changed")
    assert git(project.path, "diff", "--name-only", "HEAD~1", "HEAD").split() == ["locales/en/0002.json"]
    assert [a for a in project.snapshot().asset_ids()] == [f"id{i}" for i in range(35)]


def test_snapshot_cache_follows_writes_made_by_another_process_object(tmp_path):
    data = tmp_path / "data"
    first = Store(data).create_project("P", "en", "English")
    create(first, "k", "one")
    other = Store(data).project(first.id)  # a second handle, as another worker process would have
    assert other.snapshot().translation("k", "en")["text"] == "one"
    translate(first, "k", "en", "two")
    assert other.snapshot().translation("k", "en")["text"] == "two"
    assert other.snapshot() is other.snapshot()  # unchanged ref: served from the cache


def test_a_chunk_written_by_another_process_object_is_read_as_a_diff_of_its_previous_version(tmp_path):
    data = tmp_path / "data"
    first = Store(data).create_project("P", "en", "English")
    for asset_id in ("a", "b", "c"):
        create(first, asset_id, asset_id.upper())
    other = Store(data).project(first.id)
    before = other.snapshot().locale_chunks["en"][0]
    unchanged = before.get("a")
    translate(first, "b", "en", "changed elsewhere")
    after = other.snapshot().locale_chunks["en"][0]
    assert after.origin == (before, ("b",))  # what changed, for derived data such as progress counts
    assert after.get("a") is unchanged  # entries on unchanged lines are not parsed again
    assert after.get("b")["text"] == "changed elsewhere"
    assert after.to_bytes() == (first.path / "locales/en/0000.json").read_bytes()


def test_revisions_come_from_git_history_newest_first_and_follow_renames(project):
    create(project, "greeting", "Hello")
    for text in ("Salut", "Bonjour", "Bonjour !"):
        translate(project, "greeting", "fr", text)
    with project.transaction(ALICE, "Rename", "rename", [("Asset", "greeting")]) as tx:
        ops.patch_asset(tx, "greeting", {"id": "home.greeting"}, utc_now())
    found = revisions(project, "home.greeting", "fr")
    assert [(r["rev"], r["text"]) for r in found] == [(3, "Bonjour !"), (2, "Bonjour"), (1, "Salut")]
    assert found[0]["author"]["name"] == "Alice Martin"
    with project.transaction(ALICE, "Erase", "untranslate") as tx:
        ops.untranslate(tx, "home.greeting", "fr")
    translate(project, "home.greeting", "fr", "Coucou")
    assert [(r["rev"], r["text"]) for r in revisions(project, "home.greeting", "fr")] == [(1, "Coucou")]
    with pytest.raises(NotFound):
        revisions(project, "missing", "fr")


def test_repository_can_be_cloned_and_its_history_read(project, tmp_path):
    create(project, "k", "v")
    translate(project, "k", "fr", "w")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project.path), str(clone))
    assert json.loads((clone / "locales" / "fr" / "0000.json").read_text())["k"]["text"] == "w"
    authors = git(clone, "log", "--format=%an").split("\n")
    assert "Alice Martin" in authors and "Gloss" in authors


def test_each_commit_is_one_pack_and_small_packs_are_rolled_up(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)  # no background run: the test calls it itself
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    create(project, "k", "v")
    for i in range(40):
        translate(project, "k", "en", f"v{i}")
    counts = dict(line.split(": ") for line in git(project.path, "count-objects", "-v").splitlines())
    assert int(counts["count"]) == 0 and int(counts["packs"]) >= 40  # no loose object, a pack per commit
    git(project.path, "verify-pack", *map(str, (project.path / ".git/objects/pack").glob("*.idx")))
    project.repo.pack_loose_objects()  # what the background maintenance runs every GC_EVERY commits
    counts = dict(line.split(": ") for line in git(project.path, "count-objects", "-v").splitlines())
    assert int(counts["packs"]) <= 4
    assert_fsck_clean(project.path)
    assert project.snapshot().translation("k", "en")["text"] == "v39"
    assert git(project.path, "status", "--porcelain") == ""



def _all_objects(path) -> dict[bytes, int]:
    """Every object of a repository as git lists it: id -> size."""
    listing = git(path, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize)")
    return {line.split()[0].encode(): int(line.split()[1]) for line in listing.splitlines()}


def test_objects_are_found_in_small_packs_large_packs_and_after_a_repack_removed_them(tmp_path, monkeypatch):
    from storage.git import maintenance, objects

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)  # no background run: the test calls it itself
    monkeypatch.setattr(objects, "SMALL_PACK_INDEX_BYTES", 1500)  # a pack of more than ~15 objects is large
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    with project.transaction(ALICE, "Many", "create-asset") as tx:  # a large pack
        for number in range(40):
            ops.create_asset(tx, f"k{number}", utc_now(), text=f"v{number}")
    for number in range(12):  # small packs, one per commit
        translate(project, f"k{number}", "en", f"w{number}")
    store = project.repo.objects
    everything = _all_objects(project.path)
    with monkeypatch.context() as patched:  # found by the listing itself: dulwich's probing of every pack is not asked
        patched.setattr(DiskObjectStore, "__contains__", lambda *_: pytest.fail("dulwich was asked"))
        assert all(store.has(object_id) for object_id in everything)
    assert all(len(store.read_raw(object_id)) == size for object_id, size in everything.items())
    absent = b"0123456789abcdef0123456789abcdef01234567"
    assert not store.has(absent)
    other = Store(tmp_path / "d").project(project.id)  # another process's writer adds a pack
    translate(other, "k1", "en", "from the other")
    assert project.snapshot().translation("k1", "en")["text"] == "from the other"
    project.repo.pack_loose_objects()  # removes the packs the listing holds
    assert _pack_count(project) <= 2
    everything = _all_objects(project.path)
    assert all(store.has(object_id) for object_id in everything)
    assert all(len(store.read_raw(object_id)) == size for object_id, size in everything.items())
    translate(project, "k2", "en", "after the repack")
    assert Store(tmp_path / "d").project(project.id).snapshot().translation("k2", "en")["text"] == "after the repack"

def _pack_count(project) -> int:
    return int(dict(line.split(": ") for line in git(project.path, "count-objects", "-v").splitlines())["packs"])


def test_a_background_repack_leaves_the_work_to_one_already_running_in_another_process(tmp_path, monkeypatch):
    import fcntl
    import os

    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    create(project, "k", "v")
    for i in range(5):
        translate(project, "k", "en", f"v{i}")
    before = _pack_count(project)
    fd = os.open(project.path / ".git" / maintenance.MAINTENANCE_LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # what another process's repack holds
        project.repo.pack_loose_objects(wait=False)
        assert _pack_count(project) == before
    finally:
        os.close(fd)
    project.repo.pack_loose_objects(wait=False)
    assert _pack_count(project) == 1


def test_packs_grown_past_their_size_after_the_last_full_repack_get_a_full_repack(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)
    project = Store(tmp_path / "d").create_project("P", "en", "English", chunk_size=100)
    with project.transaction(ALICE, "Many", "create-asset") as tx:  # a big first pack; `k` in a chunk alone
        for i in range(500):
            ops.create_asset(tx, f"a{i}", utc_now(), text=f"text number {i}")
    create(project, "k", "v")
    project.repo.pack_loose_objects()  # the first one is full: it sets the size to compare with
    assert _pack_count(project) == 1
    translate(project, "k", "en", "v1")  # a pack of a few objects beside one of hundreds
    monkeypatch.setattr(maintenance, "FULL_REPACK_GROWTH", 10**6)  # growth too small: a geometric roll-up
    project.repo.pack_loose_objects()
    assert _pack_count(project) == 2  # geometric: the big pack is left alone
    monkeypatch.setattr(maintenance, "FULL_REPACK_GROWTH", 1.0)
    translate(project, "k", "en", "last")
    project.repo.pack_loose_objects()
    assert _pack_count(project) == 1
    assert_fsck_clean(project.path)


def _commits(project, count: int) -> None:
    for i in range(count):
        translate(project, "k", "en", f"v{i} {time.monotonic()}")


def test_a_due_repack_waits_for_a_lull_in_the_writes(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 3)
    monkeypatch.setattr(maintenance, "MAINTENANCE_LULL", 2.0)
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    create(project, "k", "v")
    _commits(project, 3)
    packs = _pack_count(project)
    time.sleep(0.5)  # the behaviour under test: nothing happens for a while (the lull is 2 s), not a wait
    assert _pack_count(project) == packs >= 4  # due, but writes just happened: it waits
    wait_until(lambda: _pack_count(project) != packs, timeout=30, message="the repack never ran")
    assert _pack_count(project) < packs
    assert_fsck_clean(project.path)


def test_writes_that_never_pause_still_get_their_packs_rolled_up(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 2)
    monkeypatch.setattr(maintenance, "GC_FORCE_EVERY", 6)
    monkeypatch.setattr(maintenance, "MAINTENANCE_LULL", 3600.0)  # never quiet enough
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    create(project, "k", "v")
    rolled_up = False
    deadline = time.monotonic() + 30
    while not rolled_up:
        assert time.monotonic() < deadline, "the packs were never rolled up"
        before = _pack_count(project)
        _commits(project, 1)
        rolled_up = _pack_count(project) < before
    assert_fsck_clean(project.path)


def test_a_repack_forced_during_writes_is_full_only_past_a_much_bigger_growth(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)
    project = Store(tmp_path / "d").create_project("P", "en", "English", chunk_size=100)
    with project.transaction(ALICE, "Many", "create-asset") as tx:
        for i in range(500):
            ops.create_asset(tx, f"a{i}", utc_now(), text=f"text number {i}")
    create(project, "k", "v")
    project.repo.pack_loose_objects()  # full: sets the size to compare with
    monkeypatch.setattr(maintenance, "FULL_REPACK_GROWTH", 1.0)
    monkeypatch.setattr(maintenance, "FULL_REPACK_GROWTH_BUSY", 10**6)
    translate(project, "k", "en", "v1")
    project.repo.pack_loose_objects(busy=True)
    assert _pack_count(project) == 2  # geometric while writes are under way
    project.repo.pack_loose_objects(busy=False)
    assert _pack_count(project) == 1  # full once quiet


def _delta_count(project) -> int:
    """Objects stored as deltas in the repository's packs (`git verify-pack -v` gives them 7 columns)."""
    packs = [str(path) for path in (project.path / ".git/objects/pack").glob("*.idx")]
    lines = git(project.path, "verify-pack", "-v", *packs).splitlines()
    return sum(1 for line in lines if len(line.split()) == 7 and len(line.split()[0]) == 40)


def test_a_roll_up_beside_writes_leaves_the_delta_search_to_the_next_quiet_repack(tmp_path, monkeypatch):
    from storage.git import maintenance

    monkeypatch.setattr(maintenance, "GC_EVERY", 10**6)
    project = Store(tmp_path / "d").create_project("P", "en", "English")
    with project.transaction(ALICE, "Many", "create-asset") as tx:
        for i in range(200):
            ops.create_asset(tx, f"a{i}", utc_now(), text=f"text number {i}")
    project.repo.pack_loose_objects()  # the first repack is full
    monkeypatch.setattr(maintenance, "FULL_REPACK_GROWTH_BUSY", 10**6)
    for i in range(8):  # versions of the same chunk: ideal delta material
        translate(project, "a7", "en", f"edit {i}")
    project.repo.pack_loose_objects(busy=True)
    deltas_while_busy = _delta_count(project)
    project.repo.pack_loose_objects(full=True)
    assert _delta_count(project) > deltas_while_busy + 4
    assert_fsck_clean(project.path)


@pytest.mark.parametrize("whole_after", [0, 3, 1000])
def test_a_transaction_reading_whole_chunks_reads_each_entry_as_the_snapshot_has_it(project, monkeypatch, whole_after):
    from storage import transaction
    from storage.transaction import Transaction

    monkeypatch.setattr(transaction, "WHOLE_AFTER", whole_after)  # entries decoded alone before the whole chunk
    with project.transaction(ALICE, "Many", "create-asset") as tx:
        for number in range(12):
            ops.create_asset(tx, f"k{number}", utc_now(), text=f"v{number}", context=f"c{number}")
    snapshot = project.snapshot()
    reader = Transaction(snapshot)
    reader.read_whole_chunks()
    wanted = [f"k{number}" for number in (5, 1, 5, 9, 0, 11, 3, 1)] + ["absent"]
    assert [reader.asset(asset_id) for asset_id in wanted] == [snapshot.asset(asset_id) for asset_id in wanted]
    assert [reader.translation(asset_id, "en") for asset_id in wanted] \
        == [snapshot.translation(asset_id, "en") for asset_id in wanted]
