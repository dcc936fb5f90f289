"""Apple formats: .strings, .stringsdict, .xcstrings, plist and bplist — round trips, independent
validators (GNUstep sfparse, libplist's plistutil, plistlib), corpus imports and broken input."""
from __future__ import annotations

import json
import plistlib
from pathlib import Path

import pytest

from formats import Catalogue, ParseError, ReadOptions, Translation, Unit, export_file, plural_rules, read_file
from tests.support import corpus_path, require_tool

from .samples import options, rich_catalogue, run_tool


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    """Save bytes under tmp_path."""
    path = tmp_path / name
    path.write_bytes(data)
    return path


def exported(ext: str, locale: str = "fr", **fields) -> bytes:
    """The rich sample catalogue exported in one locale."""
    return export_file(rich_catalogue(), ext, "", options(locale=locale, **fields)).data


def read(ext: str, data: bytes, **fields) -> Catalogue:
    """A file read with the given ReadOptions fields."""
    return read_file(ext, "", data, ReadOptions(**fields))


def texts(catalogue: Catalogue, locale: str) -> dict[str, str | None]:
    """unit id -> text in a locale."""
    return {unit.id: unit.translation(locale).text for unit in catalogue.units}


# --- .strings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("locale", ["fr", "ru", "ja", "en"])
def test_strings_export_passes_gnustep_sfparse(tmp_path: Path, locale: str) -> None:
    sfparse = require_tool("sfparse")
    data = exported("strings", locale)
    # a plural unit is an entry per plural form (the format has no plural syntax: pipeline.plural_forms_apart)
    expected = sum(len(unit.translation(locale).plurals) or 1 for unit in rich_catalogue().units
                   if unit.translation(locale).translated)
    result = run_tool(sfparse, write(tmp_path, "Localizable.strings", data))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"seems ok ({expected} entries)" in result.stdout + result.stderr


def test_sfparse_rejects_what_our_reader_rejects(tmp_path: Path) -> None:
    """The independent parser and ours agree on a missing semicolon (so sfparse's verdict means something)."""
    sfparse = require_tool("sfparse")
    broken = b'"a" = "b"\n"c" = "d";\n'
    assert run_tool(sfparse, write(tmp_path, "bad.strings", broken)).returncode != 0
    with pytest.raises(ParseError, match=r"line 1: expected ';' after the value of 'a', found '\"'"):
        read("strings", broken, locale="fr")


def test_strings_escapes_and_comments_read_as_apple_defines_them() -> None:
    data = (
        '/* Banner-less file */\n'
        '// line comment note\n'
        '"quote" = "say \\"hi\\" \\\\ now\\n\\tthen";\n'
        '/* multi\n   line */\n'
        '"unicode" = "caf\\U00e9 \\u00e9 \\UD83C\\UDF89";\n'
        'bare_key = "x";\n'
        '"same";\n'
        '"objc" = "%1$@ has %2$lld files";\n'
    ).encode()
    catalogue = read("strings", data, locale="fr")
    assert texts(catalogue, "fr") == {
        "quote": 'say "hi" \\ now\n\tthen', "unicode": "café é 🎉", "bare_key": "x", "same": "same",
        "objc": "%1$@ has %2$lld files",
    }
    notes = {unit.id: unit.notes for unit in catalogue.units}
    assert notes["quote"] == "Banner-less file\nline comment note"
    assert notes["unicode"] == "multi\nline"
    assert catalogue.unit("objc").printf == "objc"
    assert catalogue.unit("quote").printf == ""


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_strings_read_utf16_and_utf8_with_bom(codec: str) -> None:
    text = '/* note */\n"hello" = "Grüße 🎉";\n'
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    catalogue = read("strings", data, locale="de")
    assert texts(catalogue, "de") == {"hello": "Grüße 🎉"}
    assert catalogue.units[0].notes == "note"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_strings_utf16_without_bom_is_refused_naming_the_byte(codec: str) -> None:
    with pytest.raises(ParseError, match=r"UTF-16 .*without a byte-order mark \(NUL byte at offset [01]\)"):
        read("strings", '"a" = "b";\n'.encode(codec), locale="fr")


