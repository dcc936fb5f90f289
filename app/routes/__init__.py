"""Blueprint registration: one module per resource."""
from __future__ import annotations

from flask import Flask

API_PREFIX = "/api/"


def is_api_rule(rule: str) -> bool:
    """Whether a URL rule belongs to the REST API (the web pages live outside `/api/`, in app.web)."""
    return rule.startswith(API_PREFIX)


def register_routes(app: Flask) -> None:
    from .. import openapi
    from . import about, assets, history, locales, tags, transfer, translations

    for module in (about, openapi, assets, translations, locales, tags, transfer, history):
        app.register_blueprint(module.bp)
