"""MySQL INSERT statements (written only), in the shape of Loco's "MySQL inserts" export.

Table `loco_<namespace>` with an `id` column and one BLOB column per locale; plural units get one row
per form with the id `key[form]`; untranslated texts are NULL.
"""
from __future__ import annotations

import re

from .banner import line_comments
from .document import ExportDocument
from .tabular import table_locales, table_rows

_MYSQL_ESCAPES = str.maketrans({
    "\\": "\\\\", "'": "\\'", '"': '\\"', "\0": "\\0", "\b": "\\b",
    "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1a": "\\Z",
})
_MYSQL_CHARSETS = {"utf-8": "utf8mb4", "iso8859-1": "latin1", "cp1252": "latin1", "ascii": "ascii", "utf-16": "utf16"}


def mysql_string(text: str | None) -> str:
    """A MySQL string literal, or NULL."""
    return "NULL" if text is None else "'" + text.translate(_MYSQL_ESCAPES) + "'"


def mysql_name(name: str) -> str:
    """A backtick-quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def table_name(doc: ExportDocument) -> str:
    """`loco_` plus the namespace (or project) reduced to lower-case word characters."""
    slug = re.sub(r"\W+", "_", (doc.namespace or "messages").lower()).strip("_")
    return "loco_" + (slug or "messages")


def write_sql(doc: ExportDocument) -> str:
    """Banner, client charset, a commented CREATE TABLE and one INSERT per row."""
    locales = table_locales(doc)
    table = mysql_name(table_name(doc))
    columns = ", ".join([mysql_name("id"), *(mysql_name(code) for code in locales)])
    parts = [line_comments(doc.banner, "-- ")]
    if doc.charset in _MYSQL_CHARSETS:
        parts.append(f"SET character_set_client = {_MYSQL_CHARSETS[doc.charset]};\n")
    if not doc.options.no_comments:
        definitions = [f"--   {mysql_name('id')} VARCHAR(255) NOT NULL,"]
        definitions += [f"--   {mysql_name(code)} BLOB," for code in locales]
        definitions.append(f"--   PRIMARY KEY ({mysql_name('id')})")
        parts.append(f"-- CREATE TABLE {table} (\n" + "\n".join(definitions) + "\n-- );\n")
    for row in table_rows(doc, locales):
        key = f"{row.entry.key}[{row.form}]" if row.form else row.entry.key
        values = ", ".join([mysql_string(key), *(mysql_string(row.texts[code]) for code in locales)])
        parts.append(f"INSERT INTO {table} ({columns}) VALUES ({values});\n")
    return "".join(parts)
