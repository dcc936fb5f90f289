"""ICU MessageFormat validity and quoting (formats/icu.py), checked against ICU4C itself."""
from __future__ import annotations

import random

import pytest

from formats.icu import as_message, from_message, is_valid_message, literal_text, quote_literal

from .validators import icu_format, icu_format_all

VALID = [
    "Hello {name}", "{count, plural, one{# file} other{# files}}", "{g, select, female{she} other{they}}",
    "It's here", "'{' is a brace", "{n, number}", "{n, number, ::currency/EUR}", "{ 0 }",
    "{n, plural, offset:1 =0{none} one{#} other{# and more}}", "{when, date, short}",
    "{n, selectordinal, one{#st} two{#nd} few{#rd} other{#th}}", "",
]
INVALID = [
    "{{name}}", "Hello {", "a } b", "{n, plural, one{x}}", "{a b}", "{n, foo}", "{n, number,}", "{}",
    "{n, select, other{x}", "{n, plural, one{'#'}}",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_icu_messages_are_kept_as_they_are_and_icu_accepts_them(text):
    assert is_valid_message(text)
    assert as_message(text) == text
    icu_format(text, {"name": "Ann", "count": 1, "g": "female", "n": 2, "0": 3, "when": 0})


@pytest.mark.parametrize("text", INVALID)
def test_texts_that_are_not_icu_are_quoted_into_the_literal_icu_shows_as_the_text(text):
    assert not is_valid_message(text)
    assert icu_format(as_message(text)) == text


@pytest.mark.parametrize("text", ["It's {{name}}", "x'{", "''{}''", "{'}", "a'b'{c}'d", "#{n}#"])
def test_quoted_literals_keep_every_apostrophe(text):
    assert icu_format(quote_literal(text)) == text


def test_random_texts_quote_exactly_and_nothing_icu_refuses_is_called_valid():
    atoms = ["{", "}", "'", "''", "#", "|", "n", " ", ",", "plural", "select", "other", "one", "=0", "number",
             "{n}", "{n, plural, other{#}}", "::", "offset:1", "é", "{0}", "date", "short", "{n,"]
    generator = random.Random(20261123)
    texts = sorted({"".join(generator.choice(atoms) for _ in range(generator.randint(1, 8))) for _ in range(3000)})
    rendered = icu_format_all([(quote_literal(text), {}) for text in texts])
    assert [text for text, (ok, out) in zip(texts, rendered) if not (ok and out == text)] == []
    accepted = icu_format_all([(text, {}) for text in texts])
    called_valid_but_refused = [text for text, (ok, _) in zip(texts, accepted) if is_valid_message(text) and not ok]
    assert called_valid_but_refused == []
    assert sum(is_valid_message(text) for text in texts) > 300  # the sample holds valid messages too


def test_reading_back_what_an_export_wrote_gives_the_stored_text():
    atoms = ["{", "}", "'", "''", "#", "n", " ", ",", "plural", "other", "{n}", "{n, plural, other{#}}", "é"]
    generator = random.Random(7)
    for _ in range(3000):
        text = "".join(generator.choice(atoms) for _ in range(generator.randint(1, 8)))
        expected = from_message(text) if is_valid_message(text) else text
        assert from_message(as_message(text)) == expected, text


def test_the_literal_text_of_a_message_is_what_icu_shows():
    messages = ["It''s '{'here'}'", "'{{'name'}}'", "a '{' b ''", "It's", "'#'"]
    assert [literal_text(message) for message in messages] == [icu_format(message) for message in messages]
