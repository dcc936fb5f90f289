"""json i18next, i18next4 (plural suffixes key_one, key_other) and i18next3 (key_plural, key_0, key_1...)."""
from __future__ import annotations

import re
from typing import Any, Callable

from ..catalogue import Catalogue
from ..document import ExportDocument
from ..jsoncodec import dump_json, load_json
from ..nesting import fold, nest
from ..options import ReadOptions
from ..plurals import plural_rules
from ..reading import CatalogueBuilder, plural_translation
from .tree import json_leaf, scalar_text, top_object


def write_i18next(doc: ExportDocument) -> str:
    """i18next v4 JSON: plural units become sibling keys with CLDR suffixes (key_one, key_other)."""
    return _write_suffixed(doc, lambda forms: [(f"_{name}", name) for name in forms])


def write_i18next3(doc: ExportDocument) -> str:
    """i18next v3 JSON: key + key_plural for two-form languages, key_0, key_1... otherwise."""
    def suffixes(forms: list[str]) -> list[tuple[str, str]]:
        if len(forms) == 2:
            return [("", forms[0]), ("_plural", forms[1])]
        return [(f"_{position}", name) for position, name in enumerate(forms)]

    return _write_suffixed(doc, suffixes)


def _write_suffixed(doc: ExportDocument, suffixes: Callable[[list[str]], list[tuple[str, str]]]) -> str:
    """Nested JSON where each plural form gets its own suffixed key."""
    locale = doc.locale or doc.source_locale
    forms = doc.rules(locale).forms
    items: list[tuple[tuple[str, ...], Any]] = []
    for entry in doc.entries:
        if not entry.unit.plural:
            items.append((entry.path, entry.translation(doc.locale).text))
            continue
        present = entry.plural_forms(doc.locale, forms)
        for suffix, name in suffixes(forms):
            items.append((entry.path[:-1] + (entry.path[-1] + suffix,), present.get(name)))
    if doc.untranslated_as_empty:
        return dump_json(nest((path, "" if text is None else text) for path, text in items))
    return dump_json(nest((path, text) for path, text in items if text is not None))  # missing: i18next falls back


_V4_SUFFIX = re.compile(r"^(.+)_(zero|one|two|few|many|other)$")
_V3_SUFFIX = re.compile(r"^(.+)_(plural|\d+)$")


def read_i18next(data: bytes, options: ReadOptions) -> Catalogue:
    """i18next v4 JSON: key_<category> siblings (with _other, or two categories or more) form a plural."""
    def categories(group: dict[str, Any], locale: str) -> dict[str, Any] | None:
        return group if "other" in group or len(group) > 1 else None

    return _read_suffixed(data, options, _V4_SUFFIX, categories)


def read_i18next3(data: bytes, options: ReadOptions) -> Catalogue:
    """i18next v3 JSON: key + key_plural, or key_0, key_1... by the locale's plural forms."""
    def categories(group: dict[str, Any], locale: str) -> dict[str, Any] | None:
        forms = plural_rules(locale).forms
        if "plural" in group:
            return {forms[0]: group.get(""), forms[-1] if len(forms) > 1 else "other": group["plural"]}
        numbered = {int(suffix): text for suffix, text in group.items() if suffix.isdigit()}
        if not numbered or max(numbered) >= len(forms):
            return None
        return {forms[position]: text for position, text in sorted(numbered.items())}

    return _read_suffixed(data, options, _V3_SUFFIX, categories, singular_in_group=True)


def _read_suffixed(
    data: bytes,
    options: ReadOptions,
    pattern: re.Pattern[str],
    categories: Callable[[dict[str, Any], str], dict[str, Any] | None],
    singular_in_group: bool = False,
) -> Catalogue:
    """Flattened keys whose suffixes group into plural units (at the first member's position)."""
    pairs = list(fold(top_object(load_json(data))))
    builder = CatalogueBuilder(options, "id")
    locale = builder.locale
    plurals = _plural_groups(pairs, pattern, categories, locale, singular_in_group)
    added: set[str] = set()
    for key, value in pairs:
        match = pattern.match(key)
        base = match.group(1) if match and match.group(1) in plurals else (key if key in plurals else None)
        if base is None:
            translation = json_leaf(value, key, locale)
            unit = builder.unit_for(key)
        elif base not in added:
            added.add(base)
            texts = {name: scalar_text(text, base) for name, text in plurals[base].items()}
            translation = plural_translation(texts, locale)
            unit = builder.unit_for(base, plural=True)
        else:
            continue
        if translation is not None:
            builder.add_translation(unit, locale, translation)
    return builder.build()


def _plural_groups(
    pairs: list[tuple[str, Any]],
    pattern: re.Pattern[str],
    categories: Callable[[dict[str, Any], str], dict[str, Any] | None],
    locale: str,
    singular_in_group: bool,
) -> dict[str, dict[str, Any]]:
    """base key -> {category: value} for the suffix groups that `categories` accepts as plurals."""
    groups: dict[str, dict[str, Any]] = {}
    for key, value in pairs:
        match = pattern.match(key)
        if match:
            groups.setdefault(match.group(1), {})[match.group(2)] = value
    if singular_in_group:
        for key, value in pairs:
            if key in groups:
                groups[key][""] = value
    return {base: forms for base, group in groups.items() if (forms := categories(group, locale))}
