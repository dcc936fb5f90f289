"""Quality checks of one translation against its source: pure functions, each with a stable name.

Names follow Weblate's check identifiers where a check means the same (`same`, `end_stop`, `newline-count`,
`xml-tags`, `max-length`, `plurals`, `check_glossary`, `python_format`...); `numbers`, `forbidden_term` and
`empty` are Gloss's own. Every result is advice: nothing here blocks a save.

    >>> [result.name for result in checks_for({"printf": "php"}, "Hello, %s!", "Hallo!", "de")]
    ['php_format']
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from formats.icu import is_valid_message, parse_plural
from formats.plurals import plural_rules
from formats.printf import Placeholder, detect_printf, directive_texts, placeholders

from .glossary import EMPTY_GLOSSARY, Glossary

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class CheckResult:
    """One failed check: its stable name, what is wrong (in words), and how bad (error or warning)."""

    name: str
    message: str
    severity: str = WARNING

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "message": self.message, "severity": self.severity}


# ----------------------------------------------------------------------------- placeholders
# The check named after each placeholder style (an asset's `printf`), Weblate's identifier where it has one.
STYLE_CHECKS = {
    "php": "php_format", "python": "python_format", "java": "java_printf_format", "objc": "objc_format",
    "c": "c_format", "icu": "icu_message_format", "i18next": "i18next_interpolation", "qt": "qt_format",
    "ruby": "ruby_format",
}
_ICU_ARGUMENT_NAME = re.compile(r"\{\s*([^\s{},']+)\s*[,}]")
_I18NEXT = re.compile(r"\{\{\s*(-?\s*[^{}\s,]+)\s*(?:,[^{}]*)?\}\}|\$t\(([^()]*)\)")
_QT = re.compile(r"%L?([1-9][0-9]?)")
_RUBY = re.compile(r"%%|%\{(\w+)\}|%<(\w+)>[-+ 0#]*\d*(?:\.\d+)?[a-zA-Z]|"
                   r"%(?:\d+\$)?[-+ 0#]*\d*(?:\.\d+)?[bBdiouxXeEfgGaAcps]")


def placeholder_label(token: Placeholder, style: str) -> str:
    """How a printf placeholder reads in messages: `%s`, `%2$d`, `%(name)s`."""
    if style == "python" and token.name:
        return f"%({token.name}){token.spec}{token.conversion}"
    position = f"{token.position}$" if token.position else ""
    return f"%{position}{token.spec}{token.length}{token.conversion}"


# The printf styles, and the tokeniser each reads with.
_PRINTF_TOKENISERS = {"php": "php", "python": "python", "java": "java", "objc": "objc", "c": "objc"}


def _printf_labels(style: str) -> Callable[[str], list[str]]:
    tokeniser = _PRINTF_TOKENISERS[style]  # C printf is Objective-C's without %@
    return lambda text: [placeholder_label(p, style) for p in placeholders(text, tokeniser)]


def _icu_labels(text: str) -> list[str]:
    # names, not occurrences: a plural's branches repeat an argument as often as they like
    return ["{" + name + "}" for name in dict.fromkeys(_ICU_ARGUMENT_NAME.findall(text))]


def _i18next_labels(text: str) -> list[str]:
    return ["{{" + name.replace(" ", "") + "}}" if name else f"$t({nested})" for name, nested in _I18NEXT.findall(text)]


def _qt_labels(text: str) -> list[str]:
    return [f"%{number}" for number in dict.fromkeys(_QT.findall(text))]  # Qt may use an argument twice


def _ruby_labels(text: str) -> list[str]:
    return [match.group(0) for match in _RUBY.finditer(text) if match.group(0) != "%%"]


LABELS: dict[str, Callable[[str], list[str]]] = {
    **{style: _printf_labels(style) for style in ("php", "python", "java", "objc", "c")},
    "icu": _icu_labels, "i18next": _i18next_labels, "qt": _qt_labels, "ruby": _ruby_labels,
}
# A character every placeholder of a style contains: a text without it has none (the common, cheap case).
_MARKS = {"icu": "{", "i18next": "{", "qt": "%", "ruby": "%"}


def differences(wanted: list[str], found: list[str]) -> tuple[list[str], list[str]]:
    """(what `found` lacks of `wanted`, what it has beyond it), counting repeats; cheap when they agree."""
    if sorted(wanted) == sorted(found):
        return [], []
    want, have = Counter(wanted), Counter(found)
    return list((want - have).elements()), list((have - want).elements())


def placeholder_checks(source: str, target: str, style: str) -> list[CheckResult]:
    """Placeholders of the source missing from the translation, or added to it, in the asset's style (detected
    from the source when the asset declares none); ICU MessageFormat must also parse."""
    if not style:
        if "%" not in source and "{" not in source:
            return []  # no placeholder to detect a style from
        style = detect_printf(source)
    elif _MARKS.get(style, "%") not in source and _MARKS.get(style, "%") not in target:
        return []
    if not style or style not in LABELS:
        return []
    tokeniser = _PRINTF_TOKENISERS.get(style)
    if tokeniser and sorted(directive_texts(source, tokeniser)) == sorted(directive_texts(target, tokeniser)):
        return []  # the same directives as written: the same placeholders (the usual case, 4x cheaper)
    name = STYLE_CHECKS[style]
    results = []
    if style == "icu" and not is_valid_message(target):
        results.append(CheckResult(name, "ICU MessageFormat syntax error in the translation", ERROR))
    missing, extra = differences(LABELS[style](source), LABELS[style](target))
    results += [CheckResult(name, f"Missing placeholder {label}", ERROR) for label in missing]
    results += [CheckResult(name, f"Unexpected placeholder {label}", ERROR) for label in extra]
    return results


# ----------------------------------------------------------------------------- markup, URLs, numbers
# A tag cannot contain `<`: stopping there keeps the scan linear (`<a` * n made the lazy `[^>]*?` quadratic).
HTML_TAG = re.compile(r"<\s*+(/?)\s*+([A-Za-z][\w:-]*+)[^<>]*+>")
ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'{}]+")
NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f ]\d+)*")
# What a number check must not read as a number: placeholders with positions (%1$s, {0}, %2) and tags (<h1>).
_NOT_NUMBERS = re.compile(r"%\d+\$|%L?\d+|\{[^{}]*\}|<[^<>]*+>|&#?\w+;")


def _tags(text: str) -> list[str]:
    return [("</" if close else "<") + name.lower() + ">" for close, name in HTML_TAG.findall(text)]


def markup_checks(source: str, target: str) -> list[CheckResult]:
    """Tags and entities of an HTML or XML text: the translation keeps every one of the source's."""
    if "<" not in source and "<" not in target and "&" not in source and "&" not in target:
        return []
    missing, extra = differences(_tags(source), _tags(target))
    results = [CheckResult("xml-tags", f"Missing HTML tag {tag}", ERROR) for tag in sorted(missing)]
    results += [CheckResult("xml-tags", f"Unexpected HTML tag {tag}", ERROR) for tag in sorted(extra)]
    missing, extra = differences(ENTITY.findall(source), ENTITY.findall(target))
    results += [CheckResult("xml-tags", f"Missing entity {entity}", WARNING) for entity in sorted(set(missing))]
    results += [CheckResult("xml-tags", f"Unexpected entity {entity}", WARNING) for entity in sorted(set(extra))]
    return results


