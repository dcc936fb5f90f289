"""The writer contract: what every writable format must do, generated over the registry (test_writer_contract.py).

Formats Gloss also reads are held to their round trip by `contract.py`. Write-only formats cannot be read back
by us, so each is read by an independent consumer of its own (`CONSUMERS`): node runs the JavaScript packs,
Python's html.parser reads the HTML table, sqlglot turns the MySQL inserts into SQLite statements that sqlite3
runs. A write-only format without a consumer fails the contract, so a new one cannot skip it. Every writer,
read back or not, is also checked for what no file may hold: a null entry, or an ICU plural without `other`.
"""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

import pytest

from formats import Catalogue, ExportOptions, Translation, Unit, export_file, plural_rules
from formats.registry import FORMATS, FormatSpec
from tests.support import require_tool

from .contract import PLURAL_TEXTS, TRICKY_TEXT

EXPORTED_AT = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
# What a text must survive: quotes, backslashes, markup, every script, line and paragraph separators.
HARD_TEXT = TRICKY_TEXT + "\nline two\ttab \u2028 sep \u2029 para 'x' \"y\" </script> ${z} %s {0}"
LONG_TEXT = ("Ünïcödé and ASCII, a long paragraph 🎉 " * 6000)[:200_000]

Read = dict[str, Any]  # key -> text, or {plural form: text}
Consumer = Callable[[bytes, str, list[str], Path], Read]


def export(catalogue: Catalogue, spec: FormatSpec, locale: str, **fields: Any) -> bytes:
    options = ExportOptions(locale=locale, index="id", project_name="Contract", exported_by="Tester",
                            exported_at=EXPORTED_AT, **fields)
    return export_file(catalogue, spec.ext, spec.variant, options).data


def catalogue(units: list[Unit], locale: str) -> Catalogue:
    return Catalogue(source_locale="en", locales=["en", locale], units=units, project="Contract")


def singular(unit_id: str, text: str | None, locale: str = "fr") -> Unit:
    translations = {"en": Translation(f"Source of {unit_id}")}
    if text is not None:
        translations[locale] = Translation(text)
    return Unit(id=unit_id, translations=translations)


def plural(unit_id: str, locale: str) -> Unit:
    texts = PLURAL_TEXTS[locale]
    return Unit(id=unit_id, plural=True, translations={
        "en": Translation(PLURAL_TEXTS["en"]["one"], dict(PLURAL_TEXTS["en"])),
        locale: Translation(next(iter(texts.values())), dict(texts))})


def sample_numbers(locale: str) -> dict[str, int]:
    """A number that picks each plural form of the locale (the smallest one)."""
    rules = plural_rules(locale)
    found: dict[str, int] = {}
    for number in range(0, 1001):
        found.setdefault(rules.category(number), number)
    return found


# --- independent consumers of the write-only formats ------------------------------------------------


