"""Plural rules and locale names from Babel's CLDR data, shaped like Loco's locale `plurals` record.

Every locale Babel knows is answered from `cldr_table.py`, generated from Babel by tools/make_cldr_table.py
(tests/formats/test_plurals.py proves the two agree), so that a command-line run never loads Babel's locale
data; other codes (unknown trailing subtags, aliases) still go to Babel.

`forms` are the CLDR categories that integers 0..1000 fall into, in canonical order; `equation` is a
gettext C expression in n giving an index into `forms`.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads any TYPE_CHECKING as True) without importing typing
if TYPE_CHECKING:  # Babel is imported where it is first needed: `import formats` stays cheap for a CLI run
    from babel import Locale
    from babel.plural import PluralRule

from vocabulary import canonical_locale, is_locale_tag

from limits import MAX_PLURAL_FORMS, MAX_PLURAL_FORMULA_CHARS, describe

from .errors import LimitExceeded

CATEGORIES: tuple[str, ...] = ("zero", "one", "two", "few", "many", "other")
SAMPLE_RANGE = range(0, 1001)  # the integers whose categories define `forms`


@dataclass(frozen=True)
class PluralRules:
    """Loco's PluralRules record: number of forms, gettext equation, CLDR form names."""

    length: int
    equation: str
    forms: list[str]

    @property
    def header(self) -> str:
        """The value of a PO `Plural-Forms` header."""
        return f"nplurals={self.length}; plural={self.equation};"

    def category(self, n: int) -> str:
        """The form name used for the integer n."""
        return self.forms[_compile_equation(self.equation)(n)]


def with_other(forms: dict[str, str]) -> dict[str, str]:
    """Forms in CLDR order with `other` always present, copying the last form when the locale's integers never
    reach it (Russian: one, few, many): ICU MessageFormat and Apple's plural rules both require `other`."""
    if forms and "other" not in forms:
        forms = {**forms, "other": forms[next(name for name in reversed(CATEGORIES) if name in forms)]}
    return {name: forms[name] for name in CATEGORIES if name in forms}


def without_repeated_other(forms: dict[str, str], locale: str) -> dict[str, str]:
    """A file's forms without an `other` that only repeats the locale's last form (what `with_other` adds)."""
    used = plural_rules(locale).forms
    if "other" in forms and "other" not in used and len(forms) > 1:
        last = next((forms[name] for name in reversed(used) if name in forms), None)
        if last == forms["other"]:
            return {name: text for name, text in forms.items() if name != "other"}
    return forms


def normalise_code(code: str) -> str:
    """A locale code with hyphens as separators (`fr_FR` -> `fr-FR`), the form Babel is asked with."""
    return code.strip().replace("_", "-")


@lru_cache(maxsize=512)
def babel_locale(code: str) -> Locale | None:
    """The Babel locale for a code, dropping trailing subtags Babel does not know (`en-GB-x-test`)."""
    from babel import Locale, UnknownLocaleError

    parts = normalise_code(code).split("-")
    while parts and parts[0]:
        try:
            return Locale.parse("-".join(parts), sep="-")
        except (ValueError, UnknownLocaleError):
            parts.pop()
    return None


def is_locale_code(code: str) -> bool:
    """Whether Babel recognises the code as a locale (used to tell locale keys from other keys)."""
    return is_locale_tag(code) and (_table_entry(code) is not None or babel_locale(code) is not None)


def locale_display_name(code: str) -> str:
    """The English name of a locale from CLDR, e.g. "French (France)"; the code itself if unknown."""
    entry = _table_entry(code)
    if entry is not None:
        return entry[1]
    locale = babel_locale(code)
    return locale.english_name if locale is not None and locale.english_name else code


def table_key(code: str) -> str | None:
    """How the built-in table spells a code (canonically, as Babel reads codes case-insensitively), if a tag."""
    code = normalise_code(code)
    return canonical_locale(code) if is_locale_tag(code) else None


@lru_cache(maxsize=1024)
def _table_entry(code: str) -> tuple[int, str] | None:
    """(rule index, English name) of a code in the built-in table, None when it is not there."""
    from .cldr_table import LOCALES  # imported on first use: most commands never need it

    key = table_key(code)
    return LOCALES.get(key) if key is not None else None


