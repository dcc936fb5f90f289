"""arb: Flutter Application Resource Bundle; texts are ICU messages, @key metadata notes, context, placeholders."""
from __future__ import annotations

from typing import Any, Iterator

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..icu import as_message, from_message, parse_plural, plural_message
from ..jsoncodec import dump_json, load_json
from ..options import ReadOptions
from ..reading import CatalogueBuilder, file_locale, plural_translation
from .tree import top_object


def write_arb(doc: ExportDocument) -> str:
    """Flutter ARB: @@locale, then each key with its @key metadata; plurals as ICU plural arguments."""
    locale = doc.locale or doc.source_locale
    arb: dict[str, Any] = {"@@locale": locale.replace("-", "_"), "@@last_modified": doc.exported_at.isoformat()}
    for entry in doc.entries:
        value = _arb_value(entry, doc)
        if value is None and not doc.untranslated_as_empty:
            continue  # an untranslated key is left out: gen-l10n then uses the template's text
        arb[entry.key] = "" if value is None else value
        metadata = _arb_metadata(entry)
        if metadata:
            arb["@" + entry.key] = metadata
    return dump_json(arb)


def _arb_value(entry: Entry, doc: ExportDocument) -> str | None:
    """A key's ARB text: an ICU message, an ICU plural argument, or None when untranslated.

    ARB text is ICU MessageFormat: a text that is not valid ICU as it stands (`{{name}}`, a stray brace)
    is written as a quoted literal, so that Flutter and every ICU reader show it as it was.
    """
    if not entry.unit.plural:
        text = entry.translation(doc.locale).text
        return as_message(text) if text is not None else None
    forms = entry.plural_forms(doc.locale, doc.rules(doc.locale).forms)
    quoted = {name: as_message(text, plural_form=True) for name, text in forms.items()}
    return plural_message(_arb_plural_variable(entry), quoted) if forms else None


def _arb_plural_variable(entry: Entry) -> str:
    """The ICU variable of a plural unit: the one read from an ARB file, else "count"."""
    return entry.unit.meta.get("arb.plural_variable", "count")


def _arb_metadata(entry: Entry) -> dict[str, Any]:
    """The @key object: description (notes), context, placeholders (declared for plurals too)."""
    unit = entry.unit
    metadata: dict[str, Any] = dict(unit.meta.get("arb.extra") or {})  # `type`, `x-…` keys read from ARB
    if unit.notes:
        metadata["description"] = unit.notes
    if unit.context:
        metadata["context"] = unit.context
    placeholders = dict(unit.meta.get("arb.placeholders") or {})
    if unit.plural:
        placeholders.setdefault(_arb_plural_variable(entry), {"type": "num"})
    if placeholders:
        metadata["placeholders"] = placeholders
    return metadata


def read_arb(data: bytes, options: ReadOptions) -> Catalogue:
    """A Flutter ARB file; @@ attributes become headers, @key metadata notes/context/placeholders."""
    tree = top_object(load_json(data))
    declared = tree.get("@@locale")
    detected = file_locale(declared, "@@locale") if isinstance(declared, str) and declared.strip() else None
    builder = CatalogueBuilder(options, "id", detected)
    headers = {key[2:]: str(value) for key, value in tree.items() if key.startswith("@@")}
    for key, value in _arb_messages(tree):
        raw_metadata = tree.get("@" + key)
        metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
        _add_arb_message(builder, key, value, metadata)
    return builder.build(headers)


# @key fields that become unit fields (the rest is kept as it was, in the unit's meta)
_ARB_MAPPED_METADATA = ("description", "context", "placeholders")


def _arb_messages(tree: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The (key, value) pairs that are messages, not @metadata."""
    for key, value in tree.items():
        if not key.startswith("@"):
            yield key, value


def _add_arb_message(builder: CatalogueBuilder, key: str, value: Any, metadata: dict[str, Any]) -> None:
    """One ARB message as a unit: a whole-text ICU plural becomes a plural unit."""
    if value is not None and not isinstance(value, str):
        raise ParseError(f"ARB key {key!r}: expected a string or null, found {type(value).__name__}")
    meta: dict[str, Any] = {}
    if isinstance(metadata.get("placeholders"), dict):
        meta["arb.placeholders"] = metadata["placeholders"]
    extra = {name: item for name, item in metadata.items() if name not in _ARB_MAPPED_METADATA}
    if extra:
        meta["arb.extra"] = extra
    plural = parse_plural(value) if value else None
    if plural is not None:
        meta["arb.plural_variable"] = plural[0]
        forms = {name: from_message(text, plural_form=True) for name, text in plural[1].items()}
        target = plural_translation(forms, builder.locale)
    else:
        target = Translation(text=from_message(value)) if value is not None else None
    builder.add(
        key, target, plural=plural is not None, meta=meta,
        notes=str(metadata.get("description") or ""), context=str(metadata.get("context") or ""),
    )
