"""Storage history for reviewers: which entries a commit changed, and the filtered log, checked against Git."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from storage import history, textchanges
from storage import operations as ops
from storage.canonical import Chunk, changed_keys
from storage.diff import translation_changes
from storage.gitrepo import GitRepo, Person
from storage.history import revisions
from storage.receive import merge_push
from storage.store import SERVICE, Store, utc_now
from tests.support import edit_line, git


def canonical(entries: dict[str, dict]) -> bytes:
    return Chunk({}).with_changes(entries, list(entries).index).to_bytes()


def test_changed_keys_finds_added_changed_and_removed_entries_but_not_moved_commas():
    old = canonical({"a": {"text": "A"}, "b": {"text": "B"}})
    appended = canonical({"a": {"text": "A"}, "b": {"text": "B"}, "c": {"text": "C"}})
    assert changed_keys(old, appended) == ["c"]  # "b" only gained a separating comma
    changed = canonical({"a": {"text": "A2"}, "b": {"text": "B"}})
    assert changed_keys(old, changed) == ["a"]
    assert changed_keys(old, canonical({"b": {"text": "B"}})) == ["a"]
    assert changed_keys(b"", old) == ["a", "b"]
    assert changed_keys(old, old) == []


def test_commit_changes_agree_with_git_show(demo):
    project, _ = demo
    for commit in git(project.path, "log", "--format=%H").split()[:6]:
        found, total = history.commit_changes(project, commit)
        diff = git(project.path, "show", "--format=", "-U0", commit).splitlines()
        # an entry is one line; a line whose only change is its separating comma is not a changed entry
        added = {line[1:].rstrip(",") for line in diff if line.startswith('+"')}
        removed = {line[1:].rstrip(",") for line in diff if line.startswith('-"')}
        expected = {line.split('": ', 1)[0] + '"' for line in added ^ removed}
        assert total == len(found.translations) + len(found.assets) + len(found.glossary)
        shown = {'"' + change.asset_id + '"' for change in found.translations + found.assets}
        assert shown | {'"' + change.term + '"' for change in found.glossary} == expected, commit


def test_a_commit_that_edits_the_glossary_lists_each_term_it_changed_with_its_records(demo):
    project, _ = demo
    with project.transaction(Person("Ann", "ann@example.com"), "Glossary", "glossary") as tx:
        ops.put_term(tx, "notebook", {"translations": {"fr": "carnet"}})
        ops.put_term(tx, "cart", {"translations": {"fr": "panier"}, "forbidden": True})
    with project.transaction(Person("Ann", "ann@example.com"), "Glossary", "glossary") as tx:
        ops.put_term(tx, "notebook", {"translations": {"fr": "cahier"}})
        ops.delete_term(tx, "cart")
    found, total = history.commit_changes(project, project.repo.head().decode())
    assert total == 2 and not found.translations and not found.assets and not found.project_changed
    assert {change.term: (change.old, change.new) for change in found.glossary} == {
        "cart": ({"translations": {"fr": "panier"}, "forbidden": True}, None),
        "notebook": ({"translations": {"fr": "carnet"}}, {"translations": {"fr": "cahier"}})}


def test_log_pages_cover_the_whole_history_once(demo):
    project, _ = demo
    everything = git(project.path, "log", "--format=%H").split()
    seen, offset = [], 0
    while True:
        page, more = history.log(project, offset=offset, limit=3)
        seen += [info.id for info in page]
        offset += 3
        if not more:
            break
    assert seen == everything


def test_log_filters_by_locale_and_author_like_git(demo):
    project, _ = demo
    for code in ("fr", "ar"):
        page, _ = history.log(project, locale=code, limit=100)
        assert [info.id for info in page] == git(project.path, "log", "--format=%H", "--", f"locales/{code}").split()
    page, _ = history.log(project, author="ALICE", limit=100)
    assert [info.id for info in page] == git(project.path, "log", "-i", "--author=alice", "--format=%H").split()


# ----------------------------------------------------------------------------- revisions and diffs read from git
# (history.revisions and diff.translation_changes ask git for the commits that changed a file; the oracles
# below read every first-parent commit's file whole, as the store did before)
ALICE = Person("Alice Martin", "alice@example.com")
ACTOR = ops.Actor(1, "Alice Martin", "alice@example.com")


def first_parent_chain(project, start: str = "HEAD") -> list[str]:
    return git(project.path, "rev-list", "--first-parent", start).split()


def entry_at(project, commit: str, path: str, key: str) -> dict | None:
    try:
        data = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=project.path, capture_output=True,
                              check=True).stdout
    except subprocess.CalledProcessError:
        return None
    return Chunk.parse(data).get(key)


def revisions_by_walking_every_commit(project, asset_id: str, locale: str) -> list[tuple[int, str, str]]:
    """(revision, text, newest commit holding it), newest first, following renames by their trailers."""
    number = project.snapshot().asset(asset_id)["n"] // project.snapshot().chunk_size
    path, key, found = f"locales/{locale}/{number:04d}.json", asset_id, []
    for commit in first_parent_chain(project):
        entry = entry_at(project, commit, path, key)
        if entry is None:
            break
        if not found or found[-1][0] != entry["rev"]:
            found.append((entry["rev"], entry["text"], commit))
        if entry["rev"] <= 1:
            break
        message = git(project.path, "log", "-1", "--format=%B", commit)
        if f"\nAsset: {key}\n" in message and "\nRenamed-From: " in message:
            key = message.split("\nRenamed-From: ", 1)[1].split("\n", 1)[0]
    return found


def attribution_by_walking_every_commit(project, old: str, new: str, path: str, key: str) -> str | None:
    """The newest commit from `new` back to `old` that changed the entry's text or flag."""
    def seen(entry):
        return entry and (entry["text"], entry.get("flag", ""))
    for commit in first_parent_chain(project, new):
        if commit == old:
            return None
        parent = git(project.path, "rev-parse", f"{commit}~1").strip()
        if seen(entry_at(project, commit, path, key)) != seen(entry_at(project, parent, path, key)):
            return commit
    return None


