"""The web pages for people: sign-in, project overview, changes as diffs, assets, search and inline editing.

Server-rendered Jinja templates with plain CSS; one script, the translation grid's, served from static/. The
pages read through the same snapshot, records and history code as the API, and write through the same
operations (app.service), one commit each.
"""
from __future__ import annotations

from pathlib import Path

from flask import Flask
from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

from .session import register_sessions
from .views import bp


class CompiledTemplates(BytecodeCache):
    """The templates compiled to Python code, in memory for every app of the process: each app has its own Jinja
    environment, which compiled each template anew (20 ms of CPU a page in the tests, which make an app a test).
    Jinja checks the template's source checksum against the cached one, so an edited template is compiled again."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self._code:
            bucket.bytecode_from_string(self._code[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = CompiledTemplates()


def register_web(app: Flask, data_dir: Path) -> None:
    app.jinja_options = {**app.jinja_options, "bytecode_cache": COMPILED_TEMPLATES}  # before the environment exists
    register_sessions(app, data_dir)
    app.register_blueprint(bp)
