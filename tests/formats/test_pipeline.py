"""Export options applied by the shared pipeline: filter, status, order, fallback, index, collisions,
printf, charset, breaks, no_comments, no_expand."""
from __future__ import annotations

import csv
import io
import json

import pytest

from formats import (
    Catalogue, CharsetError, KeyCollision, OptionError, ReadOptions, Translation, Unit, UnsupportedFormat, export_file,
    read_file,
)

from formats.unique import UniqueNames

from .samples import options


def make(*units: Unit, locales: tuple[str, ...] = ("en", "fr")) -> Catalogue:
    """A catalogue of the given units."""
    return Catalogue(source_locale="en", locales=list(locales), units=list(units), project="P")


def text_unit(unit_id: str, en: str | None = None, fr: str | None = None, *, tags=(), flag: str = "", **fields) -> Unit:
    """A singular unit with optional English and French texts."""
    translations = {}
    if en is not None:
        translations["en"] = Translation(en)
    if fr is not None:
        translations["fr"] = Translation(fr, flag=flag)
    return Unit(id=unit_id, tags=list(tags), translations=translations, **fields)


def selected(catalogue: Catalogue, **fields) -> list[str]:
    """The IDs of the units an export selects, read from its CSV rows (one per unit, translated or not)."""
    fields.setdefault("locale", "fr")
    rows = csv.reader(io.StringIO(export_file(catalogue, "csv", "", options(**fields)).data.decode()))
    return [row[0] for row in list(rows)[1:]]


def flat_json(catalogue: Catalogue, variant: str = "i18next", **fields) -> dict:
    """The catalogue exported as flat key/value JSON (French unless told otherwise), parsed.

    Untranslated units are left out, as in every key/value export (no null is ever written).
    """
    fields.setdefault("locale", "fr")
    fields.setdefault("no_expand", True)
    return json.loads(export_file(catalogue, "json", variant, options(**fields)).data)


TAGGED = make(
    text_unit("web", "Web", "Toile", tags=["web"]),
    text_unit("both", "Both", "Les deux", tags=["web", "mobile"]),
    text_unit("mobile", "Mobile", "Mobile", tags=["mobile"]),
    text_unit("none", "None", "Aucun"),
)


# --- filter ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("", ["web", "both", "mobile", "none"]),
        ("web", ["web", "both"]),
        ("web,mobile", ["web", "both", "mobile"]),  # any of the listed tags
        ("*", ["web", "both", "mobile"]),  # any tag at all
        ("!web", ["mobile", "none"]),
        ("!*", ["none"]),
        ("mobile,!web", ["mobile"]),
        (" web , !mobile ", ["web"]),
    ],
)
def test_tag_filter(expression: str, expected: list[str]) -> None:
    assert list(flat_json(TAGGED, filter=expression)) == expected


def test_tag_filter_is_named_in_the_banner() -> None:
    text = export_file(TAGGED, "po", "", options(locale="fr", filter="web")).data.decode()
    assert "# Tagged: web\n" in text


# --- status ------------------------------------------------------------------------------------

STATUSES = make(
    text_unit("done", "Done", "Fait"),
    text_unit("fuzzy", "Fuzzy", "Flou", flag="fuzzy"),
    text_unit("wrong", "Wrong", "Faux", flag="incorrect"),
    text_unit("blank", "Blank", ""),
    text_unit("missing", "Missing"),
)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("", ["done", "fuzzy", "wrong", "blank", "missing"]),
        ("all", ["done", "fuzzy", "wrong", "blank", "missing"]),
        ("translated", ["done", "fuzzy", "wrong"]),  # flagged translations are still translated
        ("untranslated", ["missing"]),
        ("blank-translation", ["blank"]),
        ("translated,blank-translation", ["done", "fuzzy", "wrong", "blank"]),
        ("fuzzy", ["fuzzy"]),
        ("flagged", ["fuzzy", "wrong"]),
        ("!fuzzy", ["done", "wrong", "blank", "missing"]),
        ("translated,!fuzzy", ["done", "wrong"]),
        ("!flagged,!untranslated", ["done", "blank"]),
        ("incorrect,fuzzy", ["fuzzy", "wrong"]),
    ],
)
def test_status_filter(status: str, expected: list[str]) -> None:
    assert selected(STATUSES, status=status) == expected


