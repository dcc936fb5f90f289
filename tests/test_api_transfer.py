"""Export, import and convert through HTTP (spec §4.3, §4.7, §4.8)."""
from __future__ import annotations

import io
import json
import tarfile
import time
import zipfile
from email.utils import parsedate_to_datetime

import pytest

from app.seed import seed_demo
from tests.api import Api, commit_count
from tests.support import git, wait_until

FORMATS = ["po", "mo", "json", "json?format=jed", "json?format=i18next", "arb", "csv"]


def export(client, key, path, headers=None, **kwargs):
    return client.get(path, headers={"Authorization": f"Loco {key}", **(headers or {})}, **kwargs)


def test_export_locale_po_has_headers_banner_and_disposition(client, demo):
    response = export(client, demo[1].export, "/api/export/locale/fr.po")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/x-gettext-translation")
    assert response.headers["Content-Disposition"] == 'attachment; filename="acme-notes-fr.po"'
    text = response.get_data(as_text=True)
    assert "# Project: Acme Notes" in text and '"Language: fr\\n"' in text
    assert 'msgstr "Bienvenue dans Acme Notes"' in text
    assert "Exported" in text
    bare = export(client, demo[1].export, "/api/export/locale/fr.po?no-comments=1").get_data(as_text=True)
    assert "# Project" not in bare


def test_export_keys_may_export_but_not_read_assets(client, demo):
    key = demo[1].export
    assert export(client, key, "/api/export/locale/fr.json").status_code == 200
    assert export(client, key, "/api/assets").status_code == 403
    assert client.get("/api/export/locale/fr.json").status_code == 401


def test_export_by_query_key(client, demo):
    assert client.get(f"/api/export/locale/fr.json?key={demo[1].export}").status_code == 200


def test_json_export_nests_dotted_ids_unless_no_expand(client, demo):
    nested = json.loads(export(client, demo[1].full, "/api/export/locale/fr.json").data)
    assert nested["home"]["title"] == "Bienvenue dans Acme Notes"
    assert nested["notes"]["count"] == {"one": "%d note", "other": "%d notes"}
    for flag in ("no-expand", "no-folding"):
        flat = json.loads(export(client, demo[1].full, f"/api/export/locale/fr.json?{flag}=true").data)
        assert flat["home.title"] == "Bienvenue dans Acme Notes"


def test_format_json_means_the_default_variant(client, demo):
    plain = export(client, demo[1].full, "/api/export/locale/fr.json").data
    assert export(client, demo[1].full, "/api/export/locale/fr.json?format=json").data.split(b"\n")[1:] == \
        plain.split(b"\n")[1:]


def test_all_json_is_keyed_by_locale(client, demo):
    data = json.loads(export(client, demo[1].full, "/api/export/all.json").data)
    assert list(data) == ["en", "fr", "de", "ja", "ar"]
    assert data["fr"]["home"]["title"] == "Bienvenue dans Acme Notes"


def test_all_json_of_a_single_locale_project_is_a_flat_asset_map(client, store, keystore):
    project = store.create_project("Solo", "en", "English")
    key, _ = keystore.create(project.id, "full", "Solo", "")
    api = Api(client, key)
    api.post("/api/assets", data={"id": "a.b", "text": "Hello"})
    data = json.loads(export(client, key, "/api/export/all.json").data)
    assert data == {"a": {"b": "Hello"}}


def test_all_export_needs_a_multi_locale_format(client, demo):
    response = export(client, demo[1].full, "/api/export/all.po")
    assert response.status_code == 400 and "single locale" in response.get_json()["error"]


def test_template_has_only_source_keys(client, demo):
    text = export(client, demo[1].full, "/api/export/template.pot").get_data(as_text=True)
    assert "PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE" in text
    assert "Bienvenue" not in text and 'msgid "Welcome to Acme Notes"' in text


def test_unknown_extension_or_variant_lists_what_is_supported(client, demo):
    response = export(client, demo[1].full, "/api/export/locale/fr.docx")
    assert response.status_code == 400 and "po" in response.get_json()["error"]
    response = export(client, demo[1].full, "/api/export/locale/fr.json?format=nope")
    assert response.status_code == 400 and "i18next" in response.get_json()["error"]


def test_unknown_locale_is_404(client, demo):
    assert export(client, demo[1].full, "/api/export/locale/ru.po").status_code == 404


