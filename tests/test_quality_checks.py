"""Each quality check (quality.checks), through the one function the API, the asset page and the grid call."""
from __future__ import annotations

import pytest

from quality import CHECK_NAMES, Glossary, checks_for


def names(asset, source, target, locale="fr", glossary=None, **kwargs):
    return [result.name for result in checks_for(asset, source, target, locale, glossary or Glossary(),
                                                 source_locale="en", **kwargs)]


def messages(asset, source, target, locale="fr", **kwargs):
    return [result.message for result in checks_for(asset, source, target, locale, source_locale="en", **kwargs)]


def test_a_faithful_translation_fails_no_check():
    assert names({"printf": "php"}, "Delete %d files?", "Supprimer %d fichiers ?") == []


@pytest.mark.parametrize("style, source, target, message", [
    ("php", "Hello, %s!", "Bonjour !", "Missing placeholder %s"),
    ("c", "%d of %d", "%d sur %d %s", "Unexpected placeholder %s"),
    ("python", "Hi %(name)s.", "Salut %(nom)s.", "Missing placeholder %(name)s"),
    ("java", "By %1$s on %2$s", "Par %1$s", "Missing placeholder %2$s"),
    ("objc", "%@ liked it", "Aimé", "Missing placeholder %@"),
    ("icu", "{name} invited you", "{nom} vous a invité", "Missing placeholder {name}"),
    ("i18next", "Hi {{name}}", "Salut {{nom}}", "Missing placeholder {{name}}"),
    ("qt", "%1 of %2", "%1 sur", "Missing placeholder %2"),
    ("ruby", "Hi %{name}", "Salut", "Missing placeholder %{name}"),
])
def test_a_missing_placeholder_is_reported_in_the_assets_style(style, source, target, message):
    assert message in messages({"printf": style}, source, target)


def test_printf_placeholders_in_another_order_pass_and_a_changed_one_is_reported():
    assert names({"printf": "php"}, "%1$s by %2$d%%", "%2$d%% par %1$s") == []
    assert messages({"printf": "php"}, "%05.1f done", "%5.1f fait") == ["Missing placeholder %05.1f",
                                                                        "Unexpected placeholder %5.1f"]


@pytest.mark.parametrize("style, check", [("php", "php_format"), ("c", "c_format"), ("python", "python_format"),
                                          ("java", "java_printf_format"), ("icu", "icu_message_format"),
                                          ("i18next", "i18next_interpolation"), ("qt", "qt_format"),
                                          ("ruby", "ruby_format")])
def test_each_placeholder_style_has_its_weblate_check_name(style, check):
    source = {"icu": "{a}", "i18next": "{{a}}", "qt": "%1", "ruby": "%{a}"}.get(style, "%s")
    assert check in names({"printf": style}, f"x {source}", "x")


def test_an_asset_without_a_style_is_checked_in_the_style_its_source_uses():
    assert names({}, "Hello, %s!", "Bonjour !") == ["php_format"]


def test_icu_message_format_syntax_errors_are_reported():
    assert "ICU MessageFormat syntax error in the translation" in messages(
        {"printf": "icu"}, "{n, plural, one {# file} other {# files}}", "{n, plural, one {# fichier} other {# fich}")


def test_icu_arguments_repeated_in_plural_branches_are_not_extra_placeholders():
    assert names({"printf": "icu"}, "{n, plural, one {# file in {dir}} other {# files in {dir}}}",
                 "{n, plural, one {# fichier dans {dir}} other {# fichiers dans {dir}}}") == []


def test_html_tags_and_entities_of_html_assets_must_be_kept():
    found = messages({"type": "html"}, "<b>Save</b> &amp; quit", "<i>Enregistrer</i> et quitter")
    assert "Missing HTML tag <b>" in found and "Unexpected HTML tag <i>" in found
    assert "Missing entity &amp;" in found


def test_tags_are_not_checked_in_plain_text_assets():
    assert names({"type": "text"}, "a <b> c", "a c") == []


def test_a_url_of_the_source_must_be_in_the_translation():
    assert messages({}, "See https://example.com/help.", "Voir l'aide.") == ["Missing URL https://example.com/help"]


def test_numbers_must_match_whatever_the_locales_separators():
    assert names({}, "1,000.5 items", "1 000,5 éléments") == []
    assert messages({}, "Delete 3 files", "Supprimer 4 fichiers") == ["Missing number 3", "Unexpected number 4"]


def test_positional_placeholders_are_not_numbers():
    assert "numbers" not in names({"printf": "java"}, "%1$s and %2$s", "%2$s et %1$s")


def test_the_newline_count_must_match():
    assert names({}, "One\nTwo", "Un deux") == ["newline-count"]


def test_leading_and_trailing_whitespace_must_match():
    assert names({}, " New", "Nouveau") == ["begin_space"]
    assert names({}, "New ", "Nouveau") == ["end_space"]


def test_a_double_space_the_source_lacks_is_reported():
    assert names({}, "Save now", "Enregistrer  maintenant") == ["double_space"]


@pytest.mark.parametrize("source, target, check", [
    ("Done.", "Fini", "end_stop"), ("Name:", "Nom", "end_colon"), ("Why?", "Pourquoi", "end_question"),
    ("Stop!", "Arrête", "end_exclamation"), ("Loading…", "Chargement", "end_ellipsis"),
    ("a;", "b", "end_semicolon"),
])
def test_ending_punctuation_must_match(source, target, check):
    assert names({}, source, target) == [check]


