"""Apple plural rules: the CLDR categories of the locale, with `other` always present."""
from __future__ import annotations

from ..pipeline import Entry
from ..plurals import CATEGORIES, plural_rules


def apple_plural_forms(entry: Entry, locale: str, forms: list[str]) -> dict[str, str]:
    """The locale's forms of an entry in CLDR order; `other` copies the last form when the entry has none.

    Apple requires `other` in every plural rule, while the integer forms of some locales (Russian:
    one, few, many) never reach it.
    """
    present = entry.plural_forms(locale, forms if "other" in forms else [*forms, "other"])  # keep a real `other`
    if present and "other" not in present:
        present["other"] = present[next(category for category in reversed(forms) if category in present)]
    return {category: present[category] for category in CATEGORIES if category in present}


def read_plural_forms(rule: dict, locale: str) -> dict[str, str]:
    """{category: text} of an Apple plural rule, dropping an `other` that only repeats the locale's last form."""
    forms = {category: rule[category] for category in CATEGORIES if isinstance(rule.get(category), str)}
    used = plural_rules(locale).forms
    if "other" in forms and "other" not in used and len(forms) > 1:
        last = next((forms[category] for category in reversed(used) if category in forms), None)
        if last == forms["other"]:
            del forms["other"]
    return forms


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
