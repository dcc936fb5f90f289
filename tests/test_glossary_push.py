"""glossary.json through `git push` against a real `gloss serve`: checked with the API's rules, replayed term by
term into one merge commit, refused (changing nothing) when a term is invalid."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitserver import run_git, serving_demo
from tests.support import require_tool

PROJECT = "acme-notes"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_tool("git")
    with serving_demo(tmp_path_factory.mktemp("glossary-push") / "data") as served:
        yield served


def cloned(server, tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    result = run_git(tmp_path, "clone", "-q", server.url(server.keys["full"]), str(tmp_path / "clone"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "clone"


def pushed(repo: Path, glossary: str):
    (repo / "glossary.json").write_text(glossary, "utf-8")
    assert run_git(repo, "add", "-A").returncode == 0
    assert run_git(repo, "commit", "-q", "-m", "Glossary").returncode == 0
    return run_git(repo, "push", "origin", "main")


def test_a_pushed_glossary_is_merged_term_by_term_and_an_invalid_one_is_refused(server, tmp_path):
    repo = cloned(server, tmp_path)
    result = pushed(repo, '{\n"zebra": {"translations": {"fr": "zèbre"}},\n'
                          '"Apple": {"forbidden": true, "translations": {"fr": "Pomme"}}\n}\n')
    assert result.returncode == 0, result.stderr
    status, terms = server.api("GET", "/api/glossary", server.keys["full"])
    assert status == 200 and [term["term"] for term in terms] == ["Apple", "zebra"]  # canonical order again
    assert terms[0]["forbidden"] is True
    served = (server.data / "projects" / PROJECT / "glossary.json").read_text("utf-8")
    assert served.splitlines()[1].startswith('"Apple": {"translations": {"fr": "Pomme"}, "forbidden": true}')

    broken = cloned(server, tmp_path / "second")
    result = pushed(broken, json.dumps({"zebra": {"translations": {"fr": ""}}}, indent=0) + "\n")
    assert result.returncode != 0
    assert "glossary.json" in result.stderr
    assert server.api("GET", "/api/glossary", server.keys["full"])[1] == terms