def _node(tmp_path: Path, script: str) -> Any:
    path = tmp_path / "consume.js"
    path.write_text(script, encoding="utf-8")
    result = subprocess.run([require_tool("node"), str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _function_pack(data: bytes, locale: str, keys: list[str], tmp_path: Path) -> Read:
    """Loco's JavaScript function pack as an app calls it: t(key), and t(key, key, n) for each plural form."""
    numbers = sample_numbers(locale)
    script = ("var window = {};\n" + data.decode("utf-8") + f"""
var keys = {json.dumps(keys)}, numbers = {json.dumps(numbers)}, read = {{}};
keys.forEach(function (key) {{
  var forms = {{}};
  Object.keys(numbers).forEach(function (form) {{ forms[form] = loco.t(key, key, numbers[form]); }});
  read[key] = {{ text: loco.t(key), forms: forms }};
}});
console.log(JSON.stringify(read));
""")
    return _node(tmp_path, script)


def _gettext_pack(data: bytes, locale: str, keys: list[str], tmp_path: Path) -> Read:
    """The locale data a Gettext.js pack hands to `new Gettext(...)`, forms named by the locale's rules."""
    options = _node(tmp_path, "var captured; function Gettext(options) { captured = options; }\n"
                    + data.decode("utf-8") + "\nconsole.log(JSON.stringify(captured));")
    messages = options["locale_data"]["messages"]
    return {key: _named(value[1:], locale) for key, value in messages.items() if key}


def _angular_pack(data: bytes, locale: str, keys: list[str], tmp_path: Path) -> Read:
    """The strings an angular-gettext pack gives `gettextCatalog.setStrings`."""
    strings = _node(tmp_path, """var captured = {};
var angular = { module: function () { return { run: function (spec) {
  spec[1]({ setStrings: function (lang, strings) { captured = strings; } });
} }; } };
""" + data.decode("utf-8") + "\nconsole.log(JSON.stringify(captured));")
    return {key: _named(value, locale) if isinstance(value, list) else value for key, value in strings.items()}


def _named(forms: list[str], locale: str) -> str | dict[str, str]:
    """Gettext-ordered forms as {CLDR form: text}; a single form as its text."""
    names = plural_rules(locale).forms
    return forms[0] if len(forms) == 1 else dict(zip(names, forms))


class _Table(HTMLParser):
    """The text of every cell, row by row, and the plural form a key cell names."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def _html_table(data: bytes, locale: str, keys: list[str], tmp_path: Path) -> Read:
    """The HTML table as a browser's parser gives it: the target locale's column, plural rows by form."""
    table = _Table()
    table.feed(data.decode("utf-8"))
    read: Read = {}
    for row in table.rows[1:]:
        key, _, form = row[0].partition(" ")
        if form:
            read.setdefault(key, {})[form] = row[-1]
        else:
            read[key] = row[-1]
    return read


def _mysql_inserts(data: bytes, locale: str, keys: list[str], tmp_path: Path) -> Read:
    """The rows the MySQL inserts make, parsed by sqlglot's MySQL dialect and run by SQLite."""
    import sqlglot  # a test dependency (pyproject.toml): never skipped
    database = sqlite3.connect(":memory:")
    for statement in sqlglot.parse(data.decode("utf-8"), read="mysql"):
        if isinstance(statement, sqlglot.exp.Insert):
            table = statement.this.this.name
            columns = [column.name for column in statement.this.expressions]
            database.execute(f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(columns)})")
            database.execute(statement.sql(dialect="sqlite"))
            column = columns.index(locale)
    read: Read = {}
    for row in database.execute(f"SELECT * FROM {table}"):
        match = re.fullmatch(r"(.*)\[(zero|one|two|few|many|other)\]", row[0])
        if match:
            read.setdefault(match.group(1), {})[match.group(2)] = row[column]
        else:
            read[row[0]] = row[column]
    return read


CONSUMERS: dict[tuple[str, str], Consumer] = {
    ("js", ""): _function_pack, ("js", "gettext"): _gettext_pack, ("js", "ng-gettext"): _angular_pack,
    ("html", ""): _html_table, ("sql", ""): _mysql_inserts,
}


def write_only_specs() -> list[FormatSpec]:
    return [spec for spec in FORMATS if spec.writable and not spec.readable]


class Written:
    """One write-only spec under test: exports a catalogue and reads it back with its consumer."""

    def __init__(self, spec: FormatSpec, tmp_path: Path) -> None:
        self.spec = spec
        self.tmp_path = tmp_path
        self.consumer = CONSUMERS.get((spec.ext, spec.variant))

    def __call__(self, units: list[Unit], locale: str = "fr") -> Read:
        assert self.consumer is not None, f"{self.spec.name} is written only and has no independent consumer"
        data = export(catalogue(units, locale), self.spec, locale)
        read = self.consumer(data, locale, [unit.id for unit in units], self.tmp_path)
        if self.spec.ext == "js" and not self.spec.variant:  # the function pack: what t() returns
            return {key: value["forms"] if any(unit.id == key and unit.plural for unit in units) else value["text"]
                    for key, value in read.items()}
        return read


def hard_texts_survive(written: Written) -> None:
    read = written([singular("hard", HARD_TEXT), singular("plain", "Bonjour")])
    assert read["hard"] == HARD_TEXT and read["plain"] == "Bonjour"


def a_very_long_text_survives(written: Written) -> None:
    assert written([singular("long", LONG_TEXT)])["long"] == LONG_TEXT


def an_empty_text_stays_empty(written: Written) -> None:
    if not written.spec.capabilities.blank:
        pytest.skip(f"{written.spec.name} declares it cannot tell an empty text from a missing one")
    assert written([singular("blank", ""), singular("full", "x")])["blank"] == ""


def _plural_forms_survive(written: Written, locale: str) -> None:
    read = written([plural("files", locale), singular("single", "x", locale)], locale)
    # tables (HTML, SQL) have a row for every form of any locale: the source's `other` row is empty in Russian
    assert {form: text for form, text in read["files"].items() if text} == PLURAL_TEXTS[locale]


def russian_plural_forms_survive(written: Written) -> None:
    _plural_forms_survive(written, "ru")


def arabic_plural_forms_survive(written: Written) -> None:
    _plural_forms_survive(written, "ar")


WRITE_ONLY_CHECKS: tuple[Callable[[Written], None], ...] = (
    hard_texts_survive, a_very_long_text_survives, an_empty_text_stays_empty, russian_plural_forms_survive,
    arabic_plural_forms_survive,
)


# --- what no writer may write -------------------------------------------------------------------------

# The families whose syntax has a null (JSON `null`, YAML `~`, PHP `NULL`), by content type, and how an
# independent parser reads them. SQL's NULL is the database's own "no value" for a missing locale column.
def _php_value(data: bytes, tmp_path: Path) -> Any:
    path = tmp_path / "export.php"
    path.write_bytes(data)
    script = ("$lang = []; $r = include $argv[1]; $c = get_defined_constants(true)['user'] ?? [];"
              "echo json_encode([$r, $lang, $c]);")
    result = subprocess.run([require_tool("php"), "-r", script, str(path)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _yaml_value(data: bytes, tmp_path: Path) -> Any:
    import yaml

    return yaml.safe_load(data)


NULL_HOLDERS: dict[str, Callable[[bytes, Path], Any]] = {
    "application/json": lambda data, tmp_path: json.loads(data),
    "application/x-yaml": _yaml_value,
    "application/x-httpd-php-source": _php_value,
}


def nulls_in(value: Any, path: str = "") -> list[str]:
    """Where a parsed document holds a null."""
    if value is None:
        return [path or "(the document)"]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in nulls_in(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [found for position, item in enumerate(value) for found in nulls_in(item, f"{path}[{position}]")]
    return []


def null_holding_specs() -> list[FormatSpec]:
    return [spec for spec in FORMATS if spec.writable and spec.content_type.split(";")[0] in NULL_HOLDERS]


def null_cases() -> list[dict[str, Any]]:
    """Export option sets whose files hold untranslated units, blank texts and plurals missing forms."""
    return [{}, {"template": True}, {"status": "untranslated"}, {"status": "all"}]


def icu_plural_clauses(text: str) -> list[list[str]]:
    """The selector keys of every ICU `{x, plural, ...}` argument in a text (nested ones too)."""
    found = []
    for match in re.finditer(r"\{\s*[\w.]+\s*,\s*(?:plural|selectordinal|select)\s*,", text):
        depth, position, keys, key_start = 1, match.end(), [], match.end()
        while position < len(text) and depth:
            character = text[position]
            if character == "{":
                if depth == 1:
                    keys.append(text[key_start:position].strip().split()[-1] if text[key_start:position].strip()
                                else "")
                depth += 1
            elif character == "}":
                depth -= 1
                if depth == 1:
                    key_start = position + 1
            position += 1
        found.append(keys)
    return found
