"""Canonical catalogue files: a JSON object with exactly one entry per line.

A chunk keeps each entry's serialised value, so changing one entry re-serialises one line and joins the rest
as they are: a write costs the size of the chunk, never a full re-serialisation of the catalogue.

    {
    "home.title": {"text": "Bienvenue", "rev": 1},
    "home.intro": {"text": "…", "rev": 3}
    }
"""
from __future__ import annotations

import functools
import json
import re
import sys
from typing import Any, Callable, Generic, Iterable, Iterator, Mapping, TypeVar

from .derivations import registered
from .derived import packed_count, unpack_strings


# what a chunk holds: storage.records.AssetRecord in asset chunks, TranslationRecord in locale chunks, the raw
# dicts of a pushed file in storage.checks (decoded here, by json: the one place a record gets its type)
E = TypeVar("E", bound=Mapping[str, Any])

_decoder = json.JSONDecoder()
# one JSON string decoded from an offset, by the C scanner (typeshed does not declare it)
scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")
# made once: json.dumps with options builds an encoder per call, a quarter of the cost of a short entry
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
# ... and so is its C encoder, which JSONEncoder.encode makes again (with a dict for its circular-reference
# check) at each call: half the cost of a translation record's line (an import serialises 300k of them).
# Records are made from JSON or by storage.operations, never cyclic: no check is needed.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_c_encode = _c_make_encoder(None, _encoder.default, json.encoder.encode_basestring, None, ": ", ", ", False,
                            False, True) if _c_make_encoder is not None else None


def dump_value(value: Mapping[str, Any]) -> str:
    """One entry's value on one line; non-ASCII kept readable, newlines escaped by JSON."""
    if _c_encode is None:
        return _encoder.encode(value)
    return "".join(_c_encode(value, 0))


@functools.lru_cache(maxsize=64)
def _field_marker(field: str, after: str) -> str:
    """A field's key as a line writes it, then `after` (made once per field name)."""
    return dump_key(field) + after


def dump_key(key: str) -> str:
    """A key as its line starts with it (json.dumps(key, ensure_ascii=False))."""
    return json.encoder.encode_basestring(key)  # (what _encoder.encode does for a string)


_JSON_STRING = r'([^"\\\n]*(?:\\.[^"\\\n]*)*)"'  # a JSON string's body and its closing quote (linear: unrolled)


@functools.lru_cache(maxsize=8)
def _leading_string(field: str) -> re.Pattern[str]:
    """A line `"key": {"field": "value"...` after a newline: its key and value as JSON spells them."""
    return re.compile('\n"' + _JSON_STRING + ": {" + re.escape(_field_marker(field, ': "')) + _JSON_STRING)


@functools.lru_cache(maxsize=8)
def _string_fields(fields: tuple[str, ...]) -> re.Pattern[str]:
    """A line `"key": {...` after a newline with `fields` as strings, in this order, before any nested value
    (no brace or bracket before them; string_field says why the first marker is the field): key and values."""
    before = r"[^{\[\n]*?"  # lazy: the first marker wins (no brace or bracket before it: string_field's rule)
    return re.compile('\n"' + _JSON_STRING + ": {" + "".join(before + re.escape(_field_marker(field, ': "'))
                                                            + _JSON_STRING for field in fields))


def _unescaped(body: str) -> str:
    """A JSON string's body decoded (itself when it has no escape: the usual case)."""
    return scanstring(body + '"', 0)[0] if "\\" in body else body


def _key_and_value_start(line: str) -> tuple[str, int]:
    """The key of a canonical line and where its value starts; plain keys (no escapes) without running the
    JSON decoder."""
    end = line.find('": ')
    if line.startswith('"') and end > 0:
        candidate = line[1:end]
        if "\\" not in candidate and '"' not in candidate:
            return candidate, end + 3
    key, end = _decoder.raw_decode(line)
    if line[end:end + 2] != ": ":
        raise ValueError(f"not a canonical catalogue line: {line[:80]!r}")
    return key, end + 2


