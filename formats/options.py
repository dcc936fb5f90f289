"""Options of reading and exporting (the status and filter lists parsed too), and the exported file value."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from vocabulary import filter_terms, status_term

from .errors import OptionError

COLLISION_MODES: tuple[str, ...] = ("overwrite", "ignore", "fail", "auto", "legacy")
ORDERS: tuple[str, ...] = ("created", "id")
LINE_BREAKS: dict[str, str] = {"unix": "\n", "dos": "\r\n", "mac": "\r"}


@dataclass
class ReadOptions:
    """How to interpret a file being read.

    locale: the language of a single-locale file's translations; None or "auto" = detect it from the
            file (PO Language/X-Loco-Target-Locale, ARB @@locale, Jed lang...), falling back to the
            source locale for key/value files that cannot say.
    source_locale: the source language; None = from the file (X-Loco-Source-Locale) or "en".
    index: "id" (keys are asset IDs) or "text" (keys are source texts: the unit ID is derived from the
           text and context, and the text becomes the source translation); None = the format's default.
    namespace: what the export's `namespace` (else the project name) put around the keys, taken off again:
           the `<namespace>_` prefix of CodeIgniter keys and `<NAMESPACE>_` of PHP constants, the namespace
           root under the locale root of nested YAML. "" = none.
    """

    locale: str | None = None
    source_locale: str | None = None
    index: str | None = None
    namespace: str = ""


@dataclass
class ExportOptions:
    """What to export and how; every field maps to a query parameter of the export API.

    locale: target locale (None: the source locale, or nothing for a template).
    template: only the left-hand side of each mapping (source keys), no translations (PO -> POT).
    all_locales: every locale of the catalogue in one file (multi-locale formats only).
    source_locale: alternative source locale (the API's `source`); None = the catalogue's.
    index: "id", "text" or an alias name; None = the format's default (text for gettext families).
    namespace: Jed / Gettext.js domain (default "messages"); SQL table suffix and key prefix of PHP codeigniter
               and constants exports (default: the project name); root key under the locale of nested YAML
               (none by default).
    yaml_prefix: Rails YAML only: a top-level namespace key between each locale root and the keys.
    order: "created" (catalogue order) or "id".
    status: comma list of translated, untranslated, blank-translation, flagged, a flag name or all;
            "!" negates; a unit passes when it matches any positive term and no negated one.
    filter: comma list of tags; "*" = any tag; "!tag" excludes; same any/none rule as status.
    fallback: locale whose translation fills completely untranslated units.
    printf: php, java, objc, icu or python: convert placeholders into that style.
    charset: output encoding (properties: ISO-8859-1 with \\uXXXX escapes unless a Unicode charset is
             asked for); breaks: Unix, DOS or Mac line endings.
    no_comments: drop the banner and redundant comments; no_expand: keep dotted keys flat.
    collisions: overwrite, ignore, fail, auto or legacy (see pipeline.resolve_keys).
    escape_formulas: spreadsheet formats prefix cells starting with = + - @ tab or CR with `'` (OWASP's
            CSV-injection advice), so that a spreadsheet shows the text instead of running it.
    project_name, exported_at, exported_by: banner and header facts (exported_at None = now, UTC).
    """

    locale: str | None = None
    template: bool = False
    all_locales: bool = False
    source_locale: str | None = None
    index: str | None = None
    namespace: str = ""
    yaml_prefix: str = ""
    order: str = "created"
    status: str = ""
    filter: str = ""
    fallback: str = ""
    printf: str = ""
    charset: str = ""  # "" = the format's default (UTF-8; ISO-8859-1 for properties)
    breaks: str = "Unix"
    no_comments: bool = False
    no_expand: bool = False
    collisions: str = "auto"
    escape_formulas: bool = False
    project_name: str = ""
    exported_at: datetime | None = None
    exported_by: str = ""


@dataclass(frozen=True)
class ExportedFile:
    """Rendered file content and the Content-Type to serve it with."""

    data: bytes
    content_type: str


def status_terms(expression: str) -> tuple[set[str], set[str]]:
    """The status filter's positive and negated terms in canonical form; OptionError naming the accepted ones."""
    positive, negative = filter_terms(expression)
    try:
        return {status_term(term) for term in positive}, {status_term(term) for term in negative}
    except ValueError as error:
        raise OptionError(str(error)) from None


