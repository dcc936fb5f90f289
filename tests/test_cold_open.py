"""Cold opens read derived data persisted in .git (storage.derived): the same answers as a project opened without
it, a stale or damaged file never served, nothing of it in the Git tree. Each `create_app` on the data directory
stands for a worker process that opens the project for the first time."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import storage.canonical
import storage.progress
import storage.project
from app import create_app
from storage import derived
from tests.api import Api, chunked_project
from tests.test_asset_list_bursts import rendered  # noqa: F401 - the fixture (IDs of the list entries rendered)
from tests.support import git

# when an export was made (in a PO file's comment and header): the only part of an answer that may differ
EXPORT_TIME = re.compile(rb"Exported at: [^\n]*|\d{4}-\d\d-\d\d \d\d:\d\d[+-]\d{4}")
ASSETS = 30  # three chunks of ten
READS = ("/api/assets", "/api/assets?filter=urgent", "/api/locales", "/api/locales/fr/progress",
         "/api/locales/de/progress", "/api/translations/a5/fr", "/api/assets/a12",
         "/api/export/locale/fr.po", "/api/export/all.json")


@pytest.fixture(autouse=True)
def no_timed_saves(monkeypatch):
    """Saves happen when a test asks for them (Project.save_derived), never behind its back."""
    monkeypatch.setattr(storage.project, "SAVE_DERIVED_AFTER", 3600.0)
    monkeypatch.setattr(storage.project, "PERSIST_DERIVED_AT", 0)  # this project is small


@pytest.fixture
def project(client, store, keystore):
    """30 assets in chunks of 10, French translated (some flagged), German half, a few tagged."""
    project, api = chunked_project(client, store, keystore, "Cold", lambda i: {
        "fr": f"Texte numéro {i}", **({"de": f"Text Nummer {i}"} if i % 2 else {})}, ASSETS)
    key = api.key
    for i in (3, 14, 25):
        assert api.post(f"/api/translations/a{i}/fr/flag", data={"flag": "fuzzy"})[0] == 200
        assert api.post(f"/api/assets/a{i}/tags", data={"name": "urgent"})[0] == 200
    return project, key


def worker(data_dir: Path):
    """A new app on the data directory: a process that has not opened the project yet."""
    return create_app(data_dir, testing=True)


def answers(app, key: str) -> dict[str, bytes]:
    client = app.test_client()
    found = {}
    for path in READS:
        response = client.get(path, headers={"Authorization": f"Loco {key}"})
        assert response.status_code == 200, (path, response.data[:200])
        found[path] = EXPORT_TIME.sub(b"(exported at)", response.data)
    return found


def cache_files(project) -> list[Path]:
    return sorted(project.path.joinpath(".git").glob(derived.PREFIX + "*"))


def drop_cache(project) -> None:
    for path in cache_files(project):
        path.unlink()


def save(app, project_id: str) -> None:
    app.extensions["gloss.store"].project(project_id).save_derived()


def truth(data_dir: Path, project, key: str) -> dict[str, bytes]:
    """The answers of a process that opens the project without any persisted derived data (which is kept)."""
    kept = {path: path.read_bytes() for path in cache_files(project)}
    drop_cache(project)
    try:
        return answers(worker(data_dir), key)
    finally:
        drop_cache(project)
        for path, data in kept.items():
            path.write_bytes(data)


def test_a_project_opened_with_the_persisted_cache_answers_as_one_opened_without(data_dir, project, rendered):
    project, key = project
    first = worker(data_dir)
    expected = answers(first, key)
    save(first, project.id)
    assert [path.name for path in cache_files(project)] == ["gloss-derived-asset-lists", "gloss-derived-index"]
    rendered.clear()
    second = worker(data_dir)
    client = second.test_client()
    assert client.get("/api/locales", headers={"Authorization": f"Loco {key}"}).status_code == 200
    snapshot = second.extensions["gloss.store"].project(project.id).snapshot()
    # the locales and their progress came from the file: no chunk was read
    assert not any(chunk.loaded for chunks in snapshot.locale_chunks.values() for chunk in chunks.values())
    assert not any(chunk.loaded for chunk in snapshot.asset_chunks.values())
    assert answers(second, key) == expected
    assert rendered == []  # the list's renderings came from the file too


def test_a_cache_from_another_commit_serves_the_unchanged_chunks_and_recomputes_the_others(
        data_dir, project, rendered):
    project, key = project
    first = worker(data_dir)
    answers(first, key)
    save(first, project.id)
    writer = Api(worker(data_dir).test_client(), key)  # another process writes: the file is from an older commit
    assert writer.post("/api/translations/a12/de", data="Neu".encode())[0] == 200
    assert writer.post("/api/translations/a13/fr/flag", data={"flag": "fuzzy"})[0] == 200
    assert writer.post("/api/assets", data={"id": "new", "text": "New one"})[0] == 201
    rendered.clear()
    opened = answers(worker(data_dir), key)
    assert sorted(set(rendered)) == sorted([f"a{i}" for i in range(10, 20)] + [f"a{i}" for i in range(30)][30:]
                                           + ["new"])  # only the chunks that changed
    assert opened == truth(data_dir, project, key)


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "empty", "garbage", "another Python",
                                    "header only"])
def test_a_corrupt_or_truncated_cache_file_is_ignored_and_written_again(data_dir, project, damage):
    project, key = project
    first = worker(data_dir)
    expected = answers(first, key)
    save(first, project.id)
    for path in cache_files(project):
        data = path.read_bytes()
        header, _, body = data.partition(b"\n")
        damaged = {
            "truncated": data[:len(data) // 2],
            "flipped byte": data[:-20] + bytes([data[-20] ^ 0x40]) + data[-19:],
            "empty": b"",
            "garbage": b"\x00\xff" * 500,
            "another Python": header.replace(derived.PYTHON, b"cpython-00-4") + b"\n" + body,
            "header only": header + b"\n",
        }[damage]
        path.write_bytes(damaged)
        assert derived.decode(damaged) == {}
    opened = worker(data_dir)
    assert answers(opened, key) == expected
    save(opened, project.id)
    assert all(derived.decode(path.read_bytes()) for path in cache_files(project))  # whole again


def test_the_cache_never_enters_the_git_tree(data_dir, project, tmp_path):
    project, key = project
    first = worker(data_dir)
    answers(first, key)
    save(first, project.id)
    assert len(cache_files(project)) == 2
    assert "gloss-derived" not in git(project.path, "ls-tree", "-r", "--name-only", "HEAD")
    assert git(project.path, "status", "--porcelain") == ""
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=project.path, capture_output=True,
                          text=True)
    assert fsck.returncode == 0 and fsck.stdout == "", fsck.stdout + fsck.stderr
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project.path), str(clone))
    assert not [path for path in clone.rglob("*") if "gloss-derived" in path.name]


def test_the_cache_is_right_after_writes_by_another_worker(data_dir, project):
    project, key = project
    reader = worker(data_dir)
    answers(reader, key)
    save(reader, project.id)
    writer = Api(worker(data_dir).test_client(), key)
    for i in range(0, ASSETS, 4):
        assert writer.post(f"/api/translations/a{i}/de", data=f"Wort {i}".encode())[0] == 200
    assert writer.delete("/api/translations/a1/fr")[0] == 200
    assert writer.post("/api/assets/a2/tags", data={"name": "urgent"})[0] == 200
    expected = truth(data_dir, project, key)
    assert answers(reader, key) == expected  # the reader moved to the new head with its cached data
    save(reader, project.id)  # and persisted what it now knows
    assert answers(worker(data_dir), key) == expected


def po_of_new_units(first: int, count: int) -> bytes:
    """A French PO file of `count` units whose source texts no asset has (an import creates them all)."""
    units = "".join(f'msgid "Brand new {n}"\nmsgstr "Tout neuf {n}"\n\n' for n in range(first, first + count))
    return ('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\n' + units).encode()


def retranslating_po() -> bytes:
    """A French PO file that gives every asset of the fixture's project a new text (matched by source text)."""
    units = "".join(f'msgid "Text {i}"\nmsgstr "Autre texte {i}"\n\n' for i in range(ASSETS))
    return ('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\n' + units).encode()


