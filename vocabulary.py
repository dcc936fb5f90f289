"""The words every layer agrees on: locale codes, translation flags, statuses, printf styles, asset types.

Imports nothing of Gloss but `limits`, so `storage/`, `formats/` and `app/` may all import it. One rule each: a locale
code is checked and canonicalised here and nowhere else.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Sequence

from limits import MAX_LOCALE_CODE_CHARS, describe

# --- locale codes ----------------------------------------------------------------------------------

# A practical BCP 47 language tag: a 2-3 letter language then subtags of 1-8 letters or digits, separated
# by `-` (or `_`, the POSIX spelling clients and files use). The length limit is the practical maximum
# RFC 5646 §4.4.1 asks implementations to support; a code also becomes a directory name in a project
# repository, so nothing else may pass.
LOCALE_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
LOCALE_EXAMPLES = "fr, fr-FR or fr_FR"


def locale_code_too_long(code: str) -> str | None:
    """Why `code` is too long to be a locale code (a directory name in a project repository), or None."""
    if len(code) > MAX_LOCALE_CODE_CHARS:
        return f"Locale code is longer than {MAX_LOCALE_CODE_CHARS} characters {describe('max_locale_code_chars')}"
    return None


def is_locale_tag(code: str) -> bool:
    """Whether the text is spelled like a language tag (`fr`, `pt_BR`, `zh-Hant-TW`), known or not."""
    return bool(code) and len(code) <= MAX_LOCALE_CODE_CHARS and LOCALE_TAG.fullmatch(code) is not None


def canonical_locale(code: str) -> str:
    """The canonical spelling of a language tag: hyphens, language lower, script title, region upper.

    `pt_BR` -> `pt-BR`, `ZH_hant_tw` -> `zh-Hant-TW`, `es-419` stays. ValueError when it is not a tag.
    """
    code = (code or "").strip()
    if not is_locale_tag(code):
        raise ValueError(f"invalid locale code {code[:80]!r}: expected a language tag such as {LOCALE_EXAMPLES}")
    return _canonical_spelling(code)


def _canonical_spelling(code: str) -> str:
    parts = code.replace("_", "-").split("-")
    out = [parts[0].lower()]
    for position, part in enumerate(parts[1:], 1):
        if len(part) == 4 and part.isalpha() and position == 1:
            out.append(part.title())  # script
        elif (len(part) == 2 and part.isalpha()) or (len(part) == 3 and part.isdigit()):
            out.append(part.upper())  # region
        else:
            out.append(part.lower())  # variant, extension or private use: case-insensitive, lower by convention
    return "-".join(out)


def is_canonical_locale(code: str, *, any_length: bool = False) -> bool:
    """Whether the code is a language tag already in canonical spelling (what storage accepts).

    `any_length` drops the length limit: a code an older version let into a project must stay readable
    and deletable, though no new one may be that long.
    """
    if any_length:
        return bool(code) and LOCALE_TAG.fullmatch(code) is not None and _canonical_spelling(code) == code
    return is_locale_tag(code) and canonical_locale(code) == code


_POSIX_MODIFIER_SCRIPTS = {"latin": "Latn", "cyrillic": "Cyrl", "devanagari": "Deva", "arabic": "Arab"}


def locale_from_posix(value: str) -> str | None:
    """A canonical code from a POSIX-style locale name found in files (`ru_RU.UTF-8`, `sr_RS@latin`).

    None when the value is not such a name (files also hold English names, handled by the caller).
    """
    value = (value or "").strip()
    value, _, modifier = value.partition("@")
    value = value.split(".", 1)[0]  # the codeset
    if not is_locale_tag(value):
        return None
    code = canonical_locale(value)
    script = _POSIX_MODIFIER_SCRIPTS.get(modifier.lower())
    if script:
        language, _, rest = code.partition("-")
        code = "-".join(part for part in (language, script, rest) if part)
    return code if is_locale_tag(code) else None


# --- translation flags and statuses ----------------------------------------------------------------

FLAGS: tuple[str, ...] = ("fuzzy", "incorrect", "incomplete", "provisional", "unapproved", "rejected")
FLAG_LABELS: dict[str, str] = {flag: flag.capitalize() for flag in FLAGS}
# The flag a translation gets when none is named: the API's POST …/flag and the grid's "needs review".
DEFAULT_FLAG = "fuzzy"

# Words of the export `status` filter (besides the flag names); `!` negates any of them.
STATUS_TERMS: tuple[str, ...] = ("translated", "untranslated", "blank-translation", "flagged", "all")
STATUS_ALIASES: dict[str, str] = {"blank": "blank-translation"}
STATUSES: tuple[str, ...] = STATUS_TERMS + FLAGS


def status_term(term: str) -> str:
    """A status filter term in canonical form; ValueError naming the accepted ones when unknown."""
    word = term.strip().lower()
    word = STATUS_ALIASES.get(word, word)
    if word not in STATUSES:
        raise ValueError(f"unknown status {term.strip()!r}; accepted: {', '.join(STATUSES)} (each may be negated with !)")
    return word


def translation_statuses(translated: bool, blank: bool, flag: str | None) -> tuple[str, ...]:
    """Every status term a translation is in, the one that names it first: its flag and "flagged" when it has
    one, then "translated", "blank-translation" (translated as an empty text) or "untranslated". The API's
    `status` of a translation is the first; the export `status` filter matches any ("all" matches every one).
    """
    progress = "untranslated" if not translated else "blank-translation" if blank else "translated"
    return (flag, "flagged", progress) if flag else (progress,)


# --- filters --------------------------------------------------------------------------------------
# Loco's filter grammar, shared by the tag filter (`filter` on lists and exports) and the export `status`
# filter: a comma list that matches when ANY listed term holds (or none is listed) and no `!`-negated one
# does; `*` as a tag means "any tag at all".


def filter_terms(expression: str) -> tuple[set[str], set[str]]:
    """A comma list split into its positive and `!`-negated terms."""
    positive, negative = set(), set()
    for term in (part.strip() for part in (expression or "").split(",")):
        if term.startswith("!") and term[1:].strip():
            negative.add(term[1:].strip())
        elif term:
            positive.add(term)
    return positive, negative


def filter_holds(positive: set[str], negative: set[str], holds: Callable[[str], bool]) -> bool:
    """Whether any positive term (or no positive term at all) and no negated term holds."""
    if any(holds(term) for term in negative):
        return False
    return not positive or any(holds(term) for term in positive)


def has_tag(tags: Collection[str], term: str) -> bool:
    """Whether tags match one term of the tag filter (`*`: any tag)."""
    return bool(tags) if term == "*" else term in tags


def tag_filter(expression: str) -> Callable[[Iterable[str]], bool]:
    """The tag filter as a test of an asset's tags."""
    positive, negative = filter_terms(expression)

    def matches(tags: Iterable[str]) -> bool:
        present = set(tags)
        return filter_holds(positive, negative, lambda term: has_tag(present, term))

    return matches


