"""Immutable views of a project at one commit, loaded incrementally from the previous view.

Repository layout (one project = one repository; asset IDs are data, never file names):

    project.json              name, source locale, locale list and names, tag list, sequence counter
    glossary.json             the glossary (optional): one term per line, sorted, as a catalogue
    assets/NNNN.json          asset records, one per line, in creation order
    locales/<code>/NNNN.json  translations of that locale, one per line (absent line = untranslated)
    memory.json               translation memory units imported from TMX files, one per line (storage.memory)

Assets are split into chunks of `chunk_size` by their creation sequence number `n`, so that a write rewrites
one chunk file, whatever the size of the project. A translation lives in the chunk of its asset.
"""
from __future__ import annotations

import json
from functools import partial
from typing import Any, Callable, Iterable, Iterator, TypeVar, cast

from vocabulary import is_canonical_locale

from .canonical import EMPTY, Chunk
from .derivations import persisted
from .derived import INDEX, DerivedStore, Key, pack_strings
from .errors import Invalid, NotFound
from .gitrepo import GitRepo
from .progress import asset_counts, chunk_asset_counts, locale_counts
from .records import AssetProgress, AssetRecord, LocaleProgress, LocaleRecord, ProjectMeta, TranslationRecord

T = TypeVar("T")
R = TypeVar("R")

PROJECT_FILE = "project.json"
GLOSSARY_FILE = "glossary.json"
MEMORY_FILE = "memory.json"
# the files at the top of a project besides its chunk directories (each a canonical catalogue of its own)
TOP_FILES = (PROJECT_FILE, GLOSSARY_FILE, MEMORY_FILE)
ASSETS_DIR = "assets"
LOCALES_DIR = "locales"
DEFAULT_CHUNK_SIZE = 1000


def chunk_file(number: int) -> str:
    return f"{number:04d}.json"


def asset_path(number: int) -> str:
    return f"{ASSETS_DIR}/{chunk_file(number)}"


def locale_path(code: str, number: int) -> str:
    # a locale code becomes a directory name: never let it escape (its length is checked where locales are
    # added, and every written path before the commit; deleting an over-long one must stay possible)
    if not is_canonical_locale(code, any_length=True):
        raise Invalid(f"Invalid locale code {code[:80]!r}")
    return f"{LOCALES_DIR}/{code}/{chunk_file(number)}"


def existing(record: R | None, what: str) -> R:
    """A record that must be there: `what` ("Asset", "Locale") not in the project is NotFound."""
    if record is None:
        raise NotFound(f"{what} not in project")
    return record


def chunk_number(name: str) -> int | None:
    """The chunk a file name stands for when it is that chunk's one canonical name (`chunk_file`), else None.

    The one definition the loader and the push checks share: `00000.json`, `0.json` or `٠٠٠٠.json` (int()
    takes any Unicode digit) would otherwise be read as chunk 0 too, beside or over `0000.json`.
    """
    stem, dot, extension = name.partition(".")
    if not (dot and extension == "json" and stem.isascii() and stem.isdigit()):
        return None
    number = int(stem)
    return number if chunk_file(number) == name else None


def is_layout_path(path: str) -> bool:
    """Whether a working-tree path is one Gloss writes (a file outside the layout is someone else's)."""
    parts = path.split("/")
    if len(parts) == 1:
        return path in TOP_FILES
    if len(parts) == 2:
        return parts[0] == ASSETS_DIR and chunk_number(parts[1]) is not None
    return (len(parts) == 3 and parts[0] == LOCALES_DIR and is_canonical_locale(parts[1], any_length=True)
            and chunk_number(parts[2]) is not None)


