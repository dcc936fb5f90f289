"""Every documented export parameter x every writable format x every export endpoint (issue #26, last point).

The parameters come from the API description (app/openapi.py EXPORT_PARAMS, and the archive's own ones), the
formats from the registry, so a new parameter without a check, or a new format, lands in this matrix by itself.
Each cell asks the Flask test client for the export with one meaningful value of the parameter and checks:
the answer is 200 or a documented 4xx with the JSON error shape (never a 5xx), and the parameter's effect where
the format can express it, read back with the format's own reader where it has one (else in the bytes). Where
an effect cannot show in a format, the parameter's `applies` predicate says so from the FormatSpec, and the
cell checks that the parameter is accepted and (for parameters that only shape text) changes nothing.
"""
from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from functools import cache, cached_property

import pytest

from app import create_app
from app.openapi import EXPORT_PARAMS, build_paths
from formats import ExportOptions, ReadOptions, read_file
from formats.catalogue import Catalogue, Translation, Unit
from formats.errors import UnsupportedFormat
from formats.pipeline import prepare
from formats.registry import FORMATS, FormatSpec, archive_path, archive_per_locale, spec_for_all_locales

WRITABLE = [spec for spec in FORMATS if spec.writable]
SOURCE, TARGET, OTHER = "en", "de", "fr"
NAMESPACE = "nsmark"
PROJECT = "Matrix"

# (asset ID, tags, printf, texts by locale); created in this order, which is not the order of the IDs
ASSETS: list[tuple[str, list[str], str, dict[str, str]]] = [
    ("zulu.kept", ["keep"], "", {"en": "Zulu source", "fr": "Zulu fr", "de": "Zulu de"}),
    ("alpha.gap", [], "", {"en": "Alpha source", "fr": "Alpha fr"}),  # untranslated in de: fallback fills it
    ("mike.fuzzy", [], "", {"en": "Mike source", "fr": "Mike fr", "de": "Mike de fuzzy"}),
    ("echo.printf", [], "php", {"en": "Echo %s source", "fr": "Echo %s fr", "de": "Echo %s de"}),
    ("cafe.accent", [], "", {"en": "Café source", "fr": "Café fr", "de": "Café de"}),
    ("twin.a", [], "", {"en": "Twin source", "fr": "Twin A fr", "de": "Twin A de"}),  # same source text:
    ("twin.b", [], "", {"en": "Twin source", "fr": "Twin B fr", "de": "Twin B de"}),  # collide under index=text
    ("oscar.formula", [], "", {"en": "=Oscar source", "fr": "=Oscar fr", "de": "=Oscar de"}),
]
FUZZY = ("mike.fuzzy", "de")
UNTAGGED_TEXTS = [value for _, tags, _, texts in ASSETS if not tags for value in texts.values()]


def text(asset: str, locale: str) -> str:
    """The seeded text of an asset in a locale."""
    return next(texts[locale] for asset_id, _, _, texts in ASSETS if asset_id == asset)


# ----------------------------------------------------------------------------- the project, once per module
@dataclass
class Project:
    """The seeded project: a test client, an export key, and the exports without parameters made so far."""

    client: Any
    key: str
    slug: str
    ref: str  # a ref dates every export by its commit, so that two exports of the same query are the same bytes
    baselines: dict[tuple[str, str], Export] = field(default_factory=dict)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    app = create_app(tmp_path_factory.mktemp("matrix") / "data", testing=True)
    store, keys = app.extensions["gloss.store"], app.extensions["gloss.keys"]
    created = store.create_project(PROJECT, SOURCE, "English")
    full, _ = keys.create(created.id, "full", "Tester", "")
    client = app.test_client()
    headers = {"Authorization": f"Loco {full}"}

    def call(method: str, path: str, **kwargs) -> None:
        response = client.open(path, method=method, headers=headers, **kwargs)
        assert response.status_code in (200, 201), (path, response.data[:300])

    for code in (OTHER, TARGET):
        call("POST", "/api/locales", data={"code": code})
    for asset_id, tags, printf, texts in ASSETS:
        call("POST", "/api/assets", data={"id": asset_id, "text": texts[SOURCE]})
        if printf:
            call("PATCH", f"/api/assets/{asset_id}.json", json={"printf": printf})
        for tag in tags:
            call("POST", f"/api/assets/{asset_id}/tags", data={"name": tag})
        for code in (OTHER, TARGET):
            if code in texts:
                call("POST", f"/api/translations/{asset_id}/{code}", data=texts[code].encode())
    call("POST", f"/api/translations/{FUZZY[0]}/{FUZZY[1]}/flag", data={"flag": "fuzzy"})
    export, _ = keys.create(created.id, "export", "Pipeline", "")
    return Project(client, export, created.id, "HEAD")