def test_status_in_a_multi_locale_export_keeps_units_matching_in_any_locale_and_only_matching_translations() -> None:
    catalogue = make(
        Unit(id="everywhere", translations={"en": Translation("A"), "fr": Translation("B"), "de": Translation("C")}),
        Unit(id="no-german", translations={"en": Translation("D"), "fr": Translation("E")}),
        Unit(id="source-only", translations={"en": Translation("F")}),
        locales=("en", "fr", "de"),
    )
    data = json.loads(export_file(catalogue, "json", "multi", options(all_locales=True, status="untranslated")).data)
    assert list(data["de"]) == ["no-german", "source-only"]
    assert data["fr"] == {"no-german": "", "source-only": ""}  # "E" is translated: not selected (#26)


# --- order -------------------------------------------------------------------------------------


def test_order_by_creation_keeps_catalogue_order_and_by_id_sorts() -> None:
    catalogue = make(text_unit("zeta", "Z", "z"), text_unit("alpha", "A", "a"), text_unit("mid", "M", "m"))
    assert list(flat_json(catalogue, order="created")) == ["zeta", "alpha", "mid"]
    assert list(flat_json(catalogue, order="id")) == ["alpha", "mid", "zeta"]


def test_unknown_order_is_refused_with_the_valid_values() -> None:
    with pytest.raises(OptionError, match="created, id"):
        flat_json(TAGGED, order="random")


# --- fallback ----------------------------------------------------------------------------------


def test_fallback_fills_only_untranslated_units() -> None:
    data = flat_json(STATUSES, fallback="en")
    assert data["missing"] == "Missing"  # untranslated: filled
    assert data["blank"] == ""  # a blank translation is not missing
    assert data["fuzzy"] == "Flou"  # nor is a flagged one


def test_fallback_maps_plural_forms_to_the_target_locale() -> None:
    plural = Unit(id="files", plural=True, translations={"en": Translation("%d file", {"one": "%d file", "other": "%d files"})})
    data = flat_json(make(plural, locales=("en", "ru")), "", locale="ru", fallback="en")
    assert data["files"] == {"one": "%d file", "few": "%d files", "many": "%d files"}


def test_status_is_judged_before_the_fallback_fills_gaps() -> None:
    assert list(flat_json(STATUSES, status="untranslated", fallback="en")) == ["missing"]


# --- index -------------------------------------------------------------------------------------


def test_index_text_uses_the_source_text_and_the_id_when_there_is_none() -> None:
    catalogue = make(text_unit("greet", "Hello", "Bonjour"), text_unit("nosource", None, "Sans source"))
    assert flat_json(catalogue, index="text") == {"Hello": "Bonjour", "nosource": "Sans source"}


def test_index_alias_uses_the_alias_and_the_id_when_there_is_none() -> None:
    catalogue = make(
        text_unit("greet", "Hello", "Bonjour", aliases={"android": "greeting_text"}),
        text_unit("bye", "Bye", "Au revoir"),
    )
    assert flat_json(catalogue, index="android") == {"greeting_text": "Bonjour", "bye": "Au revoir"}


# --- collisions --------------------------------------------------------------------------------

DUPLICATES = make(
    text_unit("first", "Same", "Premier"),
    text_unit("second", "Same", "Second"),
    text_unit("third", "Other", "Troisième"),
)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("overwrite", {"Same": "Second", "Other": "Troisième"}),
        ("legacy", {"Same": "Second", "Other": "Troisième"}),
        ("ignore", {"Same": "Premier", "Other": "Troisième"}),
        ("auto", {"Same": "Premier", "Same-2": "Second", "Other": "Troisième"}),
    ],
)
def test_duplicate_text_keys_per_collision_mode(mode: str, expected: dict) -> None:
    assert flat_json(DUPLICATES, index="text", collisions=mode) == expected


def test_collision_fail_names_the_key_and_both_assets() -> None:
    with pytest.raises(KeyCollision, match="key 'Same' is used by assets 'first' and 'second'"):
        flat_json(DUPLICATES, index="text", collisions="fail")


def test_auto_suffix_skips_keys_already_taken() -> None:
    catalogue = make(text_unit("a", "K", "1"), text_unit("b", "K-2", "2"), text_unit("c", "K", "3"))
    assert flat_json(catalogue, index="text", collisions="auto") == {"K": "1", "K-2": "2", "K-3": "3"}


