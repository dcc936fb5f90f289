"""The rules a stored field obeys, whoever writes it: the API (storage.operations) and a push (storage.checks)
call the same function per field, so a value one accepts the other accepts too, and one refuses what the other
refuses (tests/test_field_rules.py checks both sides field by field).

Each function returns the value when it is valid and raises Invalid saying what is wrong (the push checks put
the file and record in front). API keys are the one rule that needs the server's key list: `refuse_keys`
scans bytes as a push's files hold them, and `refuse_keys_in_record` scans a record as its catalogue line will
hold it, naming the field (never the key).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping, Sequence

from limits import MAX_ASSET_ID_BYTES, MAX_FILE_BYTES, MAX_LOCALE_NAME_CHARS, MAX_TAG_CHARS, MAX_TEXT_CHARS, describe
from vocabulary import ASSET_PRINTF as PRINTF_STYLES
from vocabulary import (ASSET_TYPES, FLAGS, first_unencodable, is_canonical_locale, locale_code_too_long, unaddressable,
                        unencodable_reason)

from .errors import Invalid

# A Gloss key is `secrets.token_urlsafe(24)`: 32 URL-safe characters.
KEY_CANDIDATE = re.compile(rb"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])")
# Every byte a key may hold -> "a", any other -> " ": a run of 32 "a" after bytes.translate (in C) is where
# KEY_CANDIDATE may match; five times cheaper than the regex on text that holds no key.
_KEY_CHARS = bytes(0x61 if re.fullmatch(rb"[A-Za-z0-9_-]", bytes([b])) else 0x20 for b in range(256))
_KEY_RUN = b"a" * 32
KEY_REFUSAL = "contains an API key; keys must never enter a project repository"

IsLiveKey = Callable[[str], bool]


# ----------------------------------------------------------------------------- files
def check_file_size(what: str, size: int) -> None:
    """Every file (blob) of a project, however written: a push's judged from its object header, an API
    write's before its commit, so the API never writes a catalogue a push could not carry back."""
    if size > MAX_FILE_BYTES:
        raise Invalid(f"{what} is {size} bytes {describe('max_file_bytes')}")


# ----------------------------------------------------------------------------- strings
def check_string(field: str, value: Any) -> str:
    """A string that UTF-8 can hold (JSON's `\\ud800` escapes decode to lone surrogates, which no file or
    answer can encode)."""
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a string")
    if first_unencodable([value]) is not None:
        raise Invalid(f"{field}: {unencodable_reason(value)}")
    return value


def check_text(text: Any) -> str:
    """A translation's text."""
    check_string("text", text)
    if len(text) > MAX_TEXT_CHARS:
        raise Invalid(f"text is longer than {MAX_TEXT_CHARS} characters {describe('max_text_chars')}")
    return text


# ----------------------------------------------------------------------------- assets
_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f]")


def check_asset_id(asset_id: str) -> str:
    check_string("Asset ID", asset_id)
    if not asset_id:
        raise Invalid("Asset ID must not be empty")
    if len(asset_id.encode("utf-8")) > MAX_ASSET_ID_BYTES:
        raise Invalid(f"Asset ID is longer than {MAX_ASSET_ID_BYTES} bytes {describe('max_asset_id_bytes')}")
    if _CONTROL_CHARACTER.search(asset_id):
        raise Invalid("Asset ID must not contain control characters")
    return asset_id


def check_addressable(asset_id: str) -> str:
    """Refuse IDs that no URL could name again (`vocabulary.unaddressable` says why): the API applies it to
    the IDs it creates and renames to, a push to every ID it carries."""
    problem = unaddressable(asset_id)
    if problem:
        raise Invalid(problem)
    return asset_id


def _one_of(field: str, value: Any, allowed: Sequence[str], shown: Sequence[str] | None = None) -> str:
    """A value of a vocabulary (`shown`: the values a refusal lists, when not all of them)."""
    if not isinstance(value, str) or value not in allowed:
        raise Invalid(f"{field} must be one of {', '.join(shown or allowed)}")
    return value


def check_asset_type(value: Any) -> str:
    return _one_of("type", value, ASSET_TYPES)


def check_printf(value: Any) -> str:
    return _one_of("printf", value, PRINTF_STYLES, PRINTF_STYLES[1:])  # "" (none) goes without saying