@pytest.mark.parametrize("query,expected,unexpected", [
    ("filter=errors", "errors.network", "home.title"),
    ("filter=!errors", "home.title", "errors.network"),
    ("status=fuzzy", "sync.progress", "home.title"),
    ("status=!fuzzy", "home.title", "sync.progress"),
    ("status=untranslated", "settings.beta.label", "home.title"),
])
def test_filter_and_status_select_assets(client, demo, query, expected, unexpected):
    # i18next keeps untranslated units (null), so every selected asset shows up as a key
    data = json.loads(export(client, demo[1].full, f"/api/export/locale/fr.json?format=i18next&no-expand&{query}").data)
    assert expected in data and unexpected not in data


def test_order_by_id_sorts_keys(client, demo):
    data = json.loads(export(client, demo[1].full, "/api/export/locale/fr.json?no-expand&order=id").data)
    assert list(data) == sorted(data)
    assert export(client, demo[1].full, "/api/export/locale/fr.json?order=random").status_code == 400


def test_fallback_fills_untranslated_assets(client, demo):
    data = json.loads(export(client, demo[1].full, "/api/export/locale/ja.json?no-expand&fallback=en").data)
    assert data["settings.beta.label"] == "Try beta features"
    assert export(client, demo[1].full, "/api/export/locale/ja.json?fallback=xx").status_code == 400


def test_printf_converts_placeholders(client, demo):
    data = json.loads(export(client, demo[1].full, "/api/export/locale/fr.json?no-expand&printf=icu").data)
    assert data["editor.last_edited"] == "Dernière modification par {0} le {1}"


def test_charset_and_breaks(client, demo):
    api = Api(client, demo[1].full)
    api.post("/api/assets", data={"id": "latin", "text": "Close"})
    api.post("/api/assets/latin/tags", data={"name": "latin"})
    api.post("/api/translations/latin/de", data="Schließen über".encode())
    response = export(client, demo[1].full, "/api/export/locale/de.po?charset=iso-8859-1&breaks=DOS&filter=latin")
    assert response.status_code == 200 and b"\r\n" in response.data and b"\n\n" not in response.data
    assert b"charset=ISO-8859-1" in response.data
    assert 'msgstr "Schließen über"' in response.data.decode("iso-8859-1")
    refused = export(client, demo[1].full, "/api/export/locale/ja.po?charset=iso-8859-1")
    assert refused.status_code == 406 and "cannot be encoded" in refused.get_json()["error"]


def test_last_modified_and_if_modified_since(client, demo):
    first = export(client, demo[1].full, "/api/export/locale/fr.po")
    stamp = first.headers["Last-Modified"]
    cached = export(client, demo[1].full, "/api/export/locale/fr.po", headers={"If-Modified-Since": stamp})
    assert cached.status_code == 304 and cached.data == b""
    # HTTP dates count whole seconds: the next commit must fall in a later second than the last one
    newer = parsedate_to_datetime(stamp).timestamp() + 1
    wait_until(lambda: time.time() >= newer, timeout=2, interval=0.02)
    Api(client, demo[1].full).post("/api/translations/home.title/fr", data=b"Accueil")
    fresh = export(client, demo[1].full, "/api/export/locale/fr.po", headers={"If-Modified-Since": stamp})
    assert fresh.status_code == 200


def test_zip_archive_holds_one_file_per_locale_in_gettext_layout(client, demo):
    response = export(client, demo[1].full, "/api/export/archive/po.zip")
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.data))
    assert sorted(archive.namelist()) == sorted(f"{code}/LC_MESSAGES/acme-notes.po"
                                                for code in ("en", "fr", "de", "ja", "ar"))
    assert b"Exported" in archive.comment
    assert b"Bienvenue" in archive.read("fr/LC_MESSAGES/acme-notes.po")


def test_tar_archive_and_json_layout(client, demo):
    response = export(client, demo[1].full, "/api/export/archive/json.tar")
    names = tarfile.open(fileobj=io.BytesIO(response.data)).getnames()
    assert "acme-notes-fr.json" in names and len(names) == 5


def test_export_never_commits(client, demo):
    before = commit_count(demo[0])
    for path in ("/api/export/locale/fr.po", "/api/export/all.json", "/api/export/archive/po.zip"):
        export(client, demo[1].full, path)
    assert commit_count(demo[0]) == before


# ----------------------------------------------------------------------------- import
def test_import_is_one_commit_and_answers_status_message_locales(client, demo):
    api = Api(client, demo[1].full)
    po = ('msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Welcome to Acme Notes"\nmsgstr "Salut"\n\n'
          'msgid "Brand new"\nmsgstr "Tout neuf"\n')
    before = commit_count(demo[0])
    status, body = api.post("/api/import/po?locale=fr&index=text", data=po.encode())
    assert status == 200 and set(body) == {"status", "message", "locales"}
    assert body["message"] == "Imported 1 new asset, 2 new translations, 1 translation updated"  # en + fr
    assert [l["code"] for l in body["locales"]] == ["en", "fr"]
    assert commit_count(demo[0]) == before + 1
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Salut"
    assert git(demo[0].path, "status", "--porcelain") == ""