def dump_project(meta: ProjectMeta) -> bytes:
    return (json.dumps(meta, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


class Snapshot:
    """Everything a reader needs, at one commit. Never mutated after construction."""

    def __init__(self, commit: bytes | None, meta: ProjectMeta, files: dict[str, bytes],
                 asset_chunks: dict[int, Chunk[AssetRecord]],
                 locale_chunks: dict[str, dict[int, Chunk[TranslationRecord]]],
                 asset_index: dict[str, int] | None, trees: dict[str, bytes] | None = None,
                 glossary: Chunk[Any] | None = None):
        self.commit = commit
        self.meta = meta
        self.files = files  # path -> blob id of every file in the commit
        self.trees = trees or {}  # directory ("" = root) -> tree id
        self.asset_chunks = asset_chunks
        self.locale_chunks = locale_chunks
        self._asset_index = asset_index  # asset id -> chunk number; None: built on first use
        self.chunk_size: int = meta.get("chunk_size", DEFAULT_CHUNK_SIZE)
        self._memo: dict[Any, Any] = {}  # derived data (progress counts …) computed once per snapshot
        self.persisted: DerivedStore | None = None  # the project's persisted derived data (storage.derived)
        self.glossary: Chunk[Any] = glossary if glossary is not None else EMPTY  # term -> record (glossary.json)
        self.memory_units: Chunk = EMPTY  # memory.json: translation memory units imported from TMX

    @property
    def asset_index(self) -> dict[str, int]:
        """Asset ID -> the number of its chunk; built on first use (a cold open's first answer, the locales
        and their progress, needs none: 100k insertions were half of it)."""
        index = self._asset_index
        if index is None:
            index = self._asset_index = build_asset_index(self.asset_chunks)
        return index

    def remember(self, key: Any, compute: Callable[[], T]) -> T:
        """Data derived from this (immutable) snapshot, computed on first use and kept with it under `key`."""
        memo = self._memo
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def saved(self, part: str, key: Key) -> Any:
        """What a process of this project saved under `key` in the persisted part `part` (storage.derived), or
        None: never the truth, only a value derived from the blobs the key names."""
        return self.persisted.get(part, key) if self.persisted is not None else None

    def save(self, part: str, key: Key, value: Any) -> None:
        """Keep `value` for every process of this project, under a key naming the blobs it was derived from
        (nothing when the project keeps no derived data: small projects)."""
        if self.persisted is not None:
            self.persisted.put(part, key, value)

    # ----------------------------------------------------------------- loading
    @classmethod
    def empty(cls) -> "Snapshot":
        return cls(None, cast(ProjectMeta, {}), {}, {}, {}, {}, {})  # (before the first commit: no metadata)

    @classmethod
    def load(cls, repo: GitRepo, commit: bytes, previous: "Snapshot | None" = None,
             derived: DerivedStore | None = None) -> "Snapshot":
        """Read `commit`, reusing every chunk whose blob is unchanged since `previous`.

        The other chunks are read when first used (a changed chunk `previous` had read is read at once, to keep
        its lineage, unless `derived` knows its blob: see `known`), with what `derived` persisted for their
        blobs: their keys (the asset index is then built without reading any chunk, and a chunk is read without
        decoding each line's key), the values of storage.derivations' persisted ones (progress counts …).
        """
        previous = previous or cls.empty()
        root = repo.read_commit(commit).tree
        files: dict[str, bytes] = {}
        trees: dict[str, bytes] = {"": root}

        def unchanged(path: str, tree_id: bytes) -> bool:
            """Take a directory's files (and trees) from `previous` when its tree is the same: a write
            changes one locale's tree, and reading the others again was most of a reload's object reads."""
            if previous.trees.get(path) != tree_id:
                return False
            prefix = path + "/"
            files.update((p, blob) for p, blob in previous.files.items() if p.startswith(prefix))
            trees.update((p, tree) for p, tree in previous.trees.items() if p.startswith(prefix) or p == path)
            return True

        for name, (mode, hex_id) in repo.read_tree(root).items():
            if name in TOP_FILES:
                files[name] = hex_id
            elif name == ASSETS_DIR and not unchanged(ASSETS_DIR, hex_id):
                trees[ASSETS_DIR] = hex_id
                for chunk_name, (_, blob) in repo.read_tree(hex_id).items():
                    if chunk_number(chunk_name) is not None:  # only canonical names: see chunk_number
                        files[f"{ASSETS_DIR}/{chunk_name}"] = blob
            elif name == LOCALES_DIR and not unchanged(LOCALES_DIR, hex_id):
                trees[LOCALES_DIR] = hex_id
                for code, (_, code_tree) in repo.read_tree(hex_id).items():
                    if unchanged(f"{LOCALES_DIR}/{code}", code_tree):
                        continue
                    trees[f"{LOCALES_DIR}/{code}"] = code_tree
                    for chunk_name, (_, blob) in repo.read_tree(code_tree).items():
                        if chunk_number(chunk_name) is not None:
                            files[f"{LOCALES_DIR}/{code}/{chunk_name}"] = blob

        def chunk_at(path: str, previous_chunk: Chunk[Any] | None) -> Chunk[Any]:
            blob = files[path]
            if previous_chunk is not None and previous.files.get(path) == blob:
                return previous_chunk
            if previous_chunk is not None and previous_chunk.loaded and not known(derived, blob):
                return Chunk.parse(repo.read_raw(blob), previous_chunk)  # keeps the lineage
            return lazy_chunk(repo, blob, derived)

        if previous.files.get(PROJECT_FILE) == files[PROJECT_FILE]:
            meta = previous.meta
        else:
            meta = json.loads(repo.read_raw(files[PROJECT_FILE]))
        asset_chunks: dict[int, Chunk[AssetRecord]] = {}
        locale_chunks: dict[str, dict[int, Chunk[TranslationRecord]]] = {
            loc["code"]: {} for loc in meta.get("locales", [])}
        assets_changed = False
        for path in files:
            parts = path.split("/")
            number = chunk_number(parts[-1]) or 0  # every chunk file name in `files` is canonical
            if parts[0] == ASSETS_DIR:
                chunk = chunk_at(path, previous.asset_chunks.get(number))
                assets_changed |= chunk is not previous.asset_chunks.get(number)
                asset_chunks[number] = chunk
            elif parts[0] == LOCALES_DIR:
                old = previous.locale_chunks.get(parts[1], {}).get(number)
                locale_chunks.setdefault(parts[1], {})[number] = chunk_at(path, old)
        asset_index = None  # built on first use
        if not assets_changed and asset_chunks.keys() == previous.asset_chunks.keys():
            asset_index = previous._asset_index
        glossary = EMPTY
        if GLOSSARY_FILE in files:
            same = previous.files.get(GLOSSARY_FILE) == files[GLOSSARY_FILE]
            glossary = previous.glossary if same else Chunk.lazy(partial(repo.read_raw, files[GLOSSARY_FILE]))
        snapshot = cls(commit, meta, files, asset_chunks, locale_chunks, asset_index, trees, glossary)
        snapshot.persisted = derived
        memory_blob = files.get(MEMORY_FILE)
        if memory_blob is not None:  # read on first use (by suggestions), kept while its blob stays
            snapshot.memory_units = (previous.memory_units if previous.files.get(MEMORY_FILE) == memory_blob
                                     else Chunk.lazy(partial(repo.read_raw, memory_blob)))
        return snapshot

    # ----------------------------------------------------------------- glossary
    @property
    def glossary_blob(self) -> bytes | None:
        """The blob id of glossary.json (None: no glossary): what is derived from the glossary is the same for
        the same blob, in whatever snapshot or process."""
        return self.files.get(GLOSSARY_FILE)

    def glossary_terms(self) -> dict[str, dict[str, Any]]:
        """The glossary: term -> {"translations": {locale: text}, "note", "forbidden"}, in the file's order."""
        return dict(self.glossary.items())

    def glossary_term(self, term: str) -> dict[str, Any] | None:
        return self.glossary.get(term)

    # ----------------------------------------------------------------- project
    @property
    def name(self) -> str:
        return self.meta.get("name", "")

    @property
    def source_locale(self) -> str:
        return self.meta["source"]

    def locales(self) -> list[LocaleRecord]:
        """Locale records (code, name) with the source locale first."""
        return list(self.meta.get("locales", []))

    def locale(self, code: str) -> LocaleRecord | None:
        for record in self.meta.get("locales", []):
            if record["code"] == code:
                return record
        return None

    def existing_locale(self, code: str) -> LocaleRecord:
        """The record of a locale the caller knows the project has (NotFound otherwise)."""
        return existing(self.locale(code), "Locale")

    def tags(self) -> list[str]:
        return list(self.meta.get("tags", []))

    # ----------------------------------------------------------------- assets
    def __len__(self) -> int:
        if self._asset_index is None:  # without building the index: lazy chunks know their length
            return sum(len(chunk) for chunk in self.asset_chunks.values())
        return len(self._asset_index)

    def assets_in_memory(self) -> int:
        """About how many assets have a chunk read into memory (asset or locale chunk, counted at chunk_size),
        without reading a lazy chunk (as len() may): what a freeze of the collector would take in."""
        numbers = {number for number, chunk in self.asset_chunks.items() if chunk.loaded}
        for chunks in self.locale_chunks.values():
            numbers.update(number for number, chunk in chunks.items() if chunk.loaded)
        return len(numbers) * self.chunk_size

    def has_asset(self, asset_id: str) -> bool:
        return asset_id in self.asset_index

    def asset(self, asset_id: str) -> AssetRecord | None:
        number = self.asset_index.get(asset_id)
        if number is None:
            return None
        return self.asset_chunks[number].get(asset_id)

    def existing_asset(self, asset_id: str) -> AssetRecord:
        """The record of an asset the caller knows the project has (NotFound otherwise)."""
        return existing(self.asset(asset_id), "Asset")

    def asset_ids(self) -> Iterator[str]:
        """Asset IDs in creation order."""
        for number in sorted(self.asset_chunks):
            yield from self.asset_chunks[number].keys()

    def assets(self) -> Iterator[tuple[str, AssetRecord]]:
        for number in sorted(self.asset_chunks):
            yield from self.asset_chunks[number].items()

    # ----------------------------------------------------------------- chunks (for data derived per chunk)
    def chunk_numbers(self) -> list[int]:
        """The numbers of the asset chunks, in creation order: data derived per chunk is built and kept per
        number (see storage.derivations)."""
        return sorted(self.asset_chunks)

    def asset_chunk(self, number: int) -> Chunk[AssetRecord]:
        return self.asset_chunks[number]

    def locale_chunk(self, code: str, number: int) -> Chunk[TranslationRecord] | None:
        """The translations of locale `code` for asset chunk `number` (None: the locale has no such file)."""
        return self.locale_chunks.get(code, {}).get(number)

    def asset_entries(self, number: int) -> dict[str, AssetRecord]:
        """Every asset of chunk `number`, parsed in one pass and not kept (see Chunk.peek_all)."""
        return self.asset_chunks[number].peek_all()

    def translation_entries(self, code: str, number: int) -> dict[str, TranslationRecord]:
        """Every translation of locale `code` in chunk `number`, parsed in one pass and not kept."""
        chunk = self.locale_chunk(code, number)
        return chunk.peek_all() if chunk is not None else {}

    def chunk_blobs(self, number: int, read: Iterable[tuple[str, int]]
                    ) -> tuple[bytes, tuple[bytes | None, ...]] | None:
        """The blob id of asset chunk `number` and of the locale chunk of each (code, number) of `read` (None: no
        such file): data made from the same blobs is the same, in whatever snapshot or process. None when the
        file table is not final (a snapshot still being written) or the chunk has no file."""
        if self.commit is None:
            return None
        asset_blob = self.files.get(asset_path(number))
        if asset_blob is None:
            return None
        return asset_blob, tuple(self.files.get(locale_path(code, n)) for code, n in read)

    # ----------------------------------------------------------------- translations
    def translation(self, asset_id: str, locale: str) -> TranslationRecord | None:
        number = self.asset_index.get(asset_id)
        if number is None:
            return None
        return self.locale_chunks.get(locale, {}).get(number, EMPTY).get(asset_id)

    def peek_translation(self, asset_id: str, locale: str) -> TranslationRecord | None:
        """translation() without keeping the parsed entry in memory (see Chunk.peek)."""
        number = self.asset_index.get(asset_id)
        if number is None:
            return None
        return self.locale_chunks.get(locale, {}).get(number, EMPTY).peek(asset_id)

    def translations(self, locale: str) -> Iterator[tuple[str, TranslationRecord]]:
        """Translated entries of one locale, in asset creation order."""
        chunks = self.locale_chunks.get(locale, {})
        for number in sorted(chunks):
            yield from chunks[number].items()

    # ----------------------------------------------------------------- progress (storage.progress)
    def locale_progress(self, code: str) -> LocaleProgress:
        """translated (flagged included), untranslated, flagged, words, and a count per status, of one locale.

        Counted per chunk and kept on the chunk, so a write recounts one chunk, not the whole locale.
        """
        return self.remember(("locale-progress", code),
                             lambda: locale_counts(self.locale_chunks.get(code, {}).values(), len(self)))

    def asset_progress(self, asset_id: str) -> AssetProgress:
        """Counts of locales: translated (flagged included), untranslated, flagged."""
        codes = [record["code"] for record in self.locales()]
        # peeked: a list of 100k must not keep 500k parsed translations
        return asset_counts((self.peek_translation(asset_id, code) for code in codes), len(codes))

    def chunk_asset_progress(self, number: int) -> dict[str, AssetProgress]:
        """asset_progress of every asset of asset chunk `number`, from one decode of each locale's chunk."""
        codes = [record["code"] for record in self.locales()]
        return chunk_asset_counts(self.asset_chunks[number],
                                  [self.locale_chunks.get(code, {}).get(number) for code in codes])


def lazy_chunk(repo: GitRepo, blob: bytes, derived: DerivedStore | None) -> Chunk[Any]:
    """The chunk of blob `blob`, read on first use, with the derived data persisted for it."""
    keys = derived.get(INDEX, chunk_keys_key(blob)) if derived is not None else None
    canonical = derived is not None and derived.get(INDEX, canonical_key(blob)) is True
    chunk = Chunk.lazy(partial(repo.read_raw, blob), keys, canonical)
    if derived is not None:
        for name, _, version in persisted():
            value = derived.get(INDEX, (name, version, (blob,)))
            if value is not None:
                chunk.derived[name] = value
    return chunk


def known(derived: DerivedStore | None, blob: bytes) -> bool:
    """Whether the process that made the chunk of blob `blob` saved its derived data (a prepared write, an
    import, saves its chunks' data before its commit): then the chunk is taken lazily with it instead of being read
    at once to keep its lineage. Reading and recounting every chunk of a project another process's import had
    rewritten took the first write after it 0.74 s (100k units, in-process), in the project's lock."""
    return derived is not None and derived.has(INDEX, chunk_keys_key(blob))


def chunk_keys_key(blob: bytes) -> Key:
    """Where storage.derived keeps the keys of the chunk of blob `blob` (packed: see Chunk.lazy)."""
    return ("keys", None, (blob,))


# storage.derived's part for the string values of a field of each entry of a chunk (Transaction._chunk_strings:
# an import's look-ups), read by imports only: kept out of the index part that every cold open reads
STRINGS = "strings"


def strings_key(field: str, blob: bytes) -> Key:
    """Where storage.derived keeps the values of `field` in the entries of the chunk of blob `blob`."""
    return (STRINGS, field, (blob,))


def aligned_strings(chunk: Chunk[Any], values: dict[str, Any]) -> tuple[str | None, ...]:
    """The string `values` (key -> value) in the order of the chunk's keys, None where a key has none (or one
    that is not a string): the saved form (the keys themselves are saved once, with the chunk's: chunk_keys_key)."""
    return tuple(value if value.__class__ is str else None for value in map(values.get, chunk.keys()))


def canonical_key(blob: bytes) -> Key:
    """Where storage.derived notes that blob `blob` is a canonical file (Chunk.canonical), once known."""
    return ("canonical", None, (blob,))


def persist_derived(snapshot: Snapshot, derived: DerivedStore) -> None:
    """Note what `snapshot` knows that `derived` lacks (each chunk's keys, the persisted derivations' values), then save."""
    note_derived(snapshot, snapshot.files.items(), derived)
    derived.save(snapshot.files.values())


def note_derived(snapshot: Snapshot, files: Iterable[tuple[str, bytes]], derived: DerivedStore) -> None:
    """Note in `derived` what `snapshot` knows of the chunks of `files` (path, blob id) that `derived` lacks: each
    read chunk's keys, the persisted derivations' values, the string values kept by the write that made it."""
    for path, blob in files:
        chunk = chunk_of(snapshot, path)
        if chunk is None:
            continue
        if chunk.loaded and not derived.has(INDEX, chunk_keys_key(blob)):  # (one not read yet: not from here)
            derived.put(INDEX, chunk_keys_key(blob), pack_strings(chunk.keys()))
        if chunk.canonical and not derived.has(INDEX, canonical_key(blob)):
            derived.put(INDEX, canonical_key(blob), True)
        for name, _, version in persisted():
            if name in chunk.derived:
                derived.put(INDEX, (name, version, (blob,)), chunk.derived[name])
        strings = chunk.kept(STRINGS)  # (field, values) kept by the transaction that made the chunk
        if strings is not None:
            derived.put(STRINGS, strings_key(strings[0], blob), strings[1])


def chunk_of(snapshot: Snapshot, path: str) -> Chunk[Any] | None:
    """The asset or locale chunk stored at `path` in `snapshot` (None: no chunk file, or not in it)."""
    parts = path.split("/")
    number = chunk_number(parts[-1])
    if number is None:
        return None
    if parts[0] == ASSETS_DIR and len(parts) == 2:
        return snapshot.asset_chunks.get(number)
    if parts[0] == LOCALES_DIR and len(parts) == 3:
        return snapshot.locale_chunks.get(parts[1], {}).get(number)
    return None


def build_asset_index(asset_chunks: dict[int, Chunk[AssetRecord]]) -> dict[str, int]:
    index: dict[str, int] = {}
    for number, chunk in asset_chunks.items():
        index.update(dict.fromkeys(chunk.keys(), number))  # in C: a loop in Python was 75 ms at 100k assets
    return index
