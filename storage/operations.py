"""Domain operations on a transaction: assets, plurals, tags, locales and translations.

Each function validates against the transaction's current state and raises a StorageError (never a half
change: the caller's transaction is discarded on any exception).

Stored records (one line each in the canonical files) are storage.records' AssetRecord and TranslationRecord; a
changed record is a copy (`record.copy()`, then its fields set: cheaper than `{**record, ...}` or `dict(record, ...)`):
the record read is shared with the snapshot it came from.
The glossary's terms (glossary.json, keyed by the term): {"translations": {locale: text}, "note"?, "forbidden"?}.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from vocabulary import ASSET_PRINTF as PRINTF_STYLES
from vocabulary import ASSET_TYPES, DEFAULT_STATES, FLAGS, plural_form_id

from .errors import Conflict, Invalid, NotFound
from .fields import (check_addressable, check_aliases, check_asset_id, check_asset_meta, check_asset_type,
                     check_flag, check_locale_code, check_locale_name, check_max_length, check_printf, check_string,
                     check_tag, check_term, check_term_record, check_text)
from .gitrepo import Person
from .records import AssetRecord, TranslationRecord, UserRef
from .trailers import Trailer
from .transaction import Transaction

__all__ = ["ASSET_TYPES", "PRINTF_STYLES", "FLAGS", "check_addressable", "check_asset_id", "check_tag"]


@dataclass(frozen=True)
class Actor:
    """The user a write is made for (recorded in the translation and as the commit author). For a push,
    the author the pushed commit names, and `pusher` the pushing key's user (storage.receive)."""

    id: int
    name: str
    email: str
    pusher: "Actor | None" = None

    def record(self) -> UserRef:
        return {"id": self.id, "name": self.name, "email": self.email}

    def person(self) -> Person:
        """The user as a Git identity; a user without an e-mail is named by the numeric id (never by a key)."""
        return Person(self.name, self.email or f"user-{self.id}@users.gloss")


def require_asset(tx: Transaction, asset_id: str) -> AssetRecord:
    asset = tx.asset(asset_id)
    if asset is None:
        raise NotFound("Asset not in project")
    return asset


def require_locale(tx: Transaction, code: str) -> str:
    if not tx.has_locale(code):
        raise NotFound("Locale not in project")
    return code


_WORDS = re.compile(r"\w+")  # (compiled once: an import by source text makes an ID for each new unit)


def slug_id(text: str) -> str:
    """An asset ID derived from source text: lower-case words joined by dashes (Loco's auto-ID style)."""
    words = _WORDS.findall(text.lower())
    slug = "-".join(words)[:60].strip("-")
    return slug or "asset"


def unique_asset_id(tx: Transaction, text: str) -> str:
    base = slug_id(text)
    candidate, counter = base, 2
    while tx.has_asset(candidate):
        candidate, counter = f"{base}-{counter}", counter + 1
    return candidate


# ----------------------------------------------------------------------------- assets
def create_asset(tx: Transaction, asset_id: str, now: str, *, text: str | None = None, type: str = "text",
                 context: str = "", notes: str = "", printf: str = "", tags: Iterable[str] = (),
                 default: str = "translated", actor: Actor | None = None, meta: dict[str, Any] | None = None) -> str:
    """Add an asset (and its source translation when `text` is given and `default` is not untranslated).

    `meta` holds what a file format declared beyond Loco's fields (ARB placeholders, say), for its writer.
    """
    check_asset_id(asset_id)
    if tx.has_asset(asset_id):
        raise Conflict(f'Asset already exists with ID "{asset_id}"')
    check_asset_type(type)
    check_printf(printf)
    check_string("context", context)
    check_string("notes", notes)
    if default not in DEFAULT_STATES:
        raise Invalid("default must be translated, untranslated or a flag name")
    tag_list = [check_tag(tag) for tag in tags]
    record: AssetRecord = {"n": tx.allocate_seq(), "type": type, "context": context, "notes": notes,
                           "printf": printf, "tags": list(dict.fromkeys(tag_list)), "aliases": {}, "created": now,
                           "modified": now}
    if meta:
        record["meta"] = check_asset_meta(meta)
    tx.put_asset(asset_id, record)
    register_tags(tx, tag_list)
    if text is not None and default != "untranslated":
        translate(tx, asset_id, tx.peek_meta()["source"], text, actor, now)
        if default in FLAGS:
            flag(tx, asset_id, tx.peek_meta()["source"], default, actor, now)
    return asset_id


def set_asset_meta(tx: Transaction, asset_id: str, meta: dict[str, Any], now: str) -> bool:
    """Replace an asset's format metadata (empty removes it); whether it changed."""
    record = require_asset(tx, asset_id).copy()
    if record.get("meta", {}) == meta:
        return False
    if meta:
        record["meta"] = check_asset_meta(meta)
    else:
        record.pop("meta", None)
    record["modified"] = now
    tx.put_asset(asset_id, record)
    return True