def test_broken_file_is_422_naming_the_line_and_changes_nothing(client, demo):
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post("/api/import/po?locale=fr", data=b'msgid "a"\nmsgstr "b"\n"dangling\n')
    assert status == 422 and "line" in body["error"]
    status, body = api.post("/api/import/json?locale=fr", data=b'{"a": ')
    assert status == 422
    assert api.post("/api/import/json?locale=fr", data=b"")[0] == 422
    assert commit_count(demo[0]) == before


def test_import_with_index_id_needs_a_locale(client, demo):
    assert Api(client, demo[1].full).post("/api/import/json?index=id", data=b'{"a": "b"}')[0] == 400


def test_json_import_without_index_uses_asset_ids_and_accepts_nested_objects(client, demo):
    api = Api(client, demo[1].full)
    body = json.dumps({"home": {"title": "Bienvenue !"}, "cart.total": "Total"}).encode()
    status, _ = api.post("/api/import/json?locale=fr", data=body, headers={"Content-Type": "text/plain"})
    assert status == 200
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Bienvenue !"
    assert api.get("/api/translations/cart.total/fr")[1]["translation"] == "Total"


def test_import_switches(client, demo):
    api = Api(client, demo[1].full)
    body = json.dumps({"home.title": "Neu", "brand.new": "Neu2"}).encode()
    api.post("/api/import/json?locale=de&ignore-new=true&tag-updated=touched&flag-updated=provisional",
             data=body)
    assert api.get("/api/assets/brand.new.json")[0] == 404
    assert "touched" in api.get("/api/assets/home.title.json")[1]["tags"]
    assert api.get("/api/translations/home.title/de")[1]["flag"] == "provisional"
    api.post("/api/import/json?locale=de&ignore-existing&tag-new=fresh&flag-new=fuzzy",
             data=json.dumps({"home.title": "Anders", "brand.new": "Neu2"}).encode())
    assert api.get("/api/translations/home.title/de")[1]["translation"] == "Neu"
    assert api.get("/api/assets/brand.new.json")[1]["tags"] == ["fresh"]
    assert api.get("/api/translations/brand.new/de")[1]["flag"] == "fuzzy"


def test_ignore_blank_and_false_booleans(client, demo):
    api = Api(client, demo[1].full)
    api.post("/api/import/json?locale=de&ignore-blank=1", data=b'{"home.title": ""}')
    assert api.get("/api/translations/home.title/de")[1]["translation"] != ""
    api.post("/api/import/json?locale=de&ignore-blank=false", data=b'{"home.title": ""}')
    assert api.get("/api/translations/home.title/de")[1]["translation"] == ""


def test_absent_assets_can_be_tagged_untagged_or_deleted(client, demo):
    api = Api(client, demo[1].full)
    api.post("/api/import/json?locale=en&tag-absent=gone&untag-absent=web", data=b'{"home.title": "Hi"}')
    greeting = api.get("/api/assets/home.greeting.json")[1]
    assert "gone" in greeting["tags"] and "web" not in greeting["tags"]
    assert "gone" not in api.get("/api/assets/home.title.json")[1]["tags"]
    before = commit_count(demo[0])
    api.post("/api/import/json?locale=en&delete-absent=true", data=b'{"home.title": "Hi"}')
    assert [a["id"] for a in api.get("/api/assets")[1]] == ["home.title"]
    assert commit_count(demo[0]) == before + 1


def test_untag_all_and_tag_all(client, demo):
    api = Api(client, demo[1].full)
    api.post("/api/import/json?locale=en&tag-all=imported&untag-all=mobile", data=b'{"home.title": "Welcome to Acme Notes"}')
    assert api.get("/api/assets/home.title.json")[1]["tags"] == ["web", "imported"]