def _line_key(line: str) -> str:
    return _key_and_value_start(line)[0]


def split_line(line: str) -> tuple[str, str]:
    """(key, serialised value) of a canonical line (without its separating comma)."""
    key, start = _key_and_value_start(line)
    return key, line[start:]


def entry_lines(lines: Iterable[bytes]) -> dict[str, str]:
    """key -> serialised value of the entry lines among `lines` (those a diff shows, say); braces and blank
    lines are skipped."""
    found: dict[str, str] = {}
    for raw in lines:
        line = raw.decode("utf-8").rstrip(",")
        if line.strip() not in ("{", "}", ""):
            key, value = split_line(line)
            found[key] = value
    return found


def changed_keys(old: bytes, new: bytes) -> list[str]:
    """Keys of the entries that differ between two canonical files (added, removed or changed).

    A set difference of the files' lines (without the separating commas, which move when an entry is
    appended), so only the differing lines are decoded: far cheaper than parsing both files.
    """
    old_lines = [line.rstrip(b",") for line in old.split(b"\n")]
    new_lines = [line.rstrip(b",") for line in new.split(b"\n")]
    differing = set(old_lines).symmetric_difference(new_lines) - {b"{", b"}", b""}
    if not differing:
        return []
    keys: dict[str, None] = {}
    for line in new_lines + old_lines:  # in file order, new entries first
        if line in differing:
            keys[_line_key(line.decode("utf-8"))] = None
    return list(keys)


def is_canonical(text: str) -> bool:
    """Whether a catalogue file is as `to_bytes` writes it: braces on their own lines, one entry a line."""
    end = len(text) - 3  # (counted in place: a slice of the body copied every chunk an import reads)
    return text.startswith("{\n") and text.endswith("\n}\n") and text.count("\n", 2, end) == text.count(",\n", 2, end)


def split_lines(text: str, canonical: bool | None = None) -> list[str]:
    """The entry lines of a canonical file, without their separating commas (`canonical`: judged already)."""
    if is_canonical(text) if canonical is None else canonical:
        body = text[2:-3]
        return body.split(",\n") if body else []  # as `to_bytes` writes it: one split in C
    # written by other hands (a push): blank lines, a last comma, braces with the first or last entry …
    return [line[:-1] if line.endswith(",") else line
            for line in text.split("\n") if line not in ("{", "}", "")]