# ----------------------------------------------------------------------------- one export, read back
@dataclass
class Export:
    """One answer: the file that holds the target locale (an archive's member for it) and how to read it."""

    endpoint: str
    spec: FormatSpec  # the format the file is written in (all.json is json multi)
    status: int
    data: bytes = b""
    members: list[str] = field(default_factory=list)
    multi: bool = False  # the file holds every locale
    again: Callable[[dict[str, str]], Export] | None = None  # the same export with other parameters

    @cached_property
    def catalogue(self) -> Catalogue | None:
        """The file read back by its format's reader (None: the format cannot be read)."""
        if not self.spec.readable:
            return None
        options = ReadOptions() if self.multi else ReadOptions(locale=TARGET, source_locale=SOURCE)
        return read_file(self.spec.ext, self.spec.variant, self.data, options)

    @cached_property
    def keyed(self) -> Catalogue | None:
        """The file read back with its keys as unit IDs."""
        if not self.spec.readable:
            return None
        # the namespace (default: the project name) that prefixes CodeIgniter keys and PHP constants, taken off
        options = ReadOptions(index="id", namespace=PROJECT) if self.multi else ReadOptions(
            locale=TARGET, source_locale=SOURCE, index="id", namespace=PROJECT)
        return read_file(self.spec.ext, self.spec.variant, self.data, options)

    def texts(self, locale: str | None = None) -> set[str]:
        """Every text of the file (of one locale where the file says which); its decoded bytes when unreadable."""
        if self.catalogue is None:
            return {self.data.decode("utf-8", "replace")}
        return {value for unit in self.catalogue.units for code, translation in unit.translations.items()
                if locale is None or code == locale for value in _values(translation)}

    def has(self, wanted: str, locale: str | None = None) -> bool:
        return any(wanted == found or self.catalogue is None and wanted in found for found in self.texts(locale))

    def position(self, prefix: str) -> int:
        """Where the first unit with a text starting with prefix comes (reader order, else byte offset)."""
        if self.catalogue is None:
            return self.data.find(prefix.encode())
        return next((number for number, unit in enumerate(self.catalogue.units)
                     if any(value.startswith(prefix) for translation in unit.translations.values()
                            for value in _values(translation))), -1)

    def keys(self) -> set[str]:
        assert self.keyed is not None
        return {unit.id for unit in self.keyed.units} | {unit.key for unit in self.keyed.units}


def _values(translation: Translation) -> list[str]:
    return [value for value in (translation.text, *translation.plurals.values()) if value]


ENDPOINTS = ("locale", "all", "archive")


def endpoints(spec: FormatSpec) -> list[str]:
    """The export endpoints of a format: all.{ext} only where something holds every locale."""
    return [endpoint for endpoint in ENDPOINTS if endpoint != "all" or _all_locales_spec(spec) is not None]


def _all_locales_spec(spec: FormatSpec) -> FormatSpec | None:
    try:
        return spec_for_all_locales(spec, 3)[0]
    except UnsupportedFormat:
        return None


def url(spec: FormatSpec, endpoint: str) -> str:
    return {"locale": f"/api/export/locale/{TARGET}.{spec.ext}", "all": f"/api/export/all.{spec.ext}",
            "archive": f"/api/export/archive/{spec.ext}.zip"}[endpoint]


def export(project: Project, spec: FormatSpec, endpoint: str, query: dict[str, str] | None = None,
           variant: str | None = None) -> Export:
    """GET one export; a 4xx must have the JSON error shape, a 5xx is never an answer."""
    query = dict(query or {})
    params = {"format": spec.variant or "default" if variant is None else variant, "ref": project.ref, **query}
    response = project.client.get(url(spec, endpoint), query_string=params,
                                  headers={"Authorization": f"Loco {project.key}"})
    assert response.status_code < 500, (response.status_code, response.data[:300])
    if response.status_code != 200:
        assert 400 <= response.status_code < 500 and response.mimetype == "application/json", response.data[:300]
        body = response.get_json()
        assert body == {"status": response.status_code, "error": body["error"]} and body["error"]
        return Export(endpoint, spec, response.status_code)
    if endpoint == "locale":
        return Export(endpoint, spec, 200, response.data)
    if endpoint == "all":
        written = _all_locales_spec(spec)
        assert written is not None
        return Export(endpoint, written, 200, response.data, multi=True)
    archive = zipfile.ZipFile(io.BytesIO(response.data))
    members = archive.namelist()
    if not archive_per_locale(spec) and spec.multi_locale:  # one file of every locale (xcstrings)
        assert len(members) == 1, members
        return Export(endpoint, spec, 200, archive.read(members[0]), members, multi=True)
    member = archive_path(spec, TARGET, project.slug, spec.ext, query.get("path", ""), query.get("namespace", ""))
    assert member in members, (member, members)
    return Export(endpoint, spec, 200, archive.read(member), members)