def test_same_text_in_different_contexts_does_not_collide_in_po() -> None:
    catalogue = make(
        text_unit("verb", "Open", "Ouvrir", context="verb"),
        text_unit("adjective", "Open", "Ouvert", context="adjective"),
    )
    text = export_file(catalogue, "po", "", options(locale="fr", collisions="fail")).data.decode()
    assert text.count('msgid "Open"') == 2


NESTING = make(text_unit("a", "A", "a"), text_unit("a.b", "AB", "ab"), text_unit("x.y", "XY", "xy"))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("auto", {"a": "a", "a.b": "ab", "x": {"y": "xy"}}),
        ("legacy", {"a": "a", "a.b": "ab", "x": {"y": "xy"}}),
        ("ignore", {"a": "a", "x": {"y": "xy"}}),
        ("overwrite", {"a": {"b": "ab"}, "x": {"y": "xy"}}),
    ],
)
def test_nesting_conflicts_per_collision_mode(mode: str, expected: dict) -> None:
    assert flat_json(NESTING, no_expand=False, collisions=mode) == expected


def test_nesting_conflict_with_fail_names_both_keys() -> None:
    with pytest.raises(KeyCollision, match="key 'a.b' .* conflicts with key 'a'"):
        flat_json(NESTING, no_expand=False, collisions="fail")


def test_auto_nesting_conflicts_read_back_to_the_same_keys() -> None:
    deep = make(text_unit("x.a", "1", "1"), text_unit("x.a.b", "2", "2"), text_unit("x.c", "3", "3"))
    data = flat_json(deep, no_expand=False)
    assert data == {"x": {"a": "1", "a.b": "2", "c": "3"}}
    read = read_file("json", "", json.dumps(data).encode(), ReadOptions(locale="fr"))
    assert [u.id for u in read.units] == ["x.a", "x.a.b", "x.c"]


def test_no_expand_means_no_nesting_conflict() -> None:
    assert flat_json(NESTING, no_expand=True, collisions="fail") == {"a": "a", "a.b": "ab", "x.y": "xy"}


def test_unknown_collision_mode_is_refused() -> None:
    with pytest.raises(OptionError, match="overwrite, ignore, fail, auto, legacy"):
        flat_json(NESTING, collisions="merge")


# --- printf ------------------------------------------------------------------------------------


def test_printf_option_converts_every_text_from_the_unit_style() -> None:
    catalogue = make(
        text_unit("php", "%1$s has %2$d files", "%1$s a %2$d fichiers", printf="php"),
        text_unit("detected", "Hello %@", "Bonjour %@"),
        text_unit("plain", "100% sure", "Sûr à 100%"),
    )
    assert flat_json(catalogue, printf="icu") == {
        "php": "{0} a {1, number, integer} fichiers",
        "detected": "Bonjour {0}",
        "plain": "Sûr à 100%",  # no placeholder: left alone
    }
    po = export_file(catalogue, "po", "", options(locale="fr", printf="icu")).data.decode()
    assert 'msgid "{0} has {1, number, integer} files"' in po  # source texts too, so msgid and msgstr agree


def test_unknown_printf_style_is_refused() -> None:
    with pytest.raises(OptionError, match="php, java, objc, icu, python"):
        flat_json(TAGGED, printf="c")


# --- charset and line breaks -------------------------------------------------------------------


def test_charset_reencodes_the_output() -> None:
    catalogue = make(text_unit("cafe", "Cafe", "Café"))
    data = export_file(catalogue, "json", "", options(locale="fr", charset="latin1")).data
    assert data.decode("latin-1") == '{\n    "cafe": "Café"\n}\n'
    assert export_file(catalogue, "json", "", options(locale="fr", charset="latin1")).content_type == (
        "application/json; charset=ISO-8859-1"
    )


def test_charset_failure_names_character_and_key_never_a_question_mark() -> None:
    catalogue = make(text_unit("cafe", "Cafe", "Café"), text_unit("yen", "Yen", "5 ¥ ≈ 0,03 €"))
    with pytest.raises(CharsetError, match=r"character '≈' \(U\+2248\) of key 'yen' cannot be encoded in iso8859-1"):
        export_file(catalogue, "json", "", options(locale="fr", charset="latin1"))