def _keyed(lines: list[str], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """key -> line of a file's lines; `known`: line -> key of lines met before (their keys are not decoded)."""
    by_key: dict[str, str] = {}
    for line in lines:
        key = known.get(line) if known else None
        # interned: the same asset ID keys the asset chunk and every locale's chunk (one string, not 6)
        by_key[sys.intern(_line_key(line)) if key is None else key] = line
    return by_key


class Chunk(Generic[E]):
    """An immutable ordered map id -> entry, stored as serialised lines and parsed lazily."""

    __slots__ = ("_loaded", "_source", "_known_keys", "_text", "_parsed", "_bytes", "derived", "origin", "canonical")

    def __init__(self, lines: dict[str, str] | None, source: Callable[[], bytes] | None = None,
                 keys: "str | tuple[str, ...] | None" = None, canonical: bool = False):
        self._loaded = lines  # id -> its whole line `"id": {...}` (no comma), in canonical order; None: not read yet
        self._source = source  # reads the file's bytes, for a chunk whose lines are read on first use
        self._known_keys = keys  # its keys in order, when known without reading it: see known_keys
        # a lazy chunk's canonical file, decoded by leading_strings before its lines were split
        self._text: str | None = None
        self._parsed: dict[str, E] = {}
        self._bytes: bytes | None = None
        self.derived: dict[Any, Any] = {}  # data computed from this (immutable) chunk: see storage.derivations
        # (the chunk this one was made from, the keys that differ): lets callers update derived data
        # instead of recomputing it. One level only: making a chunk drops its parent's own origin.
        self.origin: tuple[Chunk[E], tuple[str, ...]] | None = None
        # whether the file this chunk stands for is known to be as `to_bytes` writes it (False: not known yet).
        # Judging it counts every line break of the file: 0.23 ms a chunk, judged 415 times in a cold 100k re-import,
        # so the verdict is kept with the chunk's keys (storage.snapshot.note_derived).
        self.canonical = canonical

    @classmethod
    def lazy(cls, source: Callable[[], bytes], keys: str | tuple[str, ...] | None = None,
             canonical: bool = False) -> "Chunk[Any]":
        """A chunk whose file is read and split on first use (a cold open reads only what it needs).

        `keys`, when known (storage.derived keeps them per blob): the keys in order, as a tuple or packed
        (joined by newlines, split when first needed: a cold open does not make 300k strings). They answer
        keys() and len() without reading the file, and spare the reading a decode of each line's key.
        `canonical`: the file is known to be as `to_bytes` writes it (see the attribute).
        """
        return cls(None, source, keys, canonical)

    def _keys_known(self) -> tuple[str, ...] | None:
        known = self._known_keys
        return unpack_strings(known) if known is not None else None

    def _read(self, source: Callable[[], bytes]) -> dict[str, str]:
        """The lines of a lazy chunk's file, keyed by the known keys when they match them in number (they were
        taken from this very blob), else by decoding each line's key."""
        known = self._keys_known()
        text, self._text = self._text, None
        if text is None:
            text = source().decode("utf-8")
        self.canonical = self.canonical or is_canonical(text)  # (the verdict on a kept text: see _canonical_text)
        lines = split_lines(text, self.canonical)
        if known is not None and len(lines) == len(known):
            return dict(zip(map(sys.intern, known), lines))
        return _keyed(lines)

    @property
    def _lines(self) -> dict[str, str]:
        lines = self._loaded
        if lines is None:  # two threads may both read it: the same lines, either is kept
            source = self._source
            if source is None:  # another thread read it meanwhile (it sets _loaded before clearing _source)
                return self._loaded  # type: ignore[return-value]
            lines = self._loaded = self._read(source)
            self._source = self._known_keys = self._text = None
        return lines

    @property
    def loaded(self) -> bool:
        """Whether the lines are in memory (a lazy chunk not read yet is not)."""
        return self._loaded is not None

    @classmethod
    def parse(cls, data: bytes, previous: "Chunk[Any] | None" = None) -> "Chunk[Any]":
        """Read a canonical file (as written by `to_bytes`).

        With `previous`, an older version of the same file (another process wrote the new one), the
        chunk keeps its lineage as if made by `with_changes`: the lines that differ become its origin's
        keys and the entries already parsed on unchanged lines are reused, so derived data is updated from
        a diff of lines instead of recomputed from every entry.
        """
        text = data.decode("utf-8")
        canonical = is_canonical(text)
        lines = split_lines(text, canonical)
        if previous is not None:
            chunk = cls._edited(previous, lines)
            if chunk is not None:
                chunk.canonical = canonical
                return chunk
        # a line unchanged since `previous` has a known key: only the differing lines are decoded
        known = {line: key for key, line in previous._lines.items()} if previous is not None else {}
        # `data` is not kept: its lines are (to_bytes joins them again if ever needed)
        chunk = cls(_keyed(lines, known), canonical=canonical)
        if previous is not None:
            chunk._descend_from(previous)
        return chunk

    @classmethod
    def _edited(cls, previous: "Chunk[Any]", lines: list[str]) -> "Chunk[Any] | None":
        """The new version when it only rewrites lines of `previous` in place (same entries, same order: what
        a translation write does), found with set operations instead of a loop over every line; else None."""
        if len(lines) != len(previous._lines):
            return None
        new_lines = set(lines).difference(previous._lines.values())
        by_key = dict(previous._lines)
        changed = []
        for line in new_lines:
            key = _line_key(line)
            if key not in by_key:
                return None
            by_key[key] = line
            changed.append(key)
        # the same keys in the same positions, with the rewritten lines: otherwise an entry moved or a
        # line repeats, and the general path sorts it out
        if list(by_key.values()) != lines:
            return None
        chunk = cls(by_key)
        chunk._inherit(previous, changed)
        return chunk

    def _descend_from(self, parent: "Chunk[E]") -> None:
        self._inherit(parent, self._differing_keys(parent))

    def _differing_keys(self, other: "Chunk[E]") -> list[str]:
        """Keys whose line differs between `other` and this chunk, or that only one of them has. Lines a chunk
        kept from its parent are the same string objects, so an unchanged line costs a pointer comparison."""
        old = other._lines
        changed = [key for key, line in self._lines.items() if old.get(key) != line]
        return changed + [key for key in old if key not in self._lines]

    def changed_since(self, older: "Chunk[E] | None") -> tuple[str, ...]:
        """Keys of the entries that differ between `older`, an earlier version of the same file (None: no such
        file), and this chunk, however many versions apart: from the lineage when this chunk was made from
        `older`, else from a comparison of their lines."""
        if older is self:
            return ()
        if older is None:
            return tuple(self._lines)
        if self.origin is not None and self.origin[0] is older:
            return self.origin[1]
        return tuple(self._differing_keys(older))

    def _inherit(self, parent: "Chunk[E]", changed: list[str],
                 values: Mapping[str, E | None] | None = None) -> None:
        """Become `parent` with the entries `changed` (`values`: their new values, None for removed, when
        known): the lineage, and the parsed entries still valid."""
        self.origin = (parent, tuple(changed))
        parent.origin = None
        if parent._parsed:
            self._parsed = dict(parent._parsed)
            for key in changed:
                self._parsed.pop(key, None)
        self._carry_derived(parent, self.origin[1], values)

    def __len__(self) -> int:
        known = self._known_keys
        if known is not None and self._loaded is None:
            return packed_count(known)
        return len(self._lines)

    def __contains__(self, key: str) -> bool:
        return key in self._lines

    def keys(self) -> Iterator[str]:
        known = self._keys_known() if self._loaded is None else None
        return iter(known if known is not None else self._lines)

    def line(self, key: str) -> str:
        """The whole canonical line of an entry (KeyError when absent)."""
        return self._lines[key]

    def starts_with(self, key: str, field: str, value: str) -> bool:
        """Whether the entry's line starts with `field` holding `value` as dump_value writes it: then the
        entry's field is `value`, known without parsing the line. False says nothing (no such entry, another
        value, or fields in another order or spelling, as a push may write them)."""
        line = self._lines.get(key)
        return line is not None and line.startswith(f"{dump_key(key)}: {{{dump_key(field)}: {dump_key(value)}")

    def string_field(self, key: str, field: str) -> str | None:
        """A top-level string field of the entry, decoded alone when its line shows it before any nested value
        (a translation's text, an asset's context); None when it does not (no such entry or field, or it comes
        after a brace or bracket), and the caller parses the entry. The marker `"field": "` cannot lie inside
        a string (its quotes would be escaped there), so the first one before any brace is the field."""
        line = self._lines.get(key)
        if line is None:
            return None
        start = len(dump_key(key)) + 3  # just after `"key": {`
        marker = _field_marker(field, ': "')
        found = line.find(marker, start)
        if found < 0 or line.find("{", start, found) >= 0 or line.find("[", start, found) >= 0:
            return None
        return scanstring(line, found + len(marker))[0]

    def leading_strings(self, field: str) -> dict[str, str]:
        """key -> the value of `field` for every entry whose line starts with it as a string (a translation's
        text, as canonical lines write it): one match a line, no entry decoded; an entry missing here (another
        spelling, as a push may write it) is read with string_field or peek."""
        text = self._text_of_lines()
        pairs = _leading_string(field).findall(text)
        if "\\" not in text:
            return dict(pairs)  # nothing escaped (the usual case): the C scanner's strings as they are
        return {_unescaped(key): _unescaped(value) for key, value in pairs}

    def string_fields(self, *fields: str) -> dict[str, tuple[str, ...]]:
        """key -> the values of `fields` for every entry whose line shows them as strings, in this order, before
        any nested value (string_field of each, for the whole chunk in one regular-expression pass); an entry
        missing here is read with string_field or peek."""
        text = self._text_of_lines()
        found = _string_fields(fields).findall(text)
        if "\\" in text:
            found = [tuple(map(_unescaped, values)) for values in found]
        return {values[0]: tuple(values[1:]) for values in found}

    def mentions(self, field: str) -> bool:
        """False when no entry has `field` at any depth (may_have_field of the whole chunk)."""
        return _field_marker(field, ": ") in self._text_of_lines()

    def _text_of_lines(self) -> str:
        """Every line, each after a newline (none holds one: JSON escapes them)."""
        text = self._canonical_text()
        return text if text is not None else "\n" + "\n".join(self._lines.values())

    def _canonical_text(self) -> str | None:
        """A lazy chunk's file not split yet, when `to_bytes` wrote it (each line after a newline, none inside one):
        what leading_strings reads without splitting the lines (a check of a locale reads only the source's
        texts); kept for the split, should one follow. None: the lines are split already, or another hand wrote
        the file."""
        source = self._source
        if self._loaded is not None or source is None:
            return None
        text = self._text
        if text is None:
            text = source().decode("utf-8")
            if not self.canonical and not is_canonical(text):  # (judged once: kept only when canonical)
                return None
            self._text, self.canonical = text, True
        return text

    def string_values(self, field: str) -> dict[str, str]:
        """key -> string_field(key, field) for every entry that has one, in one pass (string_fields of one field):
        an import by source text reads every asset's context and every source text this way."""
        return {key: values[0] for key, values in self.string_fields(field).items()}

    def keys_mentioning(self, field: str) -> set[str]:
        """The keys of the entries whose line has `field` at any depth (may_have_field of every entry, by one
        search for its marker over the chunk's text, which cannot lie inside a string: its quotes are escaped)."""
        text, marker, keys = self._text_of_lines(), _field_marker(field, ": "), set()
        found = text.find(marker)
        while found >= 0:  # (each line after a newline: see _text_of_lines)
            start, end = text.rfind("\n", 0, found) + 1, text.find("\n", found)
            end = len(text) if end < 0 else end
            if found > start:  # (a line that starts with it is an entry of that key: the field is its value's)
                keys.add(_key_and_value_start(text[start:end])[0])
            found = text.find(marker, end)
        return keys

    def may_have_field(self, key: str, field: str) -> bool:
        """False when the entry's line certainly has no `field` at any depth (its key would appear as written)."""
        return _field_marker(field, ": ") in self._lines.get(key, "")

    def get(self, key: str) -> E | None:
        value = self.peek(key)
        if value is not None:
            self._parsed[key] = value
        return value

    def peek(self, key: str) -> E | None:
        """Like get, without keeping the parsed entry: for one-off reads of many entries (counts)."""
        value = self._parsed.get(key)
        if value is None:
            line = self._lines.get(key)
            if line is None:
                return None
            value = json.loads(line[len(dump_key(key)) + 2:])
        return value

    def peek_each(self, keys: Iterable[str]) -> Iterator[tuple[str, E | None]]:
        """(key, peek(key)) for keys in the chunk's order. A lazy file not split yet (see _canonical_text) is not
        split for them: each entry is found after the previous one and decoded where it stands (the failing
        translations of a locale's check); a key absent is read with peek."""
        position = 0
        for key in keys:
            value, position = self.peek_from(key, position)
            yield key, value

    def peek_from(self, key: str, start: int) -> tuple[E | None, int]:
        """peek(key) and where to look for the next entry: in a lazy file not split yet, the entry is looked for
        from `start` on (then before it) and decoded where it stands, so entries read one by one in the file's
        order cost a search of the gaps between them, not of the file up to each."""
        text = self._canonical_text()
        if text is None:
            return self.peek(key), start
        marker = f"\n{dump_key(key)}: "
        found = text.find(marker, start)
        if found < 0 and start:
            found = text.find(marker, 0, start + len(marker))
        if found < 0:
            return self.peek(key), start
        return _decoder.raw_decode(text, found + len(marker))

    def peek_items(self) -> Iterator[tuple[str, E]]:
        """items() without keeping the parsed entries (see peek)."""
        for key in self._lines:
            yield key, self.peek(key)  # type: ignore[misc]

    def peek_all(self) -> dict[str, E]:
        """Every entry, parsed in one pass of the C decoder and not kept: for reads of a whole chunk, where a
        decode per line costs several times more (a 100k-asset export reads 600,000 entries)."""
        return json.loads("{" + ",".join(self._lines.values()) + "}") if self._lines else {}

    def items(self) -> Iterator[tuple[str, E]]:
        for key in self._lines:
            yield key, self.get(key)  # type: ignore[misc]

    def with_changes(self, changes: Mapping[str, E | None], order: Callable[[str], int]) -> "Chunk[E]":
        """A new chunk with entries set (or removed, for None); `order` gives each id's canonical position."""
        lines = dict(self._lines)
        reorder = False
        for key, value in changes.items():
            if value is None:
                lines.pop(key, None)
                continue
            if key not in lines:
                reorder = True
            lines[key] = dump_key(key) + ": " + dump_value(value)
        if reorder:
            lines = dict(sorted(lines.items(), key=lambda item: order(item[0])))
        chunk: Chunk[E] = Chunk(lines, canonical=True)  # (its file is to_bytes)
        chunk._inherit(self, list(changes), changes)
        return chunk

    def _carry_derived(self, parent: "Chunk[E]", changed: tuple[str, ...],
                       values: Mapping[str, E | None] | None) -> None:
        for name, update, _ in registered():  # storage.derivations
            if name in parent.derived:
                value = parent.derived[name]
                self.derived[name] = value if update is None else update(value, parent, self, changed, values)

    def kept(self, name: Any) -> Any:
        """The data derived from this chunk kept under `name` (None: none)."""
        return self.derived.get(name)

    def keep(self, name: Any, value: Any) -> None:
        """Keep data derived from this (immutable) chunk; a registered name follows it to its next versions
        (storage.derivations)."""
        self.derived[name] = value

    def file_data(self) -> tuple[bytes, "str | tuple[str, ...] | None"]:
        """(the file's bytes, its known keys or None): what Chunk.lazy takes to make the same chunk in another
        process (app.qa's pool of checks), without splitting a lazy chunk's lines here."""
        source, text, known = self._source, self._text, self._known_keys
        if self._loaded is None and source is not None:
            return (text.encode("utf-8") if text is not None else source()), known
        return self.to_bytes(), None

    def to_bytes(self) -> bytes:
        if self._bytes is None:
            body = ",\n".join(self._lines.values())
            self._bytes = ("{\n" + body + ("\n" if body else "") + "}\n").encode("utf-8")
        return self._bytes


EMPTY: Chunk[Any] = Chunk({})
# The empty chunk a new locale file is made from: derived data of translations may be registered on it (the
# progress counts of no entry), so that a new file's is updated from the values written into it.
EMPTY_TRANSLATIONS: Chunk[Any] = Chunk({})
