"""json jed: Jed 1.x gettext-style JSON; its keys and forms serve the js gettext writers too."""
from __future__ import annotations

import re
from typing import Any

from ..catalogue import Catalogue, Translation
from ..document import Entry, ExportDocument
from ..errors import ParseError
from ..jsoncodec import dump_json, load_json
from ..options import ReadOptions
from ..plurals import categories_for_indices, is_locale_code
from ..reading import CatalogueBuilder, plural_translation, require_language
from .tree import top_object


_CONTEXT_SEPARATOR = "\u0004"


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
    tree = top_object(load_json(data))
    locale_data = tree.get("locale_data", tree)
    if not isinstance(locale_data, dict) or not locale_data:
        raise ParseError('Jed JSON needs a "locale_data" object')
    named = tree.get("domain")
    domain = named if isinstance(named, str) and named in locale_data else next(iter(locale_data))
    messages = locale_data[domain]
    if not isinstance(messages, dict):
        raise ParseError(f"Jed domain {domain!r} is not an object")
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
        raise ParseError(f"Jed message {key!r}: expected an array of strings")
    context, _, msgid = key.rpartition(_CONTEXT_SEPARATOR)
    if len(value) > 1:
        names = categories_for_indices(builder.locale, len(value), equation)
        target = plural_translation({name: text or None for name, text in zip(names, value)}, builder.locale)
        builder.add(msgid, target, context=context, plural=True)
    else:
        text = value[0] if value else None
        builder.add(msgid, Translation(text=text) if text else None, context=context)