PATCHABLE_ASSET_FIELDS = {"id": str, "type": str, "context": str, "notes": str, "printf": str, "aliases": dict,
                          "max_length": int}
# the patchable fields a patch copies as they are (after their checks)
PLAIN_ASSET_FIELDS: tuple[Literal["type", "context", "notes", "printf"], ...] = ("type", "context", "notes", "printf")


def patch_asset(tx: Transaction, asset_id: str, changes: dict[str, Any], now: str) -> str:
    """Change an asset's properties; a new `id` renames it, keeping its translations. Returns the final ID."""
    record = require_asset(tx, asset_id).copy()
    for field, value in changes.items():
        expected = PATCHABLE_ASSET_FIELDS.get(field)
        if expected is None:
            raise Invalid(f"Asset property {field!r} cannot be patched")
        if not isinstance(value, expected):
            kind = {str: "string", dict: "object", int: "integer"}[expected]
            raise Invalid(f"Asset property {field!r} must be a {kind}")
    if "type" in changes:
        check_asset_type(changes["type"])
    if "printf" in changes:
        check_printf(changes["printf"])
    for field in ("context", "notes"):
        if field in changes:
            check_string(field, changes[field])
    if "aliases" in changes:
        record["aliases"] = dict(check_aliases(changes["aliases"]))
    if "max_length" in changes:  # 0 takes the limit away
        if check_max_length(changes["max_length"]):
            record["max_length"] = changes["max_length"]
        else:
            record.pop("max_length", None)
    for plain in PLAIN_ASSET_FIELDS:
        if plain in changes:
            record[plain] = changes[plain]
    record["modified"] = now
    new_id = changes.get("id", asset_id)
    if new_id != asset_id:
        rename_asset(tx, asset_id, new_id, record)
    else:
        tx.put_asset(asset_id, record)
    return new_id


def rename_asset(tx: Transaction, old: str, new: str, record: AssetRecord) -> None:
    """Move an asset to a new ID with its translations and plural links; history follows by trailer."""
    check_asset_id(new)
    if tx.has_asset(new):
        raise Conflict(f'Asset already exists with ID "{new}"')
    moved = {code: tx.translation(old, code) for code in tx.locale_codes()}
    tx.remove_asset(old)
    tx.put_asset(new, record)
    for code, entry in moved.items():
        if entry is not None:
            tx.put_translation(new, code, entry)
    parent = record.get("plural_of")
    if parent:
        singular = _record(tx, parent).copy()
        singular["plurals"] = [new if member == old else member for member in singular["plurals"]]
        tx.put_asset(parent, singular)
    for member in record.get("plurals", []):
        member_record = _record(tx, member).copy()
        member_record["plural_of"] = new
        tx.put_asset(member, member_record)
    # history follows the asset across the rename through these trailers (storage.history)
    tx.trailers.extend([(Trailer.ASSET, new), (Trailer.RENAMED_FROM, old)])


def delete_asset(tx: Transaction, asset_id: str) -> None:
    """Delete an asset and all its translations; its plural links are dissolved, linked assets kept."""
    record = require_asset(tx, asset_id)
    parent = record.get("plural_of")
    if parent:
        _detach_member(tx, parent, asset_id)
    for member in record.get("plurals", []):
        member_record = _record(tx, member).copy()
        member_record.pop("plural_of", None)
        tx.put_asset(member, member_record)
    tx.remove_asset(asset_id)


# ----------------------------------------------------------------------------- plurals
def add_plural(tx: Transaction, asset_id: str, now: str, *, pid: str = "", text: str | None = None,
               actor: Actor | None = None) -> str:
    """Create a new plural form of `asset_id`, or link the existing asset `pid`; returns the plural's ID."""
    singular = require_asset(tx, asset_id).copy()
    if singular.get("plural_of"):
        raise Invalid("Cannot add plural forms to an asset that is itself a plural form")
    if pid and tx.has_asset(pid):
        member = _record(tx, pid).copy()
        if pid == asset_id:
            raise Invalid("An asset cannot be a plural form of itself")
        if member.get("plurals"):
            raise Invalid(f'Asset "{pid}" has plural forms of its own')
        if member.get("plural_of") == asset_id:
            return pid
        if member.get("plural_of"):
            raise Conflict(f'Asset "{pid}" is already a plural form of "{member["plural_of"]}"')
    else:
        pid = pid or _next_plural_id(tx, asset_id)
        create_asset(tx, pid, now, text=text, type=singular["type"], context=singular["context"],
                     printf=singular.get("printf", ""), actor=actor,
                     default="translated" if text is not None else "untranslated")
        member = _record(tx, pid).copy()
    member["plural_of"] = asset_id
    member["modified"] = now
    tx.put_asset(pid, member)
    singular["plurals"] = singular.get("plurals", []) + [pid]
    singular["modified"] = now
    tx.put_asset(asset_id, singular)
    return pid


