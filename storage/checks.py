"""Is a commit a valid project? The checks a push must pass before any ref moves (storage layout, snapshot.py).

A pushed commit must hold exactly the files Gloss writes, each a catalogue that the line-based reader and a
JSON parser read alike, and the invariants every reader relies on:

- only `project.json`, `assets/NNNN.json`, `locales/<code>/NNNN.json`, `glossary.json` and `memory.json`
  (imported translation memory units), regular files, under a size limit;
- `project.json` names the source locale among its locales, and every `locales/<code>/` is one of them;
- every asset record has a unique sequence number `n` in its chunk's range, registered tags, and plural links
  whose other end exists and links back;
- every translation belongs to an asset of the same chunk and has a revision;
- every glossary term is one the API could store (storage.fields.check_term, check_term_record);
- every memory unit has a file name and texts in two locales or more (check_memory_unit);
- every field the API also writes (IDs, texts, types, flags, tags, aliases, locale codes and names…) obeys
  the API's own rule for it, the same function (storage.fields): a push carries exactly what the API stores;
- no file holds a live API key (keys are never to enter a project repository; API writes refuse them too).

Results per blob are cached, so checking a series of commits costs the files each one changes plus one pass
over the records for the cross-file invariants.
"""
from __future__ import annotations

import json
import re
import stat
from functools import partial
from typing import Any, Callable, Iterable

from .canonical import Chunk, _line_key
from .errors import Invalid
from .fields import (check_addressable, check_aliases, check_asset_id, check_asset_meta, check_asset_type,
                     check_file_size, check_flag, check_locale_code, check_locale_name, check_max_length,
                     check_printf, check_stored_tag, check_string, check_term, check_term_record, check_text,
                     refuse_keys)
from .gitrepo import GitRepo
from limits import MAX_GLOSSARY_TERMS, MAX_TAG_CHAIN, MAX_UNITS_PER_FILE
from vocabulary import first_unencodable, is_canonical_locale, strings_in, unencodable_reason

from .snapshot import (ASSETS_DIR, GLOSSARY_FILE, LOCALES_DIR, MEMORY_FILE, PROJECT_FILE, TOP_FILES, Snapshot,
                       asset_path, chunk_number, locale_path)

# A JSON escape of a UTF-16 surrogate (U+D800-U+DFFF): paired, or lone (which no UTF-8 text can hold).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

Records = dict[str, dict[str, Any]]


