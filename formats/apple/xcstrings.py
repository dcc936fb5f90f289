"""Xcode String Catalogs (`.xcstrings`): one JSON file holding every locale.

    {"sourceLanguage": "en", "version": "1.0",
     "strings": {key: {"comment": notes, "extractionState": ..., "shouldTranslate": false,
                       "localizations": {locale: {"stringUnit": {"state": ..., "value": ...}}
                                                | {"variations": {"plural": {category: {"stringUnit": ...}}}}
                                                | {"stringUnit": {"value": "%#@n@"}, "substitutions": {...}}}}}}

A key without a source-language localization has the key itself as source text (Xcode's rule), so
it is written only when it differs from the key. States and Loco flags:

| state        | flag          |
|--------------|---------------|
| translated   | (none)        |
| needs_review | fuzzy (also written for incomplete, unapproved, rejected, which Xcode cannot tell apart) |
| new          | provisional   |
| stale        | incorrect     |

Plurals: `variations.plural` with the locale's CLDR categories and `other` always present; a string
made of one plural substitution (`%#@count@`) also reads as a plural unit, its substitution kept in
meta to be written back. A string with several plural substitutions, or text around one
(`%#@posts@ in %#@threads@`), is a unit holding the format plus one plural unit per variable, `KEY:name`
(`plural.VARIABLES`): each variable's forms are editable, and the writer puts them back as
substitutions with their argNum and formatSpecifier. What has no place in the catalogue (device
variations, substitutions that are not plural, per-key extraction state) is kept in unit meta and counted in `Catalogue.warnings`
(the import answer lists them); the empty key Xcode extracts from `Text("")` cannot be an asset and is
skipped, with a warning too. Keys with line breaks (SwiftUI keys are source texts) get asset IDs
with `\\n`-style escapes, turned back into the key on export (`vocabulary.asset_id_of_text`).

Writing mirrors Xcode's own output: keys sorted, two-space indents, `" : "` separators, no
trailing newline, version "1.0".
"""
from __future__ import annotations

import re
from typing import Any

from vocabulary import asset_id_of_text, text_of_asset_id

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..jsoncodec import dump_json, load_json
from ..options import ReadOptions
from ..reading import CatalogueBuilder, plural_translation
from .plural import (VARIABLE, VARIABLE_OF, VARIABLES, apple_plural_forms, read_plural_forms, variable_shapes,
                     variable_unit_id, variables_by_string)

STATES: tuple[str, ...] = ("new", "translated", "needs_review", "stale")
FLAG_OF_STATE = {"translated": "", "needs_review": "fuzzy", "new": "provisional", "stale": "incorrect"}
STATE_OF_FLAG = {flag: state for state, flag in FLAG_OF_STATE.items()}
VERSION = "1.0"
_SUBSTITUTION = re.compile(r"%(?:\d+\$)?#@([^@]+)@")


def catalog_key(entry: Entry, source_locale: str) -> str:
    """The key an entry is written under: its source text when the asset ID was made from it, else the ID."""
    source = entry.translation(source_locale).text
    if source and source != entry.key and asset_id_of_text(source) == entry.key:
        return source
    return text_of_asset_id(entry.key)


# --- reading ---------------------------------------------------------------------------------------


def read_xcstrings(data: bytes, options: ReadOptions) -> Catalogue:
    """Every locale of a String Catalog."""
    tree = load_json(data)
    if not isinstance(tree, dict) or not isinstance(tree.get("strings"), dict):
        raise ParseError('a String Catalog is a JSON object with a "strings" object')
    source = tree.get("sourceLanguage")
    if not isinstance(source, str) or not source.strip():
        raise ParseError('a String Catalog needs a "sourceLanguage"')
    builder = CatalogueBuilder(options, "id", detected_source=source)
    kept, skipped = 0, 0
    for key, record in tree["strings"].items():
        if not key:
            skipped += 1
            continue
        if not isinstance(record, dict):
            raise ParseError(f"String Catalog key {key!r}: expected an object")
        kept += _add_key(builder, key, record, source)
    catalogue = builder.build({"sourceLanguage": source, "version": str(tree.get("version", ""))})
    if kept:
        catalogue.warnings.append(
            f"{kept} device variations, substitutions or key attributes (extractionState, shouldTranslate) have no "
            "place in an asset: kept for a file-to-file conversion only, their first text imported")
    if skipped:
        catalogue.warnings.append(f"{skipped} empty key skipped (an asset ID cannot be empty)")
    return catalogue