def _next_plural_id(tx: Transaction, asset_id: str) -> str:
    number = 1
    while tx.has_asset(plural_form_id(asset_id, number)):
        number += 1
    return plural_form_id(asset_id, number)


def unlink_plural(tx: Transaction, asset_id: str, pid: str, now: str) -> None:
    """Make plural `pid` a standalone asset again; no asset is deleted."""
    singular = require_asset(tx, asset_id)
    if pid not in singular.get("plurals", []):
        raise NotFound(f'Asset "{pid}" is not a plural form of "{asset_id}"')
    _detach_member(tx, asset_id, pid)
    member = _record(tx, pid).copy()
    member.pop("plural_of", None)
    member["modified"] = now
    tx.put_asset(pid, member)


def _detach_member(tx: Transaction, parent: str, member: str) -> None:
    singular = _record(tx, parent).copy()
    remaining = [m for m in singular.get("plurals", []) if m != member]
    if remaining:
        singular["plurals"] = remaining
    else:
        singular.pop("plurals", None)
    tx.put_asset(parent, singular)


# ----------------------------------------------------------------------------- tags
def register_tags(tx: Transaction, tags: Iterable[str]) -> None:
    known = tx.peek_meta().get("tags", [])
    new = [tag for tag in dict.fromkeys(tags) if tag not in known]
    if new:
        tx.meta["tags"] = known + new


def create_tag(tx: Transaction, name: str) -> bool:
    """Add a tag to the project; False when it already existed."""
    name = check_tag(name)
    if name in tx.peek_meta().get("tags", []):
        return False
    register_tags(tx, [name])
    return True


def require_tag(tx: Transaction, name: str) -> str:
    if name not in tx.peek_meta().get("tags", []):
        raise NotFound("Tag not in project")
    return name


def tag_asset(tx: Transaction, asset_id: str, name: str, now: str) -> None:
    name = check_tag(name)
    record = require_asset(tx, asset_id)
    register_tags(tx, [name])
    if name not in record["tags"]:
        _put_tags(tx, asset_id, record, record["tags"] + [name], now)


def untag_asset(tx: Transaction, asset_id: str, name: str, now: str) -> None:
    record = require_asset(tx, asset_id)
    if name not in record["tags"]:
        raise NotFound(f'Asset is not tagged "{name}"')
    _put_tags(tx, asset_id, record, [t for t in record["tags"] if t != name], now)


def rename_tag(tx: Transaction, old: str, new: str, now: str) -> None:
    require_tag(tx, old)
    new = check_tag(new)
    if new == old:
        return
    if new in tx.peek_meta()["tags"]:
        raise Conflict(f'Tag "{new}" already exists')
    tx.meta["tags"] = [new if tag == old else tag for tag in tx.meta["tags"]]
    _retag_assets(tx, old, new, now)


def delete_tag(tx: Transaction, name: str, now: str) -> None:
    require_tag(tx, name)
    tx.meta["tags"] = [tag for tag in tx.meta["tags"] if tag != name]
    _retag_assets(tx, name, None, now)


def _retag_assets(tx: Transaction, old: str, new: str | None, now: str) -> None:
    for asset_id in tx.asset_ids():
        record = _record(tx, asset_id)
        if old in record["tags"]:
            renamed = (new if tag == old else tag for tag in record["tags"])
            tags = [tag for tag in renamed if tag is not None]
            _put_tags(tx, asset_id, record, list(dict.fromkeys(tags)), now)


def _put_tags(tx: Transaction, asset_id: str, record: AssetRecord, tags: list[str], now: str) -> None:
    """Store a copy of the asset's record with new tags."""
    changed = record.copy()
    changed["tags"] = tags
    changed["modified"] = now
    tx.put_asset(asset_id, changed)


# ----------------------------------------------------------------------------- locales
def _same_locale(code: str, codes: Iterable[str]) -> str | None:
    """The existing code that differs from `code` at most in letter case (`fr-fr` is `fr-FR`)."""
    wanted = code.lower()
    return next((existing for existing in codes if existing.lower() == wanted), None)


def add_locale(tx: Transaction, code: str, name: str) -> None:
    check_locale_code(code)
    existing = _same_locale(code, tx.locale_codes())
    if existing is not None:
        raise Conflict("Locale already exists" + (f" as {existing}" if existing != code else ""))
    check_locale_name(name)
    tx.meta["locales"] = tx.peek_meta()["locales"] + [{"code": code, "name": name}]


