"""WSGI entry point: `gunicorn wsgi:app` with GLOSS_DATA set."""
from app import create_app
from app.server import install_json_errors

install_json_errors()  # gunicorn's own 400/414 answers in the JSON error shape
app = create_app()