def baseline(project: Project, spec: FormatSpec, endpoint: str) -> Export:
    """The export without any parameter (once per format and endpoint)."""
    key = (spec.name, endpoint)
    if key not in project.baselines:
        project.baselines[key] = export(project, spec, endpoint)
        assert project.baselines[key].status == 200
        project.baselines[key].again = lambda query: export(project, spec, endpoint, query)
    return project.baselines[key]


# ----------------------------------------------------------------------------- what a format can express
@cache
def writes_text(spec: FormatSpec) -> bool:
    """Whether the writer writes text, which the pipeline then gives line breaks and a charset (binary
    formats such as MO, bplist and ICU .res are bytes the pipeline leaves alone)."""
    catalogue = Catalogue(source_locale=SOURCE, locales=[SOURCE], units=[Unit(id="a", translations={
        SOURCE: Translation(text="a")})])
    assert spec.writer is not None
    return isinstance(spec.writer(prepare(catalogue, spec, ExportOptions(locale=SOURCE))), str)


def shows_source(spec: FormatSpec) -> bool:
    """Whether a single-locale file shows the source text: beside the translation, or as its key."""
    return spec.bilingual or spec.default_index == "text"


def tabular(spec: FormatSpec) -> bool:
    """A spreadsheet file (escape-formulas is OWASP's advice for what a spreadsheet opens)."""
    return spec.content_type.startswith("text/csv")


def target_of(spec: FormatSpec) -> str:
    """The locale whose texts a single-locale file of this format holds (a template: the source)."""
    return SOURCE if spec.template_only else TARGET


# ----------------------------------------------------------------------------- the checks, one per parameter
@dataclass(frozen=True)
class Check:
    """A parameter's values (query dicts, given the spec) and its effect check on (export, baseline)."""

    values: Callable[[FormatSpec], list[dict[str, str]]]
    effect: Callable[[Export, Export, dict[str, str]], None]
    applies: Callable[[FormatSpec], bool] = lambda spec: True
    endpoints: tuple[str, ...] = ENDPOINTS
    expect: Callable[[Export, dict[str, str]], int] = lambda got, query: 200


def unchanged(got: Export, base: Export, query: dict[str, str]) -> None:
    """Where a parameter means nothing for a format: accepted, and the file is the same."""
    assert got.data == base.data


def accepted(got: Export, base: Export, query: dict[str, str]) -> None:
    """Where the effect cannot be observed in the format (the status check already ran)."""


def check_filter(got: Export, base: Export, query: dict[str, str]) -> None:
    locale = target_of(got.spec)
    assert got.has(text("zulu.kept", locale)), "the tagged asset is kept"
    assert not any(got.has(value) for value in UNTAGGED_TEXTS), "untagged assets are left out"


def check_status(got: Export, base: Export, query: dict[str, str]) -> None:
    fuzzy, clear = text(*FUZZY), text("zulu.kept", TARGET)
    if query["status"] == "fuzzy":
        assert got.has(fuzzy) and not got.has(clear) and not got.has(text("zulu.kept", OTHER))
    else:
        assert not got.has(fuzzy) and got.has(clear)


def check_fallback(got: Export, base: Export, query: dict[str, str]) -> None:
    filled = text("alpha.gap", OTHER)
    if got.multi:
        if got.catalogue is not None:  # which locale holds a text shows only when read back
            assert got.has(filled, TARGET) and not base.has(filled, TARGET)
        return
    assert got.has(filled) and not base.has(filled)


def check_order(got: Export, base: Export, query: dict[str, str]) -> None:
    assert 0 <= base.position("Zulu") < base.position("Mike"), "created order"
    assert 0 <= got.position("Mike") < got.position("Zulu"), "sorted by ID"


def check_index(got: Export, base: Export, query: dict[str, str]) -> None:
    spec = got.spec
    wanted = "Zulu source" if query["index"] == "text" else "zulu.kept"
    wanted = spec.key_filter(wanted) if spec.key_filter else wanted
    if spec.readable:
        assert wanted in got.keys(), sorted(got.keys())
    else:
        assert wanted.encode() in got.data and got.data != base.data