def _urls(text: str) -> list[str]:
    return [url.rstrip(".,;:!?)") for url in URL.findall(text)]


def url_checks(source: str, target: str) -> list[CheckResult]:
    if "://" not in source:
        return []
    missing, _ = differences(_urls(source), _urls(target))
    return [CheckResult("url", f"Missing URL {url}", ERROR) for url in sorted(set(missing))]


_NOT_DIGITS = re.compile(r"\D")
_DIGIT = re.compile(r"\d")


def _numbers(text: str) -> list[str]:
    if "%" in text or "{" in text or "<" in text or "&" in text:
        text = _NOT_NUMBERS.sub(" ", text)
    return NUMBER.findall(text)


def number_checks(source: str, target: str) -> list[CheckResult]:
    if not _DIGIT.search(source) and not _DIGIT.search(target):
        return []
    wanted, found = _numbers(source), _numbers(target)
    if wanted == found:
        return []  # the usual case, without looking closer
    # separators differ between locales (1,000.5 / 1 000,5): compare the digits
    missing, extra = differences([_NOT_DIGITS.sub("", n) for n in wanted], [_NOT_DIGITS.sub("", n) for n in found])
    results = [CheckResult("numbers", f"Missing number {number}") for number in sorted(missing)]
    results += [CheckResult("numbers", f"Unexpected number {number}") for number in sorted(extra)]
    return results