@pytest.mark.parametrize(("data", "message"), [
    (b'"a" = "b";\n"c" = "d"\n', r"line 2: expected ';' after the value of 'c', found the end of the file"),
    (b'"a" "b";\n', r"line 1: expected '=' after the key 'a'"),
    (b'"a" = "unterminated;\n', r'line 1: string opened with " is never closed'),
    (b'/* open comment\n"a" = "b";\n', r"line 1: comment opened with /\* is never closed"),
    (b'"a" = ;\n', r"line 1: expected the value of 'a'"),
])
def test_broken_strings_name_the_line(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read("strings", data, locale="fr")


def test_strings_export_writes_notes_banner_and_keeps_comment_delimiters_out() -> None:
    catalogue = rich_catalogue(("fr",))
    catalogue.units[1].notes = "closes */ early?"
    text = export_file(catalogue, "strings", "", options(locale="fr")).data.decode()
    assert text.startswith("/*\n * Loco strings export: iOS Localizable.strings\n")
    assert '/* Shown on the home page */\n"greeting" = "[fr] Hello %s";' in text
    assert "closes * / early?" in text
    assert read("strings", text.encode(), locale="fr").unit("menu.open").notes == "closes * / early?"


def test_strings_objc_printf_conversion() -> None:
    text = exported("strings", "fr", printf="objc").decode()
    assert '"greeting" = "[fr] Hello %@";' in text


STRINGS_CORPUS = {  # file: entries (the InfoPlist.strings of kDrive is a banner without entries)
    "strings/desktop-kDrive__src_gui4_macOS_kDriveResources_Localizable_fr.lproj_Localizable.strings": 461,
    "strings/ios-kMail__Mail_Localizable_fr.lproj_InfoPlist.strings": 8,
    "strings/desktop-kDrive__src_gui4_macOS_kDrive_Resources_en.lproj_InfoPlist.strings": 0,
}


@pytest.mark.parametrize(("name", "count"), STRINGS_CORPUS.items())
def test_strings_corpus_files_import_with_their_entry_counts(tmp_path: Path, name: str, count: int) -> None:
    data = corpus_path(name).read_bytes()
    catalogue = read("strings", data, locale="fr")
    assert len(catalogue.units) == count
    assert all(unit.translation("fr").translated for unit in catalogue.units)
    sfparse = require_tool("sfparse")  # the independent parser agrees on the count
    result = run_tool(sfparse, write(tmp_path, "corpus.strings", data))
    assert f"({count} entries)" in result.stdout + result.stderr or count == 0


def test_strings_corpus_notes_drop_loco_ids_but_keep_developer_notes() -> None:
    name = "strings/desktop-kDrive__src_gui4_macOS_kDriveResources_Localizable_fr.lproj_Localizable.strings"
    catalogue = read("strings", corpus_path(name).read_bytes(), locale="fr")
    assert catalogue.unit("aboutKDrive").translation("fr").text == "À propos de kDrive"
    assert catalogue.unit("aboutKDrive").notes == ""
    assert catalogue.unit("accessibilitySearchSheetLabel").notes == (
        "VoiceOver reads this when the search sheet opens so the user knows what modal they entered")


# --- stringsdict ---------------------------------------------------------------------------------


def _plistutil_value(tmp_path: Path, data: bytes, to: str) -> object:
    """Our plist converted by libplist's plistutil into the other flavour, then parsed by plistlib."""
    plistutil = require_tool("plistutil")
    source = write(tmp_path, "in.plist", data)
    target = tmp_path / "out.plist"
    result = run_tool(plistutil, "-i", source, "-o", target, "-f", to)
    assert result.returncode == 0, result.stderr
    converted = target.read_bytes()
    assert converted.startswith(b"bplist00" if to == "bin" else b"<?xml")
    return plistlib.loads(converted)


@pytest.mark.parametrize("locale", ["en", "fr", "ru", "ar", "ja", "pl"])
def test_stringsdict_export_has_one_variable_per_plural_with_the_locale_categories(tmp_path: Path, locale: str) -> None:
    data = exported("stringsdict", locale)
    value = plistlib.loads(data)
    assert value == _plistutil_value(tmp_path, data, "bin")  # libplist reads the same dictionary
    rule_entry = value["files"]
    assert rule_entry["NSStringLocalizedFormatKey"] == "%#@value@"
    rule = rule_entry["value"]
    assert rule["NSStringFormatSpecTypeKey"] == "NSStringPluralRuleType"
    assert rule["NSStringFormatValueTypeKey"] == "d"
    from formats import plural_rules
    forms = plural_rules(locale).forms
    assert set(rule) - {"NSStringFormatSpecTypeKey", "NSStringFormatValueTypeKey"} == set(forms) | {"other"}
    assert value["menu.open"] == {"NSStringLocalizedFormatKey": rich_catalogue().units[1].translation(locale).text}


def test_stringsdict_fills_other_for_locales_whose_integers_never_use_it() -> None:
    value = plistlib.loads(exported("stringsdict", "ru"))
    rule = value["files"]["value"]
    assert rule["other"] == rule["many"]
    back = read("stringsdict", exported("stringsdict", "ru"), locale="ru")
    assert set(back.unit("files").translation("ru").plurals) == {"one", "few", "many"}


def test_stringsdict_with_two_variables_is_a_format_and_a_plural_unit_per_variable() -> None:
    source = {
        "summary": {
            "NSStringLocalizedFormatKey": "%#@files@ in %#@folders@",
            "files": {"NSStringFormatSpecTypeKey": "NSStringPluralRuleType", "NSStringFormatValueTypeKey": "lld",
                      "one": "%lld file", "other": "%lld files"},
            "folders": {"NSStringFormatSpecTypeKey": "NSStringPluralRuleType", "NSStringFormatValueTypeKey": "lld",
                        "one": "%lld folder", "other": "%lld folders"},
        },
    }
    catalogue = read("stringsdict", plistlib.dumps(source), locale="en")
    unit = catalogue.unit("summary")
    assert not unit.plural and unit.translation("en").text == "%#@files@ in %#@folders@"
    assert [variable["name"] for variable in unit.meta["apple.variables"]] == ["files", "folders"]
    assert catalogue.unit("summary:files").plural
    assert catalogue.unit("summary:folders").translation("en").plurals == {"one": "%lld folder", "other": "%lld folders"}
    from formats import convert
    again = plistlib.loads(convert("stringsdict", "stringsdict", "", plistlib.dumps(source),
                                   ReadOptions(locale="en")).data)
    assert again == source


def test_stringsdict_corpus_file_imports_its_two_plurals() -> None:
    name = "stringsdict/desktop-kDrive__src_gui4_macOS_kDriveResources_Localizable_fr.lproj_Localizable.stringsdict"
    catalogue = read("stringsdict", corpus_path(name).read_bytes(), locale="fr")
    assert [unit.id for unit in catalogue.units] == ["buttonRemoveFileExclusionRule", "informationBlockSynchroErrorTitle"]
    assert all(unit.plural for unit in catalogue.units)
    assert catalogue.units[0].translation("fr").plurals == {
        "one": "Supprimer (%lld élément)", "other": "Supprimer (%lld éléments)"}


# --- plist / bplist ------------------------------------------------------------------------------


@pytest.mark.parametrize(("ext", "to"), [("plist", "bin"), ("bplist", "xml")])
def test_plist_exports_read_identically_by_plistlib_and_libplist(tmp_path: Path, ext: str, to: str) -> None:
    data = exported(ext, "ru")
    value = plistlib.loads(data)
    assert value == _plistutil_value(tmp_path, data, to)
    assert value["files"] == {"one": "%d one (ru)", "few": "%d few (ru)", "many": "%d many (ru)"}
    assert value["quote"] == '[ru] "salut" \\ \nfin'
    assert "untouched" not in value  # untranslated


def test_bplist_is_binary_and_blist_is_an_import_alias() -> None:
    data = exported("bplist", "fr")
    assert data.startswith(b"bplist00")
    assert texts(read("blist", data, locale="fr"), "fr") == texts(read("bplist", data, locale="fr"), "fr")


def test_plist_reads_nested_dictionaries_and_arrays_as_dotted_keys() -> None:
    source = {"title": "Titre", "menu": {"open": "Ouvrir", "recent": ["Un", "Deux"]}, "count": 3, "on": True}
    catalogue = read("plist", plistlib.dumps(source, fmt=plistlib.FMT_BINARY), locale="fr")
    assert texts(catalogue, "fr") == {"title": "Titre", "menu.open": "Ouvrir", "menu.recent.0": "Un",
                                      "menu.recent.1": "Deux"}


@pytest.mark.parametrize("cut", [8, 20, 40, -1, -8, -31])
def test_truncated_binary_plist_is_refused_naming_the_bytes(cut: int) -> None:
    data = exported("bplist", "fr")
    with pytest.raises(ParseError, match=r"binary property list is (truncated|corrupt).*(byte|bytes)"):
        read("bplist", data[:cut], locale="fr")


@pytest.mark.parametrize(("data", "message"), [
    (b"<?xml version='1.0'?><plist><dict><key>a</key><string>b</dict></plist>", r"line 1: invalid XML"),
    (b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n<plist><string>&e;</string>'
     b"</plist>", r"property list"),
    (b"hello", r"line 1: not a property list"),
    (plistlib.dumps(["a", "b"]), r"top level must be a dictionary, found list"),
])
def test_broken_plists_are_clear_errors(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read("plist", data, locale="fr")


# Every <string> of the file is a unit (numbers and booleans are not text): 60 and 48 <string> elements.
PLIST_CORPUS = {"plist/ios-kDrive__Info.plist": 60, "plist/ios-kMail__Info.plist": 48}


@pytest.mark.parametrize(("name", "count"), PLIST_CORPUS.items())
def test_info_plist_corpus_imports_every_string_value(name: str, count: int) -> None:
    data = corpus_path(name).read_bytes()
    catalogue = read("plist", data, locale="en")
    assert len(catalogue.units) == count == data.count(b"<string>")
    assert catalogue.unit("CFBundleURLTypes.0.CFBundleURLSchemes.0") is not None
    value = plistlib.loads(data)
    usage = {key for key in value if key.endswith("UsageDescription")}
    assert usage and usage <= {unit.id for unit in catalogue.units}
    assert catalogue.unit("CFBundleShortVersionString").translation("en").text == value["CFBundleShortVersionString"]


# --- xcstrings -----------------------------------------------------------------------------------

XCODE_KEYS = {"comment", "extractionState", "localizations", "shouldTranslate"}


def _strict_json(data: bytes) -> dict:
    """JSON parsed strictly: UTF-8, no duplicate keys, no NaN, no comments."""
    def no_duplicates(pairs: list) -> dict:
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), f"duplicate keys {keys}"
        return dict(pairs)

    def no_constants(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constants)


def _check_string_unit(unit: dict) -> None:
    assert set(unit) == {"state", "value"} and unit["state"] in ("new", "translated", "needs_review", "stale")
    assert isinstance(unit["value"], str)


def check_xcode_structure(data: bytes) -> dict:
    """Assert that a String Catalog is laid out and keyed as Xcode writes it; returns it parsed."""
    catalog = _strict_json(data)
    assert list(catalog) == ["sourceLanguage", "strings", "version"] and catalog["version"] == "1.0"
    text = data.decode("utf-8")
    assert text == json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False, sort_keys=True)
    for key, record in catalog["strings"].items():
        assert set(record) <= XCODE_KEYS, key
        for locale, localization in record.get("localizations", {}).items():
            assert set(localization) <= {"stringUnit", "variations", "substitutions"}, (key, locale)
            if "stringUnit" in localization:
                _check_string_unit(localization["stringUnit"])
            plural = localization.get("variations", {}).get("plural")
            if plural is not None:
                assert "other" in plural and set(plural) <= {"zero", "one", "two", "few", "many", "other"}
                for variant in plural.values():
                    assert set(variant) == {"stringUnit"}
                    _check_string_unit(variant["stringUnit"])
    return catalog