def parse_catalogue(path: str, data: bytes, max_entries: int) -> Records:
    """A canonical catalogue file as id -> record; Invalid names the file and line that is wrong.

    A file of more lines than a chunk has entries (`max_entries`) is refused before it is parsed: a million
    tiny entries in a 32 MiB file took a worker up by 831 MB.
    """
    check_file_size(path, len(data))
    if data.count(b"\n") > max_entries + 2:
        raise Invalid(f"{path}: more lines than a chunk holds entries ({max_entries}, chunk_size)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Invalid(f"{path}: not UTF-8 (byte {error.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2 or lines[0] != "{" or lines[-1] != "}":
        raise Invalid(f"{path}: a catalogue is `{{`, one entry per line, then `}}`")
    records: Records = {}
    body = lines[1:-1]
    for number, line in enumerate(body, start=2):
        last = number == len(body) + 1
        if not last and not line.endswith(","):
            raise Invalid(f"{path} line {number}: missing comma at the end of the line")
        entry = line if last else line[:-1]
        try:
            key = _line_key(entry)
            value = json.loads(entry[len(json.dumps(key, ensure_ascii=False)) + 2:])
        except (ValueError, IndexError) as error:
            raise Invalid(f"{path} line {number}: invalid JSON ({error})") from None
        if not isinstance(value, dict):
            raise Invalid(f"{path} line {number}: the value of {key!r} is not an object")
        if key in records:
            raise Invalid(f"{path} line {number}: {key!r} appears twice")
        records[key] = value
    try:  # the line reader and a JSON parser must read the same thing (escaped keys, stray text)
        whole = json.loads(text)
    except ValueError as error:
        raise Invalid(f"{path}: invalid JSON ({error})") from None
    if whole != records:
        raise Invalid(f"{path}: the lines do not read as the same catalogue as the whole file")
    if _SURROGATE_ESCAPE.search(text):  # strict UTF-8 text: only such an escape can spell a lone surrogate
        refuse_unencodable(path, records)
    return records


def refuse_unencodable(path: str, value: Any) -> None:
    """Invalid when a string of the parsed file cannot be encoded as UTF-8 (a lone surrogate, as the JSON
    escape `\\ud800` spells it): the API refuses such a text (app.requests, formats.read_file), so does a push."""
    unencodable = first_unencodable(strings_in(value))
    if unencodable is not None:
        raise Invalid(f"{path}: {unencodable_reason(unencodable)}")


def check_project(meta: Any) -> dict[str, Any]:
    if not isinstance(meta, dict):
        raise Invalid(f"{PROJECT_FILE}: not a JSON object")
    locales = meta.get("locales")
    if not isinstance(locales, list) or not locales:
        raise Invalid(f"{PROJECT_FILE}: `locales` must be a non-empty list")
    codes = []
    for record in locales:
        if not isinstance(record, dict):
            raise Invalid(f"{PROJECT_FILE}: invalid locale record {record!r}")
        try:
            codes.append(check_locale_code(record.get("code")))
            check_locale_name(record.get("name"))
        except Invalid as error:
            raise Invalid(f"{PROJECT_FILE}: invalid locale record {record!r}: {error.message}") from None
    if len(set(codes)) != len(codes):
        raise Invalid(f"{PROJECT_FILE}: a locale is listed twice")
    _string_fields(PROJECT_FILE, meta, ("id", "name", "created"))  # exports and pages print them as text
    if meta.get("source") not in codes:
        raise Invalid(f"{PROJECT_FILE}: the source locale {meta.get('source')!r} is not among the locales")
    for field in ("chunk_size", "next_seq"):
        if not isinstance(meta.get(field), int) or isinstance(meta.get(field), bool) or meta[field] < 0:
            raise Invalid(f"{PROJECT_FILE}: `{field}` must be a non-negative integer")
    if meta["chunk_size"] < 1:
        raise Invalid(f"{PROJECT_FILE}: `chunk_size` must be positive")
    tags = meta.get("tags", [])
    if not isinstance(tags, list):
        raise Invalid(f"{PROJECT_FILE}: `tags` must be a list of strings")
    for tag in tags:
        _field(PROJECT_FILE, check_stored_tag, tag)
    return meta


def _field(where: str, rule: Callable[[Any], Any], value: Any) -> None:
    """Apply the API's rule for a field (storage.fields) to a pushed value, naming where it is."""
    try:
        rule(value)
    except Invalid as error:
        raise Invalid(f"{where}: {error.message}") from None


def _string_fields(where: str, record: dict[str, Any], names: Iterable[str]) -> None:
    for name in names:
        if name in record:
            _field(where, partial(check_string, name), record[name])


def check_asset(where: str, asset_id: str, record: dict[str, Any], meta: dict[str, Any]) -> None:
    # the API's own rules: a push creates only IDs the API could create and address again
    _field(where, lambda value: check_addressable(check_asset_id(value)), asset_id)
    n = record.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < meta["next_seq"]:
        raise Invalid(f"{where}: `n` must be an integer below next_seq ({meta['next_seq']})")
    _field(where, check_asset_type, record.get("type"))
    _field(where, check_printf, record.get("printf", ""))
    _string_fields(where, record, ("context", "notes", "created", "modified", "plural_of"))
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise Invalid(f"{where}: `tags` must be a list of strings")
    unknown = [tag for tag in tags if tag not in meta.get("tags", [])]
    if unknown:
        raise Invalid(f"{where}: tag {unknown[0]!r} is not in {PROJECT_FILE}")
    plurals = record.get("plurals", [])
    if not isinstance(plurals, list) or not all(isinstance(member, str) for member in plurals):
        raise Invalid(f"{where}: `plurals` must be a list of asset IDs")
    _field(where, check_aliases, record.get("aliases", {}))
    if "max_length" in record:
        _field(where, check_max_length, record["max_length"])
    if "meta" in record:
        _field(where, check_asset_meta, record["meta"])


def _check_numbered_asset(where: str, asset_id: str, record: dict[str, Any], meta: dict[str, Any], chunk: int,
                          numbers: dict[int, str]) -> None:
    """An asset record valid in itself, in the chunk its number belongs to, with a number no other asset has
    (`numbers`, number -> asset ID, is filled as assets are checked)."""
    check_asset(where, asset_id, record, meta)
    size = meta["chunk_size"]
    if record["n"] // size != chunk:
        raise Invalid(f"{where}: n={record['n']} belongs in chunk {record['n'] // size:04d}")
    if record["n"] in numbers:
        raise Invalid(f"{where}: n={record['n']} is also the number of {numbers[record['n']]!r}")
    numbers[record["n"]] = asset_id


def check_glossary(records: Records) -> None:
    """Every term of glossary.json, as the API's rules for a term and its record have it."""
    for term, record in records.items():
        where = f"{GLOSSARY_FILE} term {term!r}"
        _field(where, check_term, term)
        _field(where, check_term_record, record)


def check_translation(where: str, record: dict[str, Any]) -> None:
    _field(where, check_text, record.get("text"))
    rev = record.get("rev")
    if not isinstance(rev, int) or isinstance(rev, bool) or rev < 1:
        raise Invalid(f"{where}: `rev` must be a positive integer")
    if "flag" in record:
        _field(where, check_flag, record["flag"])
    for name in ("author", "pusher", "flagger"):
        if name in record and not isinstance(record[name], dict):
            raise Invalid(f"{where}: `{name}` must be an object")
    _string_fields(where, record, ("modified", "flagged"))


MEMORY_UNIT_FIELDS = {"file", "texts", "author"}


def check_memory_unit(where: str, unit_id: str, record: Any) -> None:
    """A unit of memory.json: {"file": the TMX file's name, "texts": {locale: text} (two or more), "author"?}; the
    rule the import (storage.memory) and a push's checks share."""
    _field(where, check_asset_id, unit_id)
    if not isinstance(record, dict) or not set(record) <= MEMORY_UNIT_FIELDS:
        raise Invalid(f"{where}: a memory unit is an object of {', '.join(sorted(MEMORY_UNIT_FIELDS))}")
    _field(where, partial(check_string, "file"), record.get("file"))
    texts = record.get("texts")
    if not isinstance(texts, dict) or len(texts) < 2:
        raise Invalid(f"{where}: `texts` must map two locales or more to their texts")
    for code, text in texts.items():
        _field(where, check_locale_code, code)
        _field(where, check_text, text)
    if "author" in record and not isinstance(record["author"], dict):
        raise Invalid(f"{where}: `author` must be an object")


def _chunk_number(path: str) -> int:
    """The chunk of a path `_files` listed (it admits only canonical names, see snapshot.chunk_number)."""
    number = chunk_number(path.rsplit("/", 1)[1])
    assert number is not None
    return number


def _partners(record: dict[str, Any] | None) -> list[str]:
    """The assets a record's plural links name."""
    if not record:
        return []
    parent = record.get("plural_of")
    return list(record.get("plurals", [])) + ([parent] if isinstance(parent, str) else [])


def _chunks_by_blob(snapshot: Snapshot) -> dict[bytes, Chunk[Any]]:
    found: dict[bytes, Chunk[Any]] = {snapshot.files[asset_path(number)]: chunk
                                      for number, chunk in snapshot.asset_chunks.items()}
    for code, chunks in snapshot.locale_chunks.items():
        for number, chunk in chunks.items():
            found[snapshot.files[locale_path(code, number)]] = chunk
    return found


class CommitChecker:
    """Checks commits of one repository (or of a push still in quarantine), caching work per blob."""

    def __init__(self, repo: GitRepo, is_live_key: Callable[[str], bool], known: Snapshot | None = None):
        """`known`: a snapshot of a commit already valid (the project's head), whose files and parsed chunks
        the checker reuses instead of reading them again."""
        self.repo = repo
        self.is_live_key = is_live_key
        self._parsed: dict[bytes, Any] = {}
        self._scanned: set[bytes] = set()
        self._chunks: dict[bytes, Chunk] = {}
        self._layouts: dict[bytes, dict[str, bytes]] = {}
        # the project's chunk size, which only its creation sets (no API write changes it, so no push may)
        self._chunk_size = known.chunk_size if known is not None and known.trees.get("") else None
        self._max_entries = 0  # per catalogue file: the chunk size of the commit being checked
        if known is not None and known.trees.get(""):
            self._layouts[known.trees[""]] = known.files
            self._chunks.update(_chunks_by_blob(known))

    def check(self, commit: bytes, full: bool = False) -> None:
        """Raise Invalid (its message names the commit, file and problem) unless `commit` is a valid project.

        A commit whose first parent is valid (already in the project, or checked before it: pushes are checked
        oldest first) is checked for what it changes: the files whose blobs differ and the records they can
        affect. A root commit, a change of locales, tags or chunk size, or `full`, checks everything.
        """
        try:
            self._refuse_keys("its message", self.repo.read_raw(commit))  # authors and messages stay in history
            parsed = self.repo.read_commit(commit)
            if full or not parsed.parents or not self._check_changes(parsed.tree,
                                                                     self.repo.read_commit(parsed.parents[0]).tree):
                self._check_all(parsed.tree)
        except Invalid as error:
            raise Invalid(f"commit {commit.decode()[:12]}: {error.message}") from None

    # ----------------------------------------------------------------- the changes of one commit
    def _check_changes(self, tree: bytes, parent_tree: bytes) -> bool:
        """Check what `tree` changes from the valid `parent_tree`; False when only a full check will do."""
        files, before = self._files(tree), self._layout(parent_tree)
        if PROJECT_FILE not in files:
            raise Invalid(f"{PROJECT_FILE} is missing")
        changed = {path for path, blob in files.items() if before.get(path) != blob}
        for path in changed:
            self._scan_for_keys(path, files[path])
        meta = self._project_meta(files)
        if PROJECT_FILE in changed:
            old = self._parse(PROJECT_FILE, before[PROJECT_FILE], project=True)
            if {**old, "next_seq": 0} != {**meta, "next_seq": 0} or meta["next_seq"] < old["next_seq"]:
                return False  # locales, tags or chunking changed: every file may be affected
        codes = {record["code"] for record in meta["locales"]}
        for path in files:
            if path.startswith(LOCALES_DIR + "/") and path.split("/")[1] not in codes:
                raise Invalid(f"{path}: locale {path.split('/')[1]!r} is not in {PROJECT_FILE}")
        asset_paths = {path for path in set(files) | set(before) if path.startswith(ASSETS_DIR + "/")}
        changed_chunks = {_chunk_number(path) for path in asset_paths if files.get(path) != before.get(path)}
        for path in sorted(changed):  # every changed file parses before anything is read from it line by line
            if path == GLOSSARY_FILE:
                check_glossary(self._parse(path, files[path]))
            elif path == MEMORY_FILE:
                self._check_memory(files[path])
            elif path != PROJECT_FILE:
                self._parse(path, files[path])
        index = self._asset_index(files)
        touched: set[str] = set()
        for number in changed_chunks:
            path = asset_path(number)
            records = self._parse(path, files[path]) if path in files else {}
            self._check_asset_chunk(path, number, records, index, meta)
            previous = self._chunk(before[path]) if path in before else None
            for asset_id in set(records) | set(previous.keys() if previous else ()):
                touched.add(asset_id)
                for version in (records.get(asset_id), previous.get(asset_id) if previous else None):
                    touched.update(_partners(version))
        self._check_links_of(touched, files, index)
        for path in files:
            if not path.startswith(LOCALES_DIR + "/"):
                continue
            number = _chunk_number(path)
            if path in changed:
                self._check_locale_chunk(path, number, self._parse(path, files[path]), index)
            elif number in changed_chunks:  # its assets changed: every translation must still have one
                for asset_id in self._chunk(files[path]).keys():
                    if index.get(asset_id) != number:
                        raise Invalid(f"{path} translation of {asset_id!r}: no such asset in assets/"
                                      f"{number:04d}.json")
        return True

    def _check_asset_chunk(self, path: str, number: int, records: Records, index: dict[str, int],
                           meta: dict[str, Any]) -> None:
        numbers: dict[int, str] = {}
        for asset_id, record in records.items():
            where = f"{path} asset {asset_id!r}"
            if index.get(asset_id) != number:
                raise Invalid(f"{where}: the asset is in two chunks")
            _check_numbered_asset(where, asset_id, record, meta, number, numbers)

    def _check_locale_chunk(self, path: str, number: int, records: Records, index: dict[str, int]) -> None:
        for asset_id, record in records.items():
            where = f"{path} translation of {asset_id!r}"
            if index.get(asset_id) != number:
                raise Invalid(f"{where}: no such asset in {asset_path(number)}")
            check_translation(where, record)

    def _check_links_of(self, asset_ids: set[str], files: dict[str, bytes], index: dict[str, int]) -> None:
        """The plural links of these assets (those that still exist) point at assets that link back."""
        def record_of(asset_id: str) -> dict[str, Any] | None:
            number = index.get(asset_id)
            return None if number is None else self._chunk(files[asset_path(number)]).get(asset_id)

        subset = {asset_id: record for asset_id in asset_ids if (record := record_of(asset_id)) is not None}
        for record in list(subset.values()):
            for partner in _partners(record):
                if partner not in subset and (found := record_of(partner)) is not None:
                    subset[partner] = found
        missing = {partner for record in subset.values() for partner in _partners(record)} - set(subset)
        for asset_id, record in subset.items():
            for partner in _partners(record):
                if partner in missing:
                    kind = "links plural form" if partner in record.get("plurals", []) else "is a plural form of"
                    raise Invalid(f"asset {asset_id!r} {kind} {partner!r}, which is not an asset")
        self._check_plural_links(subset)

    def _asset_index(self, files: dict[str, bytes]) -> dict[str, int]:
        """Asset id -> chunk number, from the keys of every asset chunk (an id in two chunks: Invalid)."""
        index: dict[str, int] = {}
        for path, blob in files.items():
            if path.startswith(ASSETS_DIR + "/"):
                number = _chunk_number(path)
                for asset_id in self._chunk(blob).keys():
                    if index.setdefault(asset_id, number) != number:
                        raise Invalid(f"{path} asset {asset_id!r}: the asset is in two chunks")
        return index

    def _chunk(self, blob: bytes) -> Chunk:
        """A catalogue read line by line (keys at once, values when asked), cached by blob."""
        chunk = self._chunks.get(blob)
        if chunk is None:
            chunk = self._chunks[blob] = Chunk.parse(self.repo.read_raw(blob))
        return chunk

    def _layout(self, tree: bytes) -> dict[str, bytes]:
        """The files of a commit that is already valid (no checks)."""
        found = self._layouts.get(tree)
        if found is None:
            found = self._layouts[tree] = self._files(tree)
        return found

    # ----------------------------------------------------------------- a whole commit
    def _check_all(self, tree: bytes) -> None:
        files = self._files(tree)
        if PROJECT_FILE not in files:
            raise Invalid(f"{PROJECT_FILE} is missing")
        for path, blob in files.items():
            self._scan_for_keys(path, blob)
        meta = self._project_meta(files)
        if GLOSSARY_FILE in files:
            check_glossary(self._parse(GLOSSARY_FILE, files[GLOSSARY_FILE]))
        codes = {record["code"] for record in meta["locales"]}
        assets: Records = {}
        chunk_of: dict[str, int] = {}
        numbers: dict[int, str] = {}
        for path, blob in files.items():
            parts = path.split("/")
            if parts[0] != ASSETS_DIR:
                continue
            chunk = _chunk_number(path)
            for asset_id, record in self._parse(path, blob).items():
                where = f"{path} asset {asset_id!r}"
                if asset_id in assets:
                    raise Invalid(f"{where}: the asset is in two chunks")
                _check_numbered_asset(where, asset_id, record, meta, chunk, numbers)
                assets[asset_id], chunk_of[asset_id] = record, chunk
        self._check_plural_links(assets)
        if MEMORY_FILE in files:
            self._check_memory(files[MEMORY_FILE])
        for path, blob in files.items():
            parts = path.split("/")
            if parts[0] != LOCALES_DIR:
                continue
            if parts[1] not in codes:
                raise Invalid(f"{path}: locale {parts[1]!r} is not in {PROJECT_FILE}")
            chunk = _chunk_number(path)
            for asset_id, record in self._parse(path, blob).items():
                where = f"{path} translation of {asset_id!r}"
                if chunk_of.get(asset_id) != chunk:
                    raise Invalid(f"{where}: no such asset in {asset_path(chunk)}")
                check_translation(where, record)

    @staticmethod
    def _check_plural_links(assets: Records) -> None:
        for asset_id, record in assets.items():
            for member in record.get("plurals", []):
                if member not in assets:
                    raise Invalid(f"asset {asset_id!r} links plural form {member!r}, which is not an asset")
                if assets[member].get("plural_of") != asset_id:
                    raise Invalid(f"asset {asset_id!r} links plural form {member!r}, which does not link back")
            parent = record.get("plural_of")
            if parent is not None:
                if parent not in assets:
                    raise Invalid(f"asset {asset_id!r} is a plural form of {parent!r}, which is not an asset")
                if asset_id not in assets[parent].get("plurals", []):
                    raise Invalid(f"asset {asset_id!r} is a plural form of {parent!r}, which does not list it")

    def _files(self, root: bytes) -> dict[str, bytes]:
        """Every file of the tree, path -> blob id, after checking the layout and the file modes."""
        files: dict[str, bytes] = {}
        for name, (mode, hex_id) in self.repo.read_tree(root).items():
            if name in TOP_FILES and mode == 0o100644:
                files[name] = hex_id
            elif name == ASSETS_DIR and stat.S_ISDIR(mode):
                for chunk, (chunk_mode, blob) in self.repo.read_tree(hex_id).items():
                    files[self._chunk_path(f"{ASSETS_DIR}/{chunk}", chunk_mode)] = blob
            elif name == LOCALES_DIR and stat.S_ISDIR(mode):
                for code, (code_mode, tree) in self.repo.read_tree(hex_id).items():
                    if not stat.S_ISDIR(code_mode) or not is_canonical_locale(code):
                        raise Invalid(f"{LOCALES_DIR}/{code}: not a locale directory")
                    for chunk, (chunk_mode, blob) in self.repo.read_tree(tree).items():
                        files[self._chunk_path(f"{LOCALES_DIR}/{code}/{chunk}", chunk_mode)] = blob
            else:
                raise Invalid(f"unexpected {name!r}: a project holds only {', '.join(TOP_FILES)}, "
                              f"{ASSETS_DIR}/ and {LOCALES_DIR}/ (regular files)")
        return files

    @staticmethod
    def _chunk_path(path: str, mode: int) -> str:
        if mode != 0o100644 or chunk_number(path.rsplit("/", 1)[1]) is None:
            raise Invalid(f"unexpected {path!r}: catalogue files are regular files named NNNN.json, one name "
                          "per chunk (ASCII digits, at least four, no other leading zeros)")
        return path

    def _project_meta(self, files: dict[str, bytes]) -> dict[str, Any]:
        """The checked project.json of a commit; its chunk size bounds the entries of every catalogue read next."""
        meta = check_project(self._parse(PROJECT_FILE, files[PROJECT_FILE], project=True))
        if self._chunk_size is not None and meta["chunk_size"] != self._chunk_size:
            raise Invalid(f"{PROJECT_FILE}: `chunk_size` is {self._chunk_size} in this project and cannot change")
        self._max_entries = meta["chunk_size"]
        return meta

    def _check_memory(self, blob: bytes) -> None:
        if blob in self._parsed:
            return
        units = parse_catalogue(MEMORY_FILE, self.repo.read_raw(blob), MAX_UNITS_PER_FILE)
        for unit_id, record in units.items():
            check_memory_unit(f"{MEMORY_FILE} unit {unit_id!r}", unit_id, record)
        self._parsed[blob] = units

    def _parse(self, path: str, blob: bytes, project: bool = False) -> Any:
        cached = self._parsed.get(blob)
        if cached is None:
            data = self.repo.read_raw(blob)
            if project:
                try:
                    cached = json.loads(data)
                except ValueError as error:
                    raise Invalid(f"{path}: invalid JSON ({error})") from None
                refuse_unencodable(path, cached)
            else:
                limit = MAX_GLOSSARY_TERMS if path == GLOSSARY_FILE else self._max_entries
                cached = parse_catalogue(path, data, limit)
            self._parsed[blob] = cached
        return cached

    def _scan_for_keys(self, path: str, blob: bytes) -> None:
        if blob in self._scanned:
            return
        data = self.repo.read_raw(blob)
        check_file_size(path, len(data))
        self._refuse_keys(path, data)
        self._scanned.add(blob)

    def _refuse_keys(self, what: str, data: bytes) -> None:
        refuse_keys(f"{what}:", data, self.is_live_key)

    def tagged_commit(self, target: bytes) -> bytes:
        """The commit a pushed tag names, through any annotated tags (each one's message scanned for keys);
        Invalid when it names anything else: a tag of a blob or a tree would serve data no check has read."""
        for _ in range(MAX_TAG_CHAIN):
            kind = self.repo.read_raw_type(target)
            if kind == b"commit":
                return target
            if kind != b"tag":
                raise Invalid(f"the tag names a {kind.decode()} ({target.decode()[:12]}); a tag must name a "
                              "commit or an annotated tag of one")
            self._refuse_keys(f"the message of tag object {target.decode()[:12]}", self.repo.read_raw(target))
            target = self.repo.read_tag_target(target)
        raise Invalid(f"the tag names a chain of more than {MAX_TAG_CHAIN} tag objects")