# Initial states of a new asset's source translation (POST /api/assets `default`).
DEFAULT_STATES: tuple[str, ...] = ("translated", "untranslated") + FLAGS

# --- placeholders and asset types ------------------------------------------------------------------

PRINTF_STYLES: tuple[str, ...] = ("php", "java", "objc", "icu", "python")
ASSET_PRINTF: tuple[str, ...] = ("",) + PRINTF_STYLES  # an asset's printf: none, or a style
ASSET_TYPES: tuple[str, ...] = ("text", "html", "xml")


# --- texts ---------------------------------------------------------------------------------------

# Every text Gloss keeps ends up in a UTF-8 file of a Git repository, and UTF-8 has no encoding for a lone
# UTF-16 surrogate (U+D800-U+DFFF unpaired), which JSON (`"\\ud800"`) and other escape syntaxes can spell.
# Such a text is refused where it enters (request bodies, read files, pushed files), never stored.


def first_unencodable(texts: Sequence[str]) -> str | None:
    """The first text UTF-8 cannot encode (it holds a lone surrogate), or None (one encode in the usual case)."""
    try:
        "\0".join(texts).encode("utf-8")
    except UnicodeEncodeError:
        return next(text for text in texts if not _encodable(text))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unencodable_reason(text: str) -> str:
    """Why a text `first_unencodable` found cannot be kept, naming the character and where it is."""
    position = next(index for index, char in enumerate(text) if not _encodable(char))
    shown = text[max(0, position - 20):position + 20].encode("utf-8", "backslashreplace").decode("ascii", "replace")
    return (f"the text \"{shown}\" holds U+{ord(text[position]):04X}, a lone UTF-16 surrogate that UTF-8 cannot encode "
            "(a character beyond U+FFFF is a pair of them, high then low)")


