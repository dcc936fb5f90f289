"""Every layer (app, storage, formats) and the root modules type-check cleanly (mypy, configured in pyproject.toml)."""
from __future__ import annotations

import subprocess
import sys

from tests.support import REPO_ROOT


def test_mypy_finds_no_type_error_in_any_layer():
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=REPO_ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
