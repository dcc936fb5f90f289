"""The one table of file formats, keyed by (extension, format variant): the format plugin contract.

Adding a format = one module (or one family package) with a reader and/or a writer + one `FormatSpec`
line in FORMATS. Everything the app, the OpenAPI description and the shared round-trip contract test need
to know about a format is declared here, never in `app/`.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .catalogue import Catalogue
from .errors import OptionError, UnsupportedFormat
from .options import ReadOptions

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:
    from typing import Any

    Reader = Callable[[bytes, ReadOptions], Catalogue]
    Writer = Callable[..., "str | bytes"]  # (ExportDocument) -> text (encoded by the pipeline) or bytes

DEFAULT_ARCHIVE_PATH = "{project}-{locale}.{ext}"


@dataclass(frozen=True)
class Capabilities:
    """What a format can hold; the shared round-trip contract test checks each declared one.

    The defaults claim everything a catalogue has except translator comments and references, so a new
    format that declares nothing is held to the whole contract.
    """

    plurals: bool = True  # False: no plural syntax, each plural form is written as an entry of its own
    context: bool = True
    notes: bool = True
    flags: bool = True  # Loco flags (fuzzy, incorrect, ...) on translations
    untranslated: bool = True  # an untranslated unit survives as a unit without translation
    blank: bool = True  # "" is kept apart from untranslated
    dotted_keys: bool = True  # keys such as menu.file.open survive as they are
    comments: bool = False  # translator comments on translations
    references: bool = False  # source references (file:line)
    single_form_plurals: bool = True  # a plural with one form (ja) reads back as a plural
    ordered: bool = True  # units come back in the order written

    def declared(self) -> list[str]:
        """Names of the capabilities the format has, for listings."""
        return [name for name, value in vars(self).items() if value]


@dataclass(frozen=True)
class FormatSpec:
    """What the pipeline and the API need to know about one (extension, variant).

    label: banner label (`Loco <ext> export: <label>`); description: one sentence for listings;
    aliases: other extensions meaning the same ext (`xliff` for `xlf`), resolved by `lookup`;
    capabilities: what the format holds (drives the round-trip contract test);
    multi_locale: can hold several locales (all-locales export, multi-locale import);
    all_locales_variant: the variant an all-locales export of this single-locale variant uses instead
    (json -> json multi); single_locale_variant: the variant an all-locales export uses, with that one
    locale, when the project has a single locale (Loco's flat all.json);
    archive_path: where a locale's file sits inside `archive/{ext}.zip` (placeholders: see archive_path());
    default_index: key used when the index option is absent; nests_keys: expands dotted keys into objects
    unless no_expand; context_in_key: the format keeps contexts beside keys, so (context, key) must be
    unique rather than key; template_only: always a template (pot); key_filter: rewrites keys the format
    cannot hold.
    head_writer, body_writer: the writer in two parts, for formats whose file is a head followed by one
    independent block per entry (writer = head + body, and the body of the entries a + b is body(a) +
    body(b)): exports then reuse the body of runs of units that have not changed (formats/segments.py).
    default_charset: the output charset when none is asked for; escapes_charset: the writer escapes
    characters the charset cannot hold (properties `\\uXXXX`), so they are not an export error.
    variant_names: other names of this variant in the `format` option (the default's own name, which
    the specification lists: `android` for xml, `simple` for yml, `zend` for php; Loco's `symfony` for xlf).
    bilingual: the source text is the key side of each unit (XLIFF <source>): templates keep it.
    """

    ext: str
    variant: str
    label: str
    content_type: str
    reader: Reader | None = None
    writer: Writer | None = None
    description: str = ""
    aliases: tuple[str, ...] = ()
    capabilities: Capabilities = field(default_factory=Capabilities)
    multi_locale: bool = False
    all_locales_variant: str | None = None
    single_locale_variant: str | None = None
    archive_path: str = DEFAULT_ARCHIVE_PATH
    default_index: str = "id"
    nests_keys: bool = False
    context_in_key: bool = False
    template_only: bool = False
    key_filter: Callable[[str], str] | None = None
    head_writer: Writer | None = None
    body_writer: Writer | None = None
    default_charset: str = "utf-8"
    escapes_charset: bool = False
    bilingual: bool = False  # source text is the key side of each unit (XLIFF <source>), kept in templates
    variant_names: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """`ext` or `ext (variant)`, for messages."""
        return f"{self.ext} ({self.variant})" if self.variant else self.ext

    @property
    def readable(self) -> bool:
        return self.reader is not None

    @property
    def writable(self) -> bool:
        return self.writer is not None


class _Deferred:
    """A function of a format module, imported on its first call: converting a PO file then imports the
    gettext family only, not every reader and writer of the table (and lxml, PyYAML...) at start-up."""

    __slots__ = ("_module", "_name", "_function")

    def __init__(self, module: str, name: str) -> None:
        self._module, self._name = module, name
        self._function: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self._function
        if function is None:
            function = self._function = getattr(importlib.import_module(self._module, __package__), self._name)
        return function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self._module.lstrip('.')}.{self._name}>"


class _FormatModule:
    """Stands for a format module in the table below: `gettext.read_po` names that function, deferred."""

    every: list[str] = []  # the modules of the table, relative to this package (see format_modules)

    def __init__(self, module: str) -> None:
        self._module = module
        _FormatModule.every.append(module)

    def __getattr__(self, name: str) -> _Deferred:
        return _Deferred(self._module, name)


def format_modules() -> list[str]:
    """Every module a reader or writer of the table lives in (absolute names): what a process about to convert
    anything imports at once (formats.budget's fork server, whose children then start with all of them)."""
    return [f"{__package__}{module}" for module in _FormatModule.every]


android, keyvalue, qt, resx, tmx, xliff = (_FormatModule(f".xml.{name}") for name in
                                           ("android", "keyvalue", "qt", "resx", "tmx", "xliff"))
csvfmt, gettext, html, ini, js, php, properties, sql, yamlfmt = (
    _FormatModule(f".{name}") for name in
    ("csvfmt", "gettext", "html", "ini", "js", "php", "properties", "sql", "yamlfmt"))
arb, chrome, i18next, jed, json_plain = (_FormatModule(f".jsonfmt.{name}") for name in
                                         ("arb", "chrome", "i18next", "jed", "plain"))
plist, apple_strings, stringsdict, xcstrings = (_FormatModule(f".apple.{name}") for name in
                                                ("plist", "strings", "stringsdict", "xcstrings"))
icu_binary, icu_text = _FormatModule(".resbundle.binary"), _FormatModule(".resbundle.text")
resource_key = _FormatModule(".resbundle.tree").resource_key

_GETTEXT: dict[str, Any] = dict(default_index="text", context_in_key=True, bilingual=True)
_PO_PARTS: dict[str, Any] = dict(head_writer=gettext.po_head, body_writer=gettext.po_body)
_GETTEXT_ARCHIVE = "{locale_}/LC_MESSAGES/{project}.{ext}"
_PO_TYPE = "text/x-gettext-translation; charset=utf-8"
_JSON_TYPE = "application/json"
_JS_TYPE = "application/javascript"
_YAML_TYPE = "application/x-yaml"
_PHP_TYPE = "application/x-httpd-php-source"
_PLIST_TYPE = "application/x-plist"
_BINARY_TYPE = "application/octet-stream"
_PLIST = Capabilities(context=False, notes=False, flags=False, untranslated=False)  # no null in a plist
_ICU: dict[str, Any] = dict(nests_keys=True, key_filter=resource_key)
_KEY_VALUE = Capabilities(context=False, notes=False, flags=False)
# Key/value files never hold a null (formats/symfony.written_values): an untranslated unit is left out, so a
# single-locale file cannot say it exists.
_I18NEXT: dict[str, Any] = dict(nests_keys=True, capabilities=Capabilities(context=False, notes=False, flags=False,
                                                                           untranslated=False),
                                archive_path="{locale}/translation.json")
_XML_TYPE = "application/xml"
_XLIFF_TYPE = "application/x-xliff+xml"
_FLAT_XML = Capabilities(context=False, notes=False, flags=False, plurals=False, untranslated=False)
_YAML = Capabilities(context=False, flags=False, untranslated=False)
_PIPE_PLURALS_YAML = Capabilities(context=False, flags=False, single_form_plurals=False,  # one form has no pipe
                                  untranslated=False)
_PHP = Capabilities(context=False, flags=False, notes=False, untranslated=False)

FORMATS: tuple[FormatSpec, ...] = (
    FormatSpec("po", "", "Gettext PO", _PO_TYPE, gettext.read_po, gettext.write_po,
               "GNU gettext portable object: msgid/msgstr pairs with context, comments and plural forms",
               capabilities=Capabilities(blank=False, comments=True, references=True),
               archive_path=_GETTEXT_ARCHIVE, **_GETTEXT, **_PO_PARTS),
    FormatSpec("pot", "", "Gettext template", _PO_TYPE, gettext.read_po, gettext.write_po,
               "GNU gettext template: the source messages with empty translations",
               capabilities=Capabilities(blank=False, comments=True, references=True),
               template_only=True, **_GETTEXT, **_PO_PARTS),
    FormatSpec("mo", "", "Gettext MO", "application/x-gettext-translation", gettext.read_mo, gettext.write_mo,
               "GNU gettext compiled binary catalogue (translated messages only)",
               capabilities=Capabilities(notes=False, flags=False, untranslated=False, blank=False, ordered=False),
               archive_path=_GETTEXT_ARCHIVE, **_GETTEXT),
    FormatSpec("json", "", "JSON", _JSON_TYPE, json_plain.read_json, json_plain.write_json,
               "Key/value JSON object of texts; dotted keys nest unless no-expand",
               capabilities=Capabilities(context=False, notes=False, flags=False, untranslated=False),
               all_locales_variant="multi", single_locale_variant="", nests_keys=True),
    FormatSpec("json", "multi", "Multi-language JSON", _JSON_TYPE, json_plain.read_multi, json_plain.write_multi,
               "One JSON object per locale, keyed by locale code", capabilities=_KEY_VALUE, multi_locale=True,
               single_locale_variant="", nests_keys=True),
    FormatSpec("json", "jed", "Jed", _JSON_TYPE, jed.read_jed, jed.write_jed,
               "Jed 1.x gettext-style JSON (locale_data by domain)",
               capabilities=Capabilities(notes=False, flags=False, untranslated=False, blank=False,
                                         single_form_plurals=False),  # ["text"] is all a one-form plural leaves
               **_GETTEXT),
    FormatSpec("json", "chrome", "Chrome extension messages", _JSON_TYPE, chrome.read_chrome, chrome.write_chrome,
               "Chrome/WebExtension messages.json: message and description per key",
               capabilities=Capabilities(context=False, flags=False, plurals=False, untranslated=False,
                                         dotted_keys=False),  # Chrome allows [A-Za-z0-9_@] only
               archive_path="_locales/{locale_}/messages.json", key_filter=chrome.chrome_key),
    FormatSpec("json", "i18next", "i18next", _JSON_TYPE, i18next.read_i18next, i18next.write_i18next,
               "i18next JSON v4 (plural suffixes _one, _other, ...)", **_I18NEXT),
    FormatSpec("json", "i18next4", "i18next v4", _JSON_TYPE, i18next.read_i18next, i18next.write_i18next,
               "i18next JSON v4 (plural suffixes _one, _other, ...)", **_I18NEXT),
    FormatSpec("json", "i18next3", "i18next v3", _JSON_TYPE, i18next.read_i18next3, i18next.write_i18next3,
               "i18next JSON v3 (plural suffixes _plural or _0, _1, ...)", **_I18NEXT),
    FormatSpec("arb", "", "Flutter ARB", _JSON_TYPE, arb.read_arb, arb.write_arb,
               "Application Resource Bundle (Flutter): ICU messages with @key metadata",
               capabilities=Capabilities(flags=False, untranslated=False), archive_path="app_{locale_}.arb"),
    FormatSpec("js", "", "JavaScript function", _JS_TYPE, None, js.write_function,
               "A JavaScript translation function over a lookup table", default_index="text",
               capabilities=Capabilities(blank=False)),  # t() answers the key for an empty text, as for none
    FormatSpec("js", "gettext", "Gettext.js", _JS_TYPE, None, js.write_gettext,
               "Gettext.js locale data", **_GETTEXT),
    FormatSpec("js", "ng-gettext", "angular-gettext", _JS_TYPE, None, js.write_ng_gettext,
               "angular-gettext translation module", **_GETTEXT),
    FormatSpec("csv", "", "CSV", "text/csv", csvfmt.read_csv, csvfmt.write_csv,
               "Comma-separated table: one column per locale (also reads Godot CSV)",
               capabilities=Capabilities(flags=False, blank=False),  # an empty cell means untranslated
               multi_locale=True, context_in_key=True),
    FormatSpec("xlf", "", "XLIFF 1.2", _XLIFF_TYPE, xliff.read_xliff, xliff.write_xliff,
               "XLIFF 1.2 (also reads 2.0): source/target pairs with states, notes, contexts and plural groups",
               aliases=("xliff",), capabilities=Capabilities(comments=True, references=True), multi_locale=True,
               variant_names=("symfony",), bilingual=True),  # Loco's Symfony XLIFF is XLIFF 1.2 keyed by asset ID, as ours
    FormatSpec("xlf", "xcode", "Xcode XLIFF", _XLIFF_TYPE, xliff.read_xliff, xliff.write_xliff_xcode,
               "XLIFF 1.2 as Xcode exports it: Localizable.strings and stringsdict plurals",
               capabilities=Capabilities(context=False), multi_locale=True, bilingual=True,
               archive_path="{locale}.xcloc/Localized Contents/{locale}.{ext}"),
    FormatSpec("tmx", "", "TMX 1.4", _XML_TYPE, tmx.read_tmx, tmx.write_tmx,
               "Translation memory: every locale of a unit in one <tu>",
               capabilities=Capabilities(comments=True), multi_locale=True, bilingual=True),
    FormatSpec("ts", "", "Qt Linguist", _XML_TYPE, qt.read_ts, qt.write_ts,
               "Qt Linguist TS 2.1: contexts, numerus plurals, unfinished translations, comments",
               capabilities=Capabilities(comments=True, references=True), archive_path="{project}_{locale_}.ts",
               **_GETTEXT),
    FormatSpec("xml", "", "Android strings", _XML_TYPE, android.read_android, android.write_android,
               "Android string resources: strings, plurals and string arrays",
               capabilities=Capabilities(context=False, flags=False, untranslated=False),
               archive_path="values-{android}/strings.xml", key_filter=android.android_key,
               variant_names=("android",)),
    FormatSpec("xml", "java", "Java properties XML", _XML_TYPE, keyvalue.read_java, keyvalue.write_java,
               "Java XML properties (java.util.Properties.loadFromXML)", capabilities=_FLAT_XML),
    FormatSpec("xml", "tizen", "Tizen strings", _XML_TYPE, keyvalue.read_tizen, keyvalue.write_tizen,
               "Tizen string table", capabilities=_FLAT_XML),
    FormatSpec("resx", "", "ResX - .NET resources", _XML_TYPE, resx.read_resx, resx.write_resx,
               ".NET ResX / UWP ResW resources with the standard resheaders",
               aliases=("resw",), capabilities=Capabilities(context=False, flags=False, plurals=False,
                                                            untranslated=False),
               archive_path="{project}.{locale}.{ext}"),
    FormatSpec("yml", "", "Simple YAML", _YAML_TYPE, yamlfmt.read_simple, yamlfmt.write_simple,
               "Flat YAML mapping of keys to texts; plurals as CLDR sub-hashes", aliases=("yaml",),
               capabilities=_YAML, all_locales_variant="rails", variant_names=("simple",)),
    FormatSpec("yml", "nested", "Nested YAML", _YAML_TYPE, yamlfmt.read_simple, yamlfmt.write_nested,
               "YAML under a locale root (and the namespace, when given), dotted keys expanded into nested mappings",
               capabilities=_YAML,
               all_locales_variant="rails", nests_keys=True),
    FormatSpec("yml", "rails", "Rails YAML", _YAML_TYPE, yamlfmt.read_rails, yamlfmt.write_rails,
               "Rails i18n YAML: a root per locale (yaml-prefix adds a namespace), plural sub-hashes",
               capabilities=_YAML, multi_locale=True, archive_path="{locale}.{ext}", nests_keys=True),
    FormatSpec("yml", "symfony", "Symfony YAML", _YAML_TYPE, yamlfmt.read_symfony, yamlfmt.write_symfony,
               "Symfony translation YAML: nested keys, plurals in pipe syntax",
               capabilities=_PIPE_PLURALS_YAML, archive_path="messages.{locale_}.{ext}", nests_keys=True),
    FormatSpec("php", "", "Zend/Laravel PHP array", _PHP_TYPE, php.read_php, php.write_php,
               "PHP file returning a nested array (Laravel, Zend); plurals as CLDR-keyed arrays",
               aliases=("phps",), capabilities=_PHP, archive_path="{locale_}/{project}.{ext}", nests_keys=True,
               variant_names=("zend",)),
    FormatSpec("php", "symfony", "Symfony (PHP array)", _PHP_TYPE, php.read_symfony, php.write_symfony,
               "Symfony PHP translation array: nested keys, plurals in pipe syntax",
               capabilities=replace(_PHP, single_form_plurals=False), archive_path="messages.{locale_}.{ext}",
               nests_keys=True),
    FormatSpec("php", "codeigniter", "CodeIgniter language array", _PHP_TYPE, php.read_codeigniter,
               php.write_codeigniter, "CodeIgniter language file: $lang['<namespace>_key'] = '...';",
               capabilities=_PHP, archive_path="{locale_}/{project}_lang.{ext}", nests_keys=True),
    FormatSpec("php", "constants", "PHP constants", _PHP_TYPE, php.read_constants, php.write_constants,
               "PHP define('<NAMESPACE>_KEY', '...') constants, one per plural form",
               capabilities=replace(_PHP, plurals=False, dotted_keys=False),  # keys are constant names
               key_filter=php.constant_name),
    FormatSpec("properties", "", "Java properties", "text/x-java-properties", properties.read_properties,
               properties.write_properties,
               "Java .properties: ISO-8859-1 with \\uXXXX escapes, MessageFormat quoting, ICU plurals",
               capabilities=Capabilities(context=False, flags=False, untranslated=False),  # missing key = untranslated
               archive_path="{project}_{locale_}.{ext}", default_charset="iso-8859-1", escapes_charset=True),
    FormatSpec("ini", "", "INI", "text/plain", ini.read_ini, ini.write_ini,
               "INI file: sections as key prefixes, quoted values, plurals as key[form]",
               capabilities=Capabilities(context=False, flags=False), key_filter=ini.ini_key),
    FormatSpec("html", "", "HTML table", "text/html", None, html.write_html,
               "HTML table of every locale", multi_locale=True),
    FormatSpec("sql", "", "MySQL inserts", "application/sql", None, sql.write_sql,
               "MySQL INSERT statements, one row per translation", multi_locale=True),
    FormatSpec("strings", "", "iOS Localizable.strings", "text/plain", apple_strings.read_strings,
               apple_strings.write_strings, "Apple .strings: \"key\" = \"value\"; pairs with comments as notes "
               "(UTF-8 or UTF-16 with a BOM)",
               capabilities=Capabilities(context=False, flags=False, plurals=False, untranslated=False),
               archive_path="{locale}.lproj/Localizable.strings"),
    FormatSpec("stringsdict", "", "iOS Localizable.stringsdict", _PLIST_TYPE, stringsdict.read_stringsdict,
               stringsdict.write_stringsdict, "Apple plural rules (one %#@value@ per key, CLDR categories)",
               capabilities=_PLIST, archive_path="{locale}.lproj/Localizable.stringsdict"),
    FormatSpec("xcstrings", "", "Xcode String Catalog", _JSON_TYPE, xcstrings.read_xcstrings,
               xcstrings.write_xcstrings, "Xcode String Catalog: every locale in one JSON file, states as flags",
               capabilities=Capabilities(context=False, ordered=False),  # Xcode sorts the keys
               multi_locale=True, archive_path="Localizable.xcstrings"),  # one file for all locales
    FormatSpec("plist", "", "Apple property list", _PLIST_TYPE, plist.read_plist, plist.write_plist,
               "XML property list: a dictionary of key to text", capabilities=_PLIST,
               archive_path="{locale}.lproj/Localizable.plist"),
    FormatSpec("bplist", "", "Apple binary property list", _BINARY_TYPE, plist.read_plist, plist.write_bplist,
               "Binary property list (bplist00): a dictionary of key to text", aliases=("blist",),
               capabilities=_PLIST, archive_path="{locale}.lproj/Localizable.plist"),
    FormatSpec("res", "", "ICU resource bundle", _BINARY_TYPE, icu_binary.read_res, icu_binary.write_res,
               "ICU binary resource bundle (genrb output); nested tables as dotted keys",
               capabilities=Capabilities(context=False, notes=False, flags=False, untranslated=False, ordered=False),
               archive_path="{locale_}.res", **_ICU),
    FormatSpec("txt", "", "ICU resource bundle source", "text/plain", icu_text.read_txt, icu_text.write_txt,
               "ICU resource bundle source (genrb input): locale table, nested tables as dotted keys",
               capabilities=Capabilities(context=False, flags=False, untranslated=False),
               archive_path="{locale_}.txt", **_ICU),
)

_TABLE: dict[tuple[str, str], FormatSpec] = {(spec.ext, spec.variant): spec for spec in FORMATS}
_ALIASES: dict[str, str] = {alias: spec.ext for spec in FORMATS for alias in spec.aliases}
_VARIANT_NAMES: dict[tuple[str, str], str] = {(spec.ext, name): spec.variant for spec in FORMATS
                                              for name in spec.variant_names}


def extensions() -> list[str]:
    """Every registered extension (aliases excluded), in registry order."""
    return list(dict.fromkeys(spec.ext for spec in FORMATS))


def aliases_of(ext: str) -> list[str]:
    """The other extensions meaning `ext` (declared on any of its variants)."""
    return sorted(alias for alias, target in _ALIASES.items() if target == ext)


def canonical_ext(ext: str) -> str:
    """Lower-case ext without dot, an alias replaced by the extension it stands for."""
    ext = (ext or "").strip().lower().lstrip(".")
    return _ALIASES.get(ext, ext)


def normalise(ext: str, variant: str | None) -> tuple[str, str]:
    """Canonical ext; the default variant may be spelled "", the ext itself (or an alias), "default" or its
    name (`android` for xml), any variant by one of its `variant_names`."""
    spelled = (ext or "").strip().lower().lstrip(".")
    ext = canonical_ext(spelled)
    variant = (variant or "").strip().lower()
    if variant in (ext, spelled, "default") or _ALIASES.get(variant) == ext:
        variant = ""
    return ext, _VARIANT_NAMES.get((ext, variant), variant)


def lookup(ext: str, variant: str | None = "", *, reading: bool = False, writing: bool = False) -> FormatSpec:
    """The spec of (ext, variant), or UnsupportedFormat listing what is supported for the purpose."""
    key = normalise(ext, variant)
    spec = _TABLE.get(key)
    if spec is None:
        raise UnsupportedFormat(_unknown_message(*key, reading=reading, writing=writing))
    if reading and not spec.readable:
        raise UnsupportedFormat(f"{spec.name} can be exported but not read; readable formats: {_names(readable=True)}")
    if writing and not spec.writable:
        raise UnsupportedFormat(
            f"{spec.name} can be read but not exported; exportable formats: {_names(writable=True)}"
        )
    return spec


def _usable(spec: FormatSpec, reading: bool, writing: bool) -> bool:
    return (not reading or spec.readable) and (not writing or spec.writable)


def _unknown_message(ext: str, variant: str, reading: bool = False, writing: bool = False) -> str:
    """Why (ext, variant) is unknown, naming the usable variants of ext or the usable extensions."""
    variants = [spec.variant or "(default)" for spec in FORMATS if spec.ext == ext and _usable(spec, reading, writing)]
    if variants:
        return f"unknown format {variant!r} for .{ext}; supported: {', '.join(variants)}"
    usable = {spec.ext for spec in FORMATS if _usable(spec, reading, writing)}
    usable |= {alias for alias, target in _ALIASES.items() if target in usable}
    purpose = " for reading" if reading else " for export" if writing else ""
    return f"unsupported file extension {ext!r}; supported{purpose}: {', '.join(sorted(usable))}"


def _names(readable: bool = False, writable: bool = False) -> str:
    """Comma list of the formats with a reader and/or writer."""
    return ", ".join(spec.name for spec in FORMATS if _usable(spec, readable, writable))


def spec_for_all_locales(spec: FormatSpec, locale_count: int) -> tuple[FormatSpec, bool]:
    """The spec an all-locales export uses, and whether it holds every locale (False: the only one, flat).

    Single-locale specs may name a multi-locale variant to use instead; a project with one locale gets the
    declared single-locale variant (Loco's flat all.json). UnsupportedFormat when nothing can hold them.
    """
    if locale_count == 1 and spec.single_locale_variant is not None:
        return lookup(spec.ext, spec.single_locale_variant, writing=True), False
    if spec.multi_locale:
        return spec, True
    if spec.all_locales_variant is not None:
        return lookup(spec.ext, spec.all_locales_variant, writing=True), True
    holders = ", ".join(other.name for other in FORMATS if other.multi_locale and other.writable)
    raise UnsupportedFormat(f"{spec.name} holds a single locale; formats holding all locales: {holders}")


_SUBTAG = re.compile(r"[A-Za-z0-9]+")


def _android_qualifier(locale: str) -> str:
    """Android resource qualifier: fr, fr-rCA, es-r419; b+sr+Latn for anything beyond language-region."""
    parts = _SUBTAG.findall(locale)
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2 and (len(parts[1]) == 2 or parts[1].isdigit()):
        return f"{parts[0]}-r{parts[1].upper()}"
    return "b+" + "+".join(parts)


_PLACEHOLDER = re.compile(r"\{%?([a-z_0-9]+)\}")


def _locale_parts(locale: str) -> dict[str, str]:
    """A locale tag's subtags as Loco's path placeholders name them: {lang}, {script}, {region}, {variant}."""
    parts = _SUBTAG.findall(locale)
    found = {"lang": parts[0] if parts else "", "script": "", "region": "", "variant": ""}
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha() and not found["script"]:
            found["script"] = part.title()
        elif (len(part) == 2 and part.isalpha() or len(part) == 3 and part.isdigit()) and not found["region"]:
            found["region"] = part.upper()
        elif not found["variant"]:
            found["variant"] = part
    return found


def archive_path(spec: FormatSpec, locale: str, project: str, ext: str | None = None, pattern: str = "",
                 namespace: str = "") -> str:
    """Where a locale's file sits in an archive: the request's `path` pattern, else the format's layout.

    Placeholders ({name}, or Loco's older {%name}): {locale} (pt-BR), {locale_} (pt_BR), {language} and {lang}
    (pt), {script}, {region}, {variant} (subtags), {android} (pt-rBR, b+sr+Latn), {project}, {namespace}
    (the namespace option, else the project), {ext} (as requested, else the spec's) and {extension} (the same).
    OptionError for an unknown placeholder or a path that is absolute or climbs out with `..`.
    """
    values = {"locale": locale, "locale_": locale.replace("-", "_"), "language": _SUBTAG.findall(locale)[0] if locale
              else "", "android": _android_qualifier(locale) if locale else "", "project": project,
              "namespace": namespace or project, "ext": ext or spec.ext, "extension": ext or spec.ext,
              **_locale_parts(locale)}

    def fill(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise OptionError(f"unknown placeholder {match.group(0)!r} in path; known: "
                              + ", ".join("{" + name + "}" for name in values))
        return values[match.group(1)]

    path = _PLACEHOLDER.sub(fill, pattern or spec.archive_path)
    segments = path.replace("\\", "/").split("/")
    if not path or path.startswith(("/", "\\")) or ".." in segments or "" in segments or ":" in segments[0]:
        raise OptionError(f"path {path[:200]!r} must be relative, without empty or '..' segments")
    return path


def archive_per_locale(spec: FormatSpec) -> bool:
    """Whether an archive holds one file per locale (its path names the locale) or one file of all locales."""
    return any(f"{{{name}}}" in spec.archive_path for name in ("locale", "locale_", "language", "android"))


def describe(spec: FormatSpec) -> dict[str, object]:
    """The public record of one format (GET /api/formats, supported())."""
    return {
        "ext": spec.ext, "variant": spec.variant, "label": spec.label, "description": spec.description,
        "readable": spec.readable, "writable": spec.writable, "multi_locale": spec.multi_locale,
        "aliases": aliases_of(spec.ext), "content_type": spec.content_type, "default_index": spec.default_index,
        "capabilities": spec.capabilities.declared(), "archive_path": spec.archive_path,
        "variant_names": list(spec.variant_names),
    }


def supported() -> list[dict[str, object]]:
    """One record per registered format, in registry order."""
    return [describe(spec) for spec in FORMATS]