def test_xcstrings_export_of_all_locales_is_structured_as_xcode_writes_it() -> None:
    data = export_file(rich_catalogue(), "xcstrings", "", options(all_locales=True)).data
    catalog = check_xcode_structure(data)
    assert catalog["sourceLanguage"] == "en"
    greeting = catalog["strings"]["greeting"]
    assert greeting["comment"] == "Shown on the home page"
    assert greeting["localizations"]["fr"]["stringUnit"] == {"state": "needs_review", "value": "[fr] Hello %s"}
    assert catalog["strings"]["menu.close"]["localizations"]["fr"]["stringUnit"]["state"] == "new"
    ru = catalog["strings"]["files"]["localizations"]["ru"]["variations"]["plural"]
    assert list(ru) == ["few", "many", "one", "other"] and ru["other"] == ru["many"]  # sorted, as Xcode does
    assert "fr" not in catalog["strings"]["untouched"]["localizations"]


def test_xcstrings_export_of_one_locale_holds_source_and_that_locale() -> None:
    catalog = check_xcode_structure(exported("xcstrings", "fr"))
    locales = {code for record in catalog["strings"].values() for code in record.get("localizations", {})}
    assert locales == {"en", "fr"}


@pytest.mark.parametrize(("state", "flag"), [("translated", ""), ("needs_review", "fuzzy"), ("new", "provisional"),
                                             ("stale", "incorrect")])
