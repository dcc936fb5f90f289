"""JavaScript language packs (written only): Loco's "JavaScript function", Gettext.js and angular-gettext.

- js (default):   `loco.t(msgid, msgid_plural, n)` closure over {key: text or {form: text}}; untranslated = "".
- js gettext:     `var gt = new Gettext({domain, locale_data})`, Gettext.js layout: each message is
                  [msgid_plural or null, msgstr...] and the "" entry holds lang and plural-forms.
- js ng-gettext:  an angular-gettext run block calling `gettextCatalog.setStrings(lang, {...})`;
                  plurals are arrays, contexts use angular-gettext's {"$$noContext": ..., "ctx": ...}.
"""
from __future__ import annotations

import json
from typing import Any

from .banner import block_comment
from .document import Entry, ExportDocument
from .jsonfmt.jed import gettext_forms, gettext_key


def js_literal(value: Any, indent: int | None = 4) -> str:
    """A JSON value as a JavaScript literal (U+2028/U+2029 escaped: they end lines in older JS)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _banner(doc: ExportDocument) -> str:
    """The banner as a JS doc comment."""
    return block_comment(doc.banner)


def write_function(doc: ExportDocument) -> str:
    """Loco's "JavaScript function" pack: a t() function with the locale's plural rules built in."""
    rules = doc.rules(doc.locale)
    pairs = {entry.key: _function_value(entry, doc) for entry in doc.entries}
    return (
        _banner(doc)
        + "loco = window.loco||{}, loco.t = function( pairs ){\n"
        + "    // CLDR plural form names of the locale, in gettext index order\n"
        + f"    var pluralForms = {js_literal(rules.forms, None)};\n\n"
        + f"    // index (0-{rules.length - 1}) of the plural form for n\n"
        + "    function pluralIndex( n ){\n"
        + f"        return Number( {rules.equation} );\n"
        + "    }\n\n"
        + "    // t( msgid [, msgid_plural, n ] )\n"
        + "    return function( msgid1, msgid2, n ){\n"
        + "        var value = pairs[msgid1];\n"
        + "        if( null == n ){\n"
        + "            n = 1;\n"
        + "        }\n"
        + "        if( value instanceof Object ){\n"
        + "            value = value[ pluralForms[ pluralIndex(n) ] ];\n"
        + "        }\n"
        + "        return value || ( 1 === n ? msgid1 : msgid2 ) || msgid1 || '';\n"
        + "    };\n"
        + "}(\n"
        + js_literal(pairs)
        + "\n);\n"
    )


def _function_value(entry: Entry, doc: ExportDocument) -> str | dict[str, str]:
    """A key's value for the t() function: text, or an object of plural forms ("" when untranslated)."""
    if entry.unit.plural:
        forms = entry.plural_forms(doc.locale, doc.rules(doc.locale).forms)
        if forms:
            return forms
    return entry.translation(doc.locale).text or ""


def write_gettext(doc: ExportDocument) -> str:
    """A Gettext.js pack: messages as [msgid_plural or null, msgstr...]."""
    locale = doc.locale or doc.source_locale
    domain = doc.options.namespace or "messages"
    messages: dict[str, Any] = {"": {"lang": locale, "plural-forms": doc.rules(locale).header}}
    for entry in doc.entries:
        forms = gettext_forms(entry, doc)
        if forms is not None:
            plural_id = _plural_id(entry, doc) if entry.unit.plural else None
            messages[gettext_key(entry)] = [plural_id, *forms]
    data = {"domain": domain, "locale_data": {domain: messages}}
    return _banner(doc) + f"var gt = new Gettext( {js_literal(data)} );\n"


def _plural_id(entry: Entry, doc: ExportDocument) -> str:
    """The msgid_plural of a plural entry: the source "other" form when keys are texts."""
    source = entry.translation(doc.source_locale)
    if doc.index == "text" and source.plurals:
        return source.plurals.get("other") or list(source.plurals.values())[-1]
    return entry.key


def write_ng_gettext(doc: ExportDocument) -> str:
    """An angular-gettext catalogue module."""
    locale = doc.locale or doc.source_locale
    strings: dict[str, Any] = {}
    for entry in doc.entries:
        forms = gettext_forms(entry, doc)
        if forms is None:
            continue
        value: Any = forms if entry.unit.plural else forms[0]
        if entry.unit.context:
            slot = strings.get(entry.key)
            slot = slot if isinstance(slot, dict) else ({"$$noContext": slot} if slot is not None else {})
            slot[entry.unit.context] = value
            strings[entry.key] = slot
        elif isinstance(strings.get(entry.key), dict):
            strings[entry.key]["$$noContext"] = value
        else:
            strings[entry.key] = value
    return (
        _banner(doc)
        + "angular.module('gettext').run(['gettextCatalog', function (gettextCatalog) {\n"
        + "/* jshint -W100 */\n"
        + f"    gettextCatalog.setStrings({js_literal(locale.replace('-', '_'))}, {js_literal(strings)});\n"
        + "/* jshint +W100 */\n"
        + "}]);\n"
    )
