"""JSON family: key/value JSON, multi-locale JSON, Jed, Chrome messages.json, i18next (v4 and v3), Flutter ARB.

Shapes written (reading accepts the same, plus flat dotted keys wherever nested objects are written):
- json:           {"key": "text", "plural": {"one": "...", "other": "..."}, "a": {"b": "..."}}; untranslated
                  units left out (an empty text in a template)
- json multi:     {"en": {...}, "fr": {...}} (one locale only: the flat object, like Loco's export/all.json)
- json jed:       Jed 1.x {"domain", "locale_data": {domain: {"": header, "ctx\\u0004key": ["text", ...]}}}
- json chrome:    {"key": {"message": "text", "description": "notes"}}; keys limited to [A-Za-z0-9_@]
- json i18next:   v4 plural suffixes key_one, key_other...; i18next3: key / key_plural or key_0, key_1...
- arb:            {"@@locale": "fr", "key": "text", "@key": {"description": notes, "context": ...}},
                  plurals as one ICU argument {count, plural, one{...} other{...}}
No export holds a null: untranslated units are left out of every variant (json and multi-locale JSON: an
app's own fallback applies; jed and chrome: absence means untranslated; i18next: a missing key falls back,
where a null would print as null under `returnNull`; ARB: gen-l10n uses the template's text), and a template,
which holds keys only, gives each key an empty text, as does an export whose `status` asks for untranslated
units (the keys that need translating). Comments (`//`, `/* */`) are tolerated on read.
"""
from __future__ import annotations

import json
import re
from itertools import compress, repeat
from json.encoder import encode_basestring as _encode_string
from operator import attrgetter, is_not
from typing import Any, Callable, Iterable, Iterator

from .catalogue import Catalogue, Translation
from limits import MAX_NESTING_DEPTH, describe

from .document import Entry, ExportDocument
from .errors import FormatError, LimitExceeded
from .icu import as_message, from_message, parse_plural, plural_message
from .nesting import fold, nest
from .options import ReadOptions
from .pipeline import nests_keys
from .plurals import categories_for_indices, is_locale_code, plural_rules
from .reading import (CatalogueBuilder, add_tree, duplicate_key_warning, file_locale, leaf_translation,
                      plural_translation, require_language)

# One left-to-right pass: an unterminated string or comment runs to the end of the text instead of being
# retried from every later quote or slash (which made hostile inputs such as '/*a' * n quadratic).
_COMMENT_OR_STRING = re.compile(r'("(?:[^"\\]++|\\.)*+"?)|//[^\n]*+|/\*(?:[^*]++|\*(?!/))*+(?:\*/)?', re.S)
_CONTEXT_SEPARATOR = "\u0004"


# --- shared ----------------------------------------------------------------------------------------


