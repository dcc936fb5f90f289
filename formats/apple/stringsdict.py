"""Apple `.stringsdict` plural dictionaries (an XML property list).

Each plural unit is written the way Loco and Xcode do:

    key -> {NSStringLocalizedFormatKey: "%#@value@",
            value: {NSStringFormatSpecTypeKey: NSStringPluralRuleType, NSStringFormatValueTypeKey: "d",
                    one: "...", other: "..."}}

with one `%#@var@` per unit, the CLDR categories of the locale, and `other` always present (filled
with the locale's last form when the locale's integers never use it, e.g. Russian; reading drops such
a copy again). A singular unit is a dictionary whose format key is its text and which has no variable.

A format key with text around its variable, or with several variables, is a unit holding the format and
one plural unit per variable (`KEY:name`), as String Catalog substitutions are read (`plural.VARIABLES`):
every variable's forms are editable, and the format key is written back with a rule per variable, its
argument number as the position of `%N$#@name@` and its format specifier as NSStringFormatValueTypeKey.
(Assets imported before kept the whole format in meta, `stringsdict.format` and `stringsdict.variables`,
which the writer still honours.)
"""
from __future__ import annotations

import re
from typing import Any

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..options import ReadOptions
from ..printf import placeholders
from ..reading import CatalogueBuilder, plural_translation
from .plist import load_plist, top_dictionary, xml_plist
from .plural import (VARIABLE, VARIABLE_OF, VARIABLES, apple_plural_forms, read_plural_forms, variable_shapes,
                     variable_unit_id, variables_by_string)

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
        raise ParseError(f"stringsdict entry {key!r}: expected a dictionary with a {FORMAT_KEY} string")
    format_key = value[FORMAT_KEY]
    variables = _VARIABLE.findall(format_key)
    if not variables:
        builder.add(key, Translation(text=format_key))
        return
    if not _VARIABLE.fullmatch(format_key):
        _add_string_with_variables(builder, key, format_key, value)
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


def _add_string_with_variables(builder: CatalogueBuilder, key: str, format_key: str, value: dict[str, Any]) -> None:
    """A format key with text around its variable or with several: the format as a unit, each variable as a
    plural unit of its own (see `plural.VARIABLES`)."""
    names = list(dict.fromkeys(_VARIABLE.findall(format_key)))
    shapes: list[dict[str, Any]] = []
    for match in _VARIABLE.finditer(format_key):
        name, position = match.group(1), match.group(0)[1:].partition("$")
        if any(shape["name"] == name for shape in shapes):
            continue
        rule = value.get(name)
        shape: dict[str, Any] = {"name": name}
        if position[1]:
            shape["argNum"] = int(position[0])
        if isinstance(rule, dict) and isinstance(rule.get(VALUE_TYPE_KEY), str):
            shape["formatSpecifier"] = rule[VALUE_TYPE_KEY]
        shapes.append(shape)
    unit = builder.add(key, Translation(text=format_key), meta={VARIABLES: shapes})
    for name in names:
        forms = _plural_forms(key, name, value.get(name), builder.locale)
        builder.add(variable_unit_id(unit.id, name), plural_translation(forms, builder.locale), plural=True,
                    meta={VARIABLE_OF: unit.id, VARIABLE: name})


def _plural_forms(key: str, name: str, rule: Any, locale: str) -> dict[str, str]:
    """{category: text} of one plural variable."""
    if not isinstance(rule, dict):
        raise ParseError(f"stringsdict entry {key!r}: the variable {name!r} has no dictionary of plural forms")
    forms = read_plural_forms(rule, locale)
    if not forms:
        raise ParseError(f"stringsdict entry {key!r}: the variable {name!r} has no plural form (zero ... other)")
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


def _string_with_variables(text: str, shapes: list[dict[str, Any]], variables: dict[str, Entry], locale: str,
                           doc: ExportDocument) -> dict[str, Any]:
    """The dictionary of a format with plural variables: one rule per variable that has forms in the locale; a
    variable's argument number is written as the position of its `%#@name@` (`%2$#@name@`)."""
    value: dict[str, Any] = {FORMAT_KEY: text}
    for shape in shapes:
        name, variable = shape["name"], variables.get(shape["name"])
        forms = apple_plural_forms(variable, locale, doc.rules(locale).forms) if variable else {}
        if not forms:
            continue
        specifier = shape.get("formatSpecifier") or value_type(list(forms.values()))
        value[name] = {SPEC_TYPE_KEY: PLURAL_RULE_TYPE, VALUE_TYPE_KEY: specifier, **forms}
        if isinstance(shape.get("argNum"), int):
            value[FORMAT_KEY] = value[FORMAT_KEY].replace(f"%#@{name}@", f"%{shape['argNum']}$#@{name}@")
    return value


def write_stringsdict(doc: ExportDocument) -> bytes:
    """Plural units as plural rules; singular units as formats without variables, or with the plural rules of
    their variables (see `plural.VARIABLES`)."""
    locale = doc.locale or doc.source_locale
    tree: dict[str, Any] = {}
    variables = variables_by_string(doc.entries)
    written = {entry.unit.id for entry in doc.entries}
    for entry in doc.entries:
        if entry.unit.meta.get(VARIABLE_OF) in written:
            continue  # written inside its string
        shapes = variable_shapes(entry.unit.meta)
        if shapes and not doc.template:
            text = entry.translation(locale).text
            if text is not None:
                tree[entry.key] = _string_with_variables(text, shapes, variables.get(entry.unit.id, {}), locale, doc)
            continue
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
