"""json chrome: Chrome/WebExtension messages.json (also recognised when read as plain json)."""
from __future__ import annotations

import re
from typing import Any

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..jsoncodec import dump_json, load_json
from ..options import ReadOptions
from ..reading import CatalogueBuilder
from .tree import top_object


_CHROME_UNSAFE = re.compile(r"[^A-Za-z0-9_@]")


def chrome_key(key: str) -> str:
    """A key Chrome accepts: characters other than ASCII letters, digits, `_` and `@` become `_`."""
    return _CHROME_UNSAFE.sub("_", key) or "_"


def looks_like_chrome(tree: dict[str, Any]) -> bool:
    """Whether every entry is {"message": string, ...}: the messages.json shape."""
    return bool(tree) and all(
        isinstance(value, dict) and isinstance(value.get("message"), str)
        and set(value) <= {"message", "description", "placeholders"}
        for value in tree.values()
    )


def read_chrome(data: bytes, options: ReadOptions) -> Catalogue:
    """Chrome/WebExtension messages.json."""
    return chrome_catalogue(top_object(load_json(data)), options)


def chrome_catalogue(tree: dict[str, Any], options: ReadOptions) -> Catalogue:
    """Units from messages.json entries: message = text, description = notes, placeholders kept in meta."""
    builder = CatalogueBuilder(options, "id")
    for key, value in tree.items():
        if not isinstance(value, dict) or not isinstance(value.get("message"), str):
            raise ParseError(f'entry {key!r}: expected an object with a "message" string')
        meta = {"chrome.placeholders": value["placeholders"]} if isinstance(value.get("placeholders"), dict) else {}
        description = value.get("description")
        builder.add(
            key, Translation(text=value["message"]),
            notes=description if isinstance(description, str) else "", meta=meta,
        )
    return builder.build()


def write_chrome(doc: ExportDocument) -> str:
    """messages.json; Chrome has no plurals: each plural form is a message of its own (pipeline.plural_forms_apart)."""
    messages: dict[str, Any] = {}
    for entry in doc.entries:
        text = _chrome_text(entry, doc)
        if text is None:
            continue
        message: dict[str, Any] = {"message": text}
        if entry.unit.notes:
            message["description"] = entry.unit.notes
        if entry.unit.meta.get("chrome.placeholders"):
            message["placeholders"] = entry.unit.meta["chrome.placeholders"]
        messages[entry.key] = message
    return dump_json(messages)


def _chrome_text(entry: Entry, doc: ExportDocument) -> str | None:
    """The message of an entry (empty in templates, None when untranslated)."""
    if doc.template:
        return ""
    return entry.translation(doc.locale).text
