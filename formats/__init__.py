"""Gloss file formats: pure bytes <-> exchange catalogue conversion (no Flask, no storage).

Public surface:
    export_file(catalogue, ext, variant, options, cache) -> ExportedFile (cache: a RenderCache, optional)
    read_file(ext, variant, data, options) -> Catalogue
    restore_keys(catalogue, ext, variant, known_ids): keys the format rewrote on export back to their IDs
    convert(from_ext, to_ext, variant, data, read_options, export_options) -> ExportedFile
    run_within(limit_name, what, function, *args): the call in a child process killed at the limit (keyless convert)
    child_context(): a multiprocessing context for long-lived children of the warm fork server (checkpool's pool)
    preload_in_children(*modules): modules of other layers the fork server imports too
    supported() -> list of format records
    plural_rules(code) -> PluralRules; locale_display_name(code) -> str
"""
TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing

from .budget import child_context, preload_in_children, run_within
from .catalogue import FLAGS, PRINTF_STYLES, Catalogue, Translation, Unit
from .errors import (
    CharsetError, ExportError, FormatsError, KeyCollision, NothingExtracted, OptionError, ParseError, TooLarge,
    UnsupportedFormat,
)
from .operations import collector_off, collector_paused, convert, export_file, read_file, restore_keys
from .options import ExportedFile, ExportOptions, ReadOptions
from .plurals import PluralRules, locale_display_name, plural_rules
from .registry import FORMATS, Capabilities, FormatSpec, supported

if TYPE_CHECKING:
    from .segments import RenderCache

__all__ = [
    "convert", "export_file", "read_file", "restore_keys", "supported", "collector_off", "collector_paused", "run_within", "child_context", "preload_in_children",
    "Catalogue", "Unit", "Translation", "FLAGS", "PRINTF_STYLES",
    "ExportOptions", "ReadOptions", "ExportedFile",
    "FormatsError", "ParseError", "UnsupportedFormat", "NothingExtracted", "ExportError", "OptionError", "CharsetError",
    "KeyCollision", "TooLarge",
    "PluralRules", "plural_rules", "locale_display_name", "FORMATS", "FormatSpec", "Capabilities",
    "RenderCache",
]


def __getattr__(name: str) -> object:
    """RenderCache, imported on first use: a command-line conversion never caches renderings."""
    if name == "RenderCache":
        from .segments import RenderCache

        return RenderCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
