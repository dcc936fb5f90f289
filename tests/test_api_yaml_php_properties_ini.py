"""YAML, PHP, properties and INI through HTTP: export variants, import (aliases, format=rails/symfony),
and hostile input answered with a clear 4xx and nothing committed."""
from __future__ import annotations

import io
import zipfile

import pytest
import yaml

from tests.api import Api, commit_count
from tests.formats.test_yamlfmt import billion_laughs
from tests.support import corpus_path, git


def export(client, key: str, path: str):
    return client.get(path, headers={"Authorization": f"Loco {key}"})


@pytest.mark.parametrize("path, content_type", [
    ("/api/export/locale/fr.yml", "application/x-yaml"),
    ("/api/export/locale/fr.yml?format=nested", "application/x-yaml"),
    ("/api/export/locale/fr.yml?format=symfony", "application/x-yaml"),
    ("/api/export/locale/fr.yml?format=rails", "application/x-yaml"),
    ("/api/export/locale/fr.yaml", "application/x-yaml"),
    ("/api/export/locale/fr.php", "application/x-httpd-php-source"),
    ("/api/export/locale/fr.phps?format=codeigniter", "application/x-httpd-php-source"),
    ("/api/export/locale/fr.php?format=constants", "application/x-httpd-php-source"),
    ("/api/export/locale/fr.php?format=symfony", "application/x-httpd-php-source"),
    ("/api/export/locale/fr.properties", "text/x-java-properties; charset=ISO-8859-1"),
    ("/api/export/locale/fr.properties?charset=utf-8", "text/x-java-properties; charset=UTF-8"),
    ("/api/export/locale/fr.ini", "text/plain; charset=UTF-8"),
])
def test_every_variant_exports(client, demo, path: str, content_type: str) -> None:
    response = export(client, demo[1].export, path)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == content_type
    assert b"Acme Notes" in response.data  # the banner


def test_rails_all_locales_export_has_every_locale_root_and_the_yaml_prefix(client, demo) -> None:
    response = export(client, demo[1].export, "/api/export/all.yml?format=rails&yaml-prefix=acme")
    assert response.status_code == 200
    document = yaml.safe_load(response.data)
    assert list(document) == ["en", "fr", "de", "ja", "ar"]
    assert document["en"]["acme"]["home"]["title"] == "Welcome to Acme Notes"


def test_properties_default_export_is_ascii_with_unicode_escapes(client, demo) -> None:
    response = export(client, demo[1].export, "/api/export/locale/ja.properties")
    assert response.status_code == 200 and response.data.isascii() and b"\\u" in response.data


def test_yaml_and_yml_import_alike_and_once(client, demo) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post("/api/import/yaml?locale=fr", data="home:\n  title: Bienvenue (YAML)\n".encode())
    assert status == 200, body
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Bienvenue (YAML)"
    status, body = api.post("/api/import/yml?locale=fr", data="home:\n  title: Bienvenue (yml)\n".encode())
    assert status == 200, body
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Bienvenue (yml)"
    assert commit_count(demo[0]) == before + 2


def test_rails_import_takes_locales_from_the_roots(client, demo) -> None:
    api = Api(client, demo[1].full)
    data = "fr:\n  home:\n    title: Accueil Rails\nde:\n  home:\n    title: Startseite Rails\n"
    status, body = api.post("/api/import/yml?format=rails", data=data.encode())
    assert status == 200, body
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "Accueil Rails"
    assert api.get("/api/translations/home.title/de")[1]["translation"] == "Startseite Rails"


def test_symfony_import_reads_pipe_plurals(client, demo) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post("/api/import/yml?format=symfony&locale=fr",
                            data="home:\n  title: 'Titre'\nfresh:\n  count: 'une note|%count% notes'\n".encode())
    assert status == 200, body
    assert api.get("/api/translations/fresh.count/fr")[1]["translation"] == "une note"