def index_values(spec: FormatSpec) -> list[dict[str, str]]:
    """The index the format does not use by default."""
    return [{"index": "id" if spec.default_index == "text" else "text"}]


def check_source(got: Export, base: Export, query: dict[str, str]) -> None:
    if got.multi:
        assert got.data != base.data
        return
    assert got.has(text("zulu.kept", OTHER)) and not base.has(text("zulu.kept", OTHER))


def check_namespace(got: Export, base: Export, query: dict[str, str]) -> None:
    """The namespace overrides the project name where the format joins it to names (CodeIgniter and constant
    key prefixes, the SQL table); elsewhere it shows where the format has a place for one (YAML root, Jed
    domain) or changes nothing."""
    joined = re.compile(rb"_" + PROJECT.lower().encode() + rb"|" + PROJECT.lower().encode() + rb"_")
    if joined.search(_without_banner(base).lower()):
        assert NAMESPACE.encode() in got.data.lower()
    else:
        assert NAMESPACE.encode() in got.data.lower() or got.data == base.data


def _without_banner(base: Export) -> bytes:
    """The baseline's bytes without the banner, which names the project in every format."""
    assert base.again is not None
    return base.again({"no-comments": "1"}).data


def check_printf(got: Export, base: Export, query: dict[str, str]) -> None:
    locale = target_of(got.spec)
    assert got.has(text("echo.printf", locale).replace("%s", "%@"))
    assert not got.has(text("echo.printf", locale))


def charset_expected(got: Export, query: dict[str, str]) -> int:
    """US-ASCII cannot hold é: 406 unless the format escapes it (properties)."""
    if query["charset"] == "us-ascii" and not got.spec.escapes_charset:
        return 406
    return 200


def check_charset(got: Export, base: Export, query: dict[str, str]) -> None:
    if not writes_text(got.spec):
        return  # binary formats carry their own encoding
    assert "é".encode() not in got.data, "no UTF-8 left"
    if query["charset"] == "iso-8859-1" and not got.spec.escapes_charset and "é".encode() in base.data:
        assert "é".encode("iso-8859-1") in got.data


def check_breaks(got: Export, base: Export, query: dict[str, str]) -> None:
    if not writes_text(got.spec):
        unchanged(got, base, query)
        return
    assert b"\n" in base.data
    if query["breaks"] == "DOS":
        assert got.data.replace(b"\r\n", b"").count(b"\n") == 0 and b"\r\n" in got.data
        assert got.data.replace(b"\r\n", b"\n") == base.data
    else:
        assert b"\n" not in got.data and got.data.replace(b"\r", b"\n") == base.data


def check_no_comments(got: Export, base: Export, query: dict[str, str]) -> None:
    assert b"Exported by: " not in got.data
    assert len(got.data) <= len(base.data)


def check_escape_formulas(got: Export, base: Export, query: dict[str, str]) -> None:
    if not tabular(got.spec):
        unchanged(got, base, query)
        return
    assert b"'=Oscar de" in got.data and b"'=Oscar" not in base.data


def check_no_expand(got: Export, base: Export, query: dict[str, str]) -> None:
    if not got.spec.nests_keys:
        unchanged(got, base, query)
        return
    flat = got.spec.key_filter("zulu.kept") if got.spec.key_filter else "zulu.kept"
    assert flat.encode() in got.data and flat.encode() not in base.data


def collisions_expected(got: Export, query: dict[str, str]) -> int:
    """The twins share a source text: fail is a 409 where they are keyed by it."""
    return 409 if query["collisions"] == "fail" and query.get("index", got.spec.default_index) == "text" else 200


def check_collisions(got: Export, base: Export, query: dict[str, str]) -> None:
    if query.get("index", got.spec.default_index) != "text":
        assert got.data == base.data, "no key collides by ID"
        return
    locale = target_of(got.spec)
    first, last = text("twin.a", locale), text("twin.b", locale)
    if got.spec.template_only:
        return  # both twins have the same source text: a template cannot tell which one won
    kept = {"ignore": (True, False), "overwrite": (False, True), "legacy": (False, True),
            "auto": (True, True)}[query["collisions"]]
    assert (got.has(first), got.has(last)) == kept


def collisions_values(spec: FormatSpec) -> list[dict[str, str]]:
    modes = [str(mode) for mode in _enum("collisions")]
    return [{"collisions": "fail"}] + [{"collisions": mode, "index": "text"} for mode in modes]


