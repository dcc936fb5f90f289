"""WSGI entry point for other servers: `GLOSS_DATA=/srv/gloss gunicorn wsgi:app` (README, "other WSGI servers";
`gloss serve` runs the same app with Waitress workers that read requests in an event loop)."""
from app import create_app
from app.webhooks import start_delivery

app = create_app()
start_delivery(app)  # in each worker that imports this (without --preload): one of them is elected to deliver
