"""Blueprint registration: one module per resource."""
from __future__ import annotations

from flask import Flask, request

from storage.project import release_free_memory

API_PREFIX = "/api/"
# Requests whose temporaries peak at hundreds of MB (a 100k export or import), which a worker would otherwise
# keep resident: their pages are given back once the answer is made.
RELEASE_MEMORY_AFTER = ("/api/export/", "/api/import/")


def is_api_rule(rule: str) -> bool:
    """Whether a URL rule belongs to the REST API (the web pages live outside `/api/`, in app.web)."""
    return rule.startswith(API_PREFIX)


def register_routes(app: Flask) -> None:
    from ..openapi import bp as openapi_bp
    from . import about, assets, branches, checks, exports, glossary, history, locales, memory, tags, transfer
    from . import translations, webhooks

    for blueprint in (about.bp, openapi_bp, assets.bp, translations.bp, locales.bp, tags.bp, exports.bp, transfer.bp,
                      history.bp, branches.bp, webhooks.bp, glossary.bp, checks.bp, memory.bp):
        app.register_blueprint(blueprint)
    app.teardown_request(release_memory_after)


def release_memory_after(_error: BaseException | None) -> None:
    """After an export or an import, give the pages of its temporaries back."""
    if request.path.startswith(RELEASE_MEMORY_AFTER):
        release_free_memory()