def write(project, summary: str, change, trailers=()) -> None:
    with project.transaction(ALICE, summary, "test", list(trailers)) as tx:
        change(tx)


@pytest.fixture
def chunked(tmp_path):
    """A project of two-asset chunks with French and German, and a history that rewrites chunks for other
    assets, moves separating commas, re-sends the same text, flags, erases, renames and deletes."""
    project = Store(tmp_path / "data").create_project("Chunks", "en", "English", chunk_size=2)
    write(project, "Locales", lambda tx: [ops.add_locale(tx, code, code) for code in ("fr", "de")])
    for i in range(5):
        write(project, f"Add a{i}", lambda tx, i=i: ops.create_asset(tx, f"a{i}", utc_now(), text=f"A{i}"))
    now = utc_now
    steps = [
        lambda tx: ops.translate(tx, "a0", "fr", "un", ACTOR, now()),
        lambda tx: ops.translate(tx, "a1", "fr", "autre", ACTOR, now()),  # same chunk, a0 gains a comma
        lambda tx: ops.translate(tx, "a0", "fr", "deux", ACTOR, now()),
        lambda tx: ops.translate(tx, "a1", "fr", "autre 2", ACTOR, now()),  # rewrites a0's file only
        lambda tx: ops.translate(tx, "a0", "de", "eins", ACTOR, now()),
        lambda tx: ops.translate(tx, "a0", "fr", "deux", ACTOR, now()),  # the same text: a revision, no change
        lambda tx: ops.flag(tx, "a0", "fr", "fuzzy", ACTOR, now()),
        lambda tx: ops.translate(tx, "a2", "fr", "trois", ACTOR, now()),
        lambda tx: ops.translate(tx, "a3", "fr", "quatre", ACTOR, now()),
        lambda tx: ops.translate(tx, "a2", "fr", "trois 2", ACTOR, now()),
        lambda tx: ops.patch_asset(tx, "a2", {"id": "renamed"}, now()),
        lambda tx: ops.translate(tx, "renamed", "fr", "trois 3", ACTOR, now()),
        lambda tx: ops.translate(tx, "a3", "fr", "quatre 2", ACTOR, now()),
        lambda tx: ops.untranslate(tx, "a3", "fr"),
        lambda tx: ops.translate(tx, "a3", "fr", "quatre encore", ACTOR, now()),
        lambda tx: ops.translate(tx, "a4", "fr", "cinq", ACTOR, now()),
        lambda tx: ops.delete_asset(tx, "a1"),
        lambda tx: ops.translate(tx, "a0", "fr", "trois", ACTOR, now()),
    ]
    for number, step in enumerate(steps):
        write(project, f"Step {number}", step)  # a rename writes its own trailers
    return project