def babel_table_entry(code: str) -> tuple[str, list[str], str] | None:
    """(equation, forms, English name) Babel gives a code: what the built-in table holds for it."""
    locale = babel_locale(code)
    if locale is None or not locale.english_name:
        return None
    rules = _babel_plural_rules(code)
    return rules.equation, rules.forms, locale.english_name


_TOKEN = re.compile(r"\s*(?:(\d+)|(n)|(\|\||&&|==|!=|<=|>=|[-+*/%<>!?:()]))")
_BINARY_PRECEDENCE = {
    "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
    "+": 5, "-": 5, "*": 6, "/": 6, "%": 6,
}
_BINARY = {
    "||": lambda a, b: int(bool(a) or bool(b)), "&&": lambda a, b: int(bool(a) and bool(b)),
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a // b, "%": lambda a, b: a % b,
}


class _EquationParser:
    """A precedence-climbing parser of gettext plural expressions with C semantics (unlike gettext.c2py,
    whose "!" binds like Python's "not")."""

    def __init__(self, text: str) -> None:
        self.tokens = self._tokenise(text)
        self.position = 0

    @staticmethod
    def _tokenise(text: str) -> list[str]:
        """The expression split into numbers, `n` and operators; anything else is a syntax error."""
        tokens: list[str] = []
        position, text = 0, text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if not match or match.end() == position:
                raise ValueError(f"unexpected {text[position:position + 10]!r} in plural expression")
            tokens.append(match.group(match.lastindex or 0))
            position = match.end()
        return tokens

    def peek(self) -> str | None:
        """The next token, not consumed."""
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        """Consume the next token, checking it when a specific one is expected."""
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"expected {expected or 'more'} in plural expression, found {token!r}")
        self.position += 1
        return token

    def parse(self) -> Callable[[int], int]:
        """The whole expression as a function of n."""
        function = self.ternary()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r} in plural expression")
        return function

    def ternary(self) -> Callable[[int], int]:
        """cond ? a : b (right-associative, lowest precedence)."""
        condition = self.binary(1)
        if self.peek() != "?":
            return condition
        self.take("?")
        when_true = self.ternary()
        self.take(":")
        when_false = self.ternary()
        return lambda n: when_true(n) if condition(n) else when_false(n)

    def binary(self, minimum: int) -> Callable[[int], int]:
        """Binary operators of at least the given precedence, left-associative."""
        left = self.unary()
        while (operator := self.peek()) in _BINARY_PRECEDENCE and _BINARY_PRECEDENCE[operator] >= minimum:
            self.take()
            right = self.binary(_BINARY_PRECEDENCE[operator] + 1)
            left = (lambda apply, a, b: lambda n: apply(a(n), b(n)))(_BINARY[operator], left, right)
        return left

    def unary(self) -> Callable[[int], int]:
        """!x, -x, (x), n or a number."""
        token = self.take()
        if token == "!":
            operand = self.unary()
            return lambda n: int(not operand(n))
        if token == "-":
            operand = self.unary()
            return lambda n: -operand(n)
        if token == "(":
            inner = self.ternary()
            self.take(")")
            return inner
        if token == "n":
            return lambda n: n
        if token.isdigit():
            value = int(token)
            return lambda n: value
        raise ValueError(f"unexpected {token!r} in plural expression")


def code_for_english_name(name: str) -> str | None:
    """The locale code whose CLDR English name is `name` ("Dutch (Belgium)" -> "nl_BE"), if any."""
    return _codes_by_english_name().get(name.strip().casefold()) if name.strip() else None


@lru_cache(maxsize=1)
def _codes_by_english_name() -> dict[str, str]:
    """English display name -> locale identifier for every CLDR locale (built once, on first use)."""
    from babel import Locale, UnknownLocaleError, localedata

    names: dict[str, str] = {}
    for identifier in sorted(localedata.locale_identifiers(), key=len):
        try:
            english = Locale.parse(identifier).english_name
        except (ValueError, UnknownLocaleError):
            continue
        if english:
            names.setdefault(english.casefold(), identifier)
    return names


@lru_cache(maxsize=256)
def _compile_equation(equation: str) -> Callable[[int], int]:
    """A Python function for a gettext plural expression."""
    return _EquationParser(equation).parse()


