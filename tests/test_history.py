"""Storage history for reviewers: which entries a commit changed, and the filtered log, checked against Git."""
from __future__ import annotations

from storage import history
from storage.canonical import Chunk, changed_keys
from tests.support import git


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
        assert total == len(found.translations) + len(found.assets)
        shown = {'"' + change.asset_id + '"' for change in found.translations + found.assets}
        assert shown == expected, commit


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