def import_fr(app, key: str, data: bytes) -> dict:
    """The answer of an import of `data` through `app` (a worker), which must succeed."""
    status, body = Api(app.test_client(), key).post("/api/import/po?locale=fr&index=text", data=data)
    assert status == 200, body
    return body


def test_a_worker_that_had_the_project_open_counts_no_chunk_of_another_workers_import(
        data_dir, project, monkeypatch):
    project, key = project
    first = worker(data_dir)
    answers(first, key)
    save(first, project.id)
    reader = worker(data_dir)  # had the project open (and its derived data read) before the import
    headers = {"Authorization": f"Loco {key}"}
    assert reader.test_client().get("/api/locales", headers=headers).status_code == 200
    importer = Api(worker(data_dir).test_client(), key)
    status, body = importer.post("/api/import/po?locale=fr&index=text", data=po_of_new_units(0, 25))
    assert status == 200, body
    counted = []
    monkeypatch.setattr(storage.progress, "chunk_counts", lambda chunk: counted.append(chunk) or count(chunk))
    assert reader.test_client().get("/api/locales", headers=headers).status_code == 200
    # the import's new chunks came with their counts and keys, saved before its commit: nothing read again
    assert counted == []
    snapshot = reader.extensions["gloss.store"].project(project.id).snapshot()
    assert len(snapshot.asset_chunks) == 6
    assert not any(chunk.loaded for chunk in snapshot.locale_chunks["fr"].values())
    assert snapshot.has_asset(list(snapshot.asset_chunk(5).keys())[-1]) and not snapshot.asset_chunk(5).loaded
    assert answers(reader, key) == truth(data_dir, project, key)