# ----------------------------------------------------------------------------- whitespace and punctuation
def whitespace_checks(source: str, target: str) -> list[CheckResult]:
    if not target.strip():
        return [CheckResult("empty", "Translation is only whitespace" if target else "Translation is empty",
                            ERROR)]
    results = []
    if source[:1].isspace() != target[:1].isspace():
        results.append(CheckResult("begin_space", "Leading whitespace differs from the source"))
    if source[-1:].isspace() != target[-1:].isspace():
        results.append(CheckResult("end_space", "Trailing whitespace differs from the source"))
    if source.count("\n") != target.count("\n"):
        results.append(CheckResult("newline-count", f"The source has {source.count(chr(10))} line breaks, the "
                                                    f"translation {target.count(chr(10))}"))
    if "  " in target.strip() and "  " not in source:
        results.append(CheckResult("double_space", "Translation contains a double space"))
    return results


# The last character of a text -> the ending it stands for, in the scripts that spell it differently.
ENDINGS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(".。։।۔።", ("end_stop", "a full stop")),
    **dict.fromkeys(":：", ("end_colon", "a colon")),
    **dict.fromkeys("?？؟՞", ("end_question", "a question mark")),
    **dict.fromkeys("!！՜", ("end_exclamation", "an exclamation mark")),
    "…": ("end_ellipsis", "an ellipsis"),
    **dict.fromkeys("；", ("end_semicolon", "a semicolon")),
}


def _ending(text: str, locale: str) -> tuple[str, str] | None:
    last = text.rstrip()[-1:]
    if last == ";":  # Greek's question mark is the semicolon
        return ENDINGS["?"] if _language(locale) == "el" else ("end_semicolon", "a semicolon")
    return ENDINGS.get(last)


def punctuation_checks(source: str, target: str, locale: str) -> list[CheckResult]:
    wanted, found = _ending(source, ""), _ending(target, locale)
    if wanted == found:
        return []
    if wanted is not None:
        return [CheckResult(wanted[0], f"The source ends with {wanted[1]}, the translation does not")]
    assert found is not None
    return [CheckResult(found[0], f"The translation ends with {found[1]}, the source does not")]


_LETTERS = re.compile(r"[^\W\d_]{2}")


def unchanged_check(source: str, target: str, locale: str, source_locale: str) -> list[CheckResult]:
    """`same`: the translation is the source text, in a locale of another language."""
    if (target != source and target.strip() != source.strip()) or not _LETTERS.search(_NOT_NUMBERS.sub(" ", URL.sub(" ", source))):
        return []
    if source_locale and _language(locale) == _language(source_locale):
        return []  # en_GB may well say what en says
    return [CheckResult("same", "Translation is the same as the source")]


def _language(code: str) -> str:
    return re.split(r"[-_]", code, maxsplit=1)[0].lower()


def length_check(target: str, max_length: Any) -> list[CheckResult]:
    if isinstance(max_length, int) and not isinstance(max_length, bool) and len(target) > max_length > 0:
        return [CheckResult("max-length", f"Translation is {len(target)} characters long, more than the "
                                          f"{max_length} allowed", ERROR)]
    return []