def check_aliases(aliases: Any) -> dict[str, str]:
    if not isinstance(aliases, dict):
        raise Invalid("aliases must map names to strings")
    for name, value in aliases.items():
        check_string("an alias name", name)
        check_string(f"alias {name!r}", value)
    return aliases


def check_asset_meta(meta: Any) -> dict[str, Any]:
    """An asset's format metadata: a JSON object with string keys (it is stored as JSON, as it is)."""
    if not isinstance(meta, dict) or not all(isinstance(key, str) for key in meta):
        raise Invalid("Asset metadata must be an object with string keys")
    try:
        json.dumps(meta, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):  # (UnicodeEncodeError is a ValueError)
        raise Invalid("Asset metadata must hold JSON values (and text UTF-8 can hold) only") from None
    return meta


def check_tag(name: str) -> str:
    """A tag name as the API receives it (surrounding space is dropped); the stored name is the result."""
    name = check_string("Tag name", name).strip()
    if not name:
        raise Invalid("Tag name must not be empty")
    if len(name) > MAX_TAG_CHARS or any(ord(ch) < 32 for ch in name) or "," in name:
        raise Invalid(f"Tag names are up to {MAX_TAG_CHARS} characters, without commas or control characters "
                      f"{describe('max_tag_chars')}")
    return name


def check_stored_tag(name: Any) -> str:
    """A tag name as a project holds it: what check_tag makes of it, unchanged."""
    if check_tag(name) != name:
        raise Invalid(f"Tag name {name!r} has surrounding space")
    return name


# ----------------------------------------------------------------------------- translations
def check_flag(value: Any) -> str:
    return _one_of("flag", value, FLAGS)


# ----------------------------------------------------------------------------- locales
def check_locale_code(code: Any) -> str:
    """A locale code as storage keeps it: a canonically spelled language tag (it becomes a directory name)."""
    check_string("Locale code", code)
    too_long = locale_code_too_long(code)
    if too_long:
        raise Invalid(too_long)
    if not is_canonical_locale(code):
        raise Invalid(f"invalid locale code {code!r}: expected a canonical language tag such as fr or pt-BR")
    return code


def check_locale_name(name: Any) -> str:
    """A locale's display name: not blank, no control characters, bounded."""
    check_string("Locale name", name)
    if not name.strip():
        raise Invalid("Locale name must not be empty")
    if len(name) > MAX_LOCALE_NAME_CHARS:
        raise Invalid(f"Locale name is longer than {MAX_LOCALE_NAME_CHARS} characters "
                      f"{describe('max_locale_name_chars')}")
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in name):
        raise Invalid("Locale name must not contain control characters")
    return name


# ----------------------------------------------------------------------------- API keys
def refuse_keys(what: str, data: bytes, is_live_key: IsLiveKey) -> None:
    """Invalid when `data` holds a live API key (`what` names where; the key itself is never repeated)."""
    for match in KEY_CANDIDATE.finditer(data):
        if is_live_key(match.group().decode("ascii")):
            raise Invalid(f"{what} {KEY_REFUSAL}")


def as_stored(value: Any) -> bytes:
    """A value as a catalogue line holds it (storage.canonical), the bytes a push's key scan reads."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": ")).encode("utf-8", "surrogatepass")


def may_hold_key(text: str) -> bool:
    """Whether catalogue text has a run of 32 key characters in its UTF-8 bytes, which every KEY_CANDIDATE
    match is: a cheap first test (for many lines at once) before refuse_keys_in_record."""
    return _KEY_RUN in text.encode("utf-8", "surrogatepass").translate(_KEY_CHARS)


def refuse_keys_in_record(key: str, record: Mapping[str, Any], is_live_key: IsLiveKey, id_field: str = "id") -> None:
    """Invalid, naming the field, when a record (its `key` included) holds a live API key as its catalogue line
    will: the line is its key and each field's value, joined by characters a key cannot hold, so a record
    that passes here is one the push's scan of the whole file passes too."""
    refuse_keys(f"Field {id_field!r}", as_stored(key), is_live_key)
    if not KEY_CANDIDATE.search(as_stored(record)):
        return  # the usual case: one scan of the whole record
    for field, value in record.items():
        refuse_keys(f"Field {field!r}", as_stored(value), is_live_key)
