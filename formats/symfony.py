"""Symfony's pipe plural syntax (`one file|%count% files`), shared by the YAML and PHP symfony variants.

Forms are written in CLDR order, the order Symfony's plural rules index them; reading drops interval
prefixes (`{0}`, `[1,Inf[`) and takes a text with a lone `|` (`||` is Symfony's literal pipe) as plural
forms when it has no more parts than the locale has forms.
"""
from __future__ import annotations

import re
from typing import Any

from .document import Entry, ExportDocument
from .plurals import plural_rules

_PIPE = re.compile(r"(?<!\|)\|(?!\|)")  # a lone pipe; `||` is Symfony's escaped literal pipe
_INTERVAL = re.compile(r"^\s*(\{[^}]*\}|[\[\]][^\[\]]*[\[\]])\s*")  # `{0}`, `[1,Inf[`, `]1,19]`


def symfony_plurals(tree: Any, locale: str) -> Any:
    """The tree with every pipe-separated text (at most as many parts as the locale has forms) as plural forms."""
    if isinstance(tree, dict):
        return {key: symfony_plurals(item, locale) for key, item in tree.items()}
    if isinstance(tree, list):
        return [symfony_plurals(item, locale) for item in tree]
    if isinstance(tree, str) and _PIPE.search(tree):
        forms = plural_rules(locale).forms
        parts = [_INTERVAL.sub("", part, count=1) for part in _PIPE.split(tree)]
        if len(parts) <= len(forms):
            return dict(zip(forms, parts))
    return tree


def symfony_plural(forms: dict[str, str]) -> str:
    """Plural forms in Symfony's pipe syntax (CLDR order, the order Symfony's rules index)."""
    return "|".join(forms.values())


def written_values(doc: ExportDocument, locale: str | None, symfony: bool) -> list[tuple[Entry, str | dict[str, str]]]:
    """(entry, value) of every entry the tree writers (YAML, PHP) write in a locale: never a null, so an
    untranslated unit is left out (the app's own fallback applies), or has an empty text where the export
    wants its key (`ExportDocument.untranslated_as_empty`)."""
    values = [(entry, export_value(entry, locale, doc, symfony)) for entry in doc.entries]
    if doc.untranslated_as_empty:
        return [(entry, "" if value is None else value) for entry, value in values]
    return [(entry, value) for entry, value in values if value is not None]


def export_value(entry: Entry, locale: str | None, doc: ExportDocument, symfony: bool) -> str | dict[str, str] | None:
    """A unit's value in a locale for the tree writers (YAML, PHP): text, plural forms (or their Symfony
    string), None when untranslated."""
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        if not forms:
            return None
        return symfony_plural(forms) if symfony else forms
    translation = entry.translations.get(locale) if locale else None
    return translation.text if translation is not None else None