def test_php_properties_and_ini_import(client, demo) -> None:
    api = Api(client, demo[1].full)
    for path, data, text in [
        ("/api/import/php?locale=fr", b"<?php\nreturn ['home' => ['title' => 'Accueil PHP']];\n", "Accueil PHP"),
        ("/api/import/phps?locale=fr&format=codeigniter", b"<?php\n$lang['home']['title'] = 'Accueil CI';\n",
         "Accueil CI"),
        ("/api/import/properties?locale=fr", b"home.title = Accueil \\u00e0 Java\n", "Accueil à Java"),
        ("/api/import/ini?locale=fr", b"[home]\ntitle = \"Accueil INI\"\n", "Accueil INI"),
    ]:
        status, body = api.post(path, data=data)
        assert status == 200, (path, body)
        assert api.get("/api/translations/home.title/fr")[1]["translation"] == text


HOSTILE = [
    ("yml", b"home:\n  title: !!python/object/apply:os.system ['touch /tmp/gloss-pwned']\n", "!!python/object/apply"),
    ("yml", b"home:\n  title: !ruby/object:Gem::Installer\n    i: x\n", "!ruby/object"),
    ("yml", billion_laughs(), "aliases expand to too many nodes"),
    ("yml", b"home: " + b"x" * (10 << 20) + b"\n", "line 1: line is"),
    ("php", b"<?php\nsystem('touch /tmp/gloss-pwned');\nreturn ['home' => 'x'];\n", "line 2: unexpected 'system'"),
    ("php", b"<?php\nreturn ['home' => file_get_contents('/etc/passwd')];\n", "unexpected 'file_get_contents'"),
    ("php", b"<?php\nreturn ['home' => \"${_SERVER['HOME']}\"];\n", "string interpolation"),
    ("php", b"<?php\nreturn ['a' => '" + b"x" * (10 << 20) + b"'];\n", "line 2: line is"),
    ("properties", b"a = 1\nb = " + b"x" * (10 << 20) + b"\n", "line 2: line is"),
    ("properties", b"a = 1\na = 2\n", "duplicate key"),
    ("ini", b"k = " + b"x" * (10 << 20), "line 1: line is"),
]


@pytest.mark.parametrize("ext, data, message", HOSTILE, ids=[f"{ext}-{message[:24]}" for ext, _, message in HOSTILE])
def test_hostile_input_is_a_clear_422_and_commits_nothing(client, demo, ext: str, data: bytes, message: str) -> None:
    api = Api(client, demo[1].full)
    before = commit_count(demo[0])
    status, body = api.post(f"/api/import/{ext}?locale=fr", data=data)
    assert status == 422, body
    assert message in body["error"]
    assert commit_count(demo[0]) == before
    assert git(demo[0].path, "status", "--porcelain") == ""


@pytest.mark.parametrize("ext, data, warning", [
    ("yml", b"home:\n  title: a\n  title: b\n", "line 3: duplicate key 'home.title' (first at line 2); the last value is kept"),
    ("ini", b"[home]\ntitle = a\ntitle = b\n", "line 3: duplicate key 'home.title' (first at line 2); the last value is kept"),
    ("json", b'{"home": {"title": "a",\n "title": "b"}}', "line 2: duplicate key 'home.title' (first at line 1); the last value is kept"),
])
def test_a_duplicate_key_imports_its_last_value_as_the_languages_own_loaders_do_and_warns(
        client, demo, ext: str, data: bytes, warning: str) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post(f"/api/import/{ext}?locale=fr", data=data)
    assert status == 200, body
    assert body["warnings"] == [warning]
    assert api.get("/api/translations/home.title/fr")[1]["translation"] == "b"


def test_hostile_convert_is_a_422_too(client) -> None:
    response = client.post("/api/convert/yml/out.json?locale=fr",
                           data=b"a: !!python/object/apply:os.system ['id']\n")
    assert response.status_code == 422
    assert "!!python/object/apply" in response.get_json()["error"]


