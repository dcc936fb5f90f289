"""The one table of file formats, keyed by (extension, format variant).

Adding a format = one module with a reader and/or a writer + one `FormatSpec` line in FORMATS.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import csvfmt, gettext, html, js, jsonfmt, sql
from .catalogue import Catalogue
from .errors import UnsupportedFormat
from .options import ReadOptions

Reader = Callable[[bytes, ReadOptions], Catalogue]
Writer = Callable[..., "str | bytes"]  # (ExportDocument) -> text (encoded by the pipeline) or bytes


@dataclass(frozen=True)
class FormatSpec:
    """What the pipeline and the API need to know about one (extension, variant).

    label: banner label (`Loco <ext> export: <label>`); multi_locale: can hold several locales (all
    locales export, multi-locale import); default_index: key used when the index option is absent;
    nests_keys: expands dotted keys into objects unless no_expand; context_in_key: the format keeps
    contexts beside keys, so (context, key) must be unique rather than key; template_only: always a
    template (pot); key_filter: rewrites keys the format cannot hold.
    """

    ext: str
    variant: str
    label: str
    content_type: str
    reader: Reader | None = None
    writer: Writer | None = None
    multi_locale: bool = False
    default_index: str = "id"
    nests_keys: bool = False
    context_in_key: bool = False
    template_only: bool = False
    key_filter: Callable[[str], str] | None = None

    @property
    def name(self) -> str:
        """`ext` or `ext (variant)`, for messages."""
        return f"{self.ext} ({self.variant})" if self.variant else self.ext


_GETTEXT: dict[str, Any] = dict(default_index="text", context_in_key=True)
_PO_TYPE = "text/x-gettext-translation; charset=utf-8"
_JSON_TYPE = "application/json"
_JS_TYPE = "application/javascript"

FORMATS: tuple[FormatSpec, ...] = (
    FormatSpec("po", "", "Gettext PO", _PO_TYPE, gettext.read_po, gettext.write_po, **_GETTEXT),
    FormatSpec("pot", "", "Gettext template", _PO_TYPE, gettext.read_po, gettext.write_po, template_only=True,
               **_GETTEXT),
    FormatSpec("mo", "", "Gettext MO", "application/x-gettext-translation", gettext.read_mo, gettext.write_mo,
               **_GETTEXT),
    FormatSpec("json", "", "JSON", _JSON_TYPE, jsonfmt.read_json, jsonfmt.write_json, nests_keys=True),
    FormatSpec("json", "multi", "Multi-language JSON", _JSON_TYPE, jsonfmt.read_multi, jsonfmt.write_multi,
               multi_locale=True, nests_keys=True),
    FormatSpec("json", "jed", "Jed", _JSON_TYPE, jsonfmt.read_jed, jsonfmt.write_jed, **_GETTEXT),
    FormatSpec("json", "chrome", "Chrome extension messages", _JSON_TYPE, jsonfmt.read_chrome, jsonfmt.write_chrome,
               key_filter=jsonfmt.chrome_key),
    FormatSpec("json", "i18next", "i18next", _JSON_TYPE, jsonfmt.read_i18next, jsonfmt.write_i18next, nests_keys=True),
    FormatSpec("json", "i18next4", "i18next v4", _JSON_TYPE, jsonfmt.read_i18next, jsonfmt.write_i18next,
               nests_keys=True),
    FormatSpec("json", "i18next3", "i18next v3", _JSON_TYPE, jsonfmt.read_i18next3, jsonfmt.write_i18next3,
               nests_keys=True),
    FormatSpec("arb", "", "Flutter ARB", _JSON_TYPE, jsonfmt.read_arb, jsonfmt.write_arb),
    FormatSpec("js", "", "JavaScript function", _JS_TYPE, None, js.write_function, default_index="text"),
    FormatSpec("js", "gettext", "Gettext.js", _JS_TYPE, None, js.write_gettext, **_GETTEXT),
    FormatSpec("js", "ng-gettext", "angular-gettext", _JS_TYPE, None, js.write_ng_gettext, **_GETTEXT),
    FormatSpec("csv", "", "CSV", "text/csv", csvfmt.read_csv, csvfmt.write_csv, multi_locale=True,
               context_in_key=True),
    FormatSpec("html", "", "HTML table", "text/html", None, html.write_html, multi_locale=True),
    FormatSpec("sql", "", "MySQL inserts", "application/sql", None, sql.write_sql, multi_locale=True),
)

_TABLE: dict[tuple[str, str], FormatSpec] = {(spec.ext, spec.variant): spec for spec in FORMATS}


def normalise(ext: str, variant: str | None) -> tuple[str, str]:
    """Lower-case ext without dot; the default variant may be spelled "", the ext itself or "default"."""
    ext = (ext or "").strip().lower().lstrip(".")
    variant = (variant or "").strip().lower()
    if variant in (ext, "default"):
        variant = ""
    return ext, variant


def lookup(ext: str, variant: str | None = "", *, reading: bool = False, writing: bool = False) -> FormatSpec:
    """The spec of (ext, variant), or UnsupportedFormat listing what is supported."""
    key = normalise(ext, variant)
    spec = _TABLE.get(key)
    if spec is None:
        raise UnsupportedFormat(_unknown_message(*key))
    if reading and spec.reader is None:
        raise UnsupportedFormat(f"{spec.name} can be exported but not read; readable formats: {_names(readable=True)}")
    if writing and spec.writer is None:
        raise UnsupportedFormat(
            f"{spec.name} can be read but not exported; exportable formats: {_names(writable=True)}"
        )
    return spec


def _unknown_message(ext: str, variant: str) -> str:
    """Why (ext, variant) is unknown, naming the variants of ext or all extensions."""
    variants = [spec.variant or "(default)" for spec in FORMATS if spec.ext == ext]
    if variants:
        return f"unknown format {variant!r} for .{ext}; supported: {', '.join(variants)}"
    return f"unsupported file extension {ext!r}; supported: {', '.join(sorted({spec.ext for spec in FORMATS}))}"


def _names(readable: bool = False, writable: bool = False) -> str:
    """Comma list of the formats with a reader and/or writer."""
    return ", ".join(
        spec.name for spec in FORMATS if (not readable or spec.reader) and (not writable or spec.writer)
    )


def supported() -> list[dict[str, object]]:
    """One record per registered format: ext, variant, label, readable, writable, multi_locale, content_type."""
    return [
        {
            "ext": spec.ext, "variant": spec.variant, "label": spec.label,
            "readable": spec.reader is not None, "writable": spec.writer is not None,
            "multi_locale": spec.multi_locale, "content_type": spec.content_type,
            "default_index": spec.default_index,
        }
        for spec in FORMATS
    ]
