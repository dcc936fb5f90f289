"""Is a commit a valid project? The checks a push must pass before any ref moves (storage layout, snapshot.py).

A pushed commit must hold exactly the files Gloss writes, each a catalogue that the line-based reader and a
JSON parser read alike, and the invariants every reader relies on:

- only `project.json`, `assets/NNNN.json` and `locales/<code>/NNNN.json`, regular files, under a size limit;
- `project.json` names the source locale among its locales, and every `locales/<code>/` is one of them;
- every asset record has a unique sequence number `n` in its chunk's range, a known type and printf style,
  registered tags, and plural links whose other end exists and links back;
- every translation belongs to an asset of the same chunk and has a text and a revision;
- no file holds a live API key (keys are never to enter a project repository).

Results per blob are cached, so checking a series of commits costs the files each one changes plus one pass
over the records for the cross-file invariants.
"""
from __future__ import annotations

import json
import re
import stat
from typing import Any, Callable, Iterable

from .canonical import _line_key
from .errors import Invalid
from .gitrepo import GitRepo
from .operations import ASSET_TYPES, FLAGS, PRINTF_STYLES, check_asset_id
from .snapshot import ASSETS_DIR, LOCALE_CODE, LOCALES_DIR, PROJECT_FILE

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_TEXT_CHARS = 1024 * 1024
CHUNK_NAME = re.compile(r"^\d{4,}\.json$")
# A Gloss key is `secrets.token_urlsafe(24)`: 32 URL-safe characters.
KEY_CANDIDATE = re.compile(rb"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])")

Records = dict[str, dict[str, Any]]


