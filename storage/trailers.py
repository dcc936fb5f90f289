"""The `Key: value` lines that end every commit message Gloss writes: the one vocabulary of their keys and of
the actions a commit records, so that writers (routes, operations, pushes, imports) and the readers of history
(storage/history.py, the revisions and diff APIs, the dashboard) spell them alike.

Git's own `git interpret-trailers` reads them too: history stays machine-readable outside Gloss.
"""
from __future__ import annotations

from enum import StrEnum


class Trailer(StrEnum):
    """A trailer key."""

    ACTION = "Action"  # what the write did (an Action); every commit has one
    ASSET = "Asset"  # the asset written (after a rename: its new ID)
    LOCALE = "Locale"
    TAG = "Tag"
    FLAG = "Flag"
    PLURAL = "Plural"  # the plural form unlinked from its asset
    REVISION = "Revision"  # the revision a translation write replaced
    RENAMED_FROM = "Renamed-From"  # an asset's previous ID: history follows the asset across the rename
    FORMAT = "Format"  # the extension of an imported file
    JOB = "Job"  # the job ID of an asynchronous import (its status is found by it)
    PUSHED = "Pushed"  # the pushed commit a push's merge commit brought in
    PUSHED_TO = "Pushed-To"  # the ref the push named
    CHANGES = "Changes"  # how many records a push changed
    TERM = "Term"  # the glossary term written
    TERMS = "Terms"  # how many glossary terms an import wrote
    BRANCH = "Branch"  # the branch a merge brought in


class Action(StrEnum):
    """What a commit did: the value of its Action trailer."""

    CREATE_PROJECT = "create-project"
    SEED = "seed"
    ADD_LOCALE = "add-locale"
    EDIT_LOCALE = "edit-locale"
    DELETE_LOCALE = "delete-locale"
    CREATE_ASSET = "create-asset"
    EDIT_ASSET = "edit-asset"
    DELETE_ASSET = "delete-asset"
    ADD_PLURAL = "add-plural"
    UNLINK_PLURAL = "unlink-plural"
    TAG_ASSET = "tag-asset"
    UNTAG_ASSET = "untag-asset"
    CREATE_TAG = "create-tag"
    TAG_ASSETS = "tag-assets"
    RENAME_TAG = "rename-tag"
    DELETE_TAG = "delete-tag"
    TRANSLATE = "translate"
    UNTRANSLATE = "untranslate"
    FLAG = "flag"
    UNFLAG = "unflag"
    IMPORT = "import"
    ADD_TERM = "add-term"
    EDIT_TERM = "edit-term"
    DELETE_TERM = "delete-term"
    IMPORT_GLOSSARY = "import-glossary"
    IMPORT_MEMORY = "import-memory"  # TMX units into the project's translation memory (memory.json)
    PUSH = "push"
    # A branch merged into another (the branches' merge commit): storage/webhooks.py maps it to `branch.merged`.
    MERGE_BRANCH = "merge-branch"


def about(asset: str | None = None, locale: str | None = None, tag: str | None = None,
          flag: str | None = None, plural: str | None = None) -> list[tuple[str, str]]:
    """The trailers naming what a write is about, in the order history shows them."""
    named = ((Trailer.ASSET, asset), (Trailer.LOCALE, locale), (Trailer.TAG, tag), (Trailer.FLAG, flag),
             (Trailer.PLURAL, plural))
    return [(key, value) for key, value in named if value is not None]