def history_answers(project) -> dict:
    """Every translation's revisions, and the diffs from a few versions to HEAD and back."""
    snapshot = project.snapshot()
    found = {(asset_id, code): revisions(project, asset_id, code)
             for asset_id in snapshot.asset_ids() for code in ("fr", "de", "en")}
    chain = first_parent_chain(project)
    for back in (1, 4, 9, len(chain) - 1):
        old = project.snapshot_at(chain[back].encode())
        found["to HEAD", back] = translation_changes(project, old, snapshot)
        found["from HEAD", back] = translation_changes(project, snapshot, old)
    return found


def test_revisions_are_those_of_a_walk_of_every_commit_across_rewrites_renames_and_erasures(chunked):
    snapshot = chunked.snapshot()
    for asset_id in snapshot.asset_ids():
        for code in ("fr", "de"):
            found = [(entry["rev"], entry["text"], entry["commit"]) for entry in revisions(chunked, asset_id, code)]
            assert found == revisions_by_walking_every_commit(chunked, asset_id, code), (asset_id, code)
    assert [entry["text"] for entry in revisions(chunked, "a0", "fr")] == ["trois", "deux", "deux", "un"]
    assert [entry["text"] for entry in revisions(chunked, "renamed", "fr")] == ["trois 3", "trois 2", "trois"]
    assert [entry["text"] for entry in revisions(chunked, "a3", "fr")] == ["quatre encore"]  # erased before


def assert_diffs_attributed_like_a_walk_of_every_commit(project) -> None:
    """Diffs to HEAD from several versions, and between older ones, against attribution_by_walking_every_commit."""
    chain = first_parent_chain(project)
    for back, front in [(1, 0), (3, 0), (8, 0), (12, 0), (len(chain) - 1, 0), (12, 3), (len(chain) - 1, 8)]:
        old, new = project.snapshot_at(chain[back].encode()), project.snapshot_at(chain[front].encode())
        changes = translation_changes(project, old, new)
        assert changes, back
        for change in changes:
            number = new.asset_index.get(change["asset"], old.asset_index.get(change["asset"]))
            path = f"locales/{change['locale']}/{number:04d}.json"
            assert change["commit"] == attribution_by_walking_every_commit(
                project, chain[back], chain[front], path, change["asset"]), (back, front, change)


def test_a_diff_attributes_each_change_to_the_newest_commit_that_changed_its_text_or_flag(chunked):
    assert_diffs_attributed_like_a_walk_of_every_commit(chunked)
    chain = first_parent_chain(chunked)
    # the same text sent again (step 5) is a revision but not a change: "deux" came with step 2
    step = chain[-8:-8 - len(chain):-1]  # the fixture's steps, oldest first (after 7 setup commits)
    changes = translation_changes(chunked, chunked.snapshot_at(step[1].encode()), chunked.snapshot_at(step[5].encode()))
    assert [(c["asset"], c["locale"], c["new"], c["revision"], c["commit"]) for c in changes] == [
        ("a0", "fr", "deux", 3, step[2]), ("a1", "fr", "autre 2", 2, step[3]), ("a0", "de", "eins", 1, step[4])]


def test_a_diff_back_to_an_older_version_attributes_changes_below_it(chunked):
    chain = first_parent_chain(chunked)
    older = chunked.snapshot_at(chain[5].encode())
    for change in translation_changes(chunked, chunked.snapshot(), older):
        assert change["commit"] is None or change["commit"] in chain[5:]


