"""The shapes of what storage keeps: one asset record or translation entry per catalogue line, the project's
metadata (project.json) with its locale records and tags.

TypedDicts, not classes: a record is the very dict json.loads made of its line and dump_value writes back, so
typing it costs nothing at run time (an import writes 100k of them; a dataclass would convert each twice).
Chunks are read at one place (storage.canonical.Chunk, generic over the record it holds); everything above it
sees these types. Every record Gloss writes (storage.operations: a push too is replayed through them) has every
field but the optional links and flags; a pushed commit's own files, read to be checked and replayed, may lack
what storage.checks admits as missing: those fields are NotRequired, and readers of any snapshot use .get.
"""
# (no `from __future__ import annotations`: TypedDict reads NotRequired off evaluated annotations only, and
# __required_keys__ must be right at run time for tests/test_storage.py)
from typing import Any, NotRequired, TypedDict


class UserRef(TypedDict, total=False):
    """Who made or flagged a translation, as the entry records them (a push may name only some fields)."""

    id: int
    name: str
    email: str


class AssetRecord(TypedDict):
    """An asset in assets/NNNN.json (keyed by its ID). `n` is its creation number, which fixes its chunk."""

    n: int
    type: str
    context: NotRequired[str]
    notes: NotRequired[str]
    printf: NotRequired[str]
    tags: NotRequired[list[str]]
    aliases: NotRequired[dict[str, str]]
    created: NotRequired[str]
    modified: NotRequired[str]
    plurals: NotRequired[list[str]]  # its plural-form assets, in form order (absent: none)
    plural_of: NotRequired[str]  # the singular asset of a plural form
    meta: NotRequired[dict[str, Any]]  # what a file format declared beyond Loco's fields, for its writer


class TranslationRecord(TypedDict):
    """A translation in locales/<code>/NNNN.json (keyed by its asset's ID); no entry: untranslated."""

    text: str
    rev: int  # 1 on first translation, +1 on every later text
    modified: NotRequired[str]
    author: NotRequired[UserRef]
    pusher: NotRequired[UserRef]  # the pushing key's user, when a push wrote the text
    flag: NotRequired[str]
    flagged: NotRequired[str]  # when it was flagged
    flagger: NotRequired[UserRef]


class LocaleRecord(TypedDict):
    """One of the project's locales, in project.json's `locales` list."""

    code: str
    name: str


class ProjectMeta(TypedDict):
    """project.json: the project's name, source locale, locales, tags and chunk numbering."""

    source: str
    locales: list[LocaleRecord]
    chunk_size: int
    next_seq: int  # the creation number of the next asset
    tags: NotRequired[list[str]]
    id: NotRequired[str]
    name: NotRequired[str]
    created: NotRequired[str]


class ChunkCounts(TypedDict):
    """The translations of one locale chunk, counted (storage.progress keeps them with the chunk)."""

    translated: int  # flagged included
    flagged: int
    words: int  # of the texts, split at white space
    by_status: dict[str, int]  # status (vocabulary.translation_statuses) -> count, none of them zero


class LocaleProgress(TypedDict):
    """A locale's progress: its chunks' counts summed, and the assets it leaves untranslated."""

    translated: int
    flagged: int
    words: int
    untranslated: int
    by_status: dict[str, int]


class AssetProgress(TypedDict):
    """An asset's progress: counts of the project's locales."""

    translated: int  # flagged included
    untranslated: int
    flagged: int


__all__ = ["AssetProgress", "AssetRecord", "ChunkCounts", "LocaleProgress", "LocaleRecord", "ProjectMeta",
           "TranslationRecord", "UserRef"]
