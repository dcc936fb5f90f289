"""Hostile input and faults through HTTP (issue 12): every refusal is a JSON 4xx naming its limit, nothing
is half-applied, and no single request can poison a project."""
from __future__ import annotations

import csv
import errno
import io
import json
import multiprocessing
from pathlib import Path
from urllib.parse import quote

import pytest

import limits
from app.routes import transfer
from storage import gitrepo
from storage.git import objects
from storage.jobs import COMMITTED, INTERRUPTED, JobStore
from tests.support import assert_fsck_clean, git
from vocabulary import asset_id_of_text

LONG_CODE = "en" + "-abcdefgh" * 29  # 263 characters, valid language-tag syntax


def head(project) -> bytes | None:
    return project.repo.head()


def first_asset(api) -> str:
    _, assets = api.get("/api/assets")
    return assets[0]["id"]


def error_of(response) -> str:
    body = response.get_json()
    assert body == {"status": response.status_code, "error": body["error"]}, body
    return body["error"]


# ----------------------------------------------------------------------------- 1. poisoned project
def test_a_locale_code_longer_than_the_limit_is_refused_and_names_the_limit(api, demo):
    project = demo[0]
    before = head(project)
    status, body = api.post("/api/locales", data={"code": LONG_CODE})
    assert status == 422 and "max_locale_code_chars" in body["error"]
    assert head(project) == before
    status, _ = api.post(f"/api/translations/{first_asset(api)}/fr", data="Toujours écrivable")
    assert status == 200


def test_an_import_naming_an_overlong_locale_is_refused_without_a_commit(api, demo):
    before = head(demo[0])
    status, body = api.post(f"/api/import/json?index=id&locale={LONG_CODE}", data=b'{"greeting": "hi"}')
    assert status == 422 and "max_locale_code_chars" in body["error"]
    assert head(demo[0]) == before


def test_a_project_whose_head_holds_an_unwritable_path_stays_writable_and_the_locale_deletable(
        api, demo, monkeypatch):
    """A HEAD made by an older version (no length limit) whose locale directory no file system takes."""
    from storage import operations as ops
    from storage import project as project_module
    from storage.gitrepo import Person

    project = demo[0]
    asset = first_asset(api)
    monkeypatch.setattr(project_module, "check_writable_paths", lambda paths: None)
    with project.transaction(Person("Old", "old@example.com"), "Old bug", "add-locale") as tx:
        tx.meta["locales"] = tx.peek_meta()["locales"] + [{"code": LONG_CODE, "name": "Long"}]
        ops.translate(tx, asset, LONG_CODE, "poison", None, "2024-01-01T00:00:00+00:00")
    monkeypatch.undo()
    poisoned = head(project)
    assert project.repo.checked_out_commit() != poisoned  # the working tree could not follow

    status, _ = api.post(f"/api/translations/{asset}/fr", data="Réparé")
    assert status == 200 and head(project) != poisoned
    status, _ = api.delete(f"/api/locales/{LONG_CODE}")
    assert status == 200
    status, _ = api.post(f"/api/translations/{asset}/fr", data="Encore")
    assert status == 200
    assert git(project.path, "status", "--porcelain") == ""


# ----------------------------------------------------------------------------- 2. body limits, any framing
def chunked(client, path: str, body: bytes, **kwargs):
    """A request without Content-Length whose server terminates the stream, as gunicorn does for chunked."""
    return client.post(path, input_stream=io.BytesIO(body),
                       environ_overrides={"wsgi.input_terminated": True}, **kwargs)