def parse_catalogue(path: str, data: bytes) -> Records:
    """A canonical catalogue file as id -> record; Invalid names the file and line that is wrong."""
    if len(data) > MAX_FILE_BYTES:
        raise Invalid(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
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
    return records


def check_project(meta: Any) -> dict[str, Any]:
    if not isinstance(meta, dict):
        raise Invalid(f"{PROJECT_FILE}: not a JSON object")
    locales = meta.get("locales")
    if not isinstance(locales, list) or not locales:
        raise Invalid(f"{PROJECT_FILE}: `locales` must be a non-empty list")
    codes = []
    for record in locales:
        if not (isinstance(record, dict) and isinstance(record.get("code"), str)
                and isinstance(record.get("name"), str) and LOCALE_CODE.match(record["code"])):
            raise Invalid(f"{PROJECT_FILE}: invalid locale record {record!r}")
        codes.append(record["code"])
    if len(set(codes)) != len(codes):
        raise Invalid(f"{PROJECT_FILE}: a locale is listed twice")
    if meta.get("source") not in codes:
        raise Invalid(f"{PROJECT_FILE}: the source locale {meta.get('source')!r} is not among the locales")
    for field in ("chunk_size", "next_seq"):
        if not isinstance(meta.get(field), int) or isinstance(meta.get(field), bool) or meta[field] < 0:
            raise Invalid(f"{PROJECT_FILE}: `{field}` must be a non-negative integer")
    if meta["chunk_size"] < 1:
        raise Invalid(f"{PROJECT_FILE}: `chunk_size` must be positive")
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise Invalid(f"{PROJECT_FILE}: `tags` must be a list of strings")
    return meta


def _string_fields(where: str, record: dict[str, Any], names: Iterable[str]) -> None:
    for name in names:
        if name in record and not isinstance(record[name], str):
            raise Invalid(f"{where}: `{name}` must be a string")


def check_asset(where: str, asset_id: str, record: dict[str, Any], meta: dict[str, Any]) -> None:
    try:
        check_asset_id(asset_id)
    except Invalid as error:
        raise Invalid(f"{where}: {error.message}") from None
    n = record.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < meta["next_seq"]:
        raise Invalid(f"{where}: `n` must be an integer below next_seq ({meta['next_seq']})")
    if record.get("type") not in ASSET_TYPES:
        raise Invalid(f"{where}: `type` must be one of {', '.join(ASSET_TYPES)}")
    if record.get("printf", "") not in PRINTF_STYLES:
        raise Invalid(f"{where}: unknown printf style {record.get('printf')!r}")
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
    aliases = record.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise Invalid(f"{where}: `aliases` must map names to strings")


def check_translation(where: str, record: dict[str, Any]) -> None:
    if not isinstance(record.get("text"), str):
        raise Invalid(f"{where}: `text` must be a string")
    if len(record["text"]) > MAX_TEXT_CHARS:
        raise Invalid(f"{where}: text longer than {MAX_TEXT_CHARS} characters")
    rev = record.get("rev")
    if not isinstance(rev, int) or isinstance(rev, bool) or rev < 1:
        raise Invalid(f"{where}: `rev` must be a positive integer")
    if "flag" in record and record["flag"] not in FLAGS:
        raise Invalid(f"{where}: unknown flag {record['flag']!r}")
    for name in ("author", "flagger"):
        if name in record and not isinstance(record[name], dict):
            raise Invalid(f"{where}: `{name}` must be an object")
    _string_fields(where, record, ("modified", "flagged"))


class CommitChecker:
    """Checks commits of one repository (or of a push still in quarantine), caching work per blob."""

    def __init__(self, repo: GitRepo, is_live_key: Callable[[str], bool]):
        self.repo = repo
        self.is_live_key = is_live_key
        self._parsed: dict[bytes, Any] = {}
        self._scanned: set[bytes] = set()

    def check(self, commit: bytes) -> None:
        """Raise Invalid (its message names the commit, file and problem) unless `commit` is a valid project."""
        try:
            self._check(commit)
        except Invalid as error:
            raise Invalid(f"commit {commit.decode()[:12]}: {error.message}") from None

    def _check(self, commit: bytes) -> None:
        files = self._files(self.repo.read_commit(commit).tree)
        if PROJECT_FILE not in files:
            raise Invalid(f"{PROJECT_FILE} is missing")
        for path, blob in files.items():
            self._scan_for_keys(path, blob)
        meta = check_project(self._parse(PROJECT_FILE, files[PROJECT_FILE], project=True))
        codes = {record["code"] for record in meta["locales"]}
        size = meta["chunk_size"]
        assets: Records = {}
        chunk_of: dict[str, int] = {}
        numbers: dict[int, str] = {}
        for path, blob in files.items():
            parts = path.split("/")
            if parts[0] != ASSETS_DIR:
                continue
            chunk = int(parts[1].split(".")[0])
            for asset_id, record in self._parse(path, blob).items():
                where = f"{path} asset {asset_id!r}"
                if asset_id in assets:
                    raise Invalid(f"{where}: the asset is in two chunks")
                check_asset(where, asset_id, record, meta)
                if record["n"] // size != chunk:
                    raise Invalid(f"{where}: n={record['n']} belongs in chunk {record['n'] // size:04d}")
                if record["n"] in numbers:
                    raise Invalid(f"{where}: n={record['n']} is also the number of {numbers[record['n']]!r}")
                numbers[record["n"]] = asset_id
                assets[asset_id], chunk_of[asset_id] = record, chunk
        self._check_plural_links(assets)
        for path, blob in files.items():
            parts = path.split("/")
            if parts[0] != LOCALES_DIR:
                continue
            if parts[1] not in codes:
                raise Invalid(f"{path}: locale {parts[1]!r} is not in {PROJECT_FILE}")
            chunk = int(parts[2].split(".")[0])
            for asset_id, record in self._parse(path, blob).items():
                where = f"{path} translation of {asset_id!r}"
                if chunk_of.get(asset_id) != chunk:
                    raise Invalid(f"{where}: no such asset in assets/{parts[2]}")
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
            if name == PROJECT_FILE and mode == 0o100644:
                files[name] = hex_id
            elif name == ASSETS_DIR and stat.S_ISDIR(mode):
                for chunk, (chunk_mode, blob) in self.repo.read_tree(hex_id).items():
                    files[self._chunk_path(f"{ASSETS_DIR}/{chunk}", chunk_mode)] = blob
            elif name == LOCALES_DIR and stat.S_ISDIR(mode):
                for code, (code_mode, tree) in self.repo.read_tree(hex_id).items():
                    if not stat.S_ISDIR(code_mode) or not LOCALE_CODE.match(code):
                        raise Invalid(f"{LOCALES_DIR}/{code}: not a locale directory")
                    for chunk, (chunk_mode, blob) in self.repo.read_tree(tree).items():
                        files[self._chunk_path(f"{LOCALES_DIR}/{code}/{chunk}", chunk_mode)] = blob
            else:
                raise Invalid(f"unexpected {name!r}: a project holds only {PROJECT_FILE}, "
                              f"{ASSETS_DIR}/ and {LOCALES_DIR}/ (regular files)")
        return files

    @staticmethod
    def _chunk_path(path: str, mode: int) -> str:
        if mode != 0o100644 or not CHUNK_NAME.match(path.rsplit("/", 1)[1]):
            raise Invalid(f"unexpected {path!r}: catalogue files are regular files named NNNN.json")
        return path

    def _parse(self, path: str, blob: bytes, project: bool = False) -> Any:
        cached = self._parsed.get(blob)
        if cached is None:
            data = self.repo.read_raw(blob)
            if project:
                try:
                    cached = json.loads(data)
                except ValueError as error:
                    raise Invalid(f"{path}: invalid JSON ({error})") from None
            else:
                cached = parse_catalogue(path, data)
            self._parsed[blob] = cached
        return cached

    def _scan_for_keys(self, path: str, blob: bytes) -> None:
        if blob in self._scanned:
            return
        data = self.repo.read_raw(blob)
        if len(data) > MAX_FILE_BYTES:
            raise Invalid(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        for match in KEY_CANDIDATE.finditer(data):
            if self.is_live_key(match.group().decode("ascii")):
                raise Invalid(f"{path}: contains an API key; keys must never enter a project repository")
        self._scanned.add(blob)
