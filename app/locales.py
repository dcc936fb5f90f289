"""Locale codes from clients: validated language tags, normalised to the hyphenated form (`fr_FR` -> `fr-FR`)."""
from __future__ import annotations

import re

from formats.plurals import babel_locale, locale_display_name

from .errors import ApiError

TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")


def canonical_code(code: str) -> str:
    """Canonical spelling: language lower-case, script title-case, region upper-case, hyphens."""
    parts = code.replace("_", "-").split("-")
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            out.append(part.title())
        elif (len(part) == 2 and part.isalpha()) or (len(part) == 3 and part.isdigit()):
            out.append(part.upper())
        else:
            out.append(part)
    return "-".join(out)


def parse_locale_code(code: str) -> str:
    """Validate a client's locale code (a BCP 47 language tag known to CLDR); 422 when it is not one."""
    code = (code or "").strip()
    if not TAG.match(code):
        raise ApiError(422, f"Invalid locale code {code!r}: expected a language tag such as fr, fr-FR or fr_FR")
    canonical = canonical_code(code)
    # unknown trailing subtags are fine when CLDR knows the language (Loco accepts en-GB-x-abcde)
    if babel_locale(canonical) is None:
        raise ApiError(422, f"Unknown language in locale code {code!r}")
    return canonical


def display_name(code: str) -> str:
    return locale_display_name(code)


def resolve_project_locale(requested: str, codes: list[str]) -> str | None:
    """The project locale a path segment names: exact, or by normalised spelling (`fr_FR` finds `fr-FR`)."""
    if requested in codes:
        return requested
    if not TAG.match(requested or ""):
        return None
    wanted = canonical_code(requested).lower()
    for code in codes:
        if code.lower() == wanted:
            return code
    return None


def text_direction(code: str) -> str:
    """`rtl` or `ltr`: the script direction CLDR gives the locale (Arabic, Hebrew … are right-to-left)."""
    locale = babel_locale(code)
    return "rtl" if locale is not None and locale.character_order == "right-to-left" else "ltr"
