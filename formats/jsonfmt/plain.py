"""json (default): key/value JSON, nested or flat dotted keys; json multi: {"en": {...}, "fr": {...}}."""
from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, is_not

from ..catalogue import Catalogue
from ..document import Entry, ExportDocument
from ..jsoncodec import MARK, dump_json, encode_marked, load_json, utf8_object
from ..options import ReadOptions
from ..pipeline import nests_keys
from ..plurals import is_locale_code
from ..reading import CatalogueBuilder
from .chrome import chrome_catalogue, looks_like_chrome
from .tree import add_json_tree, leaf_values, locale_tree, plural_objects, top_object


def read_json(data: bytes, options: ReadOptions) -> Catalogue:
    """Key/value JSON (nested or flat dotted keys); Chrome messages.json is recognised and read as such."""
    warnings: list[str] = []
    tree = top_object(load_json(data, warnings))
    if looks_like_chrome(tree):
        catalogue = chrome_catalogue(tree, options)
    else:
        builder = CatalogueBuilder(options, "id")
        add_json_tree(builder, tree, builder.locale)
        catalogue = builder.build()
    catalogue.warnings.extend(warnings)
    return catalogue


def write_json(doc: ExportDocument) -> str | bytes:
    """Key/value JSON of the target locale: texts only, untranslated units left out (a template keeps its
    keys, with empty texts) so that an app's own fallback applies and a re-import changes nothing."""
    if doc.locale and doc.entries and not nests_keys(doc.spec, doc.options, doc.index):
        flat = _flat_json(doc, doc.locale)
        if flat is not None:
            return flat
    return dump_json(locale_tree(doc, doc.locale))


def _flat_json(doc: ExportDocument, locale: str) -> str | bytes | None:
    """What `dump_json(locale_tree(...))` gives for a flat tree (or its UTF-8 bytes, when that is what the
    pipeline makes of it), built for the encoder straight away: texts, null, and marks where plural objects go
    (see `encode_marked`). None when some key or text is the mark."""
    nested: list[dict[str, str]] = []
    plural_object = plural_objects(doc, locale)

    def plural_mark(entry: Entry) -> str | None:
        found = plural_object(entry)
        if found is None:
            return None
        nested.append(found)
        return MARK

    values = leaf_values(doc, locale, plural_mark)
    keys = list(map(attrgetter("key"), doc.entries))
    if doc.untranslated_as_empty:
        values = ["" if value is None else value for value in values]
    elif None in values:
        kept = list(map(is_not, values, repeat(None)))
        keys, values = list(compress(keys, kept)), list(compress(values, kept))
    if not keys:
        return None
    if _utf8_unix(doc) and len(set(keys)) == len(keys):
        data = utf8_object(keys, values, nested)
        if data is not None:
            return data
    return encode_marked(dict(zip(keys, values)), nested, "\n", "    ", ": ", tail="\n")


def _utf8_unix(doc: ExportDocument) -> bool:
    """Whether the pipeline only encodes the writer's text as UTF-8 (no other charset, no other line ends)."""
    return doc.charset == "utf-8" and doc.options.breaks.lower() == "unix"


def read_multi(data: bytes, options: ReadOptions) -> Catalogue:
    """{locale: {key: value}}; an object whose top-level keys are not all locales reads as one locale."""
    tree = top_object(load_json(data))
    if not tree or not all(isinstance(value, dict) and is_locale_code(code) for code, value in tree.items()):
        builder = CatalogueBuilder(options, "id")
        add_json_tree(builder, tree, builder.locale)
        return builder.build()
    builder = CatalogueBuilder(options, "id", detected_source=next(iter(tree)))
    for code, values in tree.items():
        add_json_tree(builder, values, code)
    return builder.build()


def write_multi(doc: ExportDocument) -> str:
    """Every exported locale under its code; a single locale is written flat (Loco's all.json quirk)."""
    locales = doc.locales or [doc.source_locale]
    if len(locales) == 1:
        return dump_json(locale_tree(doc, locales[0]))
    return dump_json({code: locale_tree(doc, code) for code in locales})
