"""The OpenAPI 3.1 description of the Gloss API, served at GET /api/openapi.json.

Written by hand from the behaviour (a test checks that every registered route appears here and that every
operation here is a registered route). Aliases (`.json` spellings, legacy paths) are listed as operations
of their own, marked `deprecated` where Loco deprecated them.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint

from formats.registry import FORMATS, FormatSpec, aliases_of, extensions
from storage.keys import access_types_allowed
from storage.webhooks import EVENTS
from vocabulary import ASSET_PRINTF, ASSET_TYPES, DEFAULT_STATES, FLAGS, PRINTF_STYLES, STATUSES
import limits

from .jsonio import render
from .versioning import API_VERSION

bp = Blueprint("openapi", __name__)

KEY_SECURITY: list[dict[str, list[str]]] = [{"loco": []}, {"service": []}, {"basic": []}, {"query": []}]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ref("Error"), description)


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}, "description": description}


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema or {"type": "string"},
            "description": description}


def _form(properties: dict[str, dict[str, Any]], required: list[str] | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": schema},
                                          "multipart/form-data": {"schema": schema}}}


def _raw(description: str) -> dict[str, Any]:
    return {"required": False, "description": description,
            "content": {"*/*": {"schema": {"type": "string"}}}}


def _patch(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


STRING = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
DATE = {"type": ["string", "null"], "format": "date-time"}
USER_OR_NULL = {"oneOf": [_ref("User"), {"type": "null"}]}
TRANSLATION_FIELDS = {
    "status": {"type": "string", "description": "translated, untranslated, blank-translation or the flag name"},
    "flagged": BOOL, "flag": {"type": "string", "description": "the flag, \"\" when none"},
    "translated": BOOL, "translation": STRING, "revision": INT, "modified": DATE,
    "author": USER_OR_NULL, "flagger": USER_OR_NULL,
}
PUSHED_BY = {"allOf": [_ref("User")],
             "description": "only for a text a Git push made: the pushing key's user (the merge commit's "
                            "committer), where `author` is the name the pushed commit gave"}

CONFLICT = {"type": "object", "required": ["asset", "locale", "field", "base", "ours", "theirs"], "properties": {
    "asset": STRING, "locale": {"type": ["string", "null"], "description": "null: a field of the asset itself"},
    "field": {"type": "string", "description": "text, flag, or the asset's field (notes, context, plural_of…)"},
    "base": {}, "ours": {}, "theirs": {}}}

SCHEMAS: dict[str, Any] = {
    "Branch": {"type": "object", "required": ["name", "head", "revisions", "ahead", "behind"], "properties": {
        "name": STRING, "head": STRING, "revisions": {"type": "integer", "description": "commits on the branch"},
        "ahead": {"type": "integer", "description": "commits main lacks"},
        "behind": {"type": "integer", "description": "commits of main the branch lacks"},
        "from": {"type": ["string", "null"]}, "base": {"type": ["string", "null"]}, "created": DATE}},
    "Merge": {"type": "object", "required": ["merged", "commit", "changes", "branch", "into"], "properties": {
        "merged": BOOL, "commit": STRING, "changes": INT, "branch": STRING, "into": STRING}},
    "MergeConflicts": {"type": "object", "required": ["status", "error", "conflicts"], "properties": {
        "status": INT, "error": STRING, "conflicts": {"type": "array", "items": CONFLICT}}},
    "Error": {"type": "object", "required": ["status", "error"],
              "properties": {"status": INT, "error": STRING}},
    "Success": {"type": "object", "required": ["status", "message"],
                "properties": {"status": INT, "message": STRING}},
    "Ping": {"type": "object", "properties": {"version": STRING, "build": STRING}},
    "User": {"type": "object", "properties": {"id": INT, "name": STRING, "email": STRING}},
    "Credentials": {"type": "object", "required": ["user", "group", "project"], "properties": {
        "user": _ref("User"),
        "group": {"type": "object", "properties": {"id": INT, "name": STRING, "url": STRING}},
        "project": {"type": "object", "properties": {"id": INT, "name": STRING, "slug": STRING, "url": STRING}}}},
    "Asset": {"type": "object", "required": ["id", "type", "context", "notes", "modified", "plurals", "tags"],
              "properties": {
                  "id": STRING, "type": {"enum": list(ASSET_TYPES)}, "context": STRING, "notes": STRING,
                  "printf": {"enum": list(ASSET_PRINTF)},
                  "created": DATE, "modified": DATE,
                  "plurals": {"type": "integer", "description": "number of linked plural-form assets"},
                  "tags": {"type": "array", "items": STRING},
                  "aliases": {"type": "object", "additionalProperties": STRING},
                  "progress": {"type": "object", "description": "counts of locales",
                               "properties": {"translated": INT, "untranslated": INT, "flagged": INT}}}},
    "PluralRules": {"type": "object", "properties": {
        "length": INT, "equation": {"type": "string", "description": "gettext expression in n giving a form index"},
        "forms": {"type": "array", "items": {"enum": ["zero", "one", "two", "few", "many", "other"]}}}},
    "Locale": {"type": "object", "required": ["code", "name", "plurals", "progress"], "properties": {
        "code": STRING, "name": STRING, "source": BOOL, "native": {"type": "boolean", "deprecated": True},
        "plurals": _ref("PluralRules"),
        "progress": {"type": "object", "properties": {"translated": INT, "untranslated": INT, "flagged": INT,
                                                      "words": INT}}}},
    "PluralTranslation": {"type": "object", "properties": {
        "id": STRING, "form": {"type": "string", "description": "CLDR category of this form in the locale"},
        "comments": INT, **TRANSLATION_FIELDS}},
    "Translation": {"type": "object", "properties": {
        "id": STRING, "comments": INT, **TRANSLATION_FIELDS, "locale": _ref("Locale"),
        "plurals": {"type": "array", "items": _ref("PluralTranslation"),
                    "description": "the plural-form assets the locale uses: member i is the locale's form i"}}},
    "Revision": {"type": "object", "properties": {
        **TRANSLATION_FIELDS,
        "pushedBy": PUSHED_BY}},
    "Suggestion": {"type": "object", "required": ["text", "score", "source", "origin", "project", "asset",
                                                  "file", "author", "commit"], "properties": {
        "text": STRING, "score": {"type": "integer", "minimum": 0, "maximum": 100,
                                  "description": "similarity of the sources; 100: the same source text"},
        "source": {"type": "string", "description": "the source text the suggested text translates"},
        "origin": {"enum": ["translation", "tmx"]},
        "project": STRING, "asset": {"type": ["string", "null"], "description": "null for a TMX unit"},
        "file": {"type": ["string", "null"], "description": "the TMX file a unit was imported from"},
        "author": {"type": ["string", "null"]}, "commit": {"type": ["string", "null"]}}},
    "TranslationError": {"type": "object", "required": ["id", "status", "source", "errors"], "properties": {
        "id": STRING, "status": STRING, "source": STRING, "target": STRING,
        "errors": {"type": "array", "items": STRING}}},
    "Format": {"type": "object", "required": ["ext", "variant", "label", "readable", "writable", "multi_locale",
                                              "aliases"], "properties": {
        "ext": STRING, "variant": {"type": "string", "description": "\"\" for the extension's default"},
        "label": STRING, "description": STRING, "readable": BOOL, "writable": BOOL, "multi_locale": BOOL,
        "aliases": {"type": "array", "items": STRING, "description": "other extensions meaning this one"},
        "content_type": STRING, "default_index": {"enum": ["id", "text"]},
        "capabilities": {"type": "array", "items": STRING},
        "archive_path": {"type": "string", "description": "file path template inside archive/{ext}.zip"},
        "variant_names": {"type": "array", "items": STRING,
                          "description": "other names of this variant in `format` (`android` for xml's default)"}}},
    "TranslationChange": {"type": "object", "required": ["asset", "locale", "old", "new", "author", "commit"],
                          "properties": {
        "asset": STRING, "locale": STRING,
        "old": {"type": ["string", "null"], "description": "text at `from`; null when untranslated there"},
        "new": {"type": ["string", "null"], "description": "text at `to`; null when untranslated there"},
        "flag": {"type": "string", "description": "the flag at `to`, \"\" when none"},
        "revision": {"type": "integer", "description": "revision at `to` (0 when untranslated)"},
        "author": {"type": ["object", "null"], "properties": {"id": INT, "name": STRING, "email": STRING}},
        "pushedBy": PUSHED_BY,
        "commit": {"type": ["string", "null"], "description": "the newest commit between the refs that made "
                                                              "this change (first-parent history)"}}},
    "Progress": {"type": "object", "additionalProperties": INT,
                 "description": "translated and untranslated always; flagged and each status/flag when present"},
}

ASSET_ID = _path_param("id", "Asset ID (dots allowed; the `.json` suffix is optional where shown)")
PID = _path_param("pid", "Plural-form asset ID")
TAG = _path_param("tag", "Tag name")
LOCALE = _path_param("locale", "Locale code or language tag (fr, fr-FR, fr_FR)")
LEGACY_ASSET_LOCALE = _path_param("id", "Asset ID, then `/` and a locale code (the legacy {id}/{locale} spelling)")
FILTER = _query("filter", "Comma-separated tags: any listed tag matches; `*` any tag; `!tag` excludes")
REF = _query("ref", "Time travel: answer from the project as it was at this commit id, tag or HEAD~N "
                   "(404 when unknown). Exports made this way are dated by the commit.")
BRANCH = _query("branch", "The branch to read or write (GET /api/branches lists them); absent: main. "
                         "404 when the project has no such branch")
# GET operations that render project data and so accept `ref` (every GET with a key but these)
REF_EXCLUDED = ("/api/auth/verify", "/api/import/progress", "/api/diff", "/api/branches", "/api/webhooks")
# Operations on a project's content, which take `branch` (every operation with a key but these)
BRANCH_EXCLUDED = ("/api/import/progress", "/api/branches", "/api/webhooks")
REF_EXCLUDED_ENDINGS = ("/suggestions", "/suggestions.json")  # the memory of the latest versions only
COMMON_ERRORS = {"401": _error("Missing or invalid API key"), "403": _error("The key may not do this")}


def op(summary: str, responses: dict[str, Any], *, parameters: list | None = None, body: dict | None = None,
       description: str = "", kind: str = "read", public: bool = False) -> dict[str, Any]:
    """One operation; `kind` says which key types may call it (x-gloss-access)."""
    operation: dict[str, Any] = {"summary": summary, "responses": responses}
    if description:
        operation["description"] = description
    if parameters:
        operation["parameters"] = parameters
    if body:
        operation["requestBody"] = body
    if public:
        operation["security"] = []
    else:
        operation["x-gloss-access"] = access_types_allowed(kind)
        operation["responses"] = {**responses, **COMMON_ERRORS}
    return operation


def _with_aliases(paths: dict[str, dict[str, Any]], canonical: str, aliases: list[str], deprecated: bool = False):
    for alias in aliases:
        paths[alias] = {method: dict(operation, deprecated=deprecated or operation.get("deprecated", False),
                                     description=(operation.get("description", "") +
                                                  f" Alias of {canonical}.").strip())
                        for method, operation in paths[canonical].items()}


def build_paths() -> dict[str, dict[str, Any]]:
    asset = _json(_ref("Asset"), "The asset")
    assets = _json({"type": "array", "items": _ref("Asset")}, "Assets in creation order")
    done = _json(_ref("Success"), "Done")
    not_found = _error("Asset not in project")
    locale = _json(_ref("Locale"), "The locale")
    translation = _json(_ref("Translation"), "The translation")
    paths: dict[str, dict[str, Any]] = {
        "/api/ping": {"get": op("Check the API is up", {"200": _json(_ref("Ping"), "Version and build")},
                                public=True)},
        "/api/ping/not-found": {"get": op("Always a JSON 404", {"404": _error("Not found")}, public=True)},
        "/api/formats": {"get": op("Every file format: extension, variant, label, what it can do",
                                   {"200": _json({"type": "array", "items": _ref("Format")}, "In registry order")},
                                   public=True, description=formats_table())},
        "/api/openapi.json": {"get": op("This description", {"200": _json({"type": "object"}, "OpenAPI 3.1")},
                                        public=True)},
        "/api/auth/verify": {
            "get": op("Verify a key", {"200": _json(_ref("Credentials"), "Who the key belongs to")}, kind="export"),
            "post": op("Verify a key may write", {"200": _json(_ref("Credentials"), "A full-access key")},
                       kind="write", description="403 for read-only and export keys.")},
        "/api/assets": {
            "get": op("List assets", {"200": assets}, parameters=[FILTER]),
            "post": op("Create an asset", {"201": asset, "409": _error("Asset already exists"),
                                           "400": _error("Neither id nor text given"),
                                           "422": _error("Invalid field value")}, kind="write",
                       description="Blank id: an ID is made from the text, unique in the project. The source "
                                   "translation is created from text unless default=untranslated.",
                       body=_form({"id": {"type": "string", "maxLength": 999}, "text": STRING,
                                   "type": {"enum": list(ASSET_TYPES)}, "context": STRING, "notes": STRING,
                                   "default": {"enum": list(DEFAULT_STATES)}}))},
        "/api/assets/{id}.json": {
            "get": op("Get an asset", {"200": asset, "404": not_found}, parameters=[ASSET_ID]),
            "patch": op("Modify an asset", {"200": asset, "404": not_found, "409": _error("New ID taken"),
                                            "422": _error("Unknown or unpatchable property")},
                        parameters=[ASSET_ID], kind="write",
                        description="A new id renames the asset; translations and history follow it.",
                        body=_patch({"type": "object", "additionalProperties": False, "properties": {
                            "id": STRING, "type": {"enum": list(ASSET_TYPES)}, "context": STRING,
                            "notes": STRING, "printf": {"enum": list(ASSET_PRINTF)},
                            "aliases": {"type": "object", "additionalProperties": STRING},
                            "max_length": {"type": "integer", "minimum": 0,
                                           "description": "the longest a translation should be (0: no limit)"}}})),
            "delete": op("Delete an asset and all its translations", {"200": done, "404": not_found},
                         parameters=[ASSET_ID], kind="write")},
        "/api/assets/{id}/plurals": {
            "get": op("List plural forms (the singular excluded)", {"200": assets, "404": not_found},
                      parameters=[ASSET_ID]),
            "post": op("Add a plural form: a new asset, or link the existing asset pid",
                       {"200": asset, "404": not_found, "409": _error("pid is a plural of another asset"),
                        "422": _error("A plural of a plural")}, parameters=[ASSET_ID], kind="write",
                       body=_form({"text": STRING, "pid": {"type": "string", "maxLength": 999}}))},
        "/api/assets/{id}/plurals/{pid}.json": {
            "delete": op("Unlink a plural form (no asset is deleted)", {"200": done, "404": not_found},
                         parameters=[ASSET_ID, PID], kind="write")},
        "/api/assets/{id}/tags": {
            "post": op("Tag an asset (the tag is created if missing)", {"200": asset, "404": not_found},
                       parameters=[ASSET_ID], kind="write", body=_form({"name": STRING}, ["name"]))},
        "/api/assets/{id}/tags/{tag}.json": {
            "delete": op("Remove one tag from an asset", {"200": done, "404": not_found},
                         parameters=[ASSET_ID, TAG], kind="write")},
        "/api/tags": {
            "get": op("List tags", {"200": _json({"type": "array", "items": STRING}, "Tag names")}),
            "post": op("Create a tag", {"201": done, "409": _error("Tag already exists")}, kind="write",
                       body=_form({"name": STRING}, ["name"]))},
        "/api/tags/{tag}.json": {
            "post": op("Add assets to a tag", {"200": done, "404": _error("Tag or asset not in project")},
                       parameters=[TAG], kind="write", body=_raw("Comma-separated asset IDs")),
            "patch": op("Rename a tag", {"200": done, "404": _error("Tag not in project"),
                                         "409": _error("Name taken")}, parameters=[TAG], kind="write",
                        body=_patch({"type": "object", "properties": {"name": STRING}, "required": ["name"]})),
            "delete": op("Delete a tag (removed from every asset)", {"200": done, "404": _error("Tag not in project")},
                         parameters=[TAG], kind="write")},
        "/api/locales": {
            "get": op("List locales (source first)", {"200": _json({"type": "array", "items": _ref("Locale")},
                                                                   "Locales")}, kind="export"),
            "post": op("Add a locale", {"201": locale, "409": _error("Locale already exists"),
                                        "422": _error("Not a language tag")}, kind="write",
                       body=_form({"code": STRING}, ["code"]))},
        "/api/locales/{locale}": {
            "get": op("Get a locale", {"200": locale, "404": _error("Locale not in project")}, parameters=[LOCALE]),
            "patch": op("Rename or re-code a locale", {"200": locale, "404": _error("Locale not in project"),
                                                       "409": _error("Code taken"),
                                                       "422": _error("Unknown property or bad code")},
                        parameters=[LOCALE], kind="write",
                        body=_patch({"type": "object", "additionalProperties": False,
                                     "properties": {"code": STRING, "name": STRING}})),
            "delete": op("Delete a locale and its translations", {"200": done, "404": _error("Locale not in project"),
                                                                  "422": _error("The source locale")},
                         parameters=[LOCALE], kind="write")},
        "/api/locales/{locale}/errors": {
            "get": op("Quality problems of a locale's translations",
                      {"200": _json({"type": "array", "items": _ref("TranslationError")}, "Problems")},
                      parameters=[LOCALE],
                      description="Placeholders of the source missing or added (printf or ICU), HTML tags "
                                  "mismatched in html assets, empty or whitespace-only text, leading or "
                                  "trailing whitespace differing from the source.")},
        "/api/locales/{locale}/progress": {
            "get": op("Translation progress of a locale", {"200": _json(_ref("Progress"), "Counts")},
                      parameters=[LOCALE, FILTER])},
        "/api/translations/{id}.json": {
            "get": op("All translations of an asset, untranslated locales included",
                      {"200": _json({"type": "array", "items": _ref("Translation")}, "One per locale"),
                       "404": not_found}, parameters=[ASSET_ID])},
        "/api/translations/{id}/{locale}": {
            "get": op("One translation (untranslated: translated false, revision 0)",
                      {"200": translation, "404": not_found}, parameters=[ASSET_ID, LOCALE]),
            "post": op("Translate: the raw body is the text", {"200": translation, "404": not_found},
                       parameters=[ASSET_ID, LOCALE], kind="write", body=_raw("The new text, any Content-Type"),
                       description="Revision 1 on the first translation, +1 on every POST (one commit each); "
                                   "a new text clears the flag; an empty body marks the translation untranslated."),
            "delete": op("Erase a translation (revision back to 0)",
                         {"200": done, "404": _error("Asset not translated in this locale")},
                         parameters=[ASSET_ID, LOCALE], kind="write")},
        "/api/translations/{id}/{locale}/flag": {
            "post": op("Flag a translation (one flag at a time; it stays translated)",
                       {"200": done, "404": _error("Not translated"), "422": _error("Unknown flag")},
                       parameters=[ASSET_ID, LOCALE], kind="write",
                       body=_form({"flag": {"enum": list(FLAGS), "default": "fuzzy"}})),
            "delete": op("Clear the flag", {"200": done, "404": _error("Not flagged")},
                         parameters=[ASSET_ID, LOCALE], kind="write")},
        "/api/translations/{id}/{locale}/revisions": {
            "get": op("Revisions from Git history, newest first",
                      {"200": _json({"type": "array", "items": _ref("Revision")}, "Revisions"), "404": not_found},
                      parameters=[ASSET_ID, LOCALE])},
        "/api/translations/{id}/{locale}/suggestions": {
            "get": op("Translation memory: texts translated for similar source texts, best first",
                      {"200": _json({"type": "array", "items": _ref("Suggestion")}, "Suggestions"),
                       "400": _error("Bad limit, or ref= given"), "404": not_found},
                      parameters=[ASSET_ID, LOCALE,
                                  _query("limit", f"How many (default {limits.DEFAULT_SUGGESTIONS}, at most "
                                                  f"{limits.MAX_SUGGESTIONS})", {"type": "integer"})],
                      description="From the project's translations and those of the projects of its memory "
                                  "group (same source locale), never the asset itself; each names the commit "
                                  "that last changed its text or flag, and its author.")},
    }
    paths["/api/memory/import"] = {"post": op(
        "Import a TMX file into the project's translation memory",
        {"200": _json({"type": "object", "properties": {"units": {"type": "integer"}, "added": {"type": "integer"}}},
                      "Units read, and those new to the memory"),
         "422": _error("Not a TMX file, or a unit beyond a limit")},
        parameters=[_query("filename", "The file's name, shown with its units' suggestions (default memory.tmx)")],
        kind="write", body=_raw("A TMX 1.4b file"),
        description="Units with a text in two locales or more are added to memory.json in the project's "
                    "repository (one commit; none when every unit is there already), and suggested with "
                    "origin tmx.")}
    paths.update(transfer_paths())
    paths.update(webhook_paths())
    paths["/api/diff"] = {"get": op(
        "Translation changes between two versions",
        {"200": {"description": "The changes (JSON), or with format=diff the unified diff of the catalogue files",
                 "content": {"application/json": {"schema": {"type": "array", "items": _ref("TranslationChange")}},
                             "text/x-diff": {"schema": STRING}}},
         "400": _error("Unknown format"), "404": _error("Unknown ref")},
        parameters=[_query("from", "Older version: commit id, tag or HEAD~N (default: the parent of `to`)"),
                    _query("to", "Newer version: commit id, tag or HEAD~N (default: HEAD)"),
                    _query("format", "json (default): a list of changes; diff: `git diff` of the canonical "
                                     "files, one asset per line", {"enum": ["json", "diff"]})],
        description="Every (asset, locale) whose text or flag differs, with the old and new text, the author "
                    "and the commit that made the change.")}
    paths.update(branch_paths())
    _with_aliases(paths, "/api/ping", ["/api/ping.json"], deprecated=True)
    _with_aliases(paths, "/api/ping/not-found", ["/api/ping/not-found.json"], deprecated=True)
    _with_aliases(paths, "/api/formats", ["/api/formats.json"])
    _with_aliases(paths, "/api/auth/verify", ["/api/auth/verify.json"], deprecated=True)
    _with_aliases(paths, "/api/assets", ["/api/assets.json"])
    _with_aliases(paths, "/api/assets/{id}.json", ["/api/assets/{id}"])
    _with_aliases(paths, "/api/assets/{id}/plurals", ["/api/assets/{id}/plurals.json"])
    _with_aliases(paths, "/api/assets/{id}/plurals/{pid}.json", ["/api/assets/{id}/plurals/{pid}"])
    _with_aliases(paths, "/api/assets/{id}/tags", ["/api/assets/{id}/tags.json"], deprecated=True)
    _with_aliases(paths, "/api/assets/{id}/tags/{tag}.json", ["/api/assets/{id}/tags/{tag}"])
    _with_aliases(paths, "/api/tags", ["/api/tags.json"])
    _with_aliases(paths, "/api/tags/{tag}.json", ["/api/tags/{tag}"])
    _with_aliases(paths, "/api/locales", ["/api/locales.json"])
    for sub in ("", "/errors", "/progress"):
        _with_aliases(paths, f"/api/locales/{{locale}}{sub}", [f"/api/locales/{{locale}}{sub}.json"])
    _with_aliases(paths, "/api/translations/{id}.json", ["/api/translations/{id}"])
    legacy_one = {"post": paths["/api/translations/{id}/{locale}"]["post"],
                  "delete": paths["/api/translations/{id}/{locale}"]["delete"]}
    paths["/api/translations/{id}.json"].update(
        {method: dict(operation, deprecated=True, parameters=[LEGACY_ASSET_LOCALE],
                      description="Legacy spelling {id}/{locale}.json: the path is read as asset/locale when "
                                  "that names an asset and a locale of the project.")
         for method, operation in legacy_one.items()})
    _with_aliases(paths, "/api/translations/{id}/{locale}/flag", ["/api/translations/{id}/{locale}/flag.json"])
    _with_aliases(paths, "/api/translations/{id}/{locale}/revisions",
                  ["/api/translations/{id}/{locale}/revisions.json"])
    _with_aliases(paths, "/api/translations/{id}/{locale}/suggestions",
                  ["/api/translations/{id}/{locale}/suggestions.json"])
    _with_aliases(paths, "/api/diff", ["/api/diff.json"])
    _with_aliases(paths, "/api/branches", ["/api/branches.json"])
    for path, operations in paths.items():
        get = operations.get("get")
        if get and "x-gloss-access" in get and not path.startswith(REF_EXCLUDED) \
                and not path.endswith(REF_EXCLUDED_ENDINGS):
            operations["get"] = dict(get, parameters=[*get.get("parameters", []), REF])
        if not path.startswith(BRANCH_EXCLUDED):
            for method, operation in operations.items():
                if "x-gloss-access" in operation:
                    operations[method] = dict(operation, parameters=[*operation.get("parameters", []), BRANCH])
    return paths


def branch_paths() -> dict[str, dict[str, Any]]:
    """GET/POST /api/branches, GET/DELETE /api/branches/{name}, POST /api/branches/{name}/merge."""
    branch = _json(_ref("Branch"), "The branch")
    name = _path_param("branch", "Branch name (slashes allowed, as Git's)")
    unknown = _error("Unknown branch")
    strategy = {"enum": ["ours", "theirs"]}
    resolve = {"type": "array", "items": {"type": "object", "required": ["asset", "strategy"], "properties": {
        "asset": STRING, "locale": {"type": ["string", "null"]}, "strategy": strategy}}}
    return {
        "/api/branches": {
            "get": op("List branches, main first", {"200": _json({"type": "array", "items": _ref("Branch")},
                                                                 "Branches")}),
            "post": op("Create a branch from another (main by default)",
                       {"201": branch, "404": _error("Unknown from branch"), "409": _error("Branch exists"),
                        "422": _error("Invalid branch name")}, kind="write",
                       body=_form({"name": {"type": "string", "maxLength": limits.MAX_BRANCH_NAME_BYTES},
                                   "from": STRING}, ["name"]),
                       description="Names follow `git check-ref-format --branch`, within max_branch_name_bytes.")},
        "/api/branches/{branch}": {
            "get": op("Get a branch", {"200": branch, "404": unknown}, parameters=[name]),
            "delete": op("Delete a branch (never main)", {"200": _json(_ref("Success"), "Done"), "404": unknown,
                                                          "409": _error("main cannot be deleted")},
                         parameters=[name], kind="write")},
        "/api/branches/{branch}/merge": {
            "post": op("Merge a branch into another, key by key",
                       {"200": _json(_ref("Merge"), "Merged (or nothing to merge)"), "404": unknown,
                        "409": _json(_ref("MergeConflicts"), "Keys changed differently on both sides: nothing "
                                                             "was merged")},
                       parameters=[name, _query("into", "The target branch (default main)"),
                                   _query("strategy", "Which side wins every conflicting key", strategy)],
                       kind="write",
                       body={"required": False, "content": {
                           "application/json": {"schema": {"type": "object", "properties": {
                               "strategy": strategy, "resolve": resolve}}},
                           "application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {
                               "strategy": strategy, "resolve": {"type": "string",
                                                                 "description": "the resolve list as JSON"}}}}}},
                       description="One merge commit (two parents, Action merge-branch) on the target, made of "
                                   "the changes the branch made since the merge base: texts, flags, assets, "
                                   "tags, locales, plural links. A key both sides changed differently is a "
                                   "conflict unless `strategy` or a `resolve` entry for it names the side.")},
    }


def _usable(spec: FormatSpec, purpose: str) -> bool:
    return {"read": spec.readable, "write": spec.writable}[purpose]


def ext_param(purpose: str, name: str = "ext") -> dict[str, Any]:
    """The extension path parameter: the registered extensions (and aliases) usable for `purpose`."""
    exts = [ext for ext in extensions() if any(_usable(spec, purpose) for spec in FORMATS if spec.ext == ext)]
    spellings = sorted({*exts, *(alias for ext in exts for alias in aliases_of(ext))})
    what = "readable" if purpose == "read" else "exportable"
    return {"name": name, "in": "path", "required": True, "schema": {"enum": spellings},
            "description": f"File extension of a {what} format (see `format` for its variants and "
                           "GET /api/formats for the list)"}


def variant_param(purpose: str) -> dict[str, Any]:
    """The `format` query parameter: every variant of the registered extensions, named per extension."""
    variants: dict[str, list[str]] = {}
    for spec in FORMATS:
        if _usable(spec, purpose):
            named = [spec.variant] if spec.variant else []
            variants.setdefault(spec.ext, []).extend(named + list(spec.variant_names))
    variants = {ext: names for ext, names in variants.items() if names}
    listed = "; ".join(f"{ext}: {', '.join(names)}" for ext, names in variants.items())
    names = {name for group in variants.values() for name in group}
    defaults = {*extensions(), *(alias for ext in extensions() for alias in aliases_of(ext))}
    return _query("format", f"Format variant of the extension ({listed}); absent, `default` or the extension "
                            "itself means its default", {"enum": ["", "default", *sorted(names | defaults)]})


def formats_table() -> str:
    """A Markdown table of the registry for the description of GET /api/formats."""
    rows = ["| ext | variant | label | read | write | all locales | aliases |", "|---|---|---|---|---|---|---|"]
    for spec in FORMATS:
        rows.append(f"| {spec.ext} | {spec.variant or '(default)'} | {spec.label} | {'yes' if spec.readable else 'no'} "
                    f"| {'yes' if spec.writable else 'no'} | {'yes' if spec.multi_locale else 'no'} "
                    f"| {', '.join(aliases_of(spec.ext))} |")
    return "\n".join(rows)


def archive_layouts() -> str:
    """Where each format puts a locale's file inside an archive, from the registry."""
    layouts = [f"{spec.name}: `{spec.archive_path}`" for spec in FORMATS if spec.writable]
    return ("Each locale's file sits at its format's path ({locale} = pt-BR, {locale_} = pt_BR, "
            "{android} = pt-rBR): " + "; ".join(layouts) + ".")


