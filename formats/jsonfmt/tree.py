"""What the JSON formats share: the top-level object, leaves read as translations, a locale's tree of values."""
from __future__ import annotations

import json
from typing import Any, Callable

from ..catalogue import Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..nesting import nest
from ..pipeline import nests_keys
from ..reading import CatalogueBuilder, add_tree, leaf_translation


def top_object(value: Any) -> dict[str, Any]:
    """The top-level object, or ParseError when the JSON is something else."""
    if not isinstance(value, dict):
        raise ParseError(f"expected a JSON object at the top level, found {type(value).__name__}")
    return value


def scalar_text(value: Any, key: str) -> str | None:
    """A leaf value as text: strings as they are, numbers and booleans in JSON spelling, null = None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    raise ParseError(f"key {key!r}: expected a string, found {type(value).__name__}")


def json_leaf(value: Any, key: str, locale: str) -> Translation | None:
    """A JSON leaf (string, null, number or plural object) as a translation."""
    return leaf_translation(value, key, locale, scalar_text)


def add_json_tree(builder: CatalogueBuilder, tree: dict[str, Any], locale: str) -> None:
    """Every leaf of a (possibly nested) object as a unit or a translation of one, in `locale`."""
    add_tree(builder, tree, locale, scalar_text)


def entry_value(entry: Entry, locale: str | None, doc: ExportDocument) -> str | dict[str, str] | None:
    """A unit's JSON value in a locale: text, plural object, or null when untranslated."""
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        return forms or None
    translation = entry.translations.get(locale) if locale else None
    return translation.text if translation is not None else None


def locale_tree(doc: ExportDocument, locale: str | None) -> dict[str, Any]:
    """The nested (or flat, per the entries' paths) object of one locale: never a null, so untranslated units
    are left out, or have an empty text where the export wants their keys (`untranslated_as_empty`)."""
    entries = doc.entries
    if locale:
        values = leaf_values(doc, locale, plural_objects(doc, locale))
    else:
        values = [entry_value(entry, locale, doc) for entry in entries]
    if doc.untranslated_as_empty:
        values = ["" if value is None else value for value in values]
    if not nests_keys(doc.spec, doc.options, doc.index):  # every path is the entry's key alone
        if None not in values:
            return dict(zip([entry.key for entry in entries], values))
        return {entry.key: value for entry, value in zip(entries, values) if value is not None}
    return nest((entry.path, value) for entry, value in zip(entries, values) if value is not None)


def leaf_values(doc: ExportDocument, locale: str, plural_value: Callable[[Entry], Any]) -> list[Any]:
    """`entry_value` of every entry in a locale, inline for singular units (this runs once per unit of large files)."""
    return [plural_value(entry) if entry.unit.plural
            else None if (found := entry.translations.get(locale)) is None else found.text
            for entry in doc.entries]


def plural_objects(doc: ExportDocument, locale: str) -> Callable[[Entry], dict[str, str] | None]:
    """`entry_value` of plural entries in a locale, the locale's plural forms fetched once one needs them."""
    forms: list[str] = []

    def plural_object(entry: Entry) -> dict[str, str] | None:
        if not forms:
            forms.extend(doc.rules(locale).forms)
        return entry.plural_forms(locale, forms) or None

    return plural_object