def check_variant(got: Export, base: Export, query: dict[str, str]) -> None:
    """Every name of the variant gives the same file, which its own reader reads."""
    assert got.data == base.data
    if got.spec.readable:
        assert got.catalogue is not None


def variant_values(spec: FormatSpec) -> list[dict[str, str]]:
    names = [spec.variant or "default", *spec.variant_names] + ([spec.ext, ""] if not spec.variant else [])
    return [{"format": name} for name in names]


def check_path(got: Export, base: Export, query: dict[str, str]) -> None:
    ext = got.spec.ext
    assert all(name.startswith("i18n/") and name.endswith(f".{ext}") for name in got.members), got.members


def _enum(name: str) -> list[str]:
    """A parameter's documented values."""
    return next(param["schema"]["enum"] for param in EXPORT_PARAMS if param["name"] == name)


CHECKS: dict[str, Check] = {
    "format": Check(variant_values, check_variant),
    "filter": Check(lambda spec: [{"filter": "keep"}], check_filter),
    "index": Check(index_values, check_index),
    "source": Check(lambda spec: [{"source": OTHER}], check_source,
                    applies=lambda spec: shows_source(spec) and not spec.template_only),
    "namespace": Check(lambda spec: [{"namespace": NAMESPACE}], check_namespace),
    "order": Check(lambda spec: [{"order": "id"}], check_order, applies=lambda spec: spec.capabilities.ordered),
    "status": Check(lambda spec: [{"status": "fuzzy"}, {"status": "!fuzzy"}], check_status,
                    applies=lambda spec: not spec.template_only),  # a template checks the source's status
    "fallback": Check(lambda spec: [{"fallback": OTHER}], check_fallback,
                      applies=lambda spec: not spec.template_only),  # a template has no translation to fill
    "printf": Check(lambda spec: [{"printf": "objc"}], check_printf),
    "charset": Check(lambda spec: [{"charset": "iso-8859-1"}, {"charset": "us-ascii"}], check_charset,
                     expect=charset_expected),
    "breaks": Check(lambda spec: [{"breaks": "DOS"}, {"breaks": "Mac"}], check_breaks),
    "no-comments": Check(lambda spec: [{"no-comments": "1"}], check_no_comments),
    "escape-formulas": Check(lambda spec: [{"escape-formulas": "1"}], check_escape_formulas),
    "no-expand": Check(lambda spec: [{"no-expand": "1"}], check_no_expand),
    "no-folding": Check(lambda spec: [{"no-folding": "1"}], check_no_expand),
    "collisions": Check(collisions_values, check_collisions, expect=collisions_expected),
    "path": Check(lambda spec: [{"path": "i18n/{locale}.{ext}"}], check_path, endpoints=("archive",),
                  applies=archive_per_locale),
}


@cache
def documented_params() -> dict[str, set[str]]:
    """The query parameters each export endpoint documents (ref and branch are every read's, not an export's:
    tests/test_branches.py checks a branch's exports byte for byte)."""
    routes = {"locale": "/api/export/locale/{locale}.{ext}", "all": "/api/export/all.{ext}",
              "archive": "/api/export/archive/{ext}.zip"}
    paths = build_paths()
    return {endpoint: {param["name"] for param in paths[route]["get"]["parameters"]
                       if param["in"] == "query" and param["name"] not in ("ref", "branch")}
            for endpoint, route in routes.items()}


def test_every_documented_export_parameter_has_a_check() -> None:
    documented = {param["name"] for param in EXPORT_PARAMS} | set().union(*documented_params().values())
    assert documented == set(CHECKS), "a documented export parameter without a check, or a check of nothing"


CELLS = [(name, spec) for name in CHECKS for spec in WRITABLE]


@pytest.mark.parametrize(("name", "spec"), CELLS, ids=[f"{name}-{spec.name}" for name, spec in CELLS])
def test_export_parameter_on_format(project: Project, name: str, spec: FormatSpec) -> None:
    check = CHECKS[name]
    documented = documented_params()
    for endpoint in endpoints(spec):
        if endpoint not in check.endpoints or name not in documented[endpoint]:
            continue
        base = baseline(project, spec, endpoint)
        for query in check.values(spec):
            got = export(project, spec, endpoint, query, variant=query.get("format"))
            assert got.status == check.expect(got, query), (endpoint, query)
            if got.status != 200:
                continue
            (check.effect if check.applies(spec) else accepted)(got, base, query)