def single_locale_note() -> str:
    """What all.{ext} gives in a project with one locale, from the registry."""
    quirks = [f"{spec.name} gives {spec.ext} ({spec.single_locale_variant or 'default'})" for spec in FORMATS
              if spec.single_locale_variant is not None]
    return ("A single-locale project gets a single-locale file where the format says so (Loco's flat all.json): "
            + "; ".join(quirks) + ".") if quirks else ""


EXPORT_EXT = ext_param("write")
IMPORT_EXT = ext_param("read")
EXPORT_PARAMS = [
    variant_param("write"),
    FILTER,
    _query("index", "Lookup key: id, text or an alias name (default per format: text for gettext)"),
    _query("source", "Alternative source locale"),
    _query("namespace", "Overrides the project name where a format uses one"),
    _query("order", "created (default) or id", {"enum": ["created", "id"]}),
    _query("status", f"Comma list of {', '.join(STATUSES)}; `!` negates a term; anything else is a 400"),
    _query("fallback", "Locale whose text fills untranslated assets"),
    _query("printf", "Convert placeholders to this style", {"enum": list(PRINTF_STYLES)}),
    _query("charset", "Output encoding; a character it cannot hold is a 406"),
    _query("breaks", "Line endings", {"enum": ["Unix", "DOS", "Mac"]}),
    _query("no-comments", "Drop the banner and redundant comments", {"type": "boolean"}),
    _query("escape-formulas", "CSV: prefix cells starting with = + - @ tab or CR with `'` (OWASP CSV "
           "injection advice)", {"type": "boolean"}),
    _query("no-expand", "Keep dotted keys flat", {"type": "boolean"}),
    _query("no-folding", "Deprecated alias of no-expand", {"type": "boolean"}),
    _query("collisions", "Strategy for keys that collide",
           {"enum": ["overwrite", "ignore", "fail", "auto", "legacy"]}),
]
ARCHIVE_PATH = _query("path", "Where each locale's file sits in the archive (default: the format's layout); "
                       "placeholders {locale}, {locale_}, {lang}, {language}, {script}, {region}, {variant}, "
                       "{android}, {project}, {namespace}, {ext}, {extension} (also spelled {%name})")
