"""The resource tree both ICU formats share, and how it maps to the exchange catalogue.

A bundle is a table of resources: tables (dict), arrays (list), strings (str) and other kinds
(integers, integer vectors, binaries, aliases) held as `Opaque`. Strings become units, nested tables
and arrays giving dotted keys (`menu.file`, `days.0`); a string that is exactly one ICU plural
argument is a plural unit. Other kinds carry no translatable text and are not units.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from vocabulary import locale_from_posix

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..icu import parse_plural, plural_message
from ..nesting import nest
from ..options import ReadOptions
from ..reading import CatalogueBuilder, plural_translation

# Characters ICU allows in keys (the "invariant" set genrb accepts, without the double quote).
_NOT_KEY_CHAR = re.compile(r"[^A-Za-z0-9 %&'()*+,\-./:;<=>?_]")


@dataclass(frozen=True)
class Opaque:
    """A resource that is not text (int, intvector, bin, alias, import): kept out of the catalogue."""

    kind: str
    value: Any


def resource_key(key: str) -> str:
    """A key ICU accepts: characters outside its invariant set become `_`."""
    return _NOT_KEY_CHAR.sub("_", key) or "_"


def leaves(tree: dict[str, Any] | list[Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, string) for every string of a table or array, depth first."""
    items = tree.items() if isinstance(tree, dict) else ((str(index), item) for index, item in enumerate(tree))
    for key, value in items:
        if isinstance(value, str):
            yield prefix + key, value
        elif isinstance(value, (dict, list)):
            yield from leaves(value, f"{prefix}{key}.")


def locale_of_bundle(name: str) -> str | None:
    """The locale a bundle name stands for (`fr_CA` -> `fr-CA`); None for `root` and names that are no locale."""
    name = name.strip()
    return None if not name or name.lower() == "root" else locale_from_posix(name)


def bundle_name(locale: str) -> str:
    """The bundle name ICU uses for a locale (`fr-CA` -> `fr_CA`)."""
    return locale.replace("-", "_")


def catalogue_of_tree(
    tree: dict[str, Any], options: ReadOptions, locale: str | None, notes: dict[str, str] | None = None
) -> Catalogue:
    """Units of every string of a bundle, in `locale` (None: the requested or source locale)."""
    builder = CatalogueBuilder(options, "id", detected_locale=locale)
    notes = notes or {}
    for key, text in leaves(tree):
        plural = parse_plural(text)
        if plural is not None:
            variable, forms = plural
            translation = plural_translation(forms, builder.locale)
            meta = {"icu.variable": variable} if variable != "count" else {}
            builder.add(key, translation, plural=True, notes=notes.get(key, ""), meta=meta, printf="icu")
        else:
            builder.add(key, Translation(text=text), notes=notes.get(key, ""))
    return builder.build()


def entry_text(entry: Entry, doc: ExportDocument) -> str | None:
    """An entry's string in the exported locale: plural units as one ICU plural argument."""
    locale = doc.locale or doc.source_locale
    if doc.template:
        return entry.translation(doc.source_locale).text or entry.key
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        return plural_message(entry.unit.meta.get("icu.variable", "count"), forms) if forms else None
    return entry.translation(locale).text


def tree_of_document(doc: ExportDocument) -> dict[str, Any]:
    """The nested table of the exported locale's strings (untranslated units left out)."""
    items = []
    for entry in doc.entries:
        text = entry_text(entry, doc)
        if text is not None:
            items.append((entry.path or (entry.key,), text))
    return nest(items)