def test_xcstrings_states_map_to_flags_both_ways(state: str, flag: str) -> None:
    source = {"sourceLanguage": "en", "version": "1.0", "strings": {
        "Hello": {"localizations": {"de": {"stringUnit": {"state": state, "value": "Hallo"}}}}}}
    catalogue = read("xcstrings", json.dumps(source).encode())
    translation = catalogue.unit("Hello").translation("de")
    assert (translation.text, translation.flag) == ("Hallo", flag)
    assert catalogue.unit("Hello").translation("en").text == "Hello"  # the key is the source text
    again = _strict_json(export_file(catalogue, "xcstrings", "", options(all_locales=True)).data)
    assert again["strings"] == source["strings"]


def test_xcstrings_substitution_plural_reads_as_plural_and_writes_back() -> None:
    localization = {
        "stringUnit": {"state": "translated", "value": "%#@count@"},
        "substitutions": {"count": {"argNum": 1, "formatSpecifier": "lld", "variations": {"plural": {
            "one": {"stringUnit": {"state": "translated", "value": "%arg fichier"}},
            "other": {"stringUnit": {"state": "translated", "value": "%arg fichiers"}}}}}},
    }
    source = {"sourceLanguage": "en", "version": "1.0", "strings": {"files": {"localizations": {"fr": localization}}}}
    catalogue = read("xcstrings", json.dumps(source).encode())
    unit = catalogue.unit("files")
    assert unit.plural and unit.translation("fr").plurals == {"one": "%arg fichier", "other": "%arg fichiers"}
    again = _strict_json(export_file(catalogue, "xcstrings", "", options(all_locales=True)).data)
    assert again["strings"]["files"]["localizations"]["fr"] == localization