def _add_key(builder: CatalogueBuilder, key: str, record: dict[str, Any], source: str) -> int:
    """One key with all its localizations; returns how many things were kept in meta unmapped."""
    localizations = record.get("localizations") or {}
    if not isinstance(localizations, dict):
        raise ParseError(f"String Catalog key {key!r}: \"localizations\" must be an object")
    meta: dict[str, Any] = {
        f"xcstrings.{name}": record[name] for name in ("extractionState", "shouldTranslate") if name in record
    }
    kept = len(meta)  # key attributes Gloss has no field for
    read: dict[str, Translation] = {}
    variables: dict[str, dict[str, Translation]] = {}  # name -> locale -> forms, for a string with variables
    shapes: dict[str, dict[str, Any]] = {}
    plural = False
    for locale, localization in localizations.items():
        substituted = _substituted(key, locale, localization)
        if substituted is not None:
            read[locale], per_variable = substituted
            for name, (forms, shape) in per_variable.items():
                variables.setdefault(name, {})[locale] = forms
                shapes.setdefault(name, shape)
            continue
        translation, is_plural, unmapped = _localization(key, locale, localization)
        if unmapped is not None:
            meta.setdefault("xcstrings.kept", {})[locale] = unmapped
            kept += 1
        if translation is not None:
            read[locale] = translation
            plural = plural or is_plural
    comment = record.get("comment")
    notes = comment if isinstance(comment, str) else ""
    source_translation = read.pop(source, None)
    if source_translation is not None and source_translation.text == key:
        meta["xcstrings.explicitSource"] = True  # Xcode omits such a localization unless it was made explicit
    source_translation = source_translation or Translation(text=key)
    if variables:
        meta[VARIABLES] = [{"name": name, **shapes[name]} for name in variables]
    unit = builder.add(asset_id_of_text(key), source=source_translation, notes=notes, plural=plural, meta=meta)
    for locale, translation in read.items():
        builder.add_translation(unit, locale, translation)
    for name, by_locale in variables.items():
        companion = builder.add(variable_unit_id(unit.id, name), source=by_locale.pop(source, None), plural=True,
                                meta={VARIABLE_OF: unit.id, VARIABLE: name})
        for locale, forms in by_locale.items():
            builder.add_translation(companion, locale, forms)
    return kept


def _substituted(key: str, locale: str, value: Any) -> tuple[Translation, dict[str, tuple[Translation, dict]]] | None:
    """A stringUnit whose text holds plural substitutions and more than one of them, or text around one:
    (the format, {variable: (forms, shape)}) in the text's order. None for anything else."""
    if not isinstance(value, dict) or value.get("variations") or not isinstance(value.get("substitutions"), dict):
        return None
    substitutions = value["substitutions"]
    text, flag = _string_unit(key, locale, value.get("stringUnit"))
    names = list(dict.fromkeys(_SUBSTITUTION.findall(text)))
    if not names or set(names) != set(substitutions) or (len(names) == 1 and _SUBSTITUTION.fullmatch(text)):
        return None
    per_variable: dict[str, tuple[Translation, dict]] = {}
    for name in names:
        substitution = substitutions[name]
        plural = (substitution.get("variations") or {}).get("plural") if isinstance(substitution, dict) else None
        forms = _plural_variation(key, locale, plural) if isinstance(plural, dict) else None
        if forms is None:
            return None  # not plural: kept whole in meta, as device variations are
        per_variable[name] = (forms, {field: item for field, item in substitution.items() if field != "variations"})
    return Translation(text=text, flag=flag), per_variable