# ----------------------------------------------------------------------------- plurals
def plural_checks(source: str, target: str, locale: str,
                  plural_forms: Mapping[str, str | None] | None) -> list[CheckResult]:
    """`plurals`: every plural form the locale's CLDR rules use is there, as plural-form assets (`plural_forms`:
    category -> text or None, the forms after the first) or as an ICU plural argument."""
    if plural_forms is None and ("plural" not in source or "{" not in target):
        return []
    needed = plural_rules(locale).forms
    missing: list[str] = []
    if plural_forms is not None:
        missing = [form for form in needed[1:] if not plural_forms.get(form)]
    else:
        parsed = parse_plural(target)
        if parsed is not None and parse_plural(source) is not None:
            missing = [form for form in needed if form not in parsed[1] and form != "other"]
            if "other" not in parsed[1]:
                missing.append("other")
    return [CheckResult("plurals", f"Missing plural form {form!r} ({locale} uses {', '.join(needed)})", ERROR)
            for form in missing]


# ----------------------------------------------------------------------------- glossary
def glossary_checks(source: str, target: str, locale: str, glossary: Glossary) -> list[CheckResult]:
    """`check_glossary`: a term of the source whose glossary translation the translation lacks;
    `forbidden_term`: a forbidden term (its translation in the locale, else the term) used in the translation."""
    if not glossary:
        return []
    results = []
    folded = target.casefold()
    for term in glossary.terms_in(source):
        wanted = term.translations.get(locale)
        if not term.forbidden and wanted and wanted.casefold() not in folded:
            results.append(CheckResult("check_glossary", f"{term.term!r} should be translated as {wanted!r}"))
    for term, used in glossary.forbidden_in(target, locale):
        results.append(CheckResult("forbidden_term", f"Forbidden term {used!r} used"
                                                     + (f" ({term.note})" if term.note else ""), ERROR))
    return results


# ----------------------------------------------------------------------------- all of them
def checks_for(asset: Mapping[str, Any], source_text: str | None, target_text: str, locale: str,
               glossary: Glossary = EMPTY_GLOSSARY, *, source_locale: str = "",
               plural_forms: Mapping[str, str | None] | None = None) -> list[CheckResult]:
    """Every check over one translation of an asset (its stored record: `printf`, `type`, `max_length`).

    `source_text` None: the asset has no source text (only the translation's own emptiness is checked);
    `source_locale`: the project's, so that `same` is quiet between variants of one language (en, en_GB);
    `plural_forms`: for an asset with plural-form assets, their texts in this locale by CLDR category.
    With `locale == source_locale` the text is the source itself: only emptiness is checked.
    """
    if source_text is None or (source_locale and locale == source_locale):
        return [result for result in whitespace_checks(target_text, target_text) if result.name == "empty"]
    source, target = source_text, target_text
    results = whitespace_checks(source, target)
    if not target.strip():
        return results
    results += placeholder_checks(source, target, asset.get("printf", ""))
    if asset.get("type") in ("html", "xml"):
        results += markup_checks(source, target)
    results += url_checks(source, target)
    results += number_checks(source, target)
    results += punctuation_checks(source, target, locale)
    results += unchanged_check(source, target, locale, source_locale)
    results += length_check(target, asset.get("max_length"))
    results += plural_checks(source, target, locale, plural_forms)
    results += glossary_checks(source, target, locale, glossary)
    return results


def messages(results: Iterable[CheckResult]) -> list[str]:
    """The messages of results (Loco's `errors`, strings)."""
    return [result.message for result in results]


CHECK_NAMES: tuple[str, ...] = (
    "empty", "begin_space", "end_space", "newline-count", "double_space", *STYLE_CHECKS.values(), "xml-tags",
    "url", "numbers", "end_stop", "end_colon", "end_question", "end_exclamation", "end_ellipsis", "end_semicolon",
    "same", "max-length", "plurals", "check_glossary", "forbidden_term",
)
