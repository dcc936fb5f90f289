"""Apple `.stringsdict` plural dictionaries (an XML property list).

Each plural unit is written the way Loco and Xcode do:

    key -> {NSStringLocalizedFormatKey: "%#@value@",
            value: {NSStringFormatSpecTypeKey: NSStringPluralRuleType, NSStringFormatValueTypeKey: "d",
                    one: "...", other: "..."}}

with one `%#@var@` per unit, the CLDR categories of the locale, and `other` always present (filled
with the locale's last form when the locale's integers never use it, e.g. Russian; reading drops such
a copy again). A singular unit is a dictionary whose format key is its text and which has no variable.

Reading keeps what one plural unit cannot hold: a format key with text around the variable or with
several variables becomes a plural unit of the first variable's forms, and the whole format key and
the other variables stay in the unit's meta (`stringsdict.format`, `stringsdict.variables`) so that
the same format writes them back.
"""
from __future__ import annotations

import re
from typing import Any

from ..catalogue import Catalogue, Translation
from ..errors import FormatError
from ..options import ReadOptions
from ..pipeline import Entry, ExportDocument
from ..printf import placeholders
from ..reading import CatalogueBuilder, plural_translation
from .plist import load_plist, top_dictionary, xml_plist
from .plural import apple_plural_forms, read_plural_forms

FORMAT_KEY = "NSStringLocalizedFormatKey"
SPEC_TYPE_KEY = "NSStringFormatSpecTypeKey"
VALUE_TYPE_KEY = "NSStringFormatValueTypeKey"
PLURAL_RULE_TYPE = "NSStringPluralRuleType"
DEFAULT_VARIABLE = "value"
_VARIABLE = re.compile(r"%(?:\d+\$)?#@([^@]+)@")


def read_stringsdict(data: bytes, options: ReadOptions) -> Catalogue:
    """A .stringsdict file as units of the file's locale."""
    tree = top_dictionary(load_plist(data), "stringsdict")
    builder = CatalogueBuilder(options, "id")
    for key, value in tree.items():
        _add_entry(builder, str(key), value)
    return builder.build()


def _add_entry(builder: CatalogueBuilder, key: str, value: Any) -> None:
    """One top-level entry: a plain string, a format without variables, or a plural rule."""
    if isinstance(value, str):
        builder.add(key, Translation(text=value))
        return
    if not isinstance(value, dict) or not isinstance(value.get(FORMAT_KEY), str):
        raise FormatError(f"stringsdict entry {key!r}: expected a dictionary with a {FORMAT_KEY} string")
    format_key = value[FORMAT_KEY]
    variables = _VARIABLE.findall(format_key)
    if not variables:
        builder.add(key, Translation(text=format_key))
        return
    first = variables[0]
    forms = _plural_forms(key, first, value.get(first), builder.locale)
    meta: dict[str, Any] = {}
    if format_key != f"%#@{first}@" or len(variables) > 1:
        meta["stringsdict.format"] = format_key
        others = {name: value[name] for name in variables[1:] if name in value}
        if others:
            meta["stringsdict.variables"] = others
    if first != DEFAULT_VARIABLE:
        meta["stringsdict.variable"] = first
    builder.add(key, plural_translation(forms, builder.locale), plural=True, meta=meta)


def _plural_forms(key: str, name: str, rule: Any, locale: str) -> dict[str, str]:
    """{category: text} of one plural variable."""
    if not isinstance(rule, dict):
        raise FormatError(f"stringsdict entry {key!r}: the variable {name!r} has no dictionary of plural forms")
    forms = read_plural_forms(rule, locale)
    if not forms:
        raise FormatError(f"stringsdict entry {key!r}: the variable {name!r} has no plural form (zero ... other)")
    return forms


def value_type(texts: list[str]) -> str:
    """The printf conversion the counted argument uses (`d`, `ld`, `lld`...), `d` when none says."""
    for text in texts:
        for placeholder in placeholders(text, "objc"):
            if placeholder.kind == "integer":
                return placeholder.length + placeholder.conversion
    return "d"


def _plural_entry(entry: Entry, forms: dict[str, str]) -> dict[str, Any]:
    """The dictionary of one plural unit."""
    meta = entry.unit.meta
    variable = meta.get("stringsdict.variable") or DEFAULT_VARIABLE
    rule = {SPEC_TYPE_KEY: PLURAL_RULE_TYPE, VALUE_TYPE_KEY: value_type(list(forms.values())), **forms}
    value: dict[str, Any] = {FORMAT_KEY: meta.get("stringsdict.format") or f"%#@{variable}@", variable: rule}
    for name, other in (meta.get("stringsdict.variables") or {}).items():
        value.setdefault(name, other)
    return value


def write_stringsdict(doc: ExportDocument) -> bytes:
    """Plural units as plural rules; singular units as formats without variables."""
    locale = doc.locale or doc.source_locale
    tree: dict[str, Any] = {}
    for entry in doc.entries:
        if entry.unit.plural:
            forms = apple_plural_forms(entry, locale, doc.rules(locale).forms)
            if forms:
                tree[entry.key] = _plural_entry(entry, forms)
            continue
        text = entry.translation(doc.source_locale if doc.template else locale).text
        if doc.template and text is None:
            text = entry.key
        if text is not None:
            tree[entry.key] = {FORMAT_KEY: text}
    return xml_plist(tree, doc.banner)
