"""A small client wrapper for API tests: JSON in, (status, JSON) out, with a key in the Loco header."""
from __future__ import annotations

from typing import Any, Callable

from tests.support import git, wait_until


class Api:
    def __init__(self, client, key: str):
        self.client = client
        self.headers = {"Authorization": f"Loco {key}"}

    def call(self, method: str, path: str, **kwargs) -> tuple[int, Any]:
        headers = dict(self.headers, **kwargs.pop("headers", {}))
        response = self.client.open(path, method=method, headers=headers, **kwargs)
        assert response.mimetype == "application/json", (path, response.status, response.data[:200])
        body = response.get_json()
        if response.status_code >= 400:
            assert body == {"status": response.status_code, "error": body["error"]} and body["error"]
        return response.status_code, body

    def get(self, path: str, **kwargs):
        return self.call("GET", path, **kwargs)

    def post(self, path: str, **kwargs):
        return self.call("POST", path, **kwargs)

    def patch(self, path: str, **kwargs):
        return self.call("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs):
        return self.call("DELETE", path, **kwargs)

    def finished_job(self, path: str, timeout: float = 60.0) -> dict:
        """The progress record of an async import (`path` is its progress URL) once it reads 100."""
        def finished() -> dict | None:
            status, progress = self.get(path)
            assert status == 200 and set(progress) == {"progress", "success", "error"}, progress
            return progress if progress["progress"] == 100 else None

        return wait_until(finished, timeout, message=f"the job at {path} never finished")


def commit_count(project) -> int:
    return int(git(project.path, "rev-list", "--count", "HEAD"))


def chunked_project(client, store, keystore, name: str, translations: Callable[[int], dict[str, str]],
                    assets: int = 30) -> tuple[Any, Api]:
    """A project of `assets` assets `a0`, `a1` … in chunks of ten with French and German locales: asset i gets
    the source text `Text {i}` and the translations `translations(i)` gives (locale -> text)."""
    project = store.create_project(name, "en", "English", chunk_size=10)
    key, _ = keystore.create(project.id, "full", "Tester", "tester@example.com")
    api = Api(client, key)
    api.key = key
    for code in ("fr", "de"):
        assert api.post("/api/locales", data={"code": code})[0] in (200, 201)
    for i in range(assets):
        assert api.post("/api/assets", data={"id": f"a{i}", "text": f"Text {i}"})[0] == 201
        for code, text in translations(i).items():
            assert api.post(f"/api/translations/a{i}/{code}", data=text.encode())[0] == 200
    return project, api
