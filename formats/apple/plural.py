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
