"""Locale codes from clients: validated language tags (vocabulary's rule) known to CLDR, canonically spelled."""
from __future__ import annotations

from formats.plurals import babel_locale, locale_display_name
from vocabulary import LOCALE_EXAMPLES, canonical_locale, is_locale_tag, locale_code_too_long

from .errors import ApiError


def parse_locale_code(code: str) -> str:
    """Validate a client's locale code (a BCP 47 language tag known to CLDR); 422 when it is not one."""
    code = (code or "").strip()
    too_long = locale_code_too_long(code)
    if too_long:
        raise ApiError(422, too_long)
    if not is_locale_tag(code):
        raise ApiError(422, f"Invalid locale code {code!r}: expected a language tag such as {LOCALE_EXAMPLES}")
    canonical = canonical_locale(code)
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
    if not is_locale_tag(requested or ""):
        return None
    wanted = canonical_locale(requested).lower()
    for code in codes:
        if code.lower() == wanted:
            return code
    return None


def text_direction(code: str) -> str:
    """`rtl` or `ltr`: the script direction CLDR gives the locale (Arabic, Hebrew … are right-to-left)."""
    locale = babel_locale(code)
    return "rtl" if locale is not None and locale.character_order == "right-to-left" else "ltr"