IMPORT_PARAMS = [
    _query("index", "Keys are asset IDs (id) or source texts (text); default per format"),
    _query("locale", "Language of the file's translations; auto or absent: from the file"),
    variant_param("read"),
    _query("namespace", "What the export's namespace put around keys (CodeIgniter/constant prefix, nested YAML "
                        "root), taken off; default the project name"),
    _query("async", "Run in the background; answer 201 with a Location header", {"type": "boolean"}),
    *[_query(name, description, {"type": "boolean"}) for name, description in (
        ("ignore-new", "Do not add new assets"), ("ignore-existing", "Do not update existing assets"),
        ("ignore-blank", "Do not import blank translations"),
        ("delete-absent", "Delete project assets that are not in the file"))],
    *[_query(name, description) for name, description in (
        ("tag-new", "Tags for new assets"), ("tag-all", "Tags for every asset in the file"),
        ("untag-all", "Tags removed from every asset in the file"),
        ("tag-updated", "Tags for existing assets the import changed"),
        ("untag-updated", "Tags removed from assets the import changed"),
        ("tag-absent", "Tags for project assets not in the file"),
        ("untag-absent", "Tags removed from project assets not in the file"),
        ("flag-new", "Flag for new translations"), ("flag-updated", "Flag for changed translations"))],
]


