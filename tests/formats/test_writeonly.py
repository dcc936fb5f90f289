"""Write-only formats: JavaScript packs (run under node), HTML table and MySQL inserts."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from formats import Catalogue, ReadOptions, Translation, Unit, UnsupportedFormat, plural_rules, read_file
from tests.support import require_tool

from .samples import export_text, plural_texts, rich_catalogue, run_tool


def run_node(tmp_path: Path, script: str) -> str:
    """Run a script with node and return its standard output."""
    node = require_tool("node")
    path = tmp_path / "check.js"
    path.write_text(script, encoding="utf-8")
    result = run_tool(node, path)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("variant", ["", "gettext", "ng-gettext"])
def test_js_is_not_readable(variant: str) -> None:
    with pytest.raises(UnsupportedFormat, match="exported but not read"):
        read_file("js", variant, b"var x = 1;", ReadOptions())


@pytest.mark.parametrize("locale", ["fr", "ru", "ar"])
def test_js_function_pack_runs_and_picks_plural_forms(tmp_path: Path, locale: str) -> None:
    pack = export_text(rich_catalogue(), "js", locale=locale)
    output = run_node(tmp_path, "var window = {};\n" + pack + """
var t = loco.t;
console.log(JSON.stringify({
  open: t("Open"), missing: t("Never translated"),
  counts: [0, 1, 2, 3, 5, 11, 21, 100].map(function (n) { return t("%d file", "%d files", n); })
}));
""")
    result = json.loads(output)
    assert result["open"] == f"[{locale}] Open"
    assert result["missing"] == "Never translated"  # untranslated falls back to the msgid
    texts = plural_texts(locale)
    rules = plural_rules(locale)
    assert result["counts"] == [texts[rules.category(n)] for n in (0, 1, 2, 3, 5, 11, 21, 100)]


def test_gettext_js_pack_is_valid_javascript_with_locale_data(tmp_path: Path) -> None:
    pack = export_text(rich_catalogue(("ru",)), "js", "gettext", locale="ru")
    output = run_node(tmp_path, "var captured; function Gettext(options) { captured = options; }\n" + pack
                      + "\nconsole.log(JSON.stringify(captured));")
    data = json.loads(output)
    messages = data["locale_data"]["messages"]
    assert messages[""] == {"lang": "ru", "plural-forms": "nplurals=3; plural=n%10==1 && n%100!=11 ? 0 : "
                                                       "n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2;"}
    assert messages["%d file"] == ["%d files", *plural_texts("ru").values()]
    assert messages["File menu\u0004Open"] == [None, "[ru] Open"]


def test_ng_gettext_pack_sets_strings_on_the_catalog(tmp_path: Path) -> None:
    pack = export_text(rich_catalogue(("fr",)), "js", "ng-gettext", locale="fr")
    output = run_node(tmp_path, """
var calls = [];
var angular = { module: function (name) { return { run: function (spec) {
  spec[1]({ setStrings: function (lang, strings) { calls.push([name, spec[0], lang, strings]); } });
} }; } };
""" + pack + "\nconsole.log(JSON.stringify(calls));")
    [[module, injected, language, strings]] = json.loads(output)
    assert (module, injected, language) == ("gettext", "gettextCatalog", "fr")
    assert strings["Hello %s"] == "[fr] Hello %s"
    assert strings["%d file"] == list(plural_texts("fr").values())
    assert strings["Open"] == {"File menu": "[fr] Open"}
    assert "Never translated" not in strings


def test_js_escapes_line_separators() -> None:
    catalogue = Catalogue(locales=["en", "fr"], units=[
        Unit(id="sep", translations={"en": Translation("a\u2028b"), "fr": Translation("c\u2029d")}),
    ])
    pack = export_text(catalogue, "js", locale="fr")
    assert "\u2028" not in pack and "\u2029" not in pack and "\\u2029" in pack


class _TableReader(HTMLParser):
    """Collects the text of every table cell, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.in_cell = False

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data: str) -> None:
        if self.in_cell:
            self.rows[-1][-1] += data


def test_html_is_a_table_of_escaped_texts() -> None:
    catalogue = Catalogue(locales=["en", "fr"], units=[
        Unit(id="tag", translations={"en": Translation("<b>bold</b> & \"q\""), "fr": Translation("<i>x</i> & 'y'")}),
    ])
    text = export_text(catalogue, "html", locale="fr")
    assert text.startswith("<!DOCTYPE html>\n")
    assert '<td class="fr">&lt;i&gt;x&lt;/i&gt; &amp; &#x27;y&#x27;</td>' in text
    reader = _TableReader()
    reader.feed(text)
    assert reader.rows == [["Key", "English", "French"], ["tag", '<b>bold</b> & "q"', "<i>x</i> & 'y'"]]


def test_html_multi_locale_rows_per_plural_form() -> None:
    reader = _TableReader()
    reader.feed(export_text(rich_catalogue(("fr", "ru")), "html", all_locales=True))
    assert reader.rows[0] == ["Key", "English", "French", "Russian"]
    plural_rows = [row for row in reader.rows if row[0].startswith("%d file") or row[0].startswith("files")]
    assert [row[0] for row in plural_rows] == ["files one", "files few", "files many", "files other"]
    assert plural_rows[1] == ["files few", "", "", "%d few (ru)"]


def test_sql_inserts_escape_quotes_backslashes_and_newlines() -> None:
    text = export_text(rich_catalogue(("fr",)), "sql", locale="fr", namespace="My App")
    assert "-- Loco sql export: MySQL inserts\n" in text
    assert "SET character_set_client = utf8mb4;\n" in text
    insert = next(line for line in text.splitlines() if line.startswith("INSERT") and "'quote'" in line)
    assert insert == (
        "INSERT INTO `loco_my_app` (`id`, `en`, `fr`) VALUES "
        "('quote', 'Say \\\"hi\\\" \\\\ wave\\nthen\\tleave', '[fr] \\\"salut\\\" \\\\ \\nfin');"
    )
    assert "('untouched', 'Never translated', NULL);" in text
    assert "('files[other]', '%d files', '%d other (fr)');" in text


def test_sql_statements_are_one_per_line() -> None:
    text = export_text(rich_catalogue(), "sql", all_locales=True, no_comments=True)
    statements = [line for line in text.splitlines() if line]
    assert statements[0].startswith("SET ")
    assert all(line.startswith("INSERT INTO `loco_sample` (`id`, `en`, `fr`, `ru`, `ar`, `ja`, `pl`) VALUES (")
               and line.endswith(");") for line in statements[1:])


def test_banner_date_is_the_rfc_2822_date_email_utils_writes() -> None:
    from datetime import datetime, timedelta, timezone
    from email.utils import format_datetime

    from formats.banner import rfc2822_date

    for moment in (datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(1999, 12, 31, 23, 59, 58),
                   datetime(2026, 7, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
                   datetime(2026, 2, 28, 12, 0, 0, tzinfo=timezone(timedelta(hours=5, minutes=45)))):
        assert rfc2822_date(moment) == format_datetime(moment)
