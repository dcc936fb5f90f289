"""Rows of a table (one per unit, one per plural form of plural units) for CSV, HTML and SQL writers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .document import Entry, ExportDocument
from .plurals import CATEGORIES


@dataclass(frozen=True)
class Row:
    """One line of a table: the entry, its plural form ("" for singular units) and a text per locale."""

    entry: Entry
    form: str
    texts: dict[str, str | None]


def table_locales(doc: ExportDocument) -> list[str]:
    """The locale columns: every exported locale (the source column comes first), none for templates."""
    if doc.template:
        return []
    return [doc.source_locale] + [code for code in doc.locales if code != doc.source_locale]


def table_rows(doc: ExportDocument, locales: list[str]) -> Iterator[Row]:
    """Rows in entry order; a plural unit gets a row per CLDR form used by any of the locales."""
    forms = _form_union(doc, locales)
    for entry in doc.entries:
        if not entry.unit.plural:
            yield Row(entry, "", {code: entry.translation(code).text for code in locales})
            continue
        per_locale = {code: entry.plural_forms(code, doc.rules(code).forms) for code in locales}
        for form in forms:
            yield Row(entry, form, {code: per_locale[code].get(form) for code in locales})


def _form_union(doc: ExportDocument, locales: list[str]) -> list[str]:
    """The plural categories of all the locales (the source's for templates), in canonical order."""
    used = {name for code in (locales or [doc.source_locale]) for name in doc.rules(code).forms}
    return [name for name in CATEGORIES if name in used]