def compile_equation(equation: str) -> Callable[[int], int] | None:
    """The function of a gettext plural expression, or None when the expression is invalid.

    LimitExceeded when it is longer than any real language needs (evaluating it would recurse too deep).
    """
    if len(equation) > MAX_PLURAL_FORMULA_CHARS:
        raise LimitExceeded(f"plural expression longer than {MAX_PLURAL_FORMULA_CHARS} characters "
                            f"{describe('max_plural_formula_chars')}")
    try:
        return _compile_equation(equation.strip().rstrip(";").strip())
    except (ValueError, RecursionError):
        return None


def plural_rules(locale_code: str) -> PluralRules:
    """The plural rules of a locale (`fr`, `fr_FR`, `fr-FR`); unknown locales get English-like rules."""
    cached = _plural_rules(locale_code)
    return PluralRules(cached.length, cached.equation, list(cached.forms))  # callers may keep or change forms


@lru_cache(maxsize=512)
def _plural_rules(locale_code: str) -> PluralRules:
    """plural_rules, computed once per code: from the built-in table, else from Babel."""
    entry = _table_entry(locale_code)
    if entry is None:
        return _babel_plural_rules(locale_code)
    from .cldr_table import RULES

    equation, forms = RULES[entry[0]]
    return PluralRules(len(forms.split()), equation, forms.split())


def _babel_plural_rules(locale_code: str) -> PluralRules:
    """The plural rules Babel's CLDR data gives a code (English-like when Babel does not know it)."""
    locale = babel_locale(locale_code)
    if locale is None:
        return PluralRules(2, "n != 1", ["one", "other"])
    rule = locale.plural_form
    forms = _integer_categories(rule)
    equation = _babel_equation(locale, forms, rule) or _built_equation(forms, rule)
    return PluralRules(len(forms), equation, forms)


def _integer_categories(rule: PluralRule) -> list[str]:
    """The categories that occur for the sample integers, in canonical order."""
    seen = {rule(n) for n in SAMPLE_RANGE}
    return [name for name in CATEGORIES if name in seen]


def _equation_matches(equation: str, forms: list[str], rule: PluralRule) -> bool:
    """Whether a gettext equation picks, for every sample integer, the index of its CLDR category."""
    function = compile_equation(equation)
    if function is None:
        return False
    try:
        return all(forms[function(n)] == rule(n) for n in SAMPLE_RANGE)
    except (IndexError, ZeroDivisionError, TypeError):
        return False


def _babel_equation(locale: Locale, forms: list[str], rule: PluralRule) -> str | None:
    """Babel's hand-tuned gettext expression for the locale, if it agrees with CLDR on integers."""
    from babel import UnknownLocaleError
    from babel.messages.plurals import get_plural

    try:
        plural = get_plural(locale)
    except (ValueError, UnknownLocaleError):
        return None
    if plural.num_plurals != len(forms):
        return None
    equation = _strip_outer_parentheses(plural.plural_expr.strip())
    return equation if _equation_matches(equation, forms, rule) else None


def _built_equation(forms: list[str], rule: PluralRule) -> str:
    """A gettext expression compiled from the CLDR rules of every form but the last (the fallback)."""
    conditions = dict(rule.abstract)
    parts: list[str] = []
    for index, name in enumerate(forms[:-1]):
        condition = _integer_condition(conditions[name])
        if condition is True:  # the form covers every remaining integer
            return " : ".join(parts + [str(index)]) if parts else str(index)
        if condition is not False:
            parts.append(f"{condition} ? {index}")
    equation = " : ".join(parts + [str(len(forms) - 1)])
    if not _equation_matches(equation, forms, rule):  # pragma: no cover - would be a Babel bug
        raise ValueError(f"cannot express CLDR plural rule {rule.rules!r} as a gettext equation")
    return equation


# CLDR operands other than n and i (fraction digits, exponent) are all 0 for integers.
_INTEGER_OPERANDS = {"n": "n", "i": "n"}


def _integer_condition(node: tuple) -> str | bool:
    """A CLDR rule AST (Babel's) as a C condition on integer n, constant parts folded to booleans."""
    kind, args = node
    if kind in ("and", "or"):
        left, right = (_integer_condition(arg) for arg in args)
        absorbing = kind == "or"  # True absorbs an "or", False absorbs an "and"
        if absorbing in (left, right):
            return absorbing
        if left is (not absorbing):
            return right
        if right is (not absorbing):
            return left
        return f"({left} {'||' if kind == 'or' else '&&'} {right})"
    if kind == "not":
        inner = _integer_condition(args[0])
        if isinstance(inner, bool):
            return not inner
        # Parenthesised because C's "!" binds tighter than the comparisons inside it.
        return f"!{inner}" if inner.startswith("(") and _strip_outer_parentheses(inner) != inner else f"!({inner})"
    if kind == "relation":
        return _integer_relation(*args)
    raise ValueError(f"unexpected plural rule node {kind!r}")