def test_plural_import_links_plural_forms_for_locales_with_more_forms(client, demo):
    api = Api(client, demo[1].full)
    api.post("/api/locales", data={"code": "ru"})
    po = ('msgid ""\nmsgstr ""\n"Language: ru\\n"\n'
          '"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && '
          '(n%100<10 || n%100>=20) ? 1 : 2);\\n"\n\n'
          'msgid "%d item in the trash"\nmsgid_plural "%d items in the trash"\nmsgstr[0] "%d предмет"\nmsgstr[1] "%d предмета"\n'
          'msgstr[2] "%d предметов"\n')
    status, body = api.post("/api/import/po?locale=ru", data=po.encode())
    assert status == 200, body
    ru = api.get("/api/translations/trash.items/ru")[1]
    assert ru["translation"] == "%d предмет"
    assert [(p["form"], p["translation"]) for p in ru["plurals"]] == [("few", "%d предмета"), ("many", "%d предметов")]
    assert len(api.get("/api/assets/trash.items/plurals")[1]) == 2


def test_async_import_reports_progress_until_100(client, demo):
    api = Api(client, demo[1].full)
    body = json.dumps({f"bulk.{i}": f"Text {i}" for i in range(3000)}).encode()
    response = client.post("/api/import/json?locale=en&async", data=body,
                           headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code == 201
    location = response.headers["Location"]
    assert "/api/import/progress/" in location
    progress = api.finished_job(location.replace("http://localhost", ""))
    assert progress == {"progress": 100, "success": "Imported 3000 new assets, 3000 new translations", "error": ""}
    assert api.get("/api/assets/bulk.2999.json")[0] == 200


POLL_FROM_ANOTHER_PROCESS = """
import json, sys, time
sys.path.insert(0, {root!r})
from app import create_app
client = create_app({data!r}).test_client()
seen = []
for _ in range(1200):
    progress = client.get({path!r}, headers={{"Authorization": "Loco {key}"}}).get_json()
    seen.append(progress["progress"])
    if progress["progress"] == 100:
        break
    time.sleep(0.005)  # samples the progress at a steady pace: the test asserts it only moves forward
print(json.dumps({{"seen": seen, "last": progress}}))
"""


def test_async_import_progress_is_visible_from_another_worker_process(client, demo, data_dir):
    import subprocess
    import sys

    from tests.support import REPO_ROOT

    body = json.dumps({f"big.{i}": f"Text {i}" for i in range(20000)}).encode()
    response = client.post("/api/import/json?locale=en&async", data=body,
                           headers={"Authorization": f"Loco {demo[1].full}"})
    path = response.headers["Location"].replace("http://localhost", "")
    script = POLL_FROM_ANOTHER_PROCESS.format(root=str(REPO_ROOT), data=str(data_dir), path=path, key=demo[1].full)
    result = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                       check=True, timeout=120).stdout)
    assert result["last"]["progress"] == 100 and result["last"]["error"] == ""
    assert result["seen"] == sorted(result["seen"])  # progress only moves forward
    assert Api(client, demo[1].full).get("/api/assets/big.19999.json")[0] == 200


def test_async_import_failure_is_reported_in_the_job(client, demo):
    api = Api(client, demo[1].full)
    response = client.post("/api/import/po?locale=fr&async", data=b'msgid "x"\nbroken',
                           headers={"Authorization": f"Loco {demo[1].full}"})
    progress = api.finished_job(response.headers["Location"].replace("http://localhost", ""))
    assert "line 2" in progress["error"] and progress["success"] == ""


