"""Branches over Git with the real `git` command line against a real `gloss serve`: pushes create and advance
branches through every check, `refs/for/NAME` merges key by key, clones fetch every branch."""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.gitserver import run_git, serving_demo
from tests.support import edit_line, require_tool
from tests.test_git_http import PROJECT, assert_server_clean, cloned, commit_all


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tool("git")
    with serving_demo(tmp_path_factory.mktemp("branchgit") / "data", readonly=("readonly", "Rita Reader")) as served:
        yield served


def text(server, asset: str, locale: str, branch: str | None = None) -> str:
    query = f"?branch={quote(branch, safe='')}" if branch else ""
    status, body = server.api("GET", f"/api/translations/{asset}/{locale}{query}", server.keys["full"])
    assert status == 200, body
    return body["translation"]


def served(server, *args: str) -> str:
    return run_git(server.data / "projects" / PROJECT, *args).stdout.strip()


def test_a_push_to_a_new_branch_creates_it_as_a_merge_there_and_main_stays(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    main_before, main_text = served(server, "rev-parse", "main"), text(server, "home.title", "fr")
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (feature)")
    commit_all(repo, "feature title")
    pushed = run_git(repo, "rev-parse", "HEAD").stdout.strip()
    result = run_git(repo, "push", "origin", "HEAD:refs/heads/feature/push")
    assert result.returncode == 0, result.stderr
    assert "merged your push into feature/push" in result.stderr
    assert text(server, "home.title", "fr", "feature/push") == "Accueil (feature)"
    assert text(server, "home.title", "fr") == main_text
    assert served(server, "rev-parse", "main") == main_before
    parents = served(server, "log", "-1", "--format=%P", "feature/push").split()
    assert parents == [main_before, pushed]
    status, branch = server.api("GET", "/api/branches/feature/push", server.keys["full"])
    assert status == 200 and branch["ahead"] == 2 and branch["behind"] == 0
    assert_server_clean(server)


def test_a_branch_takes_fast_forward_pushes_and_refs_for_merges_key_by_key(server, tmp_path):
    status, _ = server.api("POST", "/api/branches", server.keys["full"], b"name=release")
    assert status == 201
    repo = cloned(server, tmp_path, server.keys["full"])
    assert run_git(repo, "checkout", "-q", "-b", "release", "origin/release").returncode == 0
    assert server.api("POST", "/api/translations/home.greeting/fr?branch=release", server.keys["full"],
                      b"Salut %s (API release)")[0] == 200
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (release)")
    commit_all(repo, "release title")
    refused = run_git(repo, "push", "origin", "HEAD:refs/heads/release")
    assert refused.returncode != 0 and "rejected" in refused.stderr
    merged = run_git(repo, "push", "origin", "HEAD:refs/for/release")
    assert merged.returncode == 0, merged.stderr
    assert text(server, "home.title", "fr", "release") == "Accueil (release)"
    assert text(server, "home.greeting", "fr", "release") == "Salut %s (API release)"  # the API write kept
    assert text(server, "home.title", "fr") != "Accueil (release)"
    assert run_git(repo, "pull", "-q", "--no-rebase", "origin", "release").returncode == 0
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="Accueil (release 2)")
    commit_all(repo, "release title 2")
    advanced = run_git(repo, "push", "origin", "HEAD:refs/heads/release")
    assert advanced.returncode == 0, advanced.stderr
    assert text(server, "home.title", "fr", "release") == "Accueil (release 2)"
    assert_server_clean(server)


def remove_entry(path: Path, key: str) -> None:
    """Delete one entry of a canonical catalogue, as a person editing the file would."""
    lines = path.read_text("utf-8").split("\n")
    prefix = json.dumps(key, ensure_ascii=False) + ": "
    number = next(number for number, line in enumerate(lines) if line.startswith(prefix))
    if not lines[number].endswith(",") and lines[number - 1].endswith(","):  # it was the last entry
        lines[number - 1] = lines[number - 1][:-1]
    del lines[number]
    path.write_text("\n".join(lines), "utf-8")


def test_a_push_that_deletes_an_asset_deletes_it(server, tmp_path):
    """The asset and its translations go in one push; the replay deletes the asset once, not each translation
    again (before, that was refused as a change to an asset deleted since the push's base)."""
    assert server.api("POST", "/api/branches", server.keys["full"], b"name=deleting")[0] == 201
    repo = cloned(server, tmp_path, server.keys["full"])
    assert run_git(repo, "checkout", "-q", "-b", "deleting", "origin/deleting").returncode == 0
    for path in [repo / "assets" / "0000.json", *sorted((repo / "locales").glob("*/0000.json"))]:
        if json.dumps("home.greeting") in path.read_text("utf-8"):
            remove_entry(path, "home.greeting")
    commit_all(repo, "delete home.greeting")
    result = run_git(repo, "push", "origin", "HEAD:refs/heads/deleting")
    assert result.returncode == 0, result.stderr
    assert server.api("GET", "/api/assets/home.greeting?branch=deleting", server.keys["full"])[0] == 404
    assert server.api("GET", "/api/assets/home.greeting", server.keys["full"])[0] == 200
    assert_server_clean(server)


@pytest.mark.parametrize("ref,reason", [("refs/heads/" + "x" * 81, "longer than 80 bytes"),
                                        ("refs/for/nobranch", "there is no branch 'nobranch'")])
def test_pushes_to_invalid_or_unknown_branches_are_refused(server, tmp_path, ref, reason):
    repo = cloned(server, tmp_path, server.keys["full"])
    edit_line(repo / "locales" / "fr" / "0000.json", "home.title", text="x")
    commit_all(repo, "x")
    result = run_git(repo, "push", "origin", f"HEAD:{ref}")
    assert result.returncode != 0 and reason in result.stderr, result.stderr


def test_a_push_to_a_new_branch_is_checked_like_main_and_a_refusal_leaves_no_branch(server, tmp_path):
    repo = cloned(server, tmp_path, server.keys["full"])
    (repo / "locales" / "fr" / "0000.json").write_text("{ broken", "utf-8")
    commit_all(repo, "broken")
    result = run_git(repo, "push", "origin", "HEAD:refs/heads/broken")
    assert result.returncode != 0 and "Gloss refused the push" in result.stderr
    assert served(server, "for-each-ref", "refs/heads/broken") == ""
    assert server.api("GET", "/api/branches/broken", server.keys["full"])[0] == 404


def test_clones_fetch_every_branch(server, tmp_path):
    assert server.api("POST", "/api/branches", server.keys["full"], b"name=fetched")[0] == 201
    assert server.api("POST", "/api/translations/home.title/de?branch=fetched", server.keys["full"],
                      b"Willkommen (fetched)")[0] == 200
    repo = cloned(server, tmp_path, server.keys["readonly"])
    assert run_git(repo, "rev-parse", "origin/fetched").stdout.strip() == served(server, "rev-parse", "fetched")
    shown = run_git(repo, "show", "origin/fetched:locales/de/0000.json").stdout
    assert "Willkommen (fetched)" in shown
