"""Blueprint registration: one module per resource."""
from __future__ import annotations

from flask import Flask


def register_routes(app: Flask) -> None:
    from . import misc

    app.register_blueprint(misc.bp)
