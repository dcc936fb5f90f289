"""Helpers shared by the test modules: external tools and the shared real-world corpus."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GLOSS_SHARED", REPO_ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_tool(name: str) -> str:
    """Path of an external validator; skip locally when missing, fail under CI (the Makefile installs it)."""
    path = shutil.which(name)
    if path:
        return path
    if IN_CI:
        pytest.fail(f"required tool {name!r} is not installed (make test installs it)")
    pytest.skip(f"{name} not installed")


def corpus_path(relative: str) -> Path:
    """A file of ../shared/corpus; skip when the folder is absent, except under CI where that is a failure."""
    path = SHARED / "corpus" / relative
    if path.exists():
        return path
    if IN_CI:
        pytest.fail(f"shared corpus file missing: {path}")
    pytest.skip(f"shared corpus not available ({path})")


def schema_path(relative: str) -> Path:
    """A schema of ../shared/schemas, with the same skip/fail rule as corpus_path."""
    path = SHARED / "schemas" / relative
    if path.exists():
        return path
    if IN_CI:
        pytest.fail(f"shared schema missing: {path}")
    pytest.skip(f"shared schemas not available ({path})")


def git(repo: Path | str, *args: str) -> str:
    """Run the real git command line in `repo` and return its output (fails the test on error)."""
    import subprocess

    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr}"
    return result.stdout
