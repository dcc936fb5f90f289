"""The public surface: registry lookups, supported(), convert(), errors (its purity: tests/test_architecture.py)."""
from __future__ import annotations

import json

import pytest

from formats import (
    FORMATS, Catalogue, ExportOptions, NothingExtracted, OptionError, ParseError, ReadOptions, Translation, Unit,
    UnsupportedFormat, convert, export_file, read_file, supported,
)
from formats.registry import lookup

from .samples import options, rich_catalogue


def test_registry_keys_are_unique_ext_variant_pairs() -> None:
    keys = [(spec.ext, spec.variant) for spec in FORMATS]
    assert len(keys) == len(set(keys))
    assert {("po", ""), ("pot", ""), ("mo", ""), ("json", ""), ("json", "jed"), ("json", "chrome"),
            ("json", "i18next"), ("json", "multi"), ("arb", ""), ("js", "gettext"), ("js", "ng-gettext"),
            ("csv", ""), ("html", ""), ("sql", "")} <= set(keys)


@pytest.mark.parametrize(("ext", "variant"), [("json", "json"), (".JSON", "default"), ("po", "PO"), ("json", None)])
def test_default_variant_spellings(ext: str, variant: str | None) -> None:
    assert lookup(ext, variant).variant == ""


def test_unknown_extension_lists_supported_extensions() -> None:
    with pytest.raises(UnsupportedFormat, match=r"unsupported file extension 'docx'; supported for export: .*csv.*po.*sql"):
        export_file(rich_catalogue(), "docx", "", options(locale="fr"))


def test_unknown_extension_on_read_lists_only_readable_extensions() -> None:
    with pytest.raises(UnsupportedFormat, match=r"supported for reading: arb, blist, bplist, csv, ini, json, mo, php, phps, plist, po, pot, properties, res, resw, resx, strings, stringsdict, tmx, ts, txt, xcstrings, xlf, xliff, xml, yaml, yml$"):
        read_file("docx", "", b"x", ReadOptions())


def test_unknown_variant_lists_the_extension_variants() -> None:
    with pytest.raises(UnsupportedFormat, match=r"unknown format 'yaml' for \.json; supported: \(default\), multi, jed"):
        read_file("json", "yaml", b"{}", ReadOptions())


def test_write_only_format_cannot_be_read_and_says_what_can() -> None:
    with pytest.raises(UnsupportedFormat, match="sql can be exported but not read; readable formats: po, pot, mo"):
        read_file("sql", "", b"", ReadOptions())


def test_supported_describes_every_registered_format() -> None:
    records = supported()
    assert len(records) == len(FORMATS)
    po = next(r for r in records if r["ext"] == "po")
    assert po == {"ext": "po", "variant": "", "label": "Gettext PO", "readable": True, "writable": True,
                  "multi_locale": False, "content_type": "text/x-gettext-translation; charset=utf-8",
                  "default_index": "text", "aliases": [], "archive_path": "{locale_}/LC_MESSAGES/{project}.{ext}",
                  "description": po["description"],
                  "capabilities": ["plurals", "context", "notes", "flags", "untranslated", "dotted_keys", "comments",
                                   "references", "single_form_plurals", "ordered"], "variant_names": []}
    assert po["description"].startswith("GNU gettext")
    assert next(r for r in records if r["ext"] == "xml" and not r["variant"])["variant_names"] == ["android"]
    assert next(r for r in records if r["ext"] == "csv")["multi_locale"] is True


def test_a_parse_error_names_its_line_in_the_text_and_keeps_it() -> None:
    error = ParseError("unterminated string", 12)
    assert (str(error), error.line, error.reason) == ("line 12: unterminated string", 12, "unterminated string")


def test_convert_po_to_json_uses_the_file_locale() -> None:
    po = export_file(rich_catalogue(("fr",)), "po", "", options(locale="fr")).data
    converted = convert("po", "json", "", po, ReadOptions(), ExportOptions(no_expand=True))
    data = json.loads(converted.data)
    assert data["File menu.Open"] == "[fr] Open"
    assert data["%d file"] == {"one": "%d one (fr)", "other": "%d other (fr)"}
    assert converted.content_type == "application/json; charset=UTF-8"


def test_convert_json_to_po_by_text() -> None:
    converted = convert("json", "po", "", b'{"Hello": "Bonjour"}', ReadOptions(locale="fr", index="text"),
                        ExportOptions(no_comments=True))
    text = converted.data.decode()
    assert '"Language: fr\\n"' in text and 'msgid "Hello"\nmsgstr "Bonjour"' in text


def test_convert_of_a_file_without_units_raises_nothing_extracted() -> None:
    with pytest.raises(NothingExtracted):
        convert("json", "po", "", b"{}", ReadOptions(locale="fr"), ExportOptions())


def test_convert_checks_the_target_before_parsing() -> None:
    with pytest.raises(UnsupportedFormat, match="docx"):
        convert("json", "docx", "", b"not even json", ReadOptions(), ExportOptions())


def test_convert_reports_broken_source_as_format_error() -> None:
    with pytest.raises(ParseError, match="line 1"):
        convert("po", "json", "", b'msgid "unterminated\n', ReadOptions(locale="fr"), ExportOptions())


def test_export_with_default_options() -> None:
    catalogue = Catalogue(locales=["en"], units=[Unit(id="a", translations={"en": Translation("A")})])
    exported = export_file(catalogue, "json")
    assert json.loads(exported.data) == {"a": "A"}


def test_unknown_read_index_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="index must be 'id' or 'text'"):
        read_file("json", "", b'{"a": "b"}', ReadOptions(index="alias"))


def test_convert_from_a_text_indexed_source_never_nests_sentence_keys() -> None:
    po = (b'msgid ""\nmsgstr "Language: fr\\n"\n\nmsgid "Open the file. Then save it."\nmsgstr "Ouvrez. Puis."\n\n'
          b'msgid "menu.file"\nmsgstr "Fichier"\n')
    for variant in ("", "i18next"):
        data = json.loads(convert("po", "json", variant, po, ReadOptions(), ExportOptions()).data)
        assert data["Open the file. Then save it."] == "Ouvrez. Puis."
        assert data["menu.file"] == "Fichier"
    by_id = json.loads(convert("json", "json", "", b'{"a.b": "x"}', ReadOptions(locale="fr"), ExportOptions()).data)
    assert by_id == {"a": {"b": "x"}}  # ID-indexed sources still nest
