"""A big import is read and applied in a child process (app.service.imports, IMPORT_APART_BYTES), which commits
as another worker would: the answer, the commit, the errors and an asynchronous job's progress are those of an
import made in the worker itself, and the worker never reads the file."""
from __future__ import annotations

import json

import pytest

import app.service.imports as imports
from tests.api import Api, commit_count
from tests.support import assert_fsck_clean, git

PO = ('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Welcome to Acme Notes"\nmsgstr "Bienvenue chez Acme"\n\n'
      'msgid "Brand new"\nmsgstr "Tout neuf"\n').encode()
BROKEN = b'msgid "Unclosed\nmsgstr "x"\n'


def send_apart(monkeypatch) -> list[int]:
    """Every import goes to a child process, none is made in this one; the sizes of the files that went."""
    went: list[int] = []
    monkeypatch.setattr(imports, "IMPORT_APART_BYTES", 0)
    monkeypatch.setattr(imports, "_import", lambda *args: pytest.fail("imported in the worker's own process"))
    real = imports._import_apart
    monkeypatch.setattr(imports, "_import_apart", lambda target, apart_in, work, progress:
                        went.append(len(work[2])) or real(target, apart_in, work, progress))
    return went


@pytest.fixture
def apart(monkeypatch) -> list[int]:
    return send_apart(monkeypatch)


def import_po(api: Api, data: bytes, query: str = "locale=fr&index=text") -> tuple[int, dict]:
    return api.post(f"/api/import/po?{query}", data=data)


def test_a_big_import_is_committed_by_a_child_process_and_the_worker_reads_it_as_its_own(client, demo, apart):
    project, keys = demo
    api = Api(client, keys.full)
    before = commit_count(project)
    status, body = import_po(api, PO)
    assert status == 200, body
    assert apart == [len(PO)]
    assert body["message"] == "Imported 1 new asset, 2 new translations, 1 translation updated"
    assert [locale["code"] for locale in body["locales"]] == ["en", "fr"]
    assert commit_count(project) == before + 1
    assert "Import po file (2 units)" in git(project.path, "log", "-1", "--format=%s")
    # the worker's own snapshot follows the child's commit at once
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Bienvenue chez Acme"
    assert api.get("/api/locales/fr/progress")[0] == 200
    again = import_po(api, PO)
    assert again == (200, {"status": 200, "message": "Nothing updated", "locales": body["locales"]})
    assert commit_count(project) == before + 1
    assert_fsck_clean(project.path)


def test_a_big_imports_refusal_is_the_answer_an_import_made_here_gives(client, demo, monkeypatch):
    api = Api(client, demo[1].full)
    here = import_po(api, BROKEN)
    assert here[0] == 422
    went = send_apart(monkeypatch)
    assert import_po(api, BROKEN) == here
    assert went == [len(BROKEN)]


def test_an_asynchronous_big_import_reports_its_childs_progress_until_100(client, demo, apart):
    api = Api(client, demo[1].full)
    body = json.dumps({f"bulk.{i}": f"Text {i}" for i in range(3000)}).encode()
    response = client.post("/api/import/json?locale=en&async", data=body,
                           headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 201
    progress = api.finished_job(response.headers["Location"].replace("http://localhost", ""))
    assert progress == {"progress": 100, "success": "Imported 3000 new assets, 3000 new translations", "error": ""}
    assert apart == [len(body)]
    assert api.get("/api/assets/bulk.2999.json")[0] == 200