def webhook_paths() -> dict[str, dict[str, Any]]:
    hook = {"type": "object", "properties": {
        "id": STRING, "url": STRING, "events": {"type": "array", "items": {"enum": ["*", *EVENTS]}},
        "cursor": {"type": "string", "description": "the last commit delivered"}, "created": DATE,
        "coalesce": {"type": "number", "description": "seconds: commits made within it go in one delivery"},
        "failures": INT, "failing_since": {"type": ["number", "null"]}, "next_attempt": {"type": "number"},
        "failing": {"type": "boolean", "description": "still failing after webhook_retry_seconds"},
        "last_delivery": {"type": ["object", "null"]},
        "secret": {"type": "string", "description": "only in the answer to POST: shown once"}}}
    attempt = {"type": "object", "properties": {
        "id": {"type": "string", "description": "the webhook-id header"}, "time": DATE,
        "status": {"enum": ["delivered", "failed", "skipped"]}, "code": {"type": ["integer", "null"]},
        "error": STRING, "duration_ms": {"type": "number"}, "commits": {"type": ["object", "null"]},
        "events": {"type": "array", "items": STRING}}}
    hook_id = _path_param("id", "Webhook id")
    missing = _error("No such webhook")
    return {
        "/api/webhooks": {
            "get": op("List the project's webhooks", {"200": _json({"type": "array", "items": hook}, "Hooks")},
                      kind="write"),
            "post": op("Create a webhook", {"201": _json(hook, "The hook, with its secret (shown this once)"),
                                            "400": _error("No url"),
                                            "422": _error("Refused URL, unknown event, bad secret or window, or "
                                                          "too many hooks")},
                       kind="write", body=_form({
                           "url": STRING,
                           "events": {"type": "string", "description": "comma-separated: " + ", ".join(EVENTS)
                                                                      + "; `*` or none: all"},
                           "secret": {"type": "string", "description": "whsec_<base64>; made when left out"},
                           "coalesce": {"type": "string", "description": "seconds (default 0)"}}, ["url"]),
                       description="Deliveries are POSTs signed per Standard Webhooks (webhook-id, "
                                   "webhook-timestamp, webhook-signature), made from Git history after the "
                                   "hook's cursor, at least once and in order. The URL must not resolve to a "
                                   "loopback, private, link-local or metadata address (GLOSS_WEBHOOK_ALLOW).")},
        "/api/webhooks/{id}": {
            "delete": op("Delete a webhook", {"200": _json(_ref("Success"), "Done"), "404": missing},
                         parameters=[hook_id], kind="write")},
        "/api/webhooks/{id}/deliveries": {
            "get": op("The hook's latest delivery attempts, newest first",
                      {"200": _json({"type": "array", "items": attempt}, "Attempts"), "404": missing},
                      parameters=[hook_id], kind="write")},
    }


