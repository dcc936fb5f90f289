"""Glossary writes, shared by the API and the dashboard: add, replace, delete a term, import a TBX file.

Each write is one commit of glossary.json with the Term trailer (an import: Terms, the count)."""
from __future__ import annotations

from typing import Any

from formats.xml.tbx import read_tbx
from storage import operations as ops
from storage.snapshot import Snapshot
from storage.trailers import Action, Trailer

from ..context import write
from ..errors import ApiError


def add_term(term: str, record: dict[str, Any]) -> Snapshot:
    """A new term (409 when the glossary has it)."""
    with write(f"Add term {term}", Action.ADD_TERM, [(Trailer.TERM, term)]) as tx:
        if tx.term(term) is not None:
            raise ApiError(409, "Term already in glossary")
        ops.put_term(tx, term, record)
    return tx.result


def put_term(term: str, record: dict[str, Any]) -> tuple[Snapshot, bool]:
    """Add or replace a term; (the snapshot, whether the term is new)."""
    with write(f"Edit term {term}", Action.EDIT_TERM, [(Trailer.TERM, term)]) as tx:
        created = tx.term(term) is None
        ops.put_term(tx, term, record)
    return tx.result, created


def delete_term(term: str) -> Snapshot:
    with write(f"Delete term {term}", Action.DELETE_TERM, [(Trailer.TERM, term)]) as tx:
        ops.delete_term(tx, term)
    return tx.result


def import_tbx(data: bytes, source_locale: str, codes: list[str]) -> tuple[int, int]:
    """Every term of a TBX file added or replaced, in one commit: (terms written, entries skipped for having no
    term in the source language). A termbase's `fr-FR` is the project's `fr` when that is its one locale of the
    language (termbases often name regions that projects do not)."""
    terms, skipped = read_tbx(data, source_locale)
    for record in terms.values():
        record["translations"] = {project_locale(code, codes): text
                                  for code, text in record.get("translations", {}).items()}
    with write(f"Import {len(terms)} glossary terms", Action.IMPORT_GLOSSARY,
               [(Trailer.TERMS, str(len(terms)))]) as tx:
        written = sum(ops.put_term(tx, term, record) for term, record in terms.items())
    return written, skipped


def project_locale(code: str, codes: list[str]) -> str:
    """`code`, or the one project locale of its language when the project lacks `code` itself."""
    if code in codes:
        return code
    same = [known for known in codes if known.split("-")[0].lower() == code.split("-")[0].lower()]
    return same[0] if len(same) == 1 else code