def _integer_relation(method: str, expression: tuple, range_list: tuple) -> str | bool:
    """One `expr in a..b, c` relation; evaluated now when expr does not involve n."""
    operand = _integer_operand(expression)
    ranges = range_list[1]
    if isinstance(operand, int):
        return any(low[1][0] <= operand <= high[1][0] for low, high in ranges)
    tests = [
        f"{operand} == {low[1][0]}" if low == high else f"({operand} >= {low[1][0]} && {operand} <= {high[1][0]})"
        for low, high in ranges
    ]
    return tests[0] if len(tests) == 1 else "(" + " || ".join(tests) + ")"


def _integer_operand(expression: tuple) -> str | int:
    """`n`, `n % 10`... as C text, or the int value when the operand is constant for integers."""
    kind, args = expression
    if kind == "value":
        return args[0]
    if kind == "mod":
        left, right = (_integer_operand(arg) for arg in args)
        if isinstance(left, int) and isinstance(right, int):
            return left % right
        return f"{left} % {right}"
    return _INTEGER_OPERANDS.get(kind, 0)


def _strip_outer_parentheses(expression: str) -> str:
    """`(n != 1)` -> `n != 1`, only when the outer pair encloses the whole expression."""
    while expression.startswith("(") and expression.endswith(")"):
        depth = 0
        for position, char in enumerate(expression):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and position < len(expression) - 1:
                return expression
        expression = expression[1:-1].strip()
    return expression


def categories_for_indices(locale_code: str, nplurals: int, equation: str | None) -> list[str]:
    """The CLDR category of each gettext plural index (msgstr[i]) of a file, for a locale.

    A file's own Plural-Forms may differ from CLDR (fewer forms, another order), so when its equation
    is valid each index is named after the category of the first integer that selects it; otherwise
    indices follow the locale's forms in order.
    """
    if nplurals > MAX_PLURAL_FORMS:
        raise LimitExceeded(f"{nplurals} plural forms declared; CLDR languages have at most {MAX_PLURAL_FORMS} "
                            f"{describe('max_plural_forms')}")
    return list(_categories_for_indices(locale_code, nplurals, equation))


# Naming a file's indices evaluates its equation for 1,001 integers (16 ms through the safe interpreter): once
# per (locale, count, equation), not once per file, so that a stream of files spelling their Plural-Forms
# their own way (`plural=(n != 1)`) pays it once. Measured: PO -> JSON of 10,000 units 10.4x po2json with a
# canonical equation, 7.7x with `(n != 1)` before this cache.
@lru_cache(maxsize=512)
def _categories_for_indices(locale_code: str, nplurals: int, equation: str | None) -> tuple[str, ...]:
    rules = plural_rules(locale_code)
    function = compile_equation(equation) if equation else None
    names: list[str] = []
    if function is not None:
        first_sample: dict[int, int] = {}
        for n in SAMPLE_RANGE:
            try:
                first_sample.setdefault(function(n), n)
            except (ZeroDivisionError, RecursionError):
                continue
        for index in range(nplurals):
            sample = first_sample.get(index)
            name = rules.category(sample) if sample is not None else None
            names.append(name if name is not None and name not in names else "")
    else:
        names = [rules.forms[index] if index < rules.length else "" for index in range(nplurals)]
    return tuple(_fill_unnamed(names, rules.forms))


def _fill_unnamed(names: list[str], forms: list[str]) -> list[str]:
    """Give indices no sample could name the locale's remaining forms, then generic CLDR names."""
    spare = [name for name in forms + list(CATEGORIES) if name not in names]
    return [name or spare.pop(0) for name in names]


def map_plural_forms(texts: dict[str, str], forms: list[str]) -> dict[str, str]:
    """Plural texts re-keyed for another locale's forms: same category, else "other", else the last form."""
    if not texts:
        return {}
    fallback = texts.get("other", list(texts.values())[-1])
    return {name: texts.get(name, fallback) for name in forms}
