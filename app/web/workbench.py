"""What the grid asks of translation memory and of the quality checks: one adapter each.

The grid calls `suggestions_for` and `checks_for` and nothing else of either. Suggestions come from translation
memory (app/service/memory.py, storage/memory.py); checks are quality.checks', through app/qa.py (which finds
the asset, source text, glossary and plural forms they read).
"""
from __future__ import annotations

from typing import Any

from flask import g

from storage.snapshot import Snapshot

from ..context import branch, store
from ..qa import translation_checks
from ..service.memory import suggestions

SUGGESTIONS_SHOWN = 3  # Alt+1 .. Alt+3 take them


def suggestions_for(asset_id: str, locale: str) -> list[dict[str, Any]]:
    """The best suggestions for translating `asset_id` into `locale` from translation memory, best first, each in
    the suggestions API's shape (app.service.memory.suggestions), for the request's key, project and branch."""
    return suggestions(store(), g.key.project, asset_id, locale, SUGGESTIONS_SHOWN, branch())


def checks_for(snapshot: Snapshot, asset_id: str, locale: str, text: str) -> list[str]:
    """What the checks find wrong with `text` as the translation of `asset_id` into `locale` (warnings: a save
    is never refused for them)."""
    return [result.message for result in translation_checks(snapshot, asset_id, locale, text)]
