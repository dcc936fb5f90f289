"""The format plugin contract: what a FormatSpec declares, and how lookups, aliases and layouts follow it."""
from __future__ import annotations

import pytest

from formats import ExportOptions, export_file
from formats.registry import (
    FORMATS, FormatSpec, aliases_of, archive_path, archive_per_locale, canonical_ext, extensions, lookup, spec_for_all_locales,
)
from formats.errors import UnsupportedFormat

from .samples import rich_catalogue


@pytest.fixture
def xyz_alias(monkeypatch):
    """Pretend json declared the alias `jsn`, as xlf declares xliff."""
    from formats import registry

    monkeypatch.setattr(registry, "_ALIASES", {**registry._ALIASES, "jsn": "json"})


def test_every_spec_declares_a_label_a_description_and_a_known_default_index() -> None:
    for spec in FORMATS:
        assert spec.label and spec.description, spec.name
        assert spec.default_index in ("id", "text"), spec.name
        assert spec.readable or spec.writable, spec.name


def test_aliases_are_not_extensions_and_name_one_extension_each() -> None:
    declared = [(alias, spec.ext) for spec in FORMATS for alias in spec.aliases]
    assert not {alias for alias, _ in declared} & set(extensions())
    assert len({alias for alias, _ in declared}) == len(dict.fromkeys(declared))


def test_variants_named_by_the_spec_exist_and_can_hold_what_they_promise() -> None:
    for spec in FORMATS:
        if spec.all_locales_variant is not None:
            assert lookup(spec.ext, spec.all_locales_variant, writing=True).multi_locale, spec.name
        if spec.single_locale_variant is not None:
            assert lookup(spec.ext, spec.single_locale_variant, writing=True), spec.name


def test_an_alias_resolves_to_its_extension_with_every_variant(xyz_alias) -> None:
    assert canonical_ext(".JSN") == "json"
    assert lookup("jsn", "i18next").variant == "i18next"
    assert lookup("jsn", "jsn") is lookup("json", "")
    assert aliases_of("json") == ["jsn"]


def test_an_alias_exports_like_its_extension(xyz_alias) -> None:
    options = ExportOptions(locale="fr", exported_at=None, no_comments=True)
    assert export_file(rich_catalogue(("fr",)), "jsn", "", options).data == \
        export_file(rich_catalogue(("fr",)), "json", "", options).data


@pytest.mark.parametrize(("locale", "android"), [("fr", "fr"), ("pt-BR", "pt-rBR"), ("es-419", "es-r419"),
                                                  ("sr-Latn", "b+sr+Latn"), ("zh-Hans-CN", "b+zh+Hans+CN")])
def test_archive_path_placeholders(locale: str, android: str) -> None:
    spec = FormatSpec("xml", "", "X", "text/xml", archive_path="values-{android}/{language}/{locale_}.{ext}")
    language = locale.split("-")[0]
    assert archive_path(spec, locale, "demo") == f"values-{android}/{language}/{locale.replace('-', '_')}.xml"


def test_every_archive_template_formats_for_any_locale() -> None:
    for spec in FORMATS:
        path = archive_path(spec, "pt-BR", "demo")
        assert "{" not in path and ".." not in path, spec.name
        # a path without the locale is one file of every locale (xcstrings), only for multi-locale formats
        assert "pt" in path if archive_per_locale(spec) else spec.multi_locale, spec.name


def test_gettext_archive_layout_comes_from_the_spec() -> None:
    assert archive_path(lookup("po"), "pt-BR", "demo") == "pt_BR/LC_MESSAGES/demo.po"
    assert archive_path(lookup("mo"), "pt-BR", "demo") == "pt_BR/LC_MESSAGES/demo.mo"


def test_all_locales_of_plain_json_go_to_multi_and_one_locale_stays_flat() -> None:
    json_spec = lookup("json")
    assert spec_for_all_locales(json_spec, 3) == (lookup("json", "multi"), True)
    assert spec_for_all_locales(json_spec, 1) == (json_spec, False)
    assert spec_for_all_locales(lookup("json", "multi"), 1) == (json_spec, False)
    with pytest.raises(UnsupportedFormat, match="po holds a single locale; formats holding all locales: .*csv"):
        spec_for_all_locales(lookup("po"), 3)
