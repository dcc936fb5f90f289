"""The web pages for people: sign-in, project overview, changes as diffs, assets, search and inline editing.

Server-rendered Jinja templates with plain CSS; one script, the translation grid's, served from static/. The
pages read through the same snapshot, records and history code as the API, and write through the same
operations (app.service), one commit each.
"""
from __future__ import annotations

from pathlib import Path

from flask import Flask

from .session import register_sessions
from .views import bp


def register_web(app: Flask, data_dir: Path) -> None:
    register_sessions(app, data_dir)
    app.register_blueprint(bp)
