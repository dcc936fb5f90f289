"""Every limit Gloss enforces on what clients send, and on what a worker keeps open, in one place (README
"Limits" and the OpenAPI text list them).

This module imports nothing of ours, so every layer (app/, storage/, formats/) may import it. Each refusal
names the limit it hit with `describe(name)`, e.g. "locale code longer than 64 characters (limit
max_locale_code_chars)".
"""
from __future__ import annotations

import os

MiB = 1024 * 1024

# Request bodies, whatever their framing (Content-Length or chunked): 413 beyond.
MAX_BODY_BYTES = 64 * MiB
# Bodies of the keyless convert API: it answers anyone, so it is bounded tighter.
MAX_CONVERT_BYTES = 8 * MiB
# Keyless converts running at once in one worker process; more answer 429 at once (the project API keeps
# its threads).
CONVERT_CONCURRENCY = 1
# Wall-clock budgets, 422 beyond: reading one uploaded file (import; readers check the clock as they go) and
# one whole keyless convert, read and write (run in a child process killed at the limit, formats/budget.py).
# How long a file takes depends on the machine: a deployment may set them with $GLOSS_PARSE_SECONDS and
# $GLOSS_CONVERT_SECONDS.
PARSE_SECONDS = float(os.environ.get("GLOSS_PARSE_SECONDS", 60.0))
CONVERT_SECONDS = float(os.environ.get("GLOSS_CONVERT_SECONDS", 10.0))
# Git pushes: the whole upload (413 at once when its declared length is beyond), every file (blob) a push
# carries, checked from the object headers before any is read, and every translation text.
MAX_PUSH_BYTES = 1024 * MiB
# 8 MiB: an accepted push of a catalogue of texts as long as 32 MiB allowed grew a worker by 211-223 MB (the
# texts parsed, checked and merged); at 8 MiB by 18-55 MB, within issue 19's 100 MB per push. A chunk of
# 1,000 assets holds 0.1-0.3 MB of ordinary texts.
MAX_FILE_BYTES = 8 * MiB
MAX_TEXT_CHARS = 1024 * 1024
# One XML file a reader parses.
MAX_XML_BYTES = 32 * MiB
# Units (assets) one imported or converted file may hold.
MAX_UNITS_PER_FILE = 250_000
# Nesting of JSON/YAML/XML/PHP documents and ICU resource bundles (objects in objects, elements in elements,
# arrays in arrays, tables in tables).
MAX_NESTING_DEPTH = 64
# One line of an imported text file (PO, .strings, properties…), in characters.
MAX_LINE_CHARS = 1024 * 1024
# XML entity references (internal DTD entities; external ones are never resolved): the characters all
# references of one document may add together, and entities referring to entities.
MAX_ENTITY_CHARS = 100_000
MAX_ENTITY_DEPTH = 8
# The HTTP server's own bounds, per worker process: the request line (414 beyond) and one header line (431
# beyond), gunicorn's own, kept; the whole header block (431 beyond); and connections open at once (more wait
# in the listen backlog): far beyond what slow clients need to be harmless (issue 19 asks for 200), and within
# the descriptors a worker raises its soft limit to (a spooled body holds a second one).
MAX_REQUEST_LINE_BYTES = 4094
MAX_HEADER_LINE_BYTES = 8190
MAX_HEADER_BYTES = 64 * 1024
MAX_CONNECTIONS = 1000
# A connection that sends nothing for this long (keep-alive, or a client that stopped sending) is closed; a
# request being answered never is, however long a clone takes.
IDLE_CONNECTION_SECONDS = 120
# A finished import job's status is kept this long (swept when a new job starts).
JOB_KEEP_SECONDS = 7 * 24 * 3600
# Dashboard sessions: signed out after this long without a request, and this long after signing in whatever
# the activity ($GLOSS_SESSION_IDLE_HOURS / $GLOSS_SESSION_MAX_HOURS or the config file change them).
SESSION_IDLE_SECONDS = 12 * 3600
SESSION_MAX_SECONDS = 7 * 24 * 3600
# A gettext Plural-Forms expression, in characters, and how many forms it may declare.
MAX_PLURAL_FORMULA_CHARS = 1000
MAX_PLURAL_FORMS = 6
# Names: locale codes become directory names, so they are short; the rest are data but still bounded.
MAX_LOCALE_CODE_CHARS = 35  # the practical maximum of a BCP 47 tag (RFC 5646 §4.4.1), see vocabulary.py
MAX_LOCALE_NAME_CHARS = 200
MAX_ASSET_ID_BYTES = 999
MAX_TAG_CHARS = 200
# The glossary (glossary.json, one term per line): how many terms, a term's length, a declared maximum length.
MAX_GLOSSARY_TERMS = 10_000
MAX_TERM_CHARS = 200
MAX_DECLARED_LENGTH = 1024 * 1024
# A branch name (refs/heads/NAME), in UTF-8 bytes: its journal's file name holds it escaped (storage.journal).
MAX_BRANCH_NAME_BYTES = 80
# Any single path component written to disk (file systems refuse more than 255 bytes) and a whole
# repository-relative path.
MAX_PATH_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 1024
# The `?v=` / `X-Api-Version` value.
MAX_API_VERSION_CHARS = 20
# How long one Git request (a clone of a large project on a slow link, a push) may run before it is stopped;
# what a push older than that left behind (git's quarantine, the hooks' socket directory) is swept.
GIT_REQUEST_SECONDS = 3600
# Annotated tags a pushed tag may go through to reach its commit (git allows tags of tags; nobody needs many).
MAX_TAG_CHAIN = 8
# Projects one worker process keeps open (their cached snapshots in memory), the pack files (index and
# data, one descriptor each) and the assets of the cached snapshots (memory: roughly 1-2 KB each) they may
# hold together: beyond any, the least recently used projects are closed (reopened at their next request).
# A host with thousands of projects then stays within the common limit of 1,024 open files and a bounded
# memory per worker. A project unused for `idle_project_seconds` gives its files back even within the budget.
MAX_OPEN_PROJECTS = 64
MAX_OPEN_PACK_FILES = 160
MAX_OPEN_ASSETS = 250_000
IDLE_PROJECT_SECONDS = 30.0
# An import of a file this big or bigger is read and applied in a child process (of formats' fork server),
# which commits it as another worker would: the worker never holds the import's temporaries, among which what
# it kept meanwhile (its other requests' writes) held the memory pages for good (+90-146 MB after 100k units).
IMPORT_APART_BYTES = 1 * MiB
# Webhooks (app/webhooks.py): hooks one project may have and the length of a hook's URL; how long one delivery attempt may take (connect,
# send, answer); how many recent attempts each hook keeps for GET /api/webhooks/{id}/deliveries; retries
# wait 1 s, 2 s, 4 s ... up to the backoff cap between attempts, and a hook still failing after the retry
# period is marked failing (and still tried once per cap); the longest coalescing window a hook may ask for;
# the commits one coalesced delivery carries at most, and the (asset, locale) pairs it lists at most.
MAX_WEBHOOKS_PER_PROJECT = 20
MAX_WEBHOOK_URL_CHARS = 2048
WEBHOOK_TIMEOUT_SECONDS = 10.0
WEBHOOK_DELIVERIES_KEPT = 50
WEBHOOK_FIRST_RETRY_SECONDS = float(os.environ.get("GLOSS_WEBHOOK_FIRST_RETRY_SECONDS", 1.0))
WEBHOOK_BACKOFF_CAP_SECONDS = 3600.0
WEBHOOK_RETRY_SECONDS = 24 * 3600.0
MAX_WEBHOOK_COALESCE_SECONDS = 3600.0
MAX_COMMITS_PER_DELIVERY = 1000
MAX_CHANGES_PER_DELIVERY = 10_000
# Translation memory: suggestions one request may ask for (`?limit=`; the default is a few), and the name of a
# memory group (projects that share their memory, storage/memory.py).
MAX_SUGGESTIONS = 20
DEFAULT_SUGGESTIONS = 3
MAX_MEMORY_GROUP_CHARS = 64

