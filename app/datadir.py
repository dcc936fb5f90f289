"""Where Gloss keeps its data: the directory given (`--data`, `$GLOSS_DATA`), or `data` in the working directory."""
from __future__ import annotations

import os
from pathlib import Path


def default_data_dir() -> Path:
    return data_path(os.environ.get("GLOSS_DATA") or "data")


def data_path(given: str | Path) -> Path:
    """The data directory as an absolute path, fixed once at startup: paths derived from it end up where the
    working directory no longer applies (core.hooksPath, which git resolves from the repository)."""
    return Path(given).absolute()