def patch_locale(tx: Transaction, code: str, new_code: str | None, name: str | None) -> str:
    """Rename and/or re-code a locale (its translations move with it). Returns the final code."""
    require_locale(tx, code)
    final = check_locale_code(new_code or code) if new_code else code
    if final != code and _same_locale(final, [other for other in tx.locale_codes() if other != code]):
        raise Conflict("Locale already exists")
    if name is not None:
        check_locale_name(name)
    moved = []
    if final != code:
        moved = [(asset_id, tx.translation(asset_id, code)) for asset_id in tx.asset_ids()]
    locales = []
    for record in tx.meta["locales"]:
        if record["code"] == code:
            record = {"code": final, "name": name if name is not None else record["name"]}
        locales.append(record)
    tx.meta["locales"] = locales
    if tx.meta["source"] == code:
        tx.meta["source"] = final
    for asset_id, entry in moved:
        if entry is not None:
            tx.put_translation(asset_id, final, entry)
    return final


def delete_locale(tx: Transaction, code: str) -> None:
    require_locale(tx, code)
    if code == tx.peek_meta()["source"]:
        raise Invalid("You cannot delete the source locale")
    tx.meta["locales"] = [record for record in tx.meta["locales"] if record["code"] != code]


# ----------------------------------------------------------------------------- translations
def translate(tx: Transaction, asset_id: str, locale: str, text: str, actor: Actor | None,
              now: str) -> TranslationRecord:
    """Store a new text: revision 1 on first translation, +1 on every later call (the spec's rule).

    A new text clears any flag: the flag described the text it replaces. A pushed text records who pushed it
    beside its author (`pusher`), and keeps it through flag changes: a revision's data says who made it.
    """
    require_asset(tx, asset_id)
    require_locale(tx, locale)
    check_text(text)
    previous = tx.translation(asset_id, locale)
    entry: TranslationRecord = {"text": text, "rev": (previous["rev"] + 1) if previous else 1, "modified": now}
    if actor is not None:
        entry["author"] = actor.record()
        if actor.pusher is not None:
            entry["pusher"] = actor.pusher.record()
    tx.put_translation(asset_id, locale, entry)
    return entry


def untranslate(tx: Transaction, asset_id: str, locale: str) -> None:
    """Erase the translation and its revision count (it reads as never translated afterwards)."""
    require_asset(tx, asset_id)
    require_locale(tx, locale)
    if tx.translation(asset_id, locale) is None:
        raise NotFound("Asset not translated in this locale")
    tx.put_translation(asset_id, locale, None)


def flag(tx: Transaction, asset_id: str, locale: str, flag_name: str, actor: Actor | None,
         now: str) -> TranslationRecord:
    """Set the translation's single flag (replacing any other); the translation stays translated."""
    check_flag(flag_name)
    require_asset(tx, asset_id)
    require_locale(tx, locale)
    entry = tx.translation(asset_id, locale)
    if entry is None:
        raise NotFound("Asset not translated in this locale")
    entry = entry.copy()
    entry["flag"] = flag_name
    entry["flagged"] = now
    if actor is not None:
        entry["flagger"] = actor.record()
    tx.put_translation(asset_id, locale, entry)
    return entry


def unflag(tx: Transaction, asset_id: str, locale: str) -> TranslationRecord:
    require_asset(tx, asset_id)
    require_locale(tx, locale)
    entry = tx.translation(asset_id, locale)
    if entry is None or not entry.get("flag"):
        raise NotFound("Translation is not flagged")
    entry = entry.copy()
    entry.pop("flag", None)
    entry.pop("flagger", None)
    entry.pop("flagged", None)
    tx.put_translation(asset_id, locale, entry)
    return entry


def _record(tx: Transaction, asset_id: str) -> AssetRecord:
    """The record of an asset the caller knows exists (a listed id, or a plural link of one)."""
    record = tx.asset(asset_id)
    assert record is not None, asset_id
    return record


# ----------------------------------------------------------------------------- glossary
def term_record(translations: dict[str, str], note: str = "", forbidden: bool = False) -> dict[str, Any]:
    """A term's record in its canonical shape: locales sorted, an empty note and `forbidden: false` left out."""
    record: dict[str, Any] = {"translations": dict(sorted(translations.items()))}
    if note:
        record["note"] = note
    if forbidden:
        record["forbidden"] = True
    return record


def put_term(tx: Transaction, term: str, record: dict[str, Any]) -> bool:
    """Add or replace a glossary term; False when it already holds exactly this."""
    check_term(term)
    check_term_record(record)
    record = term_record(record.get("translations", {}), record.get("note", ""), record.get("forbidden", False))
    if tx.term(term) == record:
        return False
    tx.put_term(term, record)
    return True


def delete_term(tx: Transaction, term: str) -> None:
    if tx.term(term) is None:
        raise NotFound("Term not in glossary")
    tx.put_term(term, None)