def test_xcstrings_device_variations_are_kept_and_reported() -> None:
    device = {"variations": {"device": {
        "mac": {"stringUnit": {"state": "translated", "value": "Cliquez"}},
        "other": {"stringUnit": {"state": "translated", "value": "Touchez"}}}}}
    source = {"sourceLanguage": "en", "version": "1.0", "strings": {"Tap": {"localizations": {"fr": device}}}}
    catalogue = read("xcstrings", json.dumps(source).encode())
    assert catalogue.unit("Tap").translation("fr").text == "Touchez"  # the `other` device stands for the unit
    assert catalogue.warnings and catalogue.warnings[0].startswith("1 device variations")
    again = _strict_json(export_file(catalogue, "xcstrings", "", options(all_locales=True)).data)
    assert again["strings"]["Tap"]["localizations"]["fr"] == device


@pytest.mark.parametrize(("data", "message"), [
    (b'{"strings": {}}', "sourceLanguage"),
    (b'{"sourceLanguage": "en", "strings": {"a": {"localizations": {"fr": {"stringUnit": {"state": "done", '
     b'"value": "x"}}}}}}', r"unknown state 'done'"),
    (b'{"sourceLanguage": "en", "strings": {"a": ', r"line 1: invalid JSON"),
])
def test_broken_xcstrings_are_clear_errors(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read("xcstrings", data)


def test_real_string_catalog_imports_every_key_and_round_trips_unchanged() -> None:
    data = corpus_path("xcstrings/CubeTime__Localizable.xcstrings").read_bytes()
    catalogue = read("xcstrings", data)
    original = json.loads(data)
    # 289 keys; the empty key ("" from Text("")) cannot be an asset ID and is skipped, and said so.
    assert len(original["strings"]) == 289 and len(catalogue.units) == 288
    assert "1 empty key skipped (an asset ID cannot be empty)" in catalogue.warnings
    assert catalogue.locales == ["en", "zh-Hans"]
    translated = [unit for unit in catalogue.units if unit.translation("zh-Hans").translated]
    assert len(translated) == 282  # 283 zh-Hans string units, one of them under the empty key
    assert catalogue.unit("Add New Session").translation("en").text == "Add new session"
    assert catalogue.unit("Add New Session").translation("zh-Hans").text == "新建分组"
    again = export_file(catalogue, "xcstrings", "", options(all_locales=True)).data
    del original["strings"][""]
    assert check_xcode_structure(again) == original


def test_xcode_shaped_catalog_round_trips_byte_for_byte() -> None:
    """Plural `other` forms of locales whose integers never use them (ru: fractions) are kept too."""
    forms = {"one": "%lld файл", "few": "%lld файла", "many": "%lld файлов", "other": "%lld файла (дробь)"}
    catalog = {"sourceLanguage": "en", "strings": {
        "%lld files": {"comment": "File count", "localizations": {
            "en": {"variations": {"plural": {"one": {"stringUnit": {"state": "translated", "value": "%lld file"}},
                                             "other": {"stringUnit": {"state": "translated", "value": "%lld files"}}}}},
            "ru": {"variations": {"plural": {name: {"stringUnit": {"state": "needs_review", "value": text}}
                                             for name, text in sorted(forms.items())}}}}},
        "Done": {"localizations": {"ru": {"stringUnit": {"state": "translated", "value": "Готово"}}}},
    }, "version": "1.0"}
    data = json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False, sort_keys=True).encode()
    catalogue = read("xcstrings", data)
    assert catalogue.unit("%lld files").translation("ru").plurals == forms
    assert catalogue.unit("%lld files").translation("ru").flag == "fuzzy"
    assert export_file(catalogue, "xcstrings", "", options(all_locales=True)).data == data