def test_unknown_charset_is_refused() -> None:
    with pytest.raises(CharsetError, match="unknown charset 'klingon'"):
        flat_json(TAGGED, charset="klingon")


@pytest.mark.parametrize(("breaks", "ending"), [("Unix", b"\n"), ("DOS", b"\r\n"), ("Mac", b"\r"), ("dos", b"\r\n")])
def test_line_breaks(breaks: str, ending: bytes) -> None:
    data = export_file(TAGGED, "po", "", options(locale="fr", breaks=breaks)).data
    lines = data.split(ending)
    assert lines[0] == b"# Loco po export: Gettext PO"
    assert len(lines) > 20
    others = {b"\n", b"\r\n", b"\r"} - {ending}
    assert all(other not in data.replace(ending, b"") for other in others)
    assert read_file("po", "", data, ReadOptions()).unit("Web").translation("fr").text == "Toile"


def test_unknown_line_break_style_is_refused() -> None:
    with pytest.raises(OptionError, match="Unix, DOS or Mac"):
        flat_json(TAGGED, breaks="Amiga")


# --- comments and expansion --------------------------------------------------------------------


@pytest.mark.parametrize(("ext", "variant", "marker"), [
    ("po", "", "# Loco po export"), ("js", "", "* Loco js export"), ("sql", "", "-- Loco sql export"),
    ("html", "", "Loco html export"),
])
def test_no_comments_drops_the_banner(ext: str, variant: str, marker: str) -> None:
    with_banner = export_file(TAGGED, ext, variant, options(locale="fr")).data.decode()
    without = export_file(TAGGED, ext, variant, options(locale="fr", no_comments=True)).data.decode()
    assert marker in with_banner and "Exported by: Tester" in with_banner
    assert marker not in without and "Exported by" not in without


def test_sql_no_comments_also_drops_the_commented_table_definition() -> None:
    text = export_file(TAGGED, "sql", "", options(locale="fr", no_comments=True)).data.decode()
    assert "CREATE TABLE" not in text and text.startswith("SET character_set_client")


def test_no_expand_controls_nesting_of_dotted_ids() -> None:
    catalogue = make(text_unit("menu.file.open", "Open", "Ouvrir"))
    assert flat_json(catalogue, no_expand=False) == {"menu": {"file": {"open": "Ouvrir"}}}
    assert flat_json(catalogue, no_expand=True) == {"menu.file.open": "Ouvrir"}


def test_template_export_has_keys_without_translations() -> None:
    data = json.loads(export_file(TAGGED, "json", "", options(template=True)).data)
    assert data == {"web": "", "both": "", "mobile": "", "none": ""}


def test_all_locales_needs_a_multi_locale_format() -> None:
    with pytest.raises(UnsupportedFormat, match=r"po holds a single locale; formats holding all locales: json \(multi\), csv"):
        export_file(TAGGED, "po", "", options(all_locales=True))


def test_export_does_not_modify_the_catalogue() -> None:
    catalogue = make(text_unit("a", "Hello %s", None, printf="php"), text_unit("b", "Same", "x"), text_unit("c", "Same", "y"))
    before = repr(catalogue)
    export_file(catalogue, "json", "", options(locale="fr", fallback="en", printf="icu", index="text"))
    assert repr(catalogue) == before


def test_many_duplicate_keys_get_distinct_suffixes() -> None:
    catalogue = make(*(text_unit(f"u{number}", "Same", str(number)) for number in range(3000)))
    data = flat_json(catalogue, index="text", collisions="auto")
    assert len(data) == 3000
    assert (data["Same"], data["Same-2"], data["Same-3000"]) == ("0", "1", "2999")


def test_unique_names_are_scoped() -> None:
    names = UniqueNames()
    assert [names.claim("a"), names.claim("a"), names.claim("a", "ctx"), names.claim("a-2"), names.claim("a")] == [
        "a", "a-2", "a", "a-2-2", "a-3",
    ]
    assert names.taken("a-3") and not names.taken("a-3", "ctx")


def test_charset_is_checked_only_on_exported_locales() -> None:
    catalogue = make(
        Unit(id="hello", translations={"en": Translation("Hello"), "fr": Translation("Salut"), "ru": Translation("Привет")}),
        locales=("en", "fr", "ru"),
    )
    assert flat_json(catalogue, charset="latin1") == {"hello": "Salut"}