def test_ending_punctuation_of_other_scripts_counts_as_the_same_ending():
    assert names({}, "Done.", "完了。", locale="ja") == []
    assert names({}, "Why?", "لماذا؟", locale="ar") == []
    assert names({}, "Why?", "Γιατί;", locale="el") == []


def test_an_unchanged_translation_is_reported_except_between_variants_of_one_language():
    assert names({}, "Settings", "Settings") == ["same"]
    assert names({}, "Settings", "Settings", locale="en-GB") == []
    assert names({}, "OK 42", "OK 42") == ["same"]
    assert names({}, "42", "42") == []


def test_a_translation_longer_than_the_assets_maximum_length_is_reported():
    assert names({"max_length": 5}, "Hello", "Bonjour") == ["max-length"]
    assert names({"max_length": 7}, "Hello", "Bonjour") == []


def test_missing_plural_forms_follow_the_locales_cldr_rules():
    source = "{n, plural, one {# file} other {# files}}"
    found = messages({"printf": "icu"}, source, "{n, plural, one {# файл} other {# файлов}}", locale="ru")
    assert [message.split(" (")[0] for message in found] == ["Missing plural form 'few'", "Missing plural form 'many'"]
    assert names({"printf": "icu"}, source, "{n, plural, one {# fichier} other {# fichiers}}") == []


def test_missing_plural_form_assets_are_reported():
    assert names({}, "file", "файл", locale="ru", plural_forms={"few": "файла", "many": None}) == ["plurals"]


def test_a_glossary_term_translated_otherwise_is_reported():
    glossary = Glossary({"pull request": {"translations": {"fr": "demande de tirage"}}})
    assert names({}, "Open the pull request", "Ouvrez la PR", glossary=glossary) == ["check_glossary"]
    assert names({}, "Open the pull request", "Ouvrez la demande de tirage", glossary=glossary) == []


def test_a_forbidden_term_used_in_a_translation_is_reported_with_its_note():
    glossary = Glossary({"bug": {"translations": {"fr": "bogue"}, "forbidden": True, "note": "say anomalie"}})
    results = checks_for({}, "A bug", "Un bogue", "fr", glossary, source_locale="en")
    assert [(r.name, r.message, r.severity) for r in results] == [
        ("forbidden_term", "Forbidden term 'bogue' used (say anomalie)", "error")]


def test_glossary_terms_match_whole_words_only():
    glossary = Glossary({"log": {"translations": {"fr": "journal"}}})
    assert names({}, "Login", "Connexion", glossary=glossary) == []


def test_a_whitespace_only_translation_is_empty_and_nothing_else_is_checked():
    assert messages({"printf": "php"}, "Hello %s", "   ") == ["Translation is only whitespace"]


def test_the_source_locale_is_checked_for_emptiness_only():
    assert checks_for({}, "Done", "Done", "en", source_locale="en") == []


def test_every_result_has_a_known_name_and_a_severity():
    results = checks_for({"type": "html", "printf": "php", "max_length": 3}, " <b>%s</b> https://a.b 1.\n",
                         "<i>x</i>  2", "fr", source_locale="en")
    assert results and all(r.name in CHECK_NAMES and r.severity in ("error", "warning") for r in results)


def test_the_worked_examples_in_the_quality_docstrings_hold():
    import doctest

    import quality.checks
    import quality.glossary

    for module in (quality.checks, quality.glossary):
        assert doctest.testmod(module).failed == 0


def test_terms_are_found_with_their_spans_in_texts_whose_lower_case_is_longer():
    glossary = Glossary({"Bug": {"translations": {"fr": "anomalie"}}})
    text = "İstanbul BUG report"  # "İ".lower() is two characters: the spans must still be the text's
    assert [(found.term.term, text[found.start:found.end]) for found in glossary.found_in(text)] == [("Bug", "BUG")]
    assert [(found.start, found.end) for found in glossary.found_in("a bug")] == [(2, 5)]


# Glossaries whose terms are single words, several words, overlapping, or start with punctuation; and texts that
# hold them whole, inside longer words, in other cases and scripts (the word fast path must find what the
# expression over every term finds).
GLOSSARIES = [
    ["bug", "widget7", "Straße", "naïve", "log"],
    ["pull", "pull request", "request", "merge-request", "C++"],
    [".NET", "bug", "e-mail"],
    [f"widget{n}" for n in range(30)],
]
TEXTS = [
    "", "bug", "A bug!", "debug the login log", "BUG-report: pull  request", "Open the Pull Request, then pull.",
    "widget7 widget70 widget3x x_widget3 widget3", "STRASSE straße Straße's", "a naïve NAÏVE e-mail E-MAIL email",
    "Use C++ or .NET (.net) with C", "merge-request merge request", "İstanbul bug ﬁle log", "\tbug\nlog\n",
    "Delete %d widget1 files from %s?", "<b>Save</b> the widget2 &amp; quit.", "Le widget9fr numéro 9 est prêt.",
]


@pytest.mark.parametrize("terms", GLOSSARIES)
def test_the_terms_found_in_a_text_are_those_the_spans_show_for_every_kind_of_term(terms):
    glossary = Glossary({term: {"translations": {}, "forbidden": True} for term in terms})
    for text in TEXTS:
        spans = list(dict.fromkeys(found.term.term for found in glossary.found_in(text)))
        assert [term.term for term in glossary.terms_in(text)] == spans, text
        assert [term.term for term, _ in glossary.forbidden_in(text, "fr")] == spans, text
