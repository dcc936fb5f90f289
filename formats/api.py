"""The public operations: export a catalogue, read a file, convert between formats."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator

from .catalogue import Catalogue
from .errors import NothingExtracted, UnsupportedFormat
from .options import ExportedFile, ExportOptions, ReadOptions
from .pipeline import finish, prepare
from .registry import FORMATS, FormatSpec, lookup

_TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/sql")


def export_file(
    catalogue: Catalogue, ext: str, variant: str = "", options: ExportOptions | None = None
) -> ExportedFile:
    """Render a catalogue as a file of (ext, variant); all_locales on plain json means json multi."""
    options = options or ExportOptions()
    spec = _export_spec(ext, variant, options)
    with _collector_paused():
        document = prepare(catalogue, spec, options)
        data = finish(document, spec.writer(document))
    return ExportedFile(data=data, content_type=_content_type(spec, document.charset_label))


def read_file(ext: str, variant: str, data: bytes, options: ReadOptions | None = None) -> Catalogue:
    """Parse a file of (ext, variant) into a catalogue; FormatError when it is broken."""
    spec = lookup(ext, variant, reading=True)
    with _collector_paused():
        return spec.reader(data, options or ReadOptions())


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a file is built or parsed.

    Readers and writers allocate tens of thousands of small acyclic objects; the collector's repeated
    passes over them cost a third of a large PO import. Reference counting still frees everything.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def convert(
    from_ext: str,
    to_ext: str,
    variant: str,
    data: bytes,
    read_options: ReadOptions | None = None,
    export_options: ExportOptions | None = None,
    from_variant: str = "",
) -> ExportedFile:
    """Read a file then write it in another format (variant applies to the target).

    The target locale defaults to the file's own (its first non-source locale, else the source).
    NothingExtracted when the source parsed but held no units.
    """
    read_options = read_options or ReadOptions()
    export_options = export_options or ExportOptions()
    lookup(to_ext, variant, writing=True)  # fail on the target before parsing anything
    catalogue = read_file(from_ext, from_variant, data, read_options)
    if not catalogue.units:
        raise NothingExtracted(f"no messages could be extracted from the {from_ext} source")
    if export_options.locale is None and not export_options.template and not export_options.all_locales:
        targets = catalogue.target_locales
        export_options = replace(export_options, locale=targets[0] if targets else catalogue.source_locale)
    return export_file(catalogue, to_ext, variant, export_options)


def _export_spec(ext: str, variant: str, options: ExportOptions) -> FormatSpec:
    """The spec to export with: Loco implies format=multi for a multi-locale json export."""
    spec = lookup(ext, variant, writing=True)
    if options.all_locales and not spec.multi_locale:
        if spec.ext == "json" and not spec.variant:
            return lookup("json", "multi", writing=True)
        holders = ", ".join(other.name for other in FORMATS if other.multi_locale)
        raise UnsupportedFormat(f"{spec.name} holds a single locale; formats holding all locales: {holders}")
    return spec


def _content_type(spec: FormatSpec, charset: str) -> str:
    """The spec's content type, with the output charset for text formats."""
    if "charset=" in spec.content_type:
        return spec.content_type.split(";")[0] + f"; charset={charset}"
    if spec.content_type.startswith(_TEXT_TYPES):
        return f"{spec.content_type}; charset={charset}"
    return spec.content_type