def transfer_paths() -> dict[str, dict[str, Any]]:
    file = {"description": "The file", "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
            "headers": {"Last-Modified": {"schema": STRING}, "Content-Disposition": {"schema": STRING}}}
    export_errors = {"304": {"description": "Not modified since If-Modified-Since"},
                     "400": _error("Unsupported format or option value"), "406": _error("Charset cannot hold a character"),
                     "409": _error("Key collision with collisions=fail")}
    import_result = _json({"type": "object", "properties": {"status": INT, "message": STRING,
                                                            "locales": {"type": "array", "items": _ref("Locale")},
                                                            "warnings": {"type": "array", "items": STRING}}},
                          "Summary, the locales the file touched, and (only when there are any) what the file "
                          "held that the project cannot keep")
    return {
        "/api/export/locale/{locale}.{ext}": {"get": op(
            "Export one locale", {"200": file, "404": _error("Locale not in project"), **export_errors},
            parameters=[LOCALE, EXPORT_EXT, *EXPORT_PARAMS], kind="export")},
        "/api/export/all.{ext}": {"get": op(
            "Export every locale in one multi-locale file", {"200": file, **export_errors},
            parameters=[EXPORT_EXT, *EXPORT_PARAMS], kind="export",
            description="Multi-locale formats hold every locale; a single-locale format may name the "
                        "multi-locale variant it uses (json: multi). " + single_locale_note())},
        "/api/export/template.{ext}": {"get": op(
            "Export source keys only (e.g. a POT)", {"200": file, **export_errors},
            parameters=[EXPORT_EXT, *[p for p in EXPORT_PARAMS if p["name"] != "fallback"]], kind="export")},
        "/api/export/archive/{ext}.zip": {"get": op(
            "Every locale as its own file in a zip archive", {"200": file, **export_errors},
            parameters=[EXPORT_EXT, *EXPORT_PARAMS, ARCHIVE_PATH], kind="export",
            description=archive_layouts())},
        "/api/export/archive/{ext}.tar": {"get": op(
            "Every locale as its own file in a tar archive", {"200": file, **export_errors},
            parameters=[EXPORT_EXT, *EXPORT_PARAMS, ARCHIVE_PATH], kind="export")},
        "/api/import/{ext}": {"post": op(
            "Import a file (the raw body): one commit however many units",
            {"200": import_result, "201": _json({"type": "object"}, "Asynchronous job created (Location header)"),
             "400": _error("Bad option"), "422": _error("Empty or invalid source data (names the line)")},
            parameters=[IMPORT_EXT, *IMPORT_PARAMS], kind="write", body=_raw("The file"))},
        "/api/import/progress/{id}": {"get": op(
            "Progress of an asynchronous import",
            {"200": _json({"type": "object", "properties": {"progress": INT, "success": STRING, "error": STRING}},
                          "Progress 0-100"), "404": _error("No such job")},
            parameters=[_path_param("id", "Job id from the Location header")])},
        "/api/import/progress/": {"get": op(
            "Progress without a job id", {"422": _error("Empty job id")})},
        "/api/convert/{from}/{name}.{ext}": {"post": op(
            "Convert a file between formats (no key, no project)",
            {"200": file, "204": {"description": "Nothing could be extracted"},
             "400": _error("Unsupported format pair"), "422": _error("Empty or invalid source data")},
            parameters=[ext_param("read", "from"), _path_param("name", "Target file name; a locale "
                        "may end it (messages-fr_FR)"), EXPORT_EXT,
                        _query("locale", "Locale of the file (same as in the name)"),
                        _query("native", "Source locale"), _query("index", "id or text"),
                        variant_param("write")],
            body=_raw("The file, or a form field src"), public=True)},
    }


