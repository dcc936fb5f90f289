"""Blueprint registration: one module per resource."""
from __future__ import annotations

from flask import Flask

API_PREFIX = "/api/"


def is_api_rule(rule: str) -> bool:
    """Whether a URL rule belongs to the REST API (the web pages live outside `/api/`, in app.web)."""
    return rule.startswith(API_PREFIX)


def register_routes(app: Flask) -> None:
    from ..openapi import bp as openapi_bp
    from . import about, assets, exports, history, locales, tags, transfer, translations

    for blueprint in (about.bp, openapi_bp, assets.bp, translations.bp, locales.bp, tags.bp, exports.bp, transfer.bp,
                      history.bp):
        app.register_blueprint(blueprint)
