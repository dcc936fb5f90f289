"""WSGI entry point for other servers: `GLOSS_DATA=/srv/gloss gunicorn wsgi:app` (README, "other WSGI servers";
`gloss serve` runs the same app with Waitress workers that read requests in an event loop)."""
from app import create_app

app = create_app()
