"""WSGI entry point: `gunicorn wsgi:app` with GLOSS_DATA set."""
from app import create_app

app = create_app()
