"""Apple plural rules: the CLDR categories of the locale, with `other` always present."""
from __future__ import annotations

from ..document import Entry
from ..plurals import CATEGORIES, with_other, without_repeated_other


def apple_plural_forms(entry: Entry, locale: str, forms: list[str]) -> dict[str, str]:
    """The locale's forms of an entry in CLDR order, `other` always present (`plurals.with_other`)."""
    return with_other(entry.plural_forms(locale, forms if "other" in forms else [*forms, "other"]))  # a real `other` kept


def read_plural_forms(rule: dict, locale: str) -> dict[str, str]:
    """{category: text} of an Apple plural rule, without an `other` that only repeats the locale's last form."""
    return without_repeated_other({category: rule[category] for category in CATEGORIES
                                   if isinstance(rule.get(category), str)}, locale)


# A string with several plural variables (`%#@posts@ in %#@threads@`, String Catalog substitutions, a
# stringsdict format key) is one asset holding the format per locale, whose meta lists the variables in
# order (VARIABLES: [{"name", "argNum"?, "formatSpecifier"?}]), plus one plural asset per variable,
# `KEY:name` (variable_unit_id), whose meta names its string (VARIABLE_OF) and variable (VARIABLE). So every
# variable's forms are a plural asset that the API and the dashboard show and edit; formats without
# substitutions receive the format text and each variable as a plural entry of its own.
VARIABLES = "apple.variables"
VARIABLE_OF = "apple.variableOf"
VARIABLE = "apple.variable"


def variable_unit_id(string_id: str, name: str) -> str:
    """The asset ID of one variable of a string with several plural variables."""
    return f"{string_id}:{name}"


def variables_by_string(entries: list[Entry]) -> dict[str, dict[str, Entry]]:
    """{string's unit ID: {variable name: entry}} of the variable entries of an export."""
    found: dict[str, dict[str, Entry]] = {}
    for entry in entries:
        owner = entry.unit.meta.get(VARIABLE_OF)
        if isinstance(owner, str):
            found.setdefault(owner, {})[str(entry.unit.meta.get(VARIABLE, ""))] = entry
    return found


def variable_shapes(meta: dict) -> list[dict]:
    """The variables a string's meta lists (name first), an empty list for any other unit."""
    listed = meta.get(VARIABLES)
    return [item for item in listed if isinstance(item, dict) and isinstance(item.get("name"), str)] \
        if isinstance(listed, list) else []
