"""Gloss's store: every project a Git repository of canonical per-locale JSON catalogues, every write one commit.
Knows nothing of Flask (app/) and nothing of file formats (formats/); tests/test_architecture.py keeps it so.

What the package offers (what app/ may use):

    store.Store               the data directory: create, list and open projects (an LRU within limits.py's budget)
    project.Project           one project: `snapshot()` / `snapshot_at(commit)` to read, `transaction(...)` to write
                              one commit (or nothing), under a lock shared by threads and processes
    snapshot.Snapshot         an immutable view of a project at one commit: assets, locales, translations
                              and their progress (storage.progress counts it per chunk); `remember(key, compute)`
                              keeps a caller's data derived from the snapshot with it
    derivations               `register(name, update=None, persisted=None)`: data that follows each chunk to its
                              next versions (updated from the changed entries, or handed on), registered at import
    transaction.Transaction   the changes of one write, on top of a snapshot
    operations                the domain writes on a transaction (assets, plurals, tags, locales, translations)
    records                   the typed shapes of what is stored (AssetRecord, TranslationRecord, LocaleRecord,
                              ProjectMeta, UserRef) and of progress counts (LocaleProgress, AssetProgress):
                              TypedDicts, exported here
    fields                    the rule each stored field obeys, shared by the API's writes and a push's checks
    history, diff             revisions of a translation, changes between commits (read back from Git)
    receive                   what a `git push` does: checks before any ref moves, the key-level merge
    branches                  a project's branches (refs/heads/NAME): create, list, read, delete, merge key by key
                              (`?branch=` reads and writes go through Project.snapshot/transaction(branch=))
    keys, sessions, jobs      API keys (hashed), dashboard sessions, asynchronous import jobs: outside every repository
    trailers                  the `Key: value` lines every commit message ends with, and the actions they name
    errors                    what went wrong (NotFound, Conflict, Invalid, Busy, faults of the disk); app/ alone maps
                              them to HTTP statuses

Inside (not for app/): gitrepo.GitRepo, the one front over Git's own seams in storage/git/ (objects and packs,
refs and durability, working tree, maintenance, queries of the `git` command); journal (where the branch goes,
durable with the commit's pack); canonical (the catalogue files' one-entry-per-line encoding); progress (per-chunk counts behind Snapshot's progress); checks and replay
(a push's validation and merge); textchanges (derived index of which commit changed which translation).
"""

from .records import (AssetProgress, AssetRecord, LocaleProgress, LocaleRecord, ProjectMeta, TranslationRecord,
                      UserRef)

__all__ = ["AssetProgress", "AssetRecord", "LocaleProgress", "LocaleRecord", "ProjectMeta", "TranslationRecord",
           "UserRef"]