def test_a_chunked_translation_over_the_limit_is_413_and_nothing_is_stored(client, demo, api, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "max_body_bytes", 1000)
    before = head(demo[0])
    response = chunked(client, f"/api/translations/{first_asset(api)}/fr", b"x" * 5000,
                       headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 413 and "max_body_bytes" in error_of(response)
    assert head(demo[0]) == before
    response = chunked(client, f"/api/translations/{first_asset(api)}/fr", b"y" * 900,
                       headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 200 and response.get_json()["translation"] == "y" * 900


def test_a_chunked_import_over_the_limit_is_413_not_a_truncated_import(client, demo, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "max_body_bytes", 1000)
    before = head(demo[0])
    rows = "id,en\n" + "".join(f"k{i},text {i}\n" for i in range(200))
    response = chunked(client, "/api/import/csv", rows.encode(), headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 413
    assert head(demo[0]) == before


def test_a_chunked_convert_over_its_own_limit_is_413(client, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "max_convert_bytes", 100)
    response = chunked(client, "/api/convert/json/out-fr.po", json.dumps({"k": "v" * 500}).encode())
    assert response.status_code == 413 and "max_convert_bytes" in error_of(response)


def test_a_declared_length_over_the_convert_limit_is_413_before_reading(client, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "max_convert_bytes", 100)
    response = client.post("/api/convert/json/out-fr.po", data=json.dumps({"k": "v" * 500}))
    assert response.status_code == 413 and "max_convert_bytes" in error_of(response)


# ----------------------------------------------------------------------------- 3. keyless convert bounded
def test_keyless_converts_beyond_the_concurrency_limit_are_429_naming_it(client):
    held = [transfer._CONVERT_SLOTS.acquire(blocking=False) for _ in range(limits.CONVERT_CONCURRENCY)]
    try:
        assert all(held)
        response = client.post("/api/convert/json/out-fr.po", data=b'{"k": "v"}')
        assert response.status_code == 429 and "convert_concurrency" in error_of(response)
        assert response.headers["Retry-After"]
    finally:
        for _ in held:
            transfer._CONVERT_SLOTS.release()
    assert client.post("/api/convert/json/out-fr.po", data=b'{"k": "v"}').status_code == 200


@pytest.mark.parametrize("shape", [b"/*a", b'"\\', b"{", b"["])
def test_hostile_json_shapes_are_a_json_4xx_on_convert(client, shape):
    response = client.post("/api/convert/json/out-fr.po", data=shape * 20_000)
    assert 400 <= response.status_code < 500
    error_of(response)


def test_a_file_beyond_the_unit_limit_is_refused_naming_it(api, monkeypatch):
    from formats import budget

    # on import: a keyless convert reads in a child process of the fork server, which this patch cannot reach
    monkeypatch.setattr(budget, "MAX_UNITS_PER_FILE", 10)
    data = json.dumps({f"k{i}": "v" for i in range(50)}).encode()
    status, body = api.post("/api/import/json?locale=fr", data=data)
    assert status == 422 and "max_units_per_file" in body["error"]


def test_qa_check_on_a_hostile_html_translation_answers(api, demo):
    status, asset = api.post("/api/assets", data={"id": "html.hostile", "type": "html", "text": "<b>x</b>"})
    assert status == 201
    api.post("/api/translations/html.hostile/fr", data="<a" * 20_000)
    status, errors = api.get("/api/locales/fr/errors")
    assert status == 200
    record = next(item for item in errors if item["id"] == "html.hostile")
    assert "Missing HTML tag <b>" in record["errors"]


# ----------------------------------------------------------------------------- 4. authenticate first
class TellingStream(io.BytesIO):
    """A request body that records whether anyone read it."""

    touched = False

    def read(self, *args):
        TellingStream.touched = True
        return super().read(*args)


def test_a_keyless_form_post_is_refused_without_its_body_being_parsed(client, demo):
    TellingStream.touched = False
    body = TellingStream(b"REQUEST_METHOD=DELETE&" + b"a=1&" * 10_000)
    response = client.post("/api/assets", input_stream=body, content_length=len(body.getvalue()),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 401
    assert not TellingStream.touched


def test_the_method_override_still_works_for_an_authenticated_form(client, demo, api):
    api.post("/api/locales", data={"code": "it"})
    response = client.post("/api/locales/it", data={"REQUEST_METHOD": "DELETE"},
                           headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 200
    assert api.get("/api/locales/it")[0] == 404


# ----------------------------------------------------------------------------- 5. former 500s
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("method,path", [
    ("PATCH", "/api/assets/{asset}"), ("POST", "/api/assets"), ("POST", "/api/locales"),
    ("PATCH", "/api/locales/fr"), ("POST", "/api/import/json?locale=fr"), ("POST", "/api/import/arb?locale=fr"),
    ("POST", "/api/import/json?format=multi"), ("POST", "/api/tags"),
])
def test_json_nested_100k_deep_is_a_json_4xx(api, method, path):
    path = path.format(asset=first_asset(api))
    deep_object = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    for body in (DEEP, deep_object):
        status, _ = api.call(method, path, data=body, headers={"Content-Type": "application/json"})
        assert 400 <= status < 500


@pytest.mark.parametrize("to", ["po", "json", "csv", "arb"])
def test_deep_json_on_keyless_convert_is_a_json_4xx(client, to):
    response = client.post(f"/api/convert/json/out-fr.{to}", data=b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    assert response.status_code == 422 and "max_nesting_depth" in error_of(response)


NPLURALS_10 = b'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: fr\\n"
"Plural-Forms: nplurals=10; plural=n%10;\\n"

msgid "one apple"
msgid_plural "%d apples"
msgstr[0] "une pomme"
msgstr[1] "%d pommes"
'''


def test_a_po_declaring_ten_plural_forms_is_refused_naming_the_limit(api, client):
    response = client.post("/api/convert/po/out-fr.json", data=NPLURALS_10)
    assert response.status_code == 422 and "max_plural_forms" in error_of(response)
    status, body = api.post("/api/import/po?locale=fr", data=NPLURALS_10)
    assert status == 422 and "max_plural_forms" in body["error"]


def test_a_huge_plural_formula_is_refused_naming_the_limit(client):
    formula = " + ".join(["n"] * 5000)
    data = NPLURALS_10.replace(b"nplurals=10; plural=n%10;", f"nplurals=2; plural={formula};".encode())
    response = client.post("/api/convert/po/out-fr.json", data=data)
    assert response.status_code == 422 and "max_plural_formula_chars" in error_of(response)


NOT_TEXT = ["rot13", "base64", "hex", "zlib", "idna", "undefined", "punycode", "bz2", "uu", "quopri"]


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_codecs_that_are_not_text_encodings_are_refused_on_export_and_convert(api, client, charset):
    status, body = api.get(f"/api/export/locale/fr.po?charset={charset}")
    assert status == 406 and "text encoding" in body["error"]
    response = client.post(f"/api/convert/json/out-fr.po?charset={charset}", data=b'{"k": "v"}')
    assert response.status_code == 406


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_a_po_declaring_a_non_text_charset_is_refused_on_import(api, charset):
    po = NPLURALS_10.split(b"\n\nmsgid \"one")[0].replace(b"charset=UTF-8", f"charset={charset}".encode())
    po = po.replace(b"nplurals=10; plural=n%10;", b"nplurals=2; plural=n>1;") + b'\n\nmsgid "a"\nmsgstr "b"\n'
    status, body = api.post("/api/import/po?locale=fr", data=po)
    assert status == 422 and "text encoding" in body["error"]


def test_real_charsets_still_work(api):
    status, _ = api.get("/api/export/locale/fr.po?charset=iso-8859-1")
    assert status in (200, 406)  # 406 only when a French text holds a character Latin-1 lacks
    response = api.client.get("/api/export/locale/fr.json?charset=utf-16", headers=api.headers)
    assert response.status_code == 200 and response.data.decode("utf-16")


def test_an_api_version_of_5000_digits_is_400_naming_the_limit(client):
    response = client.get("/api/ping", headers={"X-Api-Version": "1" * 5000})
    assert response.status_code == 400 and "max_api_version_chars" in error_of(response)
    response = client.get("/api/assets", headers={"X-Api-Version": "1" * 5000})
    assert response.status_code == 400


# ----------------------------------------------------------------------------- 7. async jobs after a crash
def dead_owner(job_store: JobStore, job_id: str, **changes) -> None:
    """Rewrite a job record as if its process had been killed with the job at `changes`."""
    path = job_store.directory / f"{job_id}.json"
    record = json.loads(path.read_text())
    record.update(owner="999999999:1", success="", error="", **changes)
    path.write_text(json.dumps(record))


def test_an_unfinished_job_of_a_dead_process_reads_as_failed(api, store, demo):
    job_store = JobStore(store.jobs_dir)
    job = job_store.create(demo[0].id)
    dead_owner(job_store, job.id, progress=48)
    status, body = api.get(f"/api/import/progress/{job.id}")
    assert status == 200 and body == {"progress": 100, "success": "", "error": INTERRUPTED}


def test_a_job_whose_commit_exists_reads_as_finished_after_a_crash(api, store):
    status, body = api.post("/api/import/json?locale=fr&async", data=b'{"crash.test": "Bonjour"}')
    assert status == 201
    assert api.finished_job(f"/api/import/progress/{body['id']}")["success"]
    dead_owner(JobStore(store.jobs_dir), body["id"], progress=89)
    status, progress = api.get(f"/api/import/progress/{body['id']}")
    assert progress == {"progress": 100, "success": COMMITTED, "error": ""}


# ----------------------------------------------------------------------------- 8. faults
def failing(error_number: int):
    def fail(*args, **kwargs):
        raise OSError(error_number, __import__("os").strerror(error_number))
    return fail


@pytest.mark.parametrize("error_number,status,word", [
    (errno.ENOSPC, 507, "full"), (errno.EROFS, 503, "read-only"), (errno.EACCES, 503, "not writable"),
])
def test_a_disk_fault_before_the_commit_is_a_clear_status_and_changes_nothing(
        api, demo, monkeypatch, error_number, status, word):
    project = demo[0]
    before = head(project)
    monkeypatch.setattr(objects.ObjectStore, "stage_pack", failing(error_number))
    code, body = api.post(f"/api/translations/{first_asset(api)}/fr", data="Jamais")
    assert code == status and word in body["error"]
    assert head(project) == before
    monkeypatch.undo()
    assert api.post(f"/api/translations/{first_asset(api)}/fr", data="Plus tard")[0] == 200


def test_a_disk_full_while_writing_leaves_no_temp_file(api, demo, monkeypatch):
    project = demo[0]
    real_chmod = objects.os.chmod

    def chmod_then_full(path, mode):
        real_chmod(path, mode)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(objects.os, "chmod", chmod_then_full)
    status, _ = api.post(f"/api/translations/{first_asset(api)}/fr", data="Plein")
    assert status == 507
    leftovers = [p.name for p in (project.path / ".git").rglob("*") if "tmp" in p.name]
    assert leftovers == []


def test_a_write_that_committed_then_failed_updating_the_tree_answers_success(api, demo, monkeypatch):
    project = demo[0]
    asset = first_asset(api)
    monkeypatch.setattr(gitrepo.GitRepo, "update_worktree", failing(errno.ENOSPC))
    status, body = api.post(f"/api/translations/{asset}/fr", data="Durable")
    assert status == 200 and body["translation"] == "Durable"
    monkeypatch.undo()
    assert api.get(f"/api/translations/{asset}/fr")[1]["translation"] == "Durable"
    assert api.post(f"/api/translations/{asset}/de", data="Dauerhaft")[0] == 200
    assert git(project.path, "status", "--porcelain") == ""


def test_temp_files_of_killed_writers_are_swept_by_the_next_process(demo, data_dir):
    from app import create_app
    from tests.api import Api

    project = demo[0]
    git_dir = project.path / ".git"
    leftovers = [git_dir / "gloss-ref-1-2.tmp", git_dir / "gloss-index-1-2.tmp",
                 git_dir / "objects" / "pack" / "tmp_pack_1_2", git_dir / "objects" / "pack" / "tmp_idx_1_2"]
    for path in leftovers:
        path.write_bytes(b"junk")
    fresh = Api(create_app(data_dir, testing=True).test_client(), demo[1].full)
    asset = fresh.get("/api/assets")[1][0]["id"]
    assert fresh.post(f"/api/translations/{asset}/fr", data="Propre")[0] == 200
    assert [path for path in leftovers if path.exists()] == []


def test_the_working_tree_repair_keeps_files_that_are_not_ours(api, demo):
    project = demo[0]
    (project.path / "NOTES.txt").write_text("mine")
    (project.path / "locales" / "fr" / "glossary.md").write_text("mine too")
    (project.path / ".git" / "gloss-checkout").write_text("0" * 40 + "\n")  # as after a crash
    assert api.post(f"/api/translations/{first_asset(api)}/fr", data="Réparé")[0] == 200
    assert (project.path / "NOTES.txt").read_text() == "mine"
    assert (project.path / "locales" / "fr" / "glossary.md").exists()


# ----------------------------------------------------------------------------- 9. lossy or surprising input
def test_invalid_utf8_in_a_multipart_field_is_400(client, demo):
    response = client.post("/api/assets", headers={"Authorization": f"Loco {demo[1].full}"},
                           data={"id": "ok", "text": (io.BytesIO(b"\xff\xfe"), "")},
                           content_type="multipart/form-data")
    assert response.status_code == 400
    body = (b'--B\r\nContent-Disposition: form-data; name="id"\r\n\r\n\xff\xfe\r\n--B--\r\n')
    response = client.post("/api/assets", headers={"Authorization": f"Loco {demo[1].full}"}, data=body,
                           content_type="multipart/form-data; boundary=B")
    assert response.status_code == 400 and "UTF-8" in error_of(response)


@pytest.mark.parametrize("body", [b"flag=\xff", b"flag=%FF"])
def test_invalid_utf8_in_an_urlencoded_field_is_400_not_a_default(api, body):
    status, payload = api.post(f"/api/translations/{first_asset(api)}/fr/flag", data=body,
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400 and "UTF-8" in payload["error"]


def test_a_multipart_field_holding_a_real_replacement_character_is_kept(api):
    status, body = api.post("/api/assets", data={"id": "with.\ufffd", "text": "x"},
                            content_type="multipart/form-data")
    assert status == 201 and body["id"] == "with.\ufffd"


@pytest.mark.parametrize("value", [5, {"a": 1}, ["x"], True, None])
def test_json_post_fields_must_be_strings_as_on_patch(api, value):
    status, body = api.post("/api/assets", json={"id": "typed", "text": value})
    assert status == 422 and "must be a string" in body["error"]
    status, _ = api.patch(f"/api/assets/{first_asset(api)}", json={"context": value})
    assert status == 422


@pytest.mark.parametrize("asset_id", ["z/plurals", "/abs", "trailing/", "a/../b", "x/tags",
                                      "x/plurals/y", "./x"])
def test_unaddressable_asset_ids_are_refused_at_creation(api, asset_id):
    status, body = api.post("/api/assets", data={"id": asset_id, "text": "x"})
    assert status == 422 and "Asset ID" in body["error"]


@pytest.mark.parametrize("asset_id", ["plurals/menu", "a//b", "See https://example.com/issues"])
def test_addressable_ids_with_slashes_still_work(api, asset_id):
    status, _ = api.post("/api/assets", data={"id": asset_id, "text": "x"})
    assert status == 201
    path = "/api/assets/" + asset_id.replace(" ", "%20")
    assert api.get(path)[0] == 200
    assert api.patch(path, json={"context": "checked"})[0] == 200
    assert api.get(path)[1]["context"] == "checked"


@pytest.mark.parametrize("name", ["Bad\x00name", "Bad\nname", "Bell\x07", "x" * 200_000])
def test_locale_names_with_control_characters_or_over_the_limit_are_422(api, name):
    status, body = api.patch("/api/locales/fr", json={"name": name})
    assert status == 422
    assert "control characters" in body["error"] or "max_locale_name_chars" in body["error"]


def test_locale_codes_differing_only_in_case_are_one_locale(api):
    assert api.post("/api/locales", data={"code": "pt-BR"})[0] == 201
    assert api.post("/api/locales", data={"code": "pt-br"})[0] == 409
    status, body = api.post("/api/import/json?format=multi",
                            data=json.dumps({"pt-br": {"greeting": "Olá"}}).encode())
    assert status == 200, body  # the same locale, spelled otherwise: the import lands in pt-BR
    assert api.get("/api/translations/greeting/pt-BR")[1]["translation"] == "Olá"
    codes = [record["code"].lower() for record in api.get("/api/locales")[1]]
    assert codes.count("pt-br") == 1


def test_csv_export_can_escape_formulas_as_owasp_advises(api):
    api.post("/api/assets", data={"id": "evil", "text": '=HYPERLINK("http://evil.example","click")'})
    plain = api.client.get("/api/export/locale/en.csv", headers=api.headers).data.decode()
    safe = api.client.get("/api/export/locale/en.csv?escape-formulas", headers=api.headers).data.decode()
    plain_cell = next(row for row in csv.reader(io.StringIO(plain)) if row[0] == "evil")[-1]
    safe_cell = next(row for row in csv.reader(io.StringIO(safe)) if row[0] == "evil")[-1]
    assert plain_cell.startswith("=") and safe_cell == "'" + plain_cell


def test_the_limits_are_documented_in_the_openapi_description(client):
    description = json.dumps(client.get("/api/openapi.json").get_json())
    for name in limits.LIMITS:
        assert name in description


def test_the_limits_are_documented_in_the_readme():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name in limits.LIMITS:
        assert name in readme


def test_an_import_key_no_url_could_address_gets_an_addressable_id_and_a_warning(api, demo):
    status, body = api.post("/api/import/json?locale=fr&index=id&no-expand",
                            data=json.dumps({"fine": "a", "z/plurals": "b"}).encode())
    assert status == 200, body
    derived = asset_id_of_text("z/plurals")
    assert derived != "z/plurals" and body["warnings"] == [
        f"'z/plurals' cannot be an asset ID as it is: imported as {derived!r}"]
    assert api.get(f"/api/translations/{quote(derived, safe='')}/fr")[1]["translation"] == "b"
    assert api.get("/api/translations/fine/fr")[1]["translation"] == "a"


def test_a_nul_character_in_a_text_never_reaches_a_commit_message(api, demo):
    status, _ = api.post("/api/assets", data={"text": "nul\x00inside"})
    assert status == 201
    assert_fsck_clean(demo[0].path)


def test_a_convert_beyond_its_time_budget_is_refused_naming_it(client, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "convert_seconds", 0.0)
    data = json.dumps({f"k{i}": "v" for i in range(3000)}).encode()
    response = client.post("/api/convert/json/out-fr.po", data=data)
    assert response.status_code == 422 and "convert_seconds" in error_of(response)


def test_a_convert_past_its_time_budget_is_refused_and_its_work_stopped_with_it(client, monkeypatch):
    """The limit covers reading and writing, and holds wherever the work is: the conversion runs in a child
    process that is gone with the refusal, and the convert slot is free for the next request at once."""
    monkeypatch.setitem(limits.LIMITS, "convert_seconds", 0.2)
    data = json.dumps({f"k{i}": f"value {i}" for i in range(100_000)}).encode()  # seconds to read and write
    before = set(multiprocessing.active_children())  # (a check pool's workers may live on from earlier tests)
    response = client.post("/api/convert/json/out-fr.po", data=data)
    assert response.status_code == 422
    assert error_of(response) == ("converting the file took longer than its time budget "
                                  f"{limits.describe('convert_seconds')}")
    assert set(multiprocessing.active_children()) <= before  # the child doing the conversion was killed and reaped
    monkeypatch.setitem(limits.LIMITS, "convert_seconds", 60.0)
    response = client.post("/api/convert/json/out-fr.po", data=b'{"k": "v"}')  # not a 429: the slot is free
    assert response.status_code == 200 and b'msgstr "v"' in response.data


def test_an_import_beyond_its_time_budget_is_refused_without_a_commit(api, demo, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "parse_seconds", 0.0)
    before = head(demo[0])
    comments = b'msgid ""\nmsgstr ""\n"Language: fr\\n"\n\n' + b"#a\n" * 20_000 + b'msgid "x'
    status, body = api.post("/api/import/po?locale=fr", data=comments)
    assert status == 422 and "parse_seconds" in body["error"]
    assert head(demo[0]) == before
