"""What a pushed commit must be (storage.checks), one broken clone per rule, checked with git-made commits."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from storage.checks import CommitChecker
from storage.errors import Invalid
from storage.gitrepo import GitRepo
from tests.support import clone_as_tester, edit_line as edit, git

LIVE_KEY = "A" * 16 + "b_-" + "c" * 13  # 32 URL-safe characters, like a Gloss key


@pytest.fixture
def clone(demo, tmp_path) -> Path:
    return clone_as_tester(demo[0].path, tmp_path)


def check(clone: Path, full: bool) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--allow-empty", "-m", "change")
    commit = git(clone, "rev-parse", "HEAD").strip().encode()
    CommitChecker(GitRepo(clone), lambda key: key == LIVE_KEY).check(commit, full=full)


def edit_project(clone: Path, **changes) -> None:
    meta = json.loads((clone / "project.json").read_text("utf-8"))
    meta.update(changes)
    (clone / "project.json").write_text(json.dumps(meta, indent=2), "utf-8")


def remove_comma(clone: Path) -> None:
    path = clone / "assets" / "0000.json"
    lines = path.read_text("utf-8").split("\n")
    lines[1] = lines[1].rstrip(",")
    path.write_text("\n".join(lines), "utf-8")


BREAKAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a stray file": (lambda c: (c / "README.md").write_text("hi"), "unexpected 'README.md'"),
    "an executable catalogue": (lambda c: os.chmod(c / "assets" / "0000.json", 0o755), "regular files named"),
    "a badly named chunk": (lambda c: (c / "assets" / "0000.json").rename(c / "assets" / "first.json"),
                            "regular files named NNNN.json"),
    "a missing comma": (remove_comma, "assets/0000.json line 2: missing comma"),
    "not UTF-8": (lambda c: (c / "locales" / "fr" / "0000.json").write_bytes(b'{\n"home.title": {"text": "\xe9"}\n}\n'),
                  "not UTF-8"),
    "a duplicate asset number": (lambda c: edit(c / "assets" / "0000.json", "home.greeting", n=0),
                                 "n=0 is also the number of 'home.title'"),
    "a number beyond next_seq": (lambda c: edit(c / "assets" / "0000.json", "home.greeting", n=10_000),
                                 "below next_seq"),
    "an unknown asset type": (lambda c: edit(c / "assets" / "0000.json", "home.title", type="video"),
                              "type must be one of"),
    "an unregistered tag": (lambda c: edit(c / "assets" / "0000.json", "home.title", tags=["nowhere"]),
                            "tag 'nowhere' is not in project.json"),
    "a plural form that does not link back": (
        lambda c: edit(c / "assets" / "0000.json", "notes.count.other", plural_of="home.title"),
        "which does not"),
    "a translation of no asset": (
        lambda c: edit(c / "locales" / "fr" / "0000.json", "home.title", text="x") or
        (c / "locales" / "fr" / "0000.json").write_text(
            (c / "locales" / "fr" / "0000.json").read_text().replace('"home.title":', '"ghost":', 1)),
        "translation of 'ghost': no such asset"),
    "a revision of zero": (lambda c: edit(c / "locales" / "fr" / "0000.json", "home.title", rev=0),
                           "`rev` must be a positive integer"),
    "an unknown flag": (lambda c: edit(c / "locales" / "fr" / "0000.json", "home.title", flag="shiny"),
                        "flag must be one of"),
    "a source locale not among the locales": (lambda c: edit_project(c, source="pt"),
                                              "the source locale 'pt' is not among the locales"),
    # found by tests/test_push_property.py: a project name that is an object made every XLIFF export a 500
    "a project name that is not a string": (lambda c: edit_project(c, name={"k": "x"}),
                                            "project.json: name must be a string"),
    "an invalid locale code": (lambda c: edit_project(c, locales=[{"code": "../x", "name": "X"}]),
                               "invalid locale record"),
    "an API key in a text": (lambda c: edit(c / "locales" / "fr" / "0000.json", "home.title", text=LIVE_KEY),
                             "contains an API key"),
}


def remove_asset_keeping_a_translation(clone: Path) -> None:
    """Delete home.title from the assets only: its translations in every locale are left dangling."""
    path = clone / "assets" / "0000.json"
    lines = [line for line in path.read_text("utf-8").split("\n") if not line.startswith('"home.title":')]
    path.write_text("\n".join(lines), "utf-8")


def remove_a_plural_form_only(clone: Path) -> None:
    """Delete the plural form notes.count.other and its translations, but not the singular's link to it."""
    for path in [clone / "assets" / "0000.json", *(clone / "locales").glob("*/0000.json")]:
        lines = [line for line in path.read_text("utf-8").split("\n") if not line.startswith('"notes.count.other":')]
        path.write_text("\n".join(lines), "utf-8")