def test_history_reads_are_the_same_without_a_commit_graph_with_a_stale_one_and_a_fresh_one(chunked):
    graphs = Path(chunked.path) / ".git/objects/info"
    without = history_answers(chunked)
    chunked.repo.write_commit_graph()
    assert (graphs / "commit-graphs/commit-graph-chain").exists()
    assert history_answers(chunked) == without
    write(chunked, "After the graph", lambda tx: ops.translate(tx, "a0", "fr", "quatre", ACTOR, utc_now()))
    stale = history_answers(chunked)  # the newest commit is not in the graph
    assert [entry["text"] for entry in revisions(chunked, "a0", "fr")] == ["quatre", "trois", "deux", "deux", "un"]
    for path in (graphs / "commit-graphs").iterdir():
        path.unlink()
    assert history_answers(chunked) == stale


def test_maintenance_writes_a_commit_graph_with_changed_path_filters(chunked):
    chunked.repo.pack_loose_objects()
    layers = (Path(chunked.path) / ".git/objects/info/commit-graphs").glob("*.graph")
    assert any(b"BDAT" in path.read_bytes() for path in layers)  # the Bloom filter data chunk
    git(chunked.path, "commit-graph", "verify")
    write(chunked, "More", lambda tx: ops.translate(tx, "a0", "fr", "plus", ACTOR, utc_now()))
    chunked.repo.pack_loose_objects()  # a new layer for the new commit, the history in the graph
    head = git(chunked.path, "rev-parse", "HEAD").strip()
    traced = subprocess.run(["git", "log", "-1", "--format=%H", "--", "locales/fr/0000.json"], cwd=chunked.path,
                            capture_output=True, text=True, env={**os.environ, "GIT_TRACE2_PERF": "1"})
    assert traced.stdout.strip() == head and "bloom" in traced.stderr


def test_a_push_is_one_revision_held_by_its_merge_commit_whatever_the_pushed_commits(chunked, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(chunked.path), str(clone))
    for text in ("poussé 1", "poussé 2"):  # two pushed commits: the first-parent history sees only the merge
        edit_line(clone / "locales/fr/0000.json", "a0", text=text)
        git(clone, "-c", "user.name=Pat", "-c", "user.email=pat@example.com", "commit", "-q", "-am", text)
    pushed = git(clone, "rev-parse", "HEAD").strip()
    before = first_parent_chain(chunked)[0]
    git(chunked.path, "fetch", "-q", str(clone), "main")
    merge = merge_push(chunked, pushed.encode(), "refs/heads/main", ACTOR).decode()
    found = revisions(chunked, "a0", "fr")
    assert [(entry["rev"], entry["text"]) for entry in found] == [(5, "poussé 2"), (4, "trois"), (3, "deux"),
                                                                  (2, "deux"), (1, "un")]
    assert found[0]["commit"] == merge and found[0]["author"]["name"] == "Pat"
    assert [(e["rev"], e["text"], e["commit"]) for e in found] == revisions_by_walking_every_commit(chunked, "a0", "fr")
    changes = translation_changes(chunked, chunked.snapshot_at(before.encode()), chunked.snapshot())
    assert [(c["asset"], c["new"], c["commit"]) for c in changes] == [("a0", "poussé 2", merge)]
    # from the first pushed commit (off the first-parent chain, so no end to the walk there)
    first_pushed = git(clone, "rev-parse", "HEAD~1").strip()
    changes = translation_changes(chunked, chunked.snapshot_at(first_pushed.encode()), chunked.snapshot())
    assert [(c["asset"], c["old"], c["new"], c["commit"]) for c in changes] == [("a0", "poussé 1", "poussé 2", merge)]
    chunked.repo.pack_loose_objects()  # the merge read from the text-change index: the same answers
    assert translation_changes(chunked, chunked.snapshot_at(first_pushed.encode()), chunked.snapshot()) == changes
    assert revisions(chunked, "a0", "fr") == found


KIM = ops.Actor(7, "Kim Keyholder", "")  # a key's user without an e-mail: named by the user id


