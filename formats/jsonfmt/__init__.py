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

One module per format (`plain` json and json multi, `jed`, `chrome`, `i18next`, `arb`), registered in
`formats.registry`; `tree` holds what they share; the JSON codec itself is `formats.jsoncodec`.
"""