BREAKAGES.update({
    "an asset removed but not its translations": (remove_asset_keeping_a_translation,
                                                  "translation of 'home.title': no such asset"),
    "a plural form removed but still linked": (remove_a_plural_form_only,
                                               "links plural form 'notes.count.other', which is not an asset"),
    "a plural form moved to another singular": (
        lambda c: edit(c / "assets" / "0000.json", "notes.count.other", plural_of="trash.items"),
        "which does not"),
})
BREAKAGES.update({
    "a zero-padded alias of chunk 0": (
        lambda c: (c / "assets" / "00000.json").write_bytes((c / "assets" / "0000.json").read_bytes()),
        "unexpected 'assets/00000.json'"),
    "a chunk named in other digits": (
        lambda c: (c / "locales" / "fr" / "0000.json").rename(c / "locales" / "fr" / "\u0660\u0660\u0660\u0660.json"),
        "one name per chunk"),
    "an asset ID the API cannot address": (
        lambda c: (c / "assets" / "0000.json").write_text(
            (c / "assets" / "0000.json").read_text("utf-8").replace('"home.title":', '"x/tags":', 1), "utf-8"),
        "must not have a segment named"),
})


def more_lines_than_a_chunk_has_entries(clone: Path) -> None:
    """A catalogue of tiny entries, more than the chunk size (1000): refused before it is parsed."""
    lines = [f'"k{number}": {{"text": "t", "rev": 1}}' for number in range(1100)]
    (clone / "locales" / "fr" / "0000.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", "utf-8")


BREAKAGES["more lines than a chunk has entries"] = (more_lines_than_a_chunk_has_entries,
                                                    "more lines than a chunk holds entries (1000")


def spell_lone_surrogate(path: Path, asset_id: str, field: str) -> None:
    """Set a field of an entry to `x\\ud800` as JSON spells it (a lone surrogate: no UTF-8 text holds one)."""
    edit(path, asset_id, **{field: "LONE-SURROGATE"})
    path.write_text(path.read_text("utf-8").replace("LONE-SURROGATE", "x\\ud800"), "utf-8")


BREAKAGES.update({  # the rule the API applies to every JSON body and read file (vocabulary.first_unencodable)
    "a lone surrogate in a text": (lambda c: spell_lone_surrogate(c / "locales" / "fr" / "0000.json", "home.title",
                                                                  "text"), "U+D800, a lone UTF-16 surrogate"),
    "a lone surrogate in a note": (lambda c: spell_lone_surrogate(c / "assets" / "0000.json", "home.title", "notes"),
                                   "U+D800, a lone UTF-16 surrogate"),
    "a lone surrogate in a locale name": (lambda c: edit_project(c, locales=[
        dict(record, name="E\udc00") for record in json.loads((c / "project.json").read_text("utf-8"))["locales"]]),
        "U+DC00, a lone UTF-16 surrogate"),
})
MODES = {"changes": False, "whole commit": True}


@pytest.mark.parametrize("mode", list(MODES))
def test_the_project_as_gloss_wrote_it_passes(clone, mode):
    check(clone, MODES[mode])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(BREAKAGES))
def test_a_broken_commit_is_refused_naming_the_problem(clone, name, mode):
    breakage, reason = BREAKAGES[name]
    breakage(clone)
    with pytest.raises(Invalid) as refused:
        check(clone, MODES[mode])
    assert reason in refused.value.message
    assert refused.value.message.startswith("commit ")


@pytest.mark.parametrize("mode", list(MODES))
def test_a_line_with_other_spacing_is_still_a_valid_catalogue(clone, mode):
    path = clone / "locales" / "fr" / "0000.json"
    text = path.read_text("utf-8").replace('"rev": ', '"rev":', 3)
    path.write_text(text, "utf-8")
    check(clone, MODES[mode])


@pytest.mark.parametrize("mode", list(MODES))
def test_removing_an_asset_with_its_translations_and_links_is_valid(clone, mode):
    for path in [clone / "assets" / "0000.json", *(clone / "locales").glob("*/0000.json")]:
        lines = [line for line in path.read_text("utf-8").split("\n") if not line.startswith('"home.title":')]
        path.write_text("\n".join(lines), "utf-8")
    check(clone, MODES[mode])


def test_a_push_cannot_change_the_chunk_size_which_no_api_write_changes(demo, clone):
    project, _ = demo
    edit_project(clone, chunk_size=1_000_000)
    git(clone, "commit", "-qam", "bigger chunks")
    commit = git(clone, "rev-parse", "HEAD").strip().encode()
    with pytest.raises(Invalid) as refused:
        CommitChecker(GitRepo(clone), lambda key: False, known=project.snapshot()).check(commit)
    assert "`chunk_size` is 1000 in this project and cannot change" in refused.value.message