def strings_in(value: object) -> list[str]:
    """Every string in a parsed JSON/YAML value, object keys included (without recursion)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(key for key in item if isinstance(key, str))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


# --- asset IDs -------------------------------------------------------------------------------------

# Path segments that the routes read as sub-resources (`/api/assets/{id}/plurals`, `…/tags/{tag}`): an asset
# ID with such a segment after a `/` could be created but never addressed again.
ASSET_ROUTE_WORDS = ("plurals", "plurals.json", "tags", "tags.json")
# An ID made from a text is cut here (well under max_asset_id_bytes, still readable) and ends with a hash.
TEXT_ID_MAX_BYTES = 500
_TEXT_ID_HASH_CHARS = 10  # hex digits of SHA-1: a clash between two texts of one project is out of reach
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_ESCAPE = re.compile(r"\\(?:n|t|r|u[0-9A-F]{4})")
_NAMED_CONTROLS = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def unaddressable(asset_id: str) -> str | None:
    """Why no URL could name the ID again, or None: a leading or trailing '/', `.` or `..` segments (clients
    normalise them away), or a route word after a slash. An inner `//` is fine (URLs in texts have them)."""
    if "/" not in asset_id:
        return None
    segments = asset_id.split("/")
    if segments[0] == "" or segments[-1] == "" or any(segment in (".", "..") for segment in segments):
        return "Asset ID must not start or end with '/' or have '.' or '..' segments"
    if any(segment in ASSET_ROUTE_WORDS for segment in segments[1:]):
        return (f"Asset ID must not have a segment named {', '.join(ASSET_ROUTE_WORDS)} after a '/' "
                "(the URL would name a sub-resource)")
    return None


def asset_id_of_text(text: str) -> str:
    """The asset ID of a key or source text a file gives (String Catalog keys, Qt TS and TMX source texts).

    The text itself when it can be one. Control characters become `\\n`, `\\t`, `\\r`, `\\uXXXX` (turned back by
    `text_of_asset_id`). A text that is then longer than TEXT_ID_MAX_BYTES, or that no URL could address,
    is cut (slashes as spaces when they were the trouble) and ends with `…#` and a hash of the whole, so the
    same text always gets the same ID: `Line one\\nline two`, `A long paragraph that…#5d41402abc`.
    """
    if _CONTROL.search(text):
        text = _CONTROL.sub(lambda match: _NAMED_CONTROLS.get(match.group(0), f"\\u{ord(match.group(0)):04X}"), text)
    readable = text if unaddressable(text) is None else " ".join(text.replace("/", " ").split())
    if readable == text and len(text.encode("utf-8")) <= TEXT_ID_MAX_BYTES:
        return text
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:_TEXT_ID_HASH_CHARS]
    cut = TEXT_ID_MAX_BYTES - _TEXT_ID_HASH_CHARS - 6  # room for "…#" (4 bytes) and the digest
    return readable.encode("utf-8")[:cut].decode("utf-8", "ignore") + f"…#{digest}"


def text_of_asset_id(asset_id: str) -> str:
    """The text an ID made by `asset_id_of_text` stands for, when it is not cut (control escapes undone)."""
    if "\\" not in asset_id:
        return asset_id

    def control(match: re.Match[str]) -> str:
        escape = match.group(0)
        return chr(int(escape[2:], 16)) if escape[1] == "u" else {"n": "\n", "t": "\t", "r": "\r"}[escape[1]]
    return _CONTROL_ESCAPE.sub(control, asset_id)


def plural_form_id(asset_id: str, number: int) -> str:
    """The ID given to plural form `number` (1 = the first after the singular) of an asset when none is named:
    `apple-plural`, `apple-plural-2`... (new plural-form assets, and a file's plural forms written as entries of
    their own by formats without plural syntax)."""
    return f"{asset_id}-plural" if number <= 1 else f"{asset_id}-plural-{number}"
