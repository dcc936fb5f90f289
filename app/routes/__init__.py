"""Blueprint registration: one module per resource."""
from __future__ import annotations

from flask import Flask


def register_routes(app: Flask) -> None:
    from .. import openapi
    from . import assets, history, locales, misc, tags, transfer, translations

    for module in (misc, openapi, assets, translations, locales, tags, transfer, history):
        app.register_blueprint(module.bp)