TERM_SCHEMA = {"type": "object", "properties": {
    "term": STRING, "translations": {"type": "object", "additionalProperties": STRING,
                                     "description": "locale code -> the term's translation"},
    "note": STRING, "forbidden": {"type": "boolean"}}}


def quality_paths() -> dict[str, dict[str, Any]]:
    """The checks of a translation, and the glossary (glossary.json in the repository): terms, TBX."""
    term = _json(TERM_SCHEMA, "The term")
    term_param = _path_param("term", "The term, as the glossary spells it")
    missing = _error("Term not in glossary")
    check = {"type": "object", "properties": {"name": STRING, "message": STRING,
                                              "severity": {"enum": ["error", "warning"]}}}
    return {
        "/api/translations/{id}/{locale}/checks": {
            "get": op("The quality checks a translation fails", {"200": _json(
                {"type": "array", "items": check}, "Failed checks, named (see README, Quality checks)"),
                "404": _error("Asset or locale not in project, or not translated (and no text given)")},
                parameters=[ASSET_ID, LOCALE, _query("text", "Check this text instead of the stored translation")])},
        "/api/glossary": {
            "get": op("List glossary terms, or those found in a text", {"200": _json(
                {"type": "array", "items": {"type": "object"}}, "Terms; with text: each found term's span")},
                parameters=[_query("text", "A (source) text: answer the terms found in it, with start and end"),
                            _query("locale", "With text: the locale whose translation each found term carries")]),
            "post": op("Add a term", {"201": term, "409": _error("Term already in glossary"),
                                      "422": _error("Invalid term or field")}, kind="write",
                       body=_patch(TERM_SCHEMA))},
        "/api/glossary/{term}": {
            "get": op("Get a term", {"200": term, "404": missing}, parameters=[term_param]),
            "put": op("Add or replace a term", {"200": term, "201": term, "422": _error("Invalid field")},
                      parameters=[term_param], kind="write", body=_patch(TERM_SCHEMA)),
            "delete": op("Delete a term", {"200": _json(_ref("Success"), "Done"), "404": missing},
                         parameters=[term_param], kind="write")},
        "/api/glossary.tbx": {
            "get": op("Export the glossary as TBX-Basic (TBX v2 martif by default, or v3 DCA style)",
                      {"200": {"description": "TBX", "content": {"application/x-tbx+xml": {"schema": STRING}}},
                       "400": _error("Unknown TBX version"), "409": _error("The glossary has no terms")},
                      parameters=[_query("version", "2 (default: TBX-Basic on ISO 30042:2008, <martif>) or 3 "
                                         "(ISO 30042:2019, DCA style)", {"type": "string", "enum": ["2", "3"]})],
                      kind="export"),
            "post": op("Import a TBX file: its terms added or replaced, in one commit",
                       {"200": _json({"type": "object"}, "terms written, entries skipped"),
                        "422": _error("Not a TBX file, or an invalid term")}, kind="write",
                       body=_raw("The TBX file (v3, or v2 martif)"))},
    }