def _string_unit(key: str, locale: str, value: Any) -> tuple[str, str]:
    """(text, flag) of a stringUnit object."""
    if not isinstance(value, dict) or not isinstance(value.get("value"), str):
        raise ParseError(f'String Catalog key {key!r}, locale {locale!r}: a stringUnit needs a "value" string')
    state = value.get("state", "translated")
    if state not in FLAG_OF_STATE:
        raise ParseError(
            f"String Catalog key {key!r}, locale {locale!r}: unknown state {state!r} (known: {', '.join(STATES)})"
        )
    return value["value"], FLAG_OF_STATE[state]


def _localization(key: str, locale: str, value: Any) -> tuple[Translation | None, bool, dict | None]:
    """(translation, is plural, what was kept unmapped) of one locale's localization."""
    if not isinstance(value, dict):
        raise ParseError(f"String Catalog key {key!r}, locale {locale!r}: expected an object")
    variations = value.get("variations") or {}
    substitutions = value.get("substitutions") or {}
    if isinstance(variations, dict) and isinstance(variations.get("plural"), dict) and len(variations) == 1:
        return _plural_variation(key, locale, variations["plural"]), True, None
    if "stringUnit" in value and not variations:
        text, flag = _string_unit(key, locale, value["stringUnit"])
        single = _single_substitution(key, locale, text, substitutions)
        if single is not None:
            return single
        return (Translation(text=text, flag=flag), False,
                {"text": text, "localization": value} if substitutions else None)
    # Device (or other) variations: the first text found stands for the unit, the rest is kept.
    first = _first_text(value)
    return (Translation(text=first) if first is not None else None), False, {"text": first, "localization": value}


def _plural_variation(key: str, locale: str, plural: dict[str, Any], **extra: str) -> Translation | None:
    """A plural translation from {category: {"stringUnit": ...}}; the first non-translated state flags it."""
    texts: dict[str, str] = {}
    flags: list[str] = []
    for category, variant in plural.items():
        if not isinstance(variant, dict):
            raise ParseError(f"String Catalog key {key!r}, locale {locale!r}: plural {category!r} must be an object")
        texts[category], flag = _string_unit(key, locale, variant.get("stringUnit"))
        flags.append(flag)
    forms = read_plural_forms(texts, locale)
    return plural_translation(forms, locale, flag=next((flag for flag in flags if flag), ""), **extra)


def _single_substitution(key: str, locale: str, text: str, substitutions: Any) -> tuple | None:
    """A string made of one plural substitution, read as a plural unit (None when it is anything else)."""
    if not isinstance(substitutions, dict) or len(substitutions) != 1:
        return None
    name, substitution = next(iter(substitutions.items()))
    plural = (substitution.get("variations") or {}).get("plural") if isinstance(substitution, dict) else None
    if _SUBSTITUTION.findall(text) != [name] or not isinstance(plural, dict):
        return None
    translation = _plural_variation(key, locale, plural)
    shape = {field: value for field, value in substitution.items() if field != "variations"}
    return translation, True, {"substitution": {"name": name, "format": text, **shape}}


def _first_text(value: Any) -> str | None:
    """The first stringUnit value found depth-first (the `other` device when there is one)."""
    if isinstance(value, dict):
        unit = value.get("stringUnit")
        if isinstance(unit, dict) and isinstance(unit.get("value"), str):
            return unit["value"]
        ordered = sorted(value.items(), key=lambda item: item[0] != "other")
        for _, child in ordered:
            found = _first_text(child)
            if found is not None:
                return found
    return None


# --- writing ---------------------------------------------------------------------------------------


def _string_unit_of(text: str, flag: str) -> dict[str, str]:
    """A stringUnit object for a text and a Loco flag."""
    return {"state": STATE_OF_FLAG.get(flag, "needs_review" if flag else "translated"), "value": text}