def test_a_worker_that_had_read_every_chunk_reads_none_again_after_another_workers_import_rewrote_them(
        data_dir, project, monkeypatch):
    project, key = project
    reader = worker(data_dir)
    answers(reader, key)  # every chunk read
    save(reader, project.id)  # (the importer opens the project with its counts, as any worker after a save)
    import_fr(worker(data_dir), key, retranslating_po())
    counted = []
    monkeypatch.setattr(storage.progress, "chunk_counts", lambda chunk: counted.append(chunk) or count(chunk))
    headers = {"Authorization": f"Loco {key}"}
    assert reader.test_client().get("/api/locales", headers=headers).status_code == 200
    # the rewritten chunks are taken with what the import saved for them, not read and recounted at once
    assert counted == []
    snapshot = reader.extensions["gloss.store"].project(project.id).snapshot()
    assert not any(chunk.loaded for chunk in snapshot.locale_chunks["fr"].values())
    assert all(chunk.loaded for chunk in snapshot.locale_chunks["de"].values())  # unchanged: kept as read
    assert answers(reader, key) == truth(data_dir, project, key)


def test_the_chunks_of_another_workers_import_are_known_canonical_and_read_without_judging_them_again(
        data_dir, project, monkeypatch):
    project, key = project
    first = worker(data_dir)
    answers(first, key)  # every chunk read: their verdicts saved with their keys
    save(first, project.id)
    import_fr(worker(data_dir), key, retranslating_po())
    judged = []
    real = storage.canonical.is_canonical
    monkeypatch.setattr(storage.canonical, "is_canonical", lambda text: judged.append(text) or real(text))
    reader = worker(data_dir)
    assert import_fr(reader, key, retranslating_po())["message"] == "Nothing updated"  # the same file again
    snapshot = reader.extensions["gloss.store"].project(project.id).snapshot()
    assert all(chunk.canonical for chunk in snapshot.locale_chunks["fr"].values())
    assert judged == []  # the import's chunks came with their verdict, the others with the first reader's
    monkeypatch.undo()
    assert answers(reader, key) == truth(data_dir, project, key)


def test_an_import_reads_the_texts_and_contexts_an_import_saved_for_the_chunks_instead_of_their_lines(
        data_dir, project, monkeypatch):
    project, key = project
    import_fr(worker(data_dir), key, retranslating_po())  # reads every context and text, writes every fr chunk
    read_off_lines = []
    real = storage.canonical.Chunk.string_values
    monkeypatch.setattr(storage.canonical.Chunk, "string_values",
                        lambda chunk, field: read_off_lines.append(field) or real(chunk, field))
    assert import_fr(worker(data_dir), key, retranslating_po())["message"] == "Nothing updated"
    assert read_off_lines == []  # the values came saved with the blobs: the old chunks' as read, the new ones' as made
    # keyed by blob, never stale: a text another worker changes since is read off its new chunk's lines, and put back
    headers = {"Authorization": f"Loco {key}"}
    changed = worker(data_dir).test_client().post("/api/translations/a7/fr", data="Changé ailleurs".encode(),
                                                  headers=headers)
    assert changed.status_code == 200
    assert import_fr(worker(data_dir), key, retranslating_po())["message"] == "Imported 1 translation updated"
    assert read_off_lines == ["text"]  # that one chunk
    monkeypatch.undo()
    translation = worker(data_dir).test_client().get("/api/translations/a7/fr", headers=headers).get_json()
    assert translation["translation"] == "Autre texte 7"
    assert answers(worker(data_dir), key) == truth(data_dir, project, key)


count = storage.progress.chunk_counts  # (the function itself, for the tests above that watch its calls)


def test_a_store_reads_again_a_part_another_process_saved_and_keeps_what_it_had_not_saved(tmp_path):
    one, other = derived.DerivedStore(tmp_path), derived.DerivedStore(tmp_path)
    one.put(derived.INDEX, ("keys", None, (b"a",)), "x")
    one.save([b"a", b"b", b"c"])
    assert other.get(derived.INDEX, ("keys", None, (b"a",))) == "x"  # (the part is read now)
    other.put(derived.INDEX, ("keys", None, (b"c",)), "mine")
    one.put(derived.INDEX, ("keys", None, (b"b",)), "y")
    one.save([b"a", b"b", b"c"])
    assert other.get(derived.INDEX, ("keys", None, (b"b",))) is None  # a part read once is kept until...
    other.refresh()  # ...another process's save is noticed
    assert other.get(derived.INDEX, ("keys", None, (b"b",))) == "y"
    assert other.get(derived.INDEX, ("keys", None, (b"c",))) == "mine"
    other.save([b"a", b"b", b"c"])
    assert derived.decode(other.path(derived.INDEX).read_bytes()) == {
        ("keys", None, (b"a",)): "x", ("keys", None, (b"b",)): "y", ("keys", None, (b"c",)): "mine"}