def test_a_job_whose_process_died_is_reported_interrupted_even_while_that_process_is_an_unreaped_zombie(
        client, demo, store):
    """A worker killed with its master is reparented; until something reaps it (a container's first process may
    never), /proc still lists it as a zombie with its start time: the job must not be reported running forever."""
    import subprocess

    from storage.jobs import INTERRUPTED, JobStore, process_token

    child = subprocess.Popen(["sleep", "30"])
    try:
        jobs = JobStore(store.jobs_dir)
        job = jobs.create(demo[0].id)
        job.owner = process_token(child.pid)
        jobs.update(job, progress=30)
        api = Api(client, demo[1].full)
        assert api.get(f"/api/import/progress/{job.id}")[1]["progress"] == 30  # its process runs: still running
        child.kill()  # not waited for: a zombie until reaped below
        wait_until(lambda: open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z", timeout=10)
        status, progress = api.get(f"/api/import/progress/{job.id}")
        assert status == 200 and progress["progress"] == 100 and progress["error"] == INTERRUPTED
    finally:
        child.kill()
        child.wait()


def test_progress_of_unknown_or_empty_job(client, demo):
    api = Api(client, demo[1].full)
    assert api.get("/api/import/progress/" + "0" * 32)[0] == 404
    assert api.get("/api/import/progress/")[0] == 422


# ----------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("ext", FORMATS)
def test_export_then_import_into_an_empty_project_is_lossless(client, demo, store, keystore, ext):
    source = demo[0].snapshot()
    target = store.create_project("Copy", "en", "English")
    key, _ = keystore.create(target.id, "full", "Copier", "")
    api = Api(client, key)
    for code in ("fr", "de", "ja", "ar"):
        api.post("/api/locales", data={"code": code})
    for code in ("en", "fr", "de", "ja", "ar"):
        path, _, query = ext.partition("?")
        data = export(client, demo[1].full, f"/api/export/locale/{code}.{path}?{query}").data
        status, body = api.post(f"/api/import/{path}?locale={code}&{query}", data=data)
        assert status == 200, body
    copied = target.snapshot()
    for code in ("en", "fr", "de", "ja", "ar"):
        by_text = ext in ("po", "mo", "json?format=jed")  # gettext-style files are indexed by source text
        want = {_key(source, a, by_text): (e["text"], e.get("flag", "")) for a, e in source.translations(code)}
        got = {_key(copied, a, by_text): (e["text"], e.get("flag", "")) for a, e in copied.translations(code)}
        if ext != "po":  # PO carries flags (as `#, fuzzy` and a Loco flag comment); the others only texts
            want = {k: v[0] for k, v in want.items()}
            got = {k: v[0] for k, v in got.items()}
        assert got == want, code


def _key(snapshot, asset_id, by_text):
    """(singular, form index); the singular by asset ID, or by context and source text for gettext files
    (which are indexed by text); plural-form asset IDs may differ between projects."""
    asset = snapshot.asset(asset_id)
    parent = asset.get("plural_of")
    if parent:
        return (_key(snapshot, parent, by_text)[0], 1 + snapshot.asset(parent)["plurals"].index(asset_id))
    if not by_text:
        return (asset_id, 0)
    source = snapshot.translation(asset_id, "en")
    return ((asset.get("context", ""), source["text"] if source else asset_id), 0)


def test_demo_round_trip_via_multi_locale_files(client, demo):
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    for path, target in (("/api/export/all.csv", "/api/import/csv"),
                         ("/api/export/all.json", "/api/import/json?format=multi")):
        data = export(client, demo[1].full, path).data
        status, body = api.post(target, data=data)
        assert (status, body["message"]) == (200, "Nothing updated")
    assert commit_count(demo[0]) == before


# ----------------------------------------------------------------------------- convert
def test_convert_needs_no_key_and_touches_no_project(client, demo):
    before = commit_count(demo[0])
    po = 'msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr "Bonjour"\n'
    response = client.post("/api/convert/po/messages-fr_FR.json", data=po.encode())
    assert response.status_code == 200
    assert json.loads(response.data) == {"Hello": "Bonjour"}
    assert response.headers["Content-Disposition"] == 'attachment; filename="messages-fr_FR.json"'
    assert commit_count(demo[0]) == before


def test_convert_locale_from_name_or_query_is_equivalent(client):
    po = b'msgid ""\nmsgstr ""\n\nmsgid "Hello"\nmsgstr "Bonjour"\n'
    by_name = client.post("/api/convert/po/messages-fr_FR.po", data=po).get_data(as_text=True)
    by_query = client.post("/api/convert/po/messages.po?locale=fr_FR", data=po).get_data(as_text=True)
    assert '"Language: fr_FR\\n"' in by_name
    strip = lambda text: [l for l in text.splitlines() if "Date" not in l and "Exported at" not in l]
    assert strip(by_name) == strip(by_query)


def test_convert_takes_the_src_form_field(client):
    response = client.post("/api/convert/json/strings-de.po", data={"src": '{"greeting": "Hallo"}'})
    assert response.status_code == 200 and 'msgstr "Hallo"' in response.get_data(as_text=True)


def test_convert_statuses(client):
    assert client.post("/api/convert/json/x.po", data=b"{}").status_code == 204
    assert client.post("/api/convert/json/x.po", data=b"").status_code == 422
    broken = client.post("/api/convert/json/x.po", data=b"{nope")
    assert broken.status_code == 422 and broken.get_json()["status"] == 422
    assert client.post("/api/convert/docx/x.po", data=b"x").status_code == 400
    assert client.post("/api/convert/json/x.docx", data=b'{"a": "b"}').status_code == 400


@pytest.mark.parametrize("path", ["/api/export/archive/JSON%0A.tar", "/api/export/archive/json%22.zip",
                                  "/api/export/locale/fr.JSON%0A"])
def test_control_characters_in_the_extension_never_reach_a_header(client, demo, path):
    response = client.get(path, headers={"Authorization": f"Loco {demo[1].full}"})
    assert response.status_code < 500
    assert "\n" not in response.headers.get("Content-Disposition", "")