def load_json(data: bytes, warnings: list[str] | None = None) -> Any:
    """Parsed JSON (UTF-8/16/32 by BOM), tolerating comments; FormatError names line and column.

    A key given twice in one object keeps its last value, as JavaScript does; `warnings` receives a line
    for each such key, naming it by its dotted path and line.
    """
    text = _decode(data)
    duplicates: list[bool] = []
    try:
        value = _parse(text, duplicates)
    except json.JSONDecodeError:
        try:
            text = _strip_comments(text)
            value = _parse(text, duplicates)
        except json.JSONDecodeError as error:
            raise FormatError(f"invalid JSON: {error.msg} (column {error.colno})", error.lineno) from None
    if nesting_depth(value) > MAX_NESTING_DEPTH:
        raise LimitExceeded(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels {describe('max_nesting_depth')}")
    if duplicates and warnings is not None:
        warnings.extend(_duplicate_key_warnings(text))
    return value


def _parse(text: str, duplicates: list[bool]) -> Any:
    """The parsed value; `duplicates` gets an item when some object holds a key twice."""
    def checked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            duplicates.append(True)
        return result

    try:
        return json.loads(text, object_pairs_hook=checked)
    except RecursionError:
        raise LimitExceeded(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels "
                            f"{describe('max_nesting_depth')}") from None


_TOKEN = re.compile(r'"(?:[^"\\\n]++|\\.)*+"|[{}\[\]:,\n]')


def _duplicate_key_warnings(text: str) -> list[str]:
    """A warning per key given twice in one object (a second pass, run only when the parse met one).

    Walks the tokens of the (already valid) text keeping, per open object, its path and the line of each
    key, and per open array its path and the index of the current item.
    """
    warnings: list[str] = []
    line = 1
    stack: list[list[Any]] = []  # per open container: [path, {key: line} or None for an array, key or index]
    last_string = ""
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == "\n":
            line += 1
        elif token[0] == '"':
            last_string = token
        elif token == ":":  # the string before a colon is a key of the innermost object
            frame, key = stack[-1], json.loads(last_string)
            if key in frame[1]:
                warnings.append(duplicate_key_warning(frame[0] + key, line, frame[1][key]))
            frame[1][key], frame[2] = line, key
        elif token in "{[":
            path = f"{stack[-1][0]}{stack[-1][2]}." if stack else ""
            stack.append([path, {} if token == "{" else None, 0])
        elif token in "}]":
            stack.pop()
        elif stack[-1][1] is None:  # a comma between array items
            stack[-1][2] += 1
    return warnings


def nesting_depth(value: Any) -> int:
    """How deep containers nest in a parsed JSON/YAML value (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_NESTING_DEPTH:
            return depth  # deep enough to refuse: no need to walk the rest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _decode(data: bytes) -> str:
    """JSON bytes as text."""
    codec = "utf-8"
    for bom, name in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            codec = name
            break
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1 if codec.startswith("utf-8") else None
        raise FormatError(f"JSON is not valid {codec.upper().removesuffix('-SIG')}", line) from None


def _strip_comments(text: str) -> str:
    """Text with `//` and `/* */` comments blanked out (newlines kept so line numbers stay right)."""
    def blank(match: re.Match[str]) -> str:
        return match.group(1) or "\n" * match.group(0).count("\n")

    return _COMMENT_OR_STRING.sub(blank, text)


def dump_json(value: Any, indent: str = "    ", colon: str = ": ", final_newline: bool = True) -> str:
    """JSON as Loco prints it: 4-space indents, non-ASCII and slashes unescaped, final newline.

    Same output as json.dumps(value, indent=4, ensure_ascii=False), but without the pure-Python indenting
    encoder (several times slower): large objects go through the C encoder whole, other values piece by piece.
    Other layouts (Xcode's two spaces and `" : "`) only change `indent`, `colon` and `final_newline`.
    """
    parts: list[str] = []
    _dump(value, parts, "\n", indent, colon)
    if final_newline:
        parts.append("\n")
    return "".join(parts)


def _dump(value: Any, parts: list[str], newline: str, indent: str, colon: str) -> None:
    """Append the pretty JSON of a value; `newline` carries the current indentation."""
    if isinstance(value, str):
        parts.append(_encode_string(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + indent
        if len(value) >= _WHOLE_OBJECT_ITEMS:
            whole = _dump_whole(value, newline, indent, colon)
            if whole is not None:
                parts.append(whole)
                return
        separator = "{"
        for key, item in value.items():
            if type(item) is str:  # the common leaf, written without a recursive call
                parts.append(f"{separator}{inner}{_encode_string(str(key))}{colon}{_encode_string(item)}")
            else:
                parts.append(separator + inner + _encode_string(str(key)) + colon)
                _dump(item, parts, inner, indent, colon)
            separator = ","
        parts.append(newline + "}")
    elif isinstance(value, list):
        if not value:
            parts.append("[]")
            return
        inner = newline + indent
        separator = "["
        for item in value:
            parts.append(separator + inner)
            _dump(item, parts, inner, indent, colon)
            separator = ","
        parts.append(newline + "]")
    else:
        parts.append(json.dumps(value))


# Objects with this many items or more are encoded whole by the C encoder (below, piece by piece is cheaper).
_WHOLE_OBJECT_ITEMS = 16
# Values the C encoder writes exactly as `_dump` does (exact types: subclasses may print otherwise).
_PLAIN_VALUE_TYPES = frozenset({str, type(None), bool, int, float})
_CONTAINER_TYPES = frozenset({dict, list})
_MARK = "\x00"  # stands for a nested value in the C encoder's output, where it reads "\u0000"
_ENCODED_MARK = _encode_string(_MARK)
_encoders: dict[tuple[str, str], json.JSONEncoder] = {}


def _dump_whole(value: dict[Any, Any], newline: str, indent: str, colon: str) -> str | None:
    """A non-empty object laid out as `_dump` does, through one call of the C encoder: nested objects
    and arrays are replaced by a mark, and written in its place afterwards. None when some key or value is
    of a type `_dump` writes differently (non-string keys, str subclasses...) or a text holds the mark."""
    if set(map(type, value)) != {str}:
        return None
    types = set(map(type, value.values()))
    nested: list[Any] = []
    if not types <= _PLAIN_VALUE_TYPES:
        if not types <= _PLAIN_VALUE_TYPES | _CONTAINER_TYPES:
            return None
        # C-level passes only: which values are containers, those values, and a copy with marks instead.
        containers = list(map(_CONTAINER_TYPES.__contains__, map(type, value.values())))
        nested = list(compress(value.values(), containers))
        value = {**value, **dict.fromkeys(compress(value, containers), _MARK)}
    return _encode_marked(value, nested, newline, indent, colon)


def _encode_marked(value: dict[str, Any], nested: list[Any], newline: str, indent: str, colon: str,
                   tail: str = "") -> str | None:
    """A non-empty object whose values are scalars or the mark, laid out as `_dump` does (then `tail`), through
    one call of the C encoder; the marks are replaced by the pretty JSON of `nested`, in order. None when some
    key or text is the mark itself."""
    inner = newline + indent
    encoder = _encoders.get((inner, colon))
    if encoder is None:
        encoder = _encoders[(inner, colon)] = json.JSONEncoder(
            ensure_ascii=False, check_circular=False, separators=("," + inner, colon))
    encoded = encoder.encode(value)  # `{"key": "text",<inner>"key": ...}`, one large string: few copies of it
    if not nested:
        return f"{{{inner}{encoded[1:-1]}{newline}}}{tail}"
    # Inside an encoded string a quote is always escaped, so a quoted mark is a whole key or value: ours,
    # unless some key or text is the mark itself.
    pieces = encoded.split(_ENCODED_MARK)
    if len(pieces) != len(nested) + 1:
        return None
    pieces[0] = "{" + inner + pieces[0][1:]
    pieces[-1] = pieces[-1][:-1] + newline + "}" + tail
    written = [pieces[0]]
    for item, piece in zip(nested, pieces[1:]):
        parts: list[str] = []
        _dump(item, parts, inner, indent, colon)
        written += parts
        written.append(piece)
    return "".join(written)


def _top_object(value: Any) -> dict[str, Any]:
    """The top-level object, or FormatError when the JSON is something else."""
    if not isinstance(value, dict):
        raise FormatError(f"expected a JSON object at the top level, found {type(value).__name__}")
    return value


def _scalar_text(value: Any, key: str) -> str | None:
    """A leaf value as text: strings as they are, numbers and booleans in JSON spelling, null = None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    raise FormatError(f"key {key!r}: expected a string, found {type(value).__name__}")


def _leaf_translation(value: Any, key: str, locale: str) -> Translation | None:
    """A JSON leaf (string, null, number or plural object) as a translation."""
    return leaf_translation(value, key, locale, _scalar_text)


def _add_tree(builder: CatalogueBuilder, tree: dict[str, Any], locale: str) -> None:
    """Every leaf of a (possibly nested) object as a unit or a translation of one, in `locale`."""
    add_tree(builder, tree, locale, _scalar_text)


def _value(entry: Entry, locale: str | None, doc: ExportDocument) -> str | dict[str, str] | None:
    """A unit's JSON value in a locale: text, plural object, or null when untranslated."""
    if entry.unit.plural:
        forms = entry.plural_forms(locale, doc.rules(locale).forms)
        return forms or None
    translation = entry.translations.get(locale) if locale else None
    return translation.text if translation is not None else None


def _tree(doc: ExportDocument, locale: str | None) -> dict[str, Any]:
    """The nested (or flat, per the entries' paths) object of one locale: never a null, so untranslated units
    are left out, or have an empty text where the export wants their keys (`untranslated_as_empty`)."""
    entries = doc.entries
    if locale:
        values = _leaf_values(doc, locale, _plural_objects(doc, locale))
    else:
        values = [_value(entry, locale, doc) for entry in entries]
    if doc.untranslated_as_empty:
        values = ["" if value is None else value for value in values]
    if not nests_keys(doc.spec, doc.options, doc.index):  # every path is the entry's key alone
        if None not in values:
            return dict(zip([entry.key for entry in entries], values))
        return {entry.key: value for entry, value in zip(entries, values) if value is not None}
    return nest((entry.path, value) for entry, value in zip(entries, values) if value is not None)


def _leaf_values(doc: ExportDocument, locale: str, plural_value: Callable[[Entry], Any]) -> list[Any]:
    """`_value` of every entry in a locale, inline for singular units (this runs once per unit of large files)."""
    return [plural_value(entry) if entry.unit.plural
            else None if (found := entry.translations.get(locale)) is None else found.text
            for entry in doc.entries]


def _plural_objects(doc: ExportDocument, locale: str) -> Callable[[Entry], dict[str, str] | None]:
    """`_value` of plural entries in a locale, the locale's plural forms fetched once one needs them."""
    forms: list[str] = []

    def plural_object(entry: Entry) -> dict[str, str] | None:
        if not forms:
            forms.extend(doc.rules(locale).forms)
        return entry.plural_forms(locale, forms) or None

    return plural_object


# --- simple and multi-locale JSON ------------------------------------------------------------------


def read_json(data: bytes, options: ReadOptions) -> Catalogue:
    """Key/value JSON (nested or flat dotted keys); Chrome messages.json is recognised and read as such."""
    warnings: list[str] = []
    tree = _top_object(load_json(data, warnings))
    if looks_like_chrome(tree):
        catalogue = _chrome_catalogue(tree, options)
    else:
        builder = CatalogueBuilder(options, "id")
        _add_tree(builder, tree, builder.locale)
        catalogue = builder.build()
    catalogue.warnings.extend(warnings)
    return catalogue


def write_json(doc: ExportDocument) -> str | bytes:
    """Key/value JSON of the target locale: texts only, untranslated units left out (a template keeps its
    keys, with empty texts) so that an app's own fallback applies and a re-import changes nothing."""
    if doc.locale and doc.entries and not nests_keys(doc.spec, doc.options, doc.index):
        flat = _flat_json(doc, doc.locale)
        if flat is not None:
            return flat
    return dump_json(_tree(doc, doc.locale))


def _flat_json(doc: ExportDocument, locale: str) -> str | bytes | None:
    """What `dump_json(_tree(...))` gives for a flat tree (or its UTF-8 bytes, when that is what the pipeline
    makes of it), built for the encoder straight away: texts, null, and marks where plural objects go (see
    `_encode_marked`). None when some key or text is the mark."""
    nested: list[dict[str, str]] = []
    plural_object = _plural_objects(doc, locale)

    def plural_mark(entry: Entry) -> str | None:
        found = plural_object(entry)
        if found is None:
            return None
        nested.append(found)
        return _MARK

    values = _leaf_values(doc, locale, plural_mark)
    keys = list(map(attrgetter("key"), doc.entries))
    if doc.untranslated_as_empty:
        values = ["" if value is None else value for value in values]
    elif None in values:
        kept = list(map(is_not, values, repeat(None)))
        keys, values = list(compress(keys, kept)), list(compress(values, kept))
    if not keys:
        return None
    if _utf8_unix(doc) and len(set(keys)) == len(keys):
        data = _utf8_object(keys, values, nested)
        if data is not None:
            return data
    return _encode_marked(dict(zip(keys, values)), nested, "\n", "    ", ": ", tail="\n")


def _utf8_unix(doc: ExportDocument) -> bool:
    """Whether the pipeline only encodes the writer's text as UTF-8 (no other charset, no other line ends)."""
    return doc.charset == "utf-8" and doc.options.breaks.lower() == "unix"


# Control characters JSON escapes; two of them end keys and pairs in `_utf8_object` (the mark is a third).
_CONTROL_BYTES = bytes(range(32))
_KEY_END, _PAIR_END, _BYTE_MARK = "\x01", "\x02", _MARK.encode()


def _utf8_object(keys: list[str], values: list[str | None], nested: list[dict[str, str]]) -> bytes | None:
    """The UTF-8 bytes of the flat object of unique keys and texts (or marks for `nested`, in order) that
    `_encode_marked` writes, made with a few passes over the whole instead of encoding each string: valid when
    no key or text holds a control character (escaped in JSON as `\\n`, `\\u0001`...), so that quotes and
    backslashes are the only characters to escape. None otherwise, or when a text cannot be UTF-8."""
    if None in values:  # null is no string
        return None
    try:
        data = _PAIR_END.join(map(_KEY_END.join, zip(keys, values))).encode()  # type: ignore[arg-type]
    except UnicodeEncodeError:  # a lone surrogate: the pipeline reports it
        return None
    separators = 2 * len(keys) - 1 + len(nested)
    if len(data) - len(data.translate(None, _CONTROL_BYTES)) != separators:  # a key or text holds one
        return None
    if b"\\" in data:
        data = data.replace(b"\\", b"\\\\")
    if b'"' in data:
        data = data.replace(b'"', b'\\"')
    data = b'{\n    "' + data.replace(_KEY_END.encode(), b'": "').replace(_PAIR_END.encode(), b'",\n    "') + b'"\n}\n'
    if not nested:
        return data
    pieces = data.split(b'"' + _BYTE_MARK + b'"')
    written = [pieces[0]]
    for item, piece in zip(nested, pieces[1:]):
        parts: list[str] = []
        _dump(item, parts, "\n    ", "    ", ": ")
        try:
            written.append("".join(parts).encode())
        except UnicodeEncodeError:
            return None
        written.append(piece)
    return b"".join(written)


def read_multi(data: bytes, options: ReadOptions) -> Catalogue:
    """{locale: {key: value}}; an object whose top-level keys are not all locales reads as one locale."""
    tree = _top_object(load_json(data))
    if not tree or not all(isinstance(value, dict) and is_locale_code(code) for code, value in tree.items()):
        builder = CatalogueBuilder(options, "id")
        _add_tree(builder, tree, builder.locale)
        return builder.build()
    builder = CatalogueBuilder(options, "id", detected_source=next(iter(tree)))
    for code, locale_tree in tree.items():
        _add_tree(builder, locale_tree, code)
    return builder.build()


def write_multi(doc: ExportDocument) -> str:
    """Every exported locale under its code; a single locale is written flat (Loco's all.json quirk)."""
    locales = doc.locales or [doc.source_locale]
    if len(locales) == 1:
        return dump_json(_tree(doc, locales[0]))
    return dump_json({code: _tree(doc, code) for code in locales})


# --- Jed -------------------------------------------------------------------------------------------


def write_jed(doc: ExportDocument) -> str:
    """Jed 1.x locale data: translations as arrays of forms, contexts joined with EOT."""
    domain = doc.options.namespace or "messages"
    locale = doc.locale or doc.source_locale
    messages: dict[str, Any] = {"": {"domain": domain, "lang": locale, "plural_forms": doc.rules(locale).header}}
    for entry in doc.entries:
        forms = gettext_forms(entry, doc)
        if forms is not None:
            messages[gettext_key(entry)] = forms
    return dump_json({"domain": domain, "locale_data": {domain: messages}})


def gettext_key(entry: Entry) -> str:
    """The lookup key of gettext-style JSON: context EOT key, or the key alone."""
    context = entry.unit.context
    return f"{context}{_CONTEXT_SEPARATOR}{entry.key}" if context else entry.key


def gettext_forms(entry: Entry, doc: ExportDocument) -> list[str] | None:
    """The msgstr list of an entry (one per plural form), None when untranslated outside a template."""
    translation = entry.translation(doc.locale)
    if not translation.translated and not doc.template:
        return None
    if not entry.unit.plural:
        return [translation.text or ""]
    forms = doc.rules(doc.locale).forms
    present = entry.plural_forms(doc.locale, forms)
    return [present.get(name, "") for name in forms]


def read_jed(data: bytes, options: ReadOptions) -> Catalogue:
    """Jed 1.x JSON (or its bare locale_data object)."""
    tree = _top_object(load_json(data))
    locale_data = tree.get("locale_data", tree)
    if not isinstance(locale_data, dict) or not locale_data:
        raise FormatError('Jed JSON needs a "locale_data" object')
    named = tree.get("domain")
    domain = named if isinstance(named, str) and named in locale_data else next(iter(locale_data))
    messages = locale_data[domain]
    if not isinstance(messages, dict):
        raise FormatError(f"Jed domain {domain!r} is not an object")
    raw_header = messages.get("")
    header: dict[str, Any] = raw_header if isinstance(raw_header, dict) else {}
    lang = header.get("lang") or None
    detected = lang if isinstance(lang, str) and is_locale_code(lang) else None
    require_language(options, detected, lambda: any(key and value and any(value) for key, value in messages.items()),
                     f"no lang in the header of domain {domain!r}")
    builder = CatalogueBuilder(options, "text", detected)
    plural_forms = header.get("plural_forms") or header.get("Plural-Forms") or header.get("plural-forms") or ""
    equation = re.search(r"plural\s*=\s*([^;]+)", plural_forms)
    for key, value in messages.items():
        if key == "":
            continue
        _add_gettext_json(builder, key, value, equation.group(1) if equation else None)
    return builder.build({str(k): str(v) for k, v in header.items()})


def _add_gettext_json(builder: CatalogueBuilder, key: str, value: Any, equation: str | None) -> None:
    """One Jed message: a list of forms (more than one = plural)."""
    if not isinstance(value, list) or not all(item is None or isinstance(item, str) for item in value):
        raise FormatError(f"Jed message {key!r}: expected an array of strings")
    context, _, msgid = key.rpartition(_CONTEXT_SEPARATOR)
    if len(value) > 1:
        names = categories_for_indices(builder.locale, len(value), equation)
        target = plural_translation({name: text or None for name, text in zip(names, value)}, builder.locale)
        builder.add(msgid, target, context=context, plural=True)
    else:
        text = value[0] if value else None
        builder.add(msgid, Translation(text=text) if text else None, context=context)


# --- Chrome ----------------------------------------------------------------------------------------

_CHROME_UNSAFE = re.compile(r"[^A-Za-z0-9_@]")


def chrome_key(key: str) -> str:
    """A key Chrome accepts: characters other than ASCII letters, digits, `_` and `@` become `_`."""
    return _CHROME_UNSAFE.sub("_", key) or "_"


def looks_like_chrome(tree: dict[str, Any]) -> bool:
    """Whether every entry is {"message": string, ...}: the messages.json shape."""
    return bool(tree) and all(
        isinstance(value, dict) and isinstance(value.get("message"), str)
        and set(value) <= {"message", "description", "placeholders"}
        for value in tree.values()
    )


def read_chrome(data: bytes, options: ReadOptions) -> Catalogue:
    """Chrome/WebExtension messages.json."""
    return _chrome_catalogue(_top_object(load_json(data)), options)


def _chrome_catalogue(tree: dict[str, Any], options: ReadOptions) -> Catalogue:
    """Units from messages.json entries: message = text, description = notes, placeholders kept in meta."""
    builder = CatalogueBuilder(options, "id")
    for key, value in tree.items():
        if not isinstance(value, dict) or not isinstance(value.get("message"), str):
            raise FormatError(f'entry {key!r}: expected an object with a "message" string')
        meta = {"chrome.placeholders": value["placeholders"]} if isinstance(value.get("placeholders"), dict) else {}
        description = value.get("description")
        builder.add(
            key, Translation(text=value["message"]),
            notes=description if isinstance(description, str) else "", meta=meta,
        )
    return builder.build()


def write_chrome(doc: ExportDocument) -> str:
    """messages.json; Chrome has no plurals: each plural form is a message of its own (pipeline.plural_forms_apart)."""
    messages: dict[str, Any] = {}
    for entry in doc.entries:
        text = _chrome_text(entry, doc)
        if text is None:
            continue
        message: dict[str, Any] = {"message": text}
        if entry.unit.notes:
            message["description"] = entry.unit.notes
        if entry.unit.meta.get("chrome.placeholders"):
            message["placeholders"] = entry.unit.meta["chrome.placeholders"]
        messages[entry.key] = message
    return dump_json(messages)


def _chrome_text(entry: Entry, doc: ExportDocument) -> str | None:
    """The message of an entry (empty in templates, None when untranslated)."""
    if doc.template:
        return ""
    return entry.translation(doc.locale).text


# --- i18next ---------------------------------------------------------------------------------------


def write_i18next(doc: ExportDocument) -> str:
    """i18next v4 JSON: plural units become sibling keys with CLDR suffixes (key_one, key_other)."""
    return _write_suffixed(doc, lambda forms: [(f"_{name}", name) for name in forms])


def write_i18next3(doc: ExportDocument) -> str:
    """i18next v3 JSON: key + key_plural for two-form languages, key_0, key_1... otherwise."""
    def suffixes(forms: list[str]) -> list[tuple[str, str]]:
        if len(forms) == 2:
            return [("", forms[0]), ("_plural", forms[1])]
        return [(f"_{position}", name) for position, name in enumerate(forms)]

    return _write_suffixed(doc, suffixes)


def _write_suffixed(doc: ExportDocument, suffixes: Callable[[list[str]], list[tuple[str, str]]]) -> str:
    """Nested JSON where each plural form gets its own suffixed key."""
    locale = doc.locale or doc.source_locale
    forms = doc.rules(locale).forms
    items: list[tuple[tuple[str, ...], Any]] = []
    for entry in doc.entries:
        if not entry.unit.plural:
            items.append((entry.path, entry.translation(doc.locale).text))
            continue
        present = entry.plural_forms(doc.locale, forms)
        for suffix, name in suffixes(forms):
            items.append((entry.path[:-1] + (entry.path[-1] + suffix,), present.get(name)))
    if doc.untranslated_as_empty:
        return dump_json(nest((path, "" if text is None else text) for path, text in items))
    return dump_json(nest((path, text) for path, text in items if text is not None))  # missing: i18next falls back


_V4_SUFFIX = re.compile(r"^(.+)_(zero|one|two|few|many|other)$")
_V3_SUFFIX = re.compile(r"^(.+)_(plural|\d+)$")


def read_i18next(data: bytes, options: ReadOptions) -> Catalogue:
    """i18next v4 JSON: key_<category> siblings (with _other, or two categories or more) form a plural."""
    def categories(group: dict[str, Any], locale: str) -> dict[str, Any] | None:
        return group if "other" in group or len(group) > 1 else None

    return _read_suffixed(data, options, _V4_SUFFIX, categories)


def read_i18next3(data: bytes, options: ReadOptions) -> Catalogue:
    """i18next v3 JSON: key + key_plural, or key_0, key_1... by the locale's plural forms."""
    def categories(group: dict[str, Any], locale: str) -> dict[str, Any] | None:
        forms = plural_rules(locale).forms
        if "plural" in group:
            return {forms[0]: group.get(""), forms[-1] if len(forms) > 1 else "other": group["plural"]}
        numbered = {int(suffix): text for suffix, text in group.items() if suffix.isdigit()}
        if not numbered or max(numbered) >= len(forms):
            return None
        return {forms[position]: text for position, text in sorted(numbered.items())}

    return _read_suffixed(data, options, _V3_SUFFIX, categories, singular_in_group=True)


def _read_suffixed(
    data: bytes,
    options: ReadOptions,
    pattern: re.Pattern[str],
    categories: Callable[[dict[str, Any], str], dict[str, Any] | None],
    singular_in_group: bool = False,
) -> Catalogue:
    """Flattened keys whose suffixes group into plural units (at the first member's position)."""
    pairs = list(fold(_top_object(load_json(data))))
    builder = CatalogueBuilder(options, "id")
    locale = builder.locale
    plurals = _plural_groups(pairs, pattern, categories, locale, singular_in_group)
    added: set[str] = set()
    for key, value in pairs:
        match = pattern.match(key)
        base = match.group(1) if match and match.group(1) in plurals else (key if key in plurals else None)
        if base is None:
            translation = _leaf_translation(value, key, locale)
            unit = builder.unit_for(key)
        elif base not in added:
            added.add(base)
            texts = {name: _scalar_text(text, base) for name, text in plurals[base].items()}
            translation = plural_translation(texts, locale)
            unit = builder.unit_for(base, plural=True)
        else:
            continue
        if translation is not None:
            builder.add_translation(unit, locale, translation)
    return builder.build()


def _plural_groups(
    pairs: list[tuple[str, Any]],
    pattern: re.Pattern[str],
    categories: Callable[[dict[str, Any], str], dict[str, Any] | None],
    locale: str,
    singular_in_group: bool,
) -> dict[str, dict[str, Any]]:
    """base key -> {category: value} for the suffix groups that `categories` accepts as plurals."""
    groups: dict[str, dict[str, Any]] = {}
    for key, value in pairs:
        match = pattern.match(key)
        if match:
            groups.setdefault(match.group(1), {})[match.group(2)] = value
    if singular_in_group:
        for key, value in pairs:
            if key in groups:
                groups[key][""] = value
    return {base: forms for base, group in groups.items() if (forms := categories(group, locale))}


# --- ARB -------------------------------------------------------------------------------------------


def write_arb(doc: ExportDocument) -> str:
    """Flutter ARB: @@locale, then each key with its @key metadata; plurals as ICU plural arguments."""
    locale = doc.locale or doc.source_locale
    arb: dict[str, Any] = {"@@locale": locale.replace("-", "_"), "@@last_modified": doc.exported_at.isoformat()}
    for entry in doc.entries:
        value = _arb_value(entry, doc)
        if value is None and not doc.untranslated_as_empty:
            continue  # an untranslated key is left out: gen-l10n then uses the template's text
        arb[entry.key] = "" if value is None else value
        metadata = _arb_metadata(entry)
        if metadata:
            arb["@" + entry.key] = metadata
    return dump_json(arb)


def _arb_value(entry: Entry, doc: ExportDocument) -> str | None:
    """A key's ARB text: an ICU message, an ICU plural argument, or None when untranslated.

    ARB text is ICU MessageFormat: a text that is not valid ICU as it stands (`{{name}}`, a stray brace)
    is written as a quoted literal, so that Flutter and every ICU reader show it as it was.
    """
    if not entry.unit.plural:
        text = entry.translation(doc.locale).text
        return as_message(text) if text is not None else None
    forms = entry.plural_forms(doc.locale, doc.rules(doc.locale).forms)
    quoted = {name: as_message(text, plural_form=True) for name, text in forms.items()}
    return plural_message(_arb_plural_variable(entry), quoted) if forms else None


def _arb_plural_variable(entry: Entry) -> str:
    """The ICU variable of a plural unit: the one read from an ARB file, else "count"."""
    return entry.unit.meta.get("arb.plural_variable", "count")


def _arb_metadata(entry: Entry) -> dict[str, Any]:
    """The @key object: description (notes), context, placeholders (declared for plurals too)."""
    unit = entry.unit
    metadata: dict[str, Any] = dict(unit.meta.get("arb.extra") or {})  # `type`, `x-…` keys read from ARB
    if unit.notes:
        metadata["description"] = unit.notes
    if unit.context:
        metadata["context"] = unit.context
    placeholders = dict(unit.meta.get("arb.placeholders") or {})
    if unit.plural:
        placeholders.setdefault(_arb_plural_variable(entry), {"type": "num"})
    if placeholders:
        metadata["placeholders"] = placeholders
    return metadata


def read_arb(data: bytes, options: ReadOptions) -> Catalogue:
    """A Flutter ARB file; @@ attributes become headers, @key metadata notes/context/placeholders."""
    tree = _top_object(load_json(data))
    declared = tree.get("@@locale")
    detected = file_locale(declared, "@@locale") if isinstance(declared, str) and declared.strip() else None
    builder = CatalogueBuilder(options, "id", detected)
    headers = {key[2:]: str(value) for key, value in tree.items() if key.startswith("@@")}
    for key, value in _arb_messages(tree):
        raw_metadata = tree.get("@" + key)
        metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
        _add_arb_message(builder, key, value, metadata)
    return builder.build(headers)


# @key fields that become unit fields (the rest is kept as it was, in the unit's meta)
_ARB_MAPPED_METADATA = ("description", "context", "placeholders")


def _arb_messages(tree: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The (key, value) pairs that are messages, not @metadata."""
    for key, value in tree.items():
        if not key.startswith("@"):
            yield key, value


def _add_arb_message(builder: CatalogueBuilder, key: str, value: Any, metadata: dict[str, Any]) -> None:
    """One ARB message as a unit: a whole-text ICU plural becomes a plural unit."""
    if value is not None and not isinstance(value, str):
        raise FormatError(f"ARB key {key!r}: expected a string or null, found {type(value).__name__}")
    meta: dict[str, Any] = {}
    if isinstance(metadata.get("placeholders"), dict):
        meta["arb.placeholders"] = metadata["placeholders"]
    extra = {name: item for name, item in metadata.items() if name not in _ARB_MAPPED_METADATA}
    if extra:
        meta["arb.extra"] = extra
    plural = parse_plural(value) if value else None
    if plural is not None:
        meta["arb.plural_variable"] = plural[0]
        forms = {name: from_message(text, plural_form=True) for name, text in plural[1].items()}
        target = plural_translation(forms, builder.locale)
    else:
        target = Translation(text=from_message(value)) if value is not None else None
    builder.add(
        key, target, plural=plural is not None, meta=meta,
        notes=str(metadata.get("description") or ""), context=str(metadata.get("context") or ""),
    )