def _localization_of(entry: Entry, locale: str, doc: ExportDocument,
                     variables: dict[str, Entry]) -> dict[str, Any] | None:
    """The localization object of an entry in one locale, None when untranslated (variables: the entries of
    its plural variables, when it is a string with substitutions)."""
    translation = entry.translation(locale)
    kept = (entry.unit.meta.get("xcstrings.kept") or {}).get(locale)
    if kept and "localization" in kept and kept.get("text") == translation.text:
        return kept["localization"]  # unchanged since read: write back what could not be mapped
    shapes = variable_shapes(entry.unit.meta)
    if shapes and translation.text is not None:
        return _substituted_localization(translation, locale, doc, shapes, variables)
    if entry.unit.plural:
        forms = apple_plural_forms(entry, locale, doc.rules(locale).forms)
        if not forms:
            return None
        plural = {category: {"stringUnit": _string_unit_of(text, translation.flag)} for category, text in forms.items()}
        substitution = (kept or {}).get("substitution")
        if substitution:
            shape = {field: value for field, value in substitution.items() if field not in ("name", "format")}
            return {
                "stringUnit": _string_unit_of(substitution["format"], translation.flag),
                "substitutions": {substitution["name"]: {**shape, "variations": {"plural": plural}}},
            }
        return {"variations": {"plural": plural}}
    if translation.text is None:
        return None
    return {"stringUnit": _string_unit_of(translation.text, translation.flag)}


def _substituted_localization(translation: Translation, locale: str, doc: ExportDocument, shapes: list[dict],
                              variables: dict[str, Entry]) -> dict[str, Any]:
    """A format with its plural substitutions, each from its variable's entry (those without forms left out)."""
    substitutions: dict[str, Any] = {}
    for shape in shapes:
        variable = variables.get(shape["name"])
        forms = apple_plural_forms(variable, locale, doc.rules(locale).forms) if variable else {}
        if forms:
            flag = variable.translation(locale).flag if variable else ""
            plural = {category: {"stringUnit": _string_unit_of(text, flag)} for category, text in forms.items()}
            fields = {field: value for field, value in shape.items() if field != "name"}
            substitutions[shape["name"]] = {**fields, "variations": {"plural": plural}}
    localization: dict[str, Any] = {"stringUnit": _string_unit_of(translation.text or "", translation.flag)}
    if substitutions:
        localization["substitutions"] = substitutions
    return localization


def _record(entry: Entry, doc: ExportDocument, variables: dict[str, Entry]) -> dict[str, Any]:
    """The object of one key."""
    key = catalog_key(entry, doc.source_locale)
    record: dict[str, Any] = {}
    if entry.unit.notes:
        record["comment"] = entry.unit.notes
    for name in ("extractionState", "shouldTranslate"):
        if f"xcstrings.{name}" in entry.unit.meta:
            record[name] = entry.unit.meta[f"xcstrings.{name}"]
    localizations: dict[str, Any] = {}
    for locale in [doc.source_locale] + [code for code in doc.locales if code != doc.source_locale]:
        if doc.template and locale != doc.source_locale:
            continue
        source_is_key = locale == doc.source_locale and not entry.unit.plural and not variables and (
            entry.translation(locale).text == key and not entry.translation(locale).flag
            and not entry.unit.meta.get("xcstrings.explicitSource"))
        if source_is_key:
            continue
        localization = _localization_of(entry, locale, doc, variables)
        if localization is not None:
            localizations[locale] = localization
    if localizations:
        record["localizations"] = localizations
    return record


def write_xcstrings(doc: ExportDocument) -> str:
    """A String Catalog of the source and every exported locale, laid out as Xcode writes it."""
    variables = variables_by_string(doc.entries)
    written = {entry.unit.id for entry in doc.entries}
    strings = {catalog_key(entry, doc.source_locale): _record(entry, doc, variables.get(entry.unit.id, {}))
               for entry in doc.entries if entry.unit.meta.get(VARIABLE_OF) not in written}
    catalog = {"sourceLanguage": doc.source_locale, "strings": strings, "version": VERSION}
    return dump_json(_sorted(catalog), indent="  ", colon=" : ", final_newline=False)


def _sorted(value: Any) -> Any:
    """Objects with their keys sorted at every level, as Xcode writes them."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    return value