def test_convert_po_to_each_new_family(client) -> None:
    po = b'msgid ""\nmsgstr ""\n"Language: fr\\n"\n\nmsgid "Hello"\nmsgstr "Bonjour"\n'
    for target, expected in [("out.yml", b"Hello: Bonjour"), ("out.php", b"'Hello' => 'Bonjour'"),
                             ("out.properties", b"Hello = Bonjour"), ("out.ini", b'Hello = "Bonjour"')]:
        response = client.post(f"/api/convert/po/{target}", data=po)
        assert response.status_code == 200, (target, response.data)
        assert expected in response.data


@pytest.mark.parametrize("path, names", [
    ("/api/export/archive/properties.zip", ["acme-notes_{locale_}.properties"]),
    ("/api/export/archive/yml.zip?format=rails", ["{locale}.yml"]),
    ("/api/export/archive/yml.zip?format=symfony", ["messages.{locale_}.yml"]),
    ("/api/export/archive/php.zip", ["{locale_}/acme-notes.php"]),
    ("/api/export/archive/php.zip?format=codeigniter", ["{locale_}/acme-notes_lang.php"]),
])
def test_archives_use_each_family_layout(client, demo, path: str, names: list[str]) -> None:
    response = export(client, demo[1].export, path)
    assert response.status_code == 200
    listed = zipfile.ZipFile(io.BytesIO(response.data)).namelist()
    codes = ["en", "fr", "de", "ja", "ar"]
    assert sorted(listed) == sorted(name.format(locale=code, locale_=code) for name in names for code in codes)


def test_formats_listing_names_the_new_families_and_their_aliases(client) -> None:
    response = client.get("/api/formats")
    records = {(record["ext"], record["variant"]): record for record in response.get_json()}
    assert {("yml", ""), ("yml", "nested"), ("yml", "rails"), ("yml", "symfony"), ("php", ""), ("php", "symfony"),
            ("php", "codeigniter"), ("php", "constants"), ("properties", ""), ("ini", "")} <= set(records)
    assert "yaml" in records[("yml", "rails")]["aliases"] and "phps" in records[("php", "")]["aliases"]
    assert records[("yml", "rails")]["multi_locale"] and records[("yml", "rails")]["readable"]


def test_all_yml_without_format_is_the_rails_multi_locale_file(client, demo) -> None:
    response = export(client, demo[1].export, "/api/export/all.yml")
    assert response.status_code == 200
    assert list(yaml.safe_load(response.data)) == ["en", "fr", "de", "ja", "ar"]


def test_rails_roots_spelled_posix_style_are_canonical_locales(client, demo) -> None:
    api = Api(client, demo[1].full)
    status, body = api.post("/api/import/yml?format=rails", data=b"pt_BR:\n  home:\n    title: Bem-vindo\n")
    assert status == 200, body
    assert [locale["code"] for locale in body["locales"]] == ["pt-BR"]
    assert api.get("/api/translations/home.title/pt-BR")[1]["translation"] == "Bem-vindo"


@pytest.mark.parametrize("path, query, assets", [
    ("php/codeigniter3-translations__french_form_validation_lang.php", "php?format=codeigniter", 29),
    ("properties/hibernate-validator__ValidationMessages_fr.properties", "properties", 46),
    ("properties/moz-l10n__bug121341.properties", "properties", 11),
    ("yml/SyliusElasticsearchPlugin__messages.fr.yml", "yml?format=symfony", 16),
    ("yml/jitsi-admin__form.fr.yml", "yaml", 175),
])
def test_corpus_files_import_over_http_with_their_counts(client, demo, path: str, query: str, assets: int) -> None:
    api = Api(client, demo[1].full)
    separator = "&" if "?" in query else "?"
    status, body = api.post(f"/api/import/{query}{separator}locale=fr", data=corpus_path(path).read_bytes())
    assert status == 200, body
    assert body["message"].startswith(f"Imported {assets} new assets, {assets} new translations")