@pytest.mark.parametrize("ext", ["bplist", "strings", "stringsdict", "xcstrings"])
def test_corrupted_files_fail_only_with_format_errors(ext: str) -> None:
    """Flipped bytes give a ParseError or a catalogue, never another exception (which would be a 500)."""
    import random
    data = export_file(rich_catalogue(("fr",)), ext, "", options(locale="fr")).data
    generator = random.Random(11)
    for _ in range(300):
        corrupted = bytearray(data)
        for _ in range(generator.randint(1, 4)):
            corrupted[generator.randrange(len(corrupted))] = generator.randrange(256)
        try:
            read(ext, bytes(corrupted), locale="fr")
        except ParseError:
            pass


def test_utf16_strings_whose_byte_order_mark_was_saved_twice_read_as_xcode_reads_them() -> None:
    text = '/* Notification */\n"greeting" = "Привет";\n'
    for codec in ("utf-16-le", "utf-16-be"):
        bom = "\ufeff".encode(codec)
        catalogue = read_file("strings", "", bom + bom + text.encode(codec), ReadOptions(locale="ru"))
        assert catalogue.unit("greeting").translation("ru").text == "Привет"


COTEDITOR = "xcstrings/coteditor-CotEditor__CotEditor_Localizables_Document_Window_Document.xcstrings"
TWO_VARIABLES = "FolderFind.Metrics.message"  # "%#@arg1@ in %#@arg2@", argNum 1 and 2, lld, in 18 locales