LIMITS: dict[str, int | float] = {
    "max_body_bytes": MAX_BODY_BYTES,
    "max_convert_bytes": MAX_CONVERT_BYTES,
    "convert_concurrency": CONVERT_CONCURRENCY,
    "parse_seconds": PARSE_SECONDS,
    "convert_seconds": CONVERT_SECONDS,
    "max_push_bytes": MAX_PUSH_BYTES,
    "max_file_bytes": MAX_FILE_BYTES,
    "max_text_chars": MAX_TEXT_CHARS,
    "max_xml_bytes": MAX_XML_BYTES,
    "max_units_per_file": MAX_UNITS_PER_FILE,
    "max_nesting_depth": MAX_NESTING_DEPTH,
    "max_line_chars": MAX_LINE_CHARS,
    "max_entity_chars": MAX_ENTITY_CHARS,
    "max_entity_depth": MAX_ENTITY_DEPTH,
    "max_request_line_bytes": MAX_REQUEST_LINE_BYTES,
    "max_header_line_bytes": MAX_HEADER_LINE_BYTES,
    "max_header_bytes": MAX_HEADER_BYTES,
    "max_connections": MAX_CONNECTIONS,
    "idle_connection_seconds": IDLE_CONNECTION_SECONDS,
    "job_keep_seconds": JOB_KEEP_SECONDS,
    "session_idle_seconds": SESSION_IDLE_SECONDS,
    "session_max_seconds": SESSION_MAX_SECONDS,
    "max_plural_formula_chars": MAX_PLURAL_FORMULA_CHARS,
    "max_plural_forms": MAX_PLURAL_FORMS,
    "max_locale_code_chars": MAX_LOCALE_CODE_CHARS,
    "max_locale_name_chars": MAX_LOCALE_NAME_CHARS,
    "max_asset_id_bytes": MAX_ASSET_ID_BYTES,
    "max_tag_chars": MAX_TAG_CHARS,
    "max_glossary_terms": MAX_GLOSSARY_TERMS,
    "max_term_chars": MAX_TERM_CHARS,
    "max_declared_length": MAX_DECLARED_LENGTH,
    "max_branch_name_bytes": MAX_BRANCH_NAME_BYTES,
    "max_path_component_bytes": MAX_PATH_COMPONENT_BYTES,
    "max_path_bytes": MAX_PATH_BYTES,
    "max_api_version_chars": MAX_API_VERSION_CHARS,
    "max_tag_chain": MAX_TAG_CHAIN,
    "git_request_seconds": GIT_REQUEST_SECONDS,
    "max_open_projects": MAX_OPEN_PROJECTS,
    "max_open_pack_files": MAX_OPEN_PACK_FILES,
    "max_open_assets": MAX_OPEN_ASSETS,
    "idle_project_seconds": IDLE_PROJECT_SECONDS,
    "max_webhooks_per_project": MAX_WEBHOOKS_PER_PROJECT,
    "max_webhook_url_chars": MAX_WEBHOOK_URL_CHARS,
    "webhook_timeout_seconds": WEBHOOK_TIMEOUT_SECONDS,
    "webhook_deliveries_kept": WEBHOOK_DELIVERIES_KEPT,
    "webhook_first_retry_seconds": WEBHOOK_FIRST_RETRY_SECONDS,
    "webhook_backoff_cap_seconds": WEBHOOK_BACKOFF_CAP_SECONDS,
    "webhook_retry_seconds": WEBHOOK_RETRY_SECONDS,
    "max_webhook_coalesce_seconds": MAX_WEBHOOK_COALESCE_SECONDS,
    "max_commits_per_delivery": MAX_COMMITS_PER_DELIVERY,
    "max_changes_per_delivery": MAX_CHANGES_PER_DELIVERY,
    "max_suggestions": MAX_SUGGESTIONS,
    "max_memory_group_chars": MAX_MEMORY_GROUP_CHARS,
}