def build_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Gloss API", "version": API_VERSION,
                 "description": "Loco-compatible translation management API whose storage is Git. JSON is "
                                "pretty-printed unless `?ugly` is given. Every route also takes `key`, `v` "
                                "(version pin) and honours `X-Api-Version`. A form POST with "
                                "REQUEST_METHOD=DELETE or PATCH acts as that method (for a request with a valid key only: nothing is "
                                "parsed before authentication). Every read of project "
                                "data takes `ref` (time travel). The project's Git repository is served "
                                "beside this API at /git/{project}.git (Git's smart HTTP protocol, not part "
                                "of this description): clone and fetch with a full or readonly key as the "
                                "HTTP Basic user name, push with a full key.\n\n"
                                "Limits (each refusal names the one it hit; 413 for body sizes, 429 for "
                                "the convert concurrency, 422 for the others):\n" + limits.table()},
        "servers": [{"url": "/"}],
        "security": KEY_SECURITY,
        "paths": {**build_paths(), **quality_paths()},
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "loco": {"type": "apiKey", "in": "header", "name": "Authorization",
                         "description": "`Loco KEY` (what Loco clients send)"},
                "service": {"type": "apiKey", "in": "header", "name": "Authorization",
                            "description": "`Service KEY` (the specification's scheme word)"},
                "basic": {"type": "http", "scheme": "basic", "description": "key as user name, empty password"},
                "query": {"type": "apiKey", "in": "query", "name": "key"},
            },
        },
    }


@bp.get("/api/openapi.json")
def openapi():
    return render(build_document())