def test_a_string_with_two_plural_substitutions_is_a_format_and_one_plural_unit_per_variable() -> None:
    catalogue = read("xcstrings", corpus_path(COTEDITOR).read_bytes())
    unit = catalogue.unit(TWO_VARIABLES)
    assert not unit.plural and unit.translation("de").text == "%#@arg1@ in %#@arg2@"
    assert unit.meta["apple.variables"] == [{"name": "arg1", "argNum": 1, "formatSpecifier": "lld"},
                                            {"name": "arg2", "argNum": 2, "formatSpecifier": "lld"}]
    files = catalogue.unit(f"{TWO_VARIABLES}:arg2")
    assert files.plural and files.translation("de").plurals == {"one": "%arg Datei", "other": "%arg Dateien"}
    assert set(catalogue.unit(f"{TWO_VARIABLES}:arg1").translation("cs").plurals) == {"one", "few", "many", "other"}


def test_strings_with_plural_substitutions_survive_xcstrings_to_gloss_to_xcstrings_intact() -> None:
    original = json.loads(corpus_path(COTEDITOR).read_bytes())
    catalogue = read("xcstrings", corpus_path(COTEDITOR).read_bytes())
    written = json.loads(export_file(catalogue, "xcstrings", "", options(all_locales=True)).data)
    substituted = [key for key, record in original["strings"].items()
                   if any("substitutions" in localization for localization in record.get("localizations", {}).values())]
    assert TWO_VARIABLES in substituted
    for key in substituted:
        assert written["strings"][key] == _integer_forms_only(original["strings"][key]), key
    assert not any(":" in key and key.split(":")[0] in original["strings"] for key in written["strings"])


def _integer_forms_only(record: dict) -> dict:
    """A key's record without the plural categories only fractions use (Czech `many`): Gloss keeps the forms
    integers take, as Loco does, plus `other`, which Apple requires."""
    record = json.loads(json.dumps(record))
    for locale, localization in record.get("localizations", {}).items():
        kept = {*plural_rules(locale).forms, "other"}
        for substitution in localization.get("substitutions", {}).values():
            plural = substitution["variations"]["plural"]
            for category in [category for category in plural if category not in kept]:
                del plural[category]
    return record


@pytest.mark.parametrize("locale", ["de", "cs", "ja"])
def test_stringsdict_from_a_string_catalog_defines_every_variable_with_its_argument_and_specifier(
        tmp_path: Path, locale: str) -> None:
    catalogue = read("xcstrings", corpus_path(COTEDITOR).read_bytes())
    data = export_file(catalogue, "stringsdict", "", options(locale=locale)).data
    entry = _plistutil_value(tmp_path, data, "bin")[TWO_VARIABLES]
    assert entry["NSStringLocalizedFormatKey"].count("$#@") == 2
    for position, name in ((1, "arg1"), (2, "arg2")):
        assert f"%{position}$#@{name}@" in entry["NSStringLocalizedFormatKey"]
        rule = entry[name]
        assert rule["NSStringFormatSpecTypeKey"] == "NSStringPluralRuleType"
        assert rule["NSStringFormatValueTypeKey"] == "lld" and "other" in rule
    back = read("stringsdict", data, locale=locale)
    by_name = lambda variables: sorted(variables, key=lambda variable: variable["name"])  # noqa: E731 (text order)
    assert by_name(back.unit(TWO_VARIABLES).meta["apple.variables"]) == \
        by_name(catalogue.unit(TWO_VARIABLES).meta["apple.variables"])
    kept = {*plural_rules(locale).forms, "other"}
    forms = catalogue.unit(f"{TWO_VARIABLES}:arg1").translation(locale).plurals
    assert back.unit(f"{TWO_VARIABLES}:arg1").translation(locale).plurals == {
        category: text for category, text in forms.items() if category in kept}


def test_escape_heavy_strings_value_is_read_whole() -> None:
    """Thousands of escapes in one quoted string are all unescaped (the scan that once went quadratic)."""
    data = ('"k" = "' + '\\"\\n\\u00e9' * 20000 + '";\n').encode()
    assert texts(read("strings", data, locale="fr"), "fr") == {"k": '"\né' * 20000}