# Bounds between Gloss's own processes (no client reaches them, so README does not list them): a Git hook's
# request to the server (the hook bounds the answer with its own copy, app/githooks.py, which imports nothing
# of ours to start in milliseconds), and the relay that hands a write to the project's writer process (a body
# beyond it is written by the worker that received it; a header line of the relay).
MAX_HOOK_REQUEST_BYTES = 16 * MiB
MAX_RELAYED_BODY_BYTES = 1 * MiB
MAX_RELAY_HEADER_LINE_BYTES = 64 * 1024
# How long a hook's request may take to arrive, and how long a relayed write may wait for its answer (its
# project's lock and commit group, as a local write would) after the writer took it within a second.
HOOK_READ_SECONDS = 60.0
RELAY_CONNECT_SECONDS = 1.0
RELAY_ANSWER_SECONDS = 300.0

# A locale's checks (app.qa.locale_errors) are shared with a pool of worker processes (checkpool.pool) when
# the chunks with no results yet may hold this many translations (chunks times chunk_size: a cold check of
# 100k is 100 chunks of 1,000). 10,000 take the process ~0.2-0.25 s, about what the pool's first start costs
# (0.25 s until its first answer, the fork server's imports): the process's own share covers it. Less (one chunk
# rewritten by a write, ~25 ms) is checked in the process: 100 translations in 20 chunks of 5 took 0.3 s
# through a pool started for them, against ~10 ms. The pool's workers, per server process: one, with the
# request's own thread that makes two cores busy (two workers gave the same wall time, 1.34 s at 100k, for
# 0.3 s more CPU); $GLOSS_CHECK_WORKERS, 0 for none (every check in the process).
CHECK_POOL_MIN_TRANSLATIONS = 10_000
CHECK_POOL_WORKERS = int(os.environ.get("GLOSS_CHECK_WORKERS", 1))

# The longest an import keeps Python's cyclic collector off (formats.collector_off): a 100k-unit PO import takes
# 5-7 s here; beyond the bound the collector runs again, so that one stuck import cannot let the cyclic garbage
# of every other request of its worker pile up.
COLLECTOR_OFF_SECONDS = 20.0

# What one page of the dashboard's translation grid lists (rows: assets, a plural group's forms in one row). A
# page is found by scanning from where the previous one ended, never by listing the whole project.
GRID_ROWS_PER_PAGE = 50


def describe(name: str) -> str:
    """`(limit max_body_bytes = 67108864)`: the suffix every refusal carries."""
    return f"(limit {name} = {LIMITS[name]})"


def table() -> str:
    """The limits as a Markdown list (the OpenAPI description embeds it)."""
    return "\n".join(f"- `{name}`: {value}" for name, value in LIMITS.items())
