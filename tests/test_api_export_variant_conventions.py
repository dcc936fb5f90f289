"""Each variant's own conventions where Loco's observed output fixes them (issue #26 item 6), through HTTP, and
files written by Gloss import back into the assets they came from, generated over every PHP and YAML variant
of the format registry: CodeIgniter keys prefixed with the namespace (else the project name), PHP constants as
upper-case identifiers, plural forms of PHP arrays indexed by form, nested YAML under locale and namespace roots."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from formats.registry import FORMATS
from tests.api import Api
from tests.formats.validators import php_codeigniter, php_constants, php_include, php_lint, psych_load

PROJECT = "Acme Notes"  # the demo project's name: the default namespace
SINGULAR, PLURAL, EDITED = "%d pomme zq", "%d pommes zq", "%d pommes modifiées"
ROUND_TRIPPED = [spec for spec in FORMATS if spec.ext in ("php", "yml") and spec.readable and spec.writable
                 and not spec.multi_locale]


@pytest.fixture
def api(client, demo) -> Api:
    """The demo project with `apple`, a plural asset translated in French (and its plural form's ID as .pid)."""
    api = Api(client, demo[1].full)
    assert api.post("/api/assets", data={"id": "apple", "text": "%d apple"})[0] in (200, 201)
    status, member = api.post("/api/assets/apple/plurals", data={"text": "%d apples"})
    assert status == 200
    api.pid = member["id"]
    for asset_id, text in (("apple", SINGULAR), (api.pid, PLURAL)):
        assert api.post(f"/api/translations/{asset_id}/fr", data=text.encode())[0] == 200
    return api


def export(api: Api, path: str) -> bytes:
    response = api.client.get(path, headers=api.headers)
    assert response.status_code == 200, response.data[:300]
    return response.data


def saved(tmp_path: Path, data: bytes, name: str = "lang.php") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    if name.endswith(".php"):
        php_lint(path)
    return path


def test_codeigniter_keys_carry_the_project_name_unless_a_namespace_is_given(api, tmp_path) -> None:
    lang = php_codeigniter(saved(tmp_path, export(api, "/api/export/locale/fr.php?format=codeigniter")))
    assert lang[f"{PROJECT}_apple"] == {"0": SINGULAR, "1": PLURAL}
    assert all(key.startswith(f"{PROJECT}_") for key in lang)
    lang = php_codeigniter(saved(tmp_path, export(api, "/api/export/locale/fr.php?format=codeigniter&namespace=test")))
    assert lang["test_apple"] == {"0": SINGULAR, "1": PLURAL}  # [obs LEG-conv] $lang['test_sample']


def test_php_constants_are_upper_case_identifiers_prefix_included(api, tmp_path) -> None:
    constants = php_constants(saved(tmp_path, export(api, "/api/export/locale/fr.php?format=constants")))
    assert constants["ACME_NOTES_APPLE"] == SINGULAR
    assert constants[f"ACME_NOTES_{api.pid.upper().replace('-', '_')}"] == PLURAL  # a constant per plural form
    assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*", name) for name in constants), sorted(constants)
    constants = php_constants(saved(tmp_path, export(api, "/api/export/locale/fr.php?format=constants&namespace=test")))
    assert constants["TEST_APPLE"] == SINGULAR  # [obs] define('TEST_EXAMPLES', ...)


def test_php_constants_names_that_collide_stay_identifiers(api, tmp_path) -> None:
    for asset_id in ("zz.name", "zz-name"):
        assert api.post("/api/assets", data={"id": asset_id, "text": asset_id})[0] in (200, 201)
    constants = php_constants(saved(tmp_path, export(api, "/api/export/locale/en.php?format=constants")))
    assert constants["ACME_NOTES_ZZ_NAME"] == "zz.name" and constants["ACME_NOTES_ZZ_NAME_2"] == "zz-name"
    response = api.client.get("/api/export/locale/en.php?format=constants&collisions=fail", headers=api.headers)
    assert response.status_code in (400, 409, 422) and "ZZ_NAME" in response.get_json()["error"]


def test_the_default_php_array_writes_plural_forms_indexed_by_form(api, tmp_path) -> None:
    included = php_include(saved(tmp_path, export(api, "/api/export/locale/fr.php")))
    assert included["apple"] == {"0": SINGULAR, "1": PLURAL}  # [obs LEG-conv] 1 => 'exemples'
    assert b"[0 => '%d pomme zq', 1 => '%d pommes zq']" in export(api, "/api/export/locale/fr.php")


@pytest.mark.parametrize("namespace", ["", "test"])
def test_nested_yaml_has_the_locale_then_the_namespace_as_roots(api, tmp_path, namespace: str) -> None:
    data = export(api, f"/api/export/locale/fr.yml?format=nested&namespace={namespace}")
    loaded = yaml.safe_load(data)
    assert loaded == psych_load(saved(tmp_path, data, "fr.yml"))
    assert list(loaded) == ["fr"]
    keys = loaded["fr"][namespace] if namespace else loaded["fr"]
    assert keys["apple"] == {"one": SINGULAR, "other": PLURAL}
    assert keys["home"]["title"]  # dotted keys nested below the roots


@pytest.mark.parametrize("spec", ROUND_TRIPPED, ids=lambda spec: spec.name)
@pytest.mark.parametrize("namespace", ["", "test"])
def test_a_file_gloss_wrote_imports_back_into_the_assets_it_came_from(api, spec, namespace: str) -> None:
    query = f"format={spec.variant or 'default'}&namespace={namespace}"
    data = export(api, f"/api/export/locale/fr.{spec.ext}?{query}")
    assert PLURAL.encode() in data
    status, body = api.post(f"/api/import/{spec.ext}?{query}&locale=fr", data=data.replace(PLURAL.encode(),
                                                                                         EDITED.encode()))
    assert status == 200, body
    assert "new asset" not in body["message"], body  # every key found its asset again
    assert api.get(f"/api/translations/{api.pid}/fr")[1]["translation"] == EDITED
    assert api.get("/api/translations/apple/fr")[1]["translation"] == SINGULAR


def test_nested_yaml_imports_into_its_root_locale(api) -> None:
    data = export(api, "/api/export/locale/fr.yml?format=nested")
    status, body = api.post("/api/import/yml?format=nested", data=data.replace(PLURAL.encode(), EDITED.encode()))
    assert status == 200 and "new asset" not in body["message"], body
    assert api.get(f"/api/translations/{api.pid}/fr")[1]["translation"] == EDITED