def push_as(project, tmp_path, author: str, edit, pusher: ops.Actor) -> str:
    """Commit `edit(clone)` in a clone as `author` and merge it as `pusher` pushed it; the merge commit."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project.path), str(clone))
    edit(clone)
    git(clone, "add", "-A")
    git(clone, "-c", f"user.name={author}", "-c", "user.email=someone@example.com", "commit", "-q", "-m", "edit")
    pushed = git(clone, "rev-parse", "HEAD").strip()
    git(project.path, "fetch", "-q", str(clone), "main")
    return merge_push(project, pushed.encode(), "refs/heads/main", pusher).decode()


def test_a_pushed_revision_names_the_pusher_apart_from_the_author_the_commit_gave(chunked, tmp_path):
    def edit(clone: Path) -> None:
        edit_line(clone / "locales/fr/0000.json", "a0", text="poussé")
        edit_line(clone / "locales/de/0000.json", "a0", text="gepusht")

    merge = push_as(chunked, tmp_path, "Alice Martin", edit, KIM)
    assert git(chunked.path, "log", "-1", "--format=%an|%cn|%ce", merge).strip() == \
        "Alice Martin|Kim Keyholder|user-7@users.gloss"
    found = revisions(chunked, "a0", "fr")
    assert found[0]["author"]["name"] == "Alice Martin"
    assert found[0]["pusher"] == {"id": 7, "name": "Kim Keyholder", "email": ""}
    assert not any("pusher" in entry for entry in found[1:])  # made by API writes
    assert [(entry["rev"], "pusher" in entry) for entry in revisions(chunked, "a0", "de")] == [(2, True), (1, False)]
    info = history.log(chunked, limit=1)[0][0]
    assert info.id == merge and info.author_name == "Alice Martin"
    assert info.pushed_by == Person("Kim Keyholder", "user-7@users.gloss")
    assert history.commit_changes(chunked, merge)[0].info.pushed_by == info.pushed_by
    assert history.log(chunked, offset=1, limit=1)[0][0].pushed_by is None


def test_a_pushed_pusher_field_is_ignored_and_a_push_merged_by_the_service_names_no_pusher(chunked, tmp_path):
    def edit(clone: Path) -> None:  # a4 is in chunk 2, which no German translation needed yet; a0 keeps its text
        forged = {"id": 1, "name": "Alice Martin", "email": "alice@example.com"}
        (clone / "locales/de/0002.json").write_bytes(canonical({"a4": {"text": "fünf", "rev": 1, "pusher": forged}}))
        edit_line(clone / "locales/fr/0000.json", "a0", pusher=forged)

    merge = push_as(chunked, tmp_path, "Pat", edit, KIM)
    assert [(entry["rev"], entry["pusher"]["name"]) for entry in revisions(chunked, "a4", "de")] == [
        (1, "Kim Keyholder")]
    assert "pusher" not in revisions(chunked, "a0", "fr")[0]  # only a pusher field changed: nothing to replay
    assert history.pusher(chunked.repo.read_commit(merge.encode())) == KIM.person()
    legacy = chunked.repo.read_commit(merge.encode()).copy()  # (a cached object must not change)
    legacy.committer = SERVICE.ident()  # pushes merged before the pusher was recorded
    assert history.pusher(legacy) is None


def test_a_commit_graph_lock_left_by_a_killed_writer_is_swept_once_old_and_graphs_are_written_again(chunked):
    graphs = Path(chunked.path) / ".git/objects/info/commit-graphs"
    graphs.mkdir(parents=True, exist_ok=True)
    old, fresh = graphs / "commit-graph-chain.lock", graphs / "tmp_graph_fresh"
    old.write_bytes(b""), fresh.write_bytes(b"")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    chunked.repo.pack_loose_objects()
    assert not (graphs / "commit-graph-chain").exists()  # git cannot take the lock
    chunked.repo.sweep_temp_files()
    assert not old.exists() and fresh.exists()  # a fresh one may be a running write's
    chunked.repo.pack_loose_objects()
    assert (graphs / "commit-graph-chain").exists()


# ----------------------------------------------------------------------------- the text-change index
# (maintenance records which entries' text or flag each commit changed; diffs read that instead of git's patches)
def index_lines(project) -> list[bytes]:
    return (Path(project.path) / ".git" / textchanges.INDEX_FILE).read_bytes().splitlines(keepends=True)


def test_history_reads_after_maintenance_read_the_index_and_no_patch_from_git(chunked, monkeypatch):
    chunked.repo.pack_loose_objects()

    def no_patches(*args, **kwargs):
        raise AssertionError("a history read asked git for patches")

    monkeypatch.setattr(GitRepo, "first_parent_patches", no_patches)
    assert_diffs_attributed_like_a_walk_of_every_commit(chunked)
    for asset_id in chunked.snapshot().asset_ids():
        for code in ("fr", "de"):
            found = [(entry["rev"], entry["text"], entry["commit"]) for entry in revisions(chunked, asset_id, code)]
            assert found == revisions_by_walking_every_commit(chunked, asset_id, code), (asset_id, code)


def test_maintenance_records_each_first_parent_commit_once_with_the_entries_it_changed(chunked):
    chunked.repo.pack_loose_objects()
    records = {line[9:49].decode(): line.rstrip(b"\n").split(b"\t")[1:] for line in index_lines(chunked)}
    chain = first_parent_chain(chunked)
    assert sorted(records) == sorted(chain)
    step = chain[-8:-8 - len(chain):-1]  # the fixture's steps, oldest first
    assert records[step[0]] == [b'"locales/fr/0000.json/a0"']
    assert records[step[1]] == [b'"locales/fr/0000.json/a1"']  # a0 only gained a separating comma
    assert records[step[5]] == [b'~"locales/fr/0000.json/a0"']  # the same text sent again: a new revision
    assert records[step[6]] == [b'"locales/fr/0000.json/a0"']  # flagged
    assert records[step[10]] == [b'"locales/%s/0001.json/%s"' % (code, key)  # a rename moves the lines
                                 for code in (b"en", b"fr") for key in (b"a2", b"renamed")]
    # a line a crash cut short is dropped by the next maintenance, which adds only the commits made since
    (Path(chunked.path) / ".git" / textchanges.INDEX_FILE).open("ab").write(b"0123456789abcdef")
    write(chunked, "More", lambda tx: ops.translate(tx, "a4", "de", "fünf", ACTOR, utc_now()))
    chunked.repo.pack_loose_objects()
    chunked.repo.pack_loose_objects()
    lines = index_lines(chunked)
    assert [line[9:49].decode() for line in lines[len(records):]] == first_parent_chain(chunked)[:1]
    assert all(line.endswith(b"\n") for line in lines)
    assert lines[-1].rstrip(b"\n").split(b"\t")[1:] == [b'"locales/de/0002.json/a4"']


def test_history_reads_are_the_same_with_the_text_change_index_absent_stale_torn_or_garbled(chunked):
    path = Path(chunked.path) / ".git" / textchanges.INDEX_FILE
    without = history_answers(chunked)
    chunked.repo.pack_loose_objects()
    assert history_answers(chunked) == without
    write(chunked, "After maintenance", lambda tx: ops.translate(tx, "a0", "fr", "cinq", ACTOR, utc_now()))
    stale = history_answers(chunked)  # the newest commit has no line: read from git
    lines = index_lines(chunked)
    path.write_bytes(b"".join(lines) + lines[0][:50])  # a line being appended, or torn by a crash
    assert history_answers(chunked) == stale
    changing = [n for n, line in enumerate(lines) if b"\t" in line]
    garbled = list(lines)
    garbled[changing[2]] = lines[changing[2]][:-5] + b"\n"  # a token cut short
    garbled[changing[5]] = lines[changing[5]][:50] + b"0" + lines[changing[5]][51:]  # another parent
    garbled[7] = b"not a line at all\n"
    path.write_bytes(b"".join(garbled))
    assert history_answers(chunked) == stale
    path.unlink()
    assert history_answers(chunked) == stale


def test_a_commit_that_changed_more_entries_than_a_line_holds_is_read_from_git(chunked, monkeypatch):
    without = history_answers(chunked)
    monkeypatch.setattr(textchanges, "MAX_LINE_TOKENS", 1)
    chunked.repo.pack_loose_objects()
    recorded = {line[9:49].decode() for line in index_lines(chunked)}
    left_out = set(first_parent_chain(chunked)) - recorded
    assert left_out and all(len(history.commit_changes(chunked, commit)[0].translations) > 1 for commit in left_out)
    assert history_answers(chunked) == without
