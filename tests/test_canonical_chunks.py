"""Canonical chunk files read back after another writer changed them: every kind of change gives the same
chunk as a fresh parse, with the changed keys as its lineage."""
from __future__ import annotations

import pytest

from storage.canonical import Chunk

BASE = {"a": {"text": "A", "rev": 1}, "b": {"text": "B", "rev": 1}, "c": {"text": "C", "rev": 1}}
ORDER = {"a": 0, "b": 1, "c": 2, "d": 3}.__getitem__


def chunk_of(entries: dict) -> Chunk:
    return Chunk({}).with_changes(entries, ORDER)


CHANGES = {
    "one line rewritten": ({"b": {"text": "B2", "rev": 2}}, ("b",)),
    "two lines rewritten": ({"a": {"text": "A2", "rev": 2}, "c": {"text": "C2", "rev": 2}}, ("a", "c")),
    "an entry added": ({"d": {"text": "D", "rev": 1}}, ("d",)),
    "an entry removed": ({"b": None}, ("b",)),
    "nothing": ({}, ()),
}


@pytest.mark.parametrize("name", CHANGES)
def test_a_chunk_parsed_against_its_previous_version_equals_a_fresh_parse_and_names_what_changed(name):
    changes, expected_keys = CHANGES[name]
    previous = Chunk.parse(chunk_of(BASE).to_bytes())
    previous.get("a"), previous.get("b")  # parsed entries, reused where their line is unchanged
    data = chunk_of(BASE).with_changes(changes, ORDER).to_bytes()
    parsed = Chunk.parse(data, previous)
    fresh = Chunk.parse(data)
    assert list(parsed.items()) == list(fresh.items())
    assert parsed.to_bytes() == data
    assert parsed.origin is not None and parsed.origin[0] is previous
    assert sorted(parsed.origin[1]) == sorted(expected_keys)
    if "a" not in expected_keys:
        assert parsed.get("a") is previous.get("a")


def test_a_chunk_with_entries_swapped_is_read_in_its_new_order():
    previous = Chunk.parse(chunk_of(BASE).to_bytes())
    swapped = b'{\n"b": {"text": "B", "rev": 1},\n"a": {"text": "A", "rev": 1},\n"c": {"text": "C", "rev": 1}\n}\n'
    parsed = Chunk.parse(swapped, previous)
    assert list(parsed.keys()) == ["b", "a", "c"]
    assert parsed.origin is not None and parsed.origin[1] == ()


def test_a_hand_written_chunk_with_blank_lines_and_a_trailing_comma_reads_like_the_canonical_one():
    written = b'{\n\n"a": {"text": "A", "rev": 1},\n"b": {"text": "B", "rev": 1},\n"c": {"text": "C", "rev": 1},\n}\n'
    assert list(Chunk.parse(written).items()) == list(Chunk.parse(chunk_of(BASE).to_bytes()).items())
    assert list(Chunk.parse(written, Chunk.parse(chunk_of(BASE).to_bytes())).items()) == list(BASE.items())


def test_progress_counts_follow_a_chain_of_versions_made_before_anyone_read_them():
    from storage.progress import chunk_counts as _chunk_progress  # registers the progress derivation

    entries = {key: {"text": f"{key} words here", "rev": 1} for key in ("a", "b", "c")}
    first = chunk_of(entries)
    first.derived["progress"] = _chunk_progress(first)
    second = first.with_changes({"a": {"text": "one", "rev": 2, "flag": "fuzzy"}}, ORDER)
    third = second.with_changes({"b": None, "d": {"text": "two more", "rev": 1}}, ORDER)  # as a commit group does
    reread = Chunk.parse(third.with_changes({"c": {"text": "x", "rev": 2}}, ORDER).to_bytes(), third)
    for chunk in (second, third, reread):
        assert chunk.derived["progress"] == _chunk_progress(chunk)
    assert third.derived["progress"]["flagged"] == 1 and third.derived["progress"]["translated"] == 3


FIELD_LINES = {
    "a text written first": ({"text": 'Say "hi" \\ é\n', "rev": 1}, "text", 'Say "hi" \\ é\n'),
    "a context after plain fields": ({"n": 3, "type": "text", "context": "menu", "tags": []}, "context", "menu"),
    "a field only inside a nested value": ({"n": 1, "meta": {"context": "x"}}, "context", None),
    "a field after a nested value": ({"n": 1, "tags": ["a"], "context": "late"}, "context", None),
    "a marker inside another field's text": ({"notes": '"context": "no"', "rev": 1}, "context", None),
    "no such field": ({"text": "A", "rev": 1}, "context", None),
}


@pytest.mark.parametrize("name", FIELD_LINES)
def test_a_string_field_read_off_its_line_is_the_parsed_value_or_none_when_the_line_does_not_say(name):
    entry, field, expected = FIELD_LINES[name]
    chunk = Chunk.parse(Chunk({}).with_changes({"k\u00e9y": entry}, lambda key: 0).to_bytes())
    assert chunk.string_field("k\u00e9y", field) == expected
    assert expected is None or chunk.get("k\u00e9y")[field] == expected
    assert chunk.string_field("absent", field) is None


def test_the_leading_strings_of_a_chunk_are_its_entries_values_where_the_field_comes_first():
    entries = {"plain": {"text": "Hello", "rev": 1}, "esc\\ \"key\"": {"text": 'Say "hi" \\ é\n\t\u2028', "rev": 2},
               "later": {"rev": 1, "text": "Hello"}, "empty": {"text": "", "rev": 1},
               "nested": {"meta": {"text": "no"}, "rev": 1}, "other": {"context": "x", "text": "y"}}
    chunk = Chunk.parse(Chunk({}).with_changes(entries, lambda key: 0).to_bytes())
    found = chunk.leading_strings("text")
    assert found == {"plain": "Hello", "esc\\ \"key\"": 'Say "hi" \\ é\n\t\u2028', "empty": ""}
    assert all(chunk.get(key)["text"] == value for key, value in found.items())
    assert chunk_of(BASE).leading_strings("text") == {"a": "A", "b": "B", "c": "C"}  # nothing escaped
    assert Chunk({}).leading_strings("text") == {}


def test_the_string_fields_of_a_chunk_are_each_entrys_string_field_where_its_line_shows_them_in_order():
    entries = {"plain": {"n": 1, "type": "text", "context": "menu", "printf": "php", "tags": []},
               "brace in a text": {"n": 0, "type": "text", "context": "{x}", "printf": "php"},  # read alone
               "esc\\ \"key\"": {"n": 2, "type": "html", "notes": 'a "printf": "no" \\', "printf": "", "tags": []},
               "nested first": {"n": 3, "tags": ["a"], "type": "text", "printf": "c"},
               "other order": {"n": 4, "printf": "c", "type": "text"}, "no printf": {"n": 5, "type": "text"}}
    data = Chunk({}).with_changes(entries, lambda key: 0).to_bytes()
    expected = {"plain": ("text", "php"), "esc\\ \"key\"": ("html", "")}
    for chunk in (Chunk.parse(data), Chunk.lazy(lambda: data)):
        found = chunk.string_fields("type", "printf")
        assert found == expected
        assert all((chunk.get(key)["type"], chunk.get(key)["printf"]) == values for key, values in found.items())
        assert chunk.mentions("context") and chunk.mentions("tags") and not chunk.mentions("max_length")


def test_a_lazy_chunk_answers_its_leading_strings_without_splitting_its_lines_and_reads_alike_after():
    entries = {"a": {"text": "A \"1\"", "rev": 1}, "b": {"rev": 1, "text": "B"}}
    canonical = Chunk({}).with_changes(entries, ORDER).to_bytes()
    by_hand = b'{\n"a": {"text": "A \\"1\\"", "rev": 1},\n\n"b": {"rev": 1, "text": "B"},\n}\n'
    for data in (canonical, by_hand):
        chunk = Chunk.lazy(lambda: data, ("a", "b"))
        assert chunk.leading_strings("text") == {"a": 'A "1"'}
        assert chunk.loaded == (data is by_hand)  # another hand's file is split to be read
        assert dict(chunk.items()) == entries


def test_a_lazy_chunk_peeks_entries_in_its_order_without_splitting_and_any_other_key_like_peek():
    odd = 'b \\"x"'  # a key with escapes, its text with what ends a line
    entries = {"a": {"text": "A", "rev": 1}, odd: {"text": "B,\n}", "rev": 2}, "c": {"rev": 3, "text": "C"}}
    data = Chunk({}).with_changes(entries, lambda key: 0).to_bytes()
    chunk = Chunk.lazy(lambda: data, tuple(entries))
    assert list(chunk.peek_each([odd, "c"])) == [(odd, entries[odd]), ("c", entries["c"])]
    assert not chunk.loaded
    assert list(chunk.peek_each(["c", "a", "absent"])) == [("c", entries["c"]), ("a", entries["a"]), ("absent", None)]
    assert list(Chunk.parse(data).peek_each([odd, "a"])) == [(odd, entries[odd]), ("a", entries["a"])]


def test_a_lazy_chunk_read_entry_by_entry_from_where_the_last_ended_finds_each_wherever_it_stands():
    entries = {key: {"text": key.upper(), "rev": 1} for key in ("a", "b", "c", "d")}
    data = Chunk({}).with_changes(entries, ORDER).to_bytes()
    chunk, at = Chunk.lazy(lambda: data, tuple(entries)), 0
    for key in ("b", "d", "a", "c", "absent"):  # in order, then behind the last one read, then none
        value, at = chunk.peek_from(key, at)
        assert value == entries.get(key)
    assert chunk.loaded  # (the absent key was looked up in the split lines, as peek does)


def test_a_chunk_knows_its_file_canonical_when_to_bytes_wrote_it_or_once_judged_and_never_a_hand_written_one():
    canonical = chunk_of(BASE).to_bytes()
    by_hand = b'{\n"a": {"text": "A", "rev": 1},\n\n"b": {"text": "B", "rev": 1},\n"c": {"text": "C", "rev": 1}\n}\n'
    assert chunk_of(BASE).canonical and Chunk.parse(canonical).canonical
    assert not Chunk.parse(by_hand).canonical
    assert Chunk.parse(canonical, Chunk.parse(by_hand)).canonical  # (read against a previous version too)
    lazy, lazy_by_hand = Chunk.lazy(lambda: canonical), Chunk.lazy(lambda: by_hand)
    assert not lazy.canonical and lazy.leading_strings("text") == {"a": "A", "b": "B", "c": "C"} and lazy.canonical
    assert lazy_by_hand.leading_strings("text") == {"a": "A", "b": "B", "c": "C"} and not lazy_by_hand.canonical
    # told canonical (a verdict kept with the blob's keys), a lazy chunk reads its file without judging it again
    told = Chunk.lazy(lambda: canonical, ("a", "b", "c"), canonical=True)
    assert told.string_values("text") == {"a": "A", "b": "B", "c": "C"} and not told.loaded
    assert dict(told.items()) == BASE


def test_a_line_says_its_text_starts_an_entry_only_when_it_does():
    chunk = chunk_of({"a": {"text": "Hello", "rev": 1}, "b": {"rev": 1, "text": "Hello"}})
    assert chunk.starts_with("a", "text", "Hello")
    assert not chunk.starts_with("a", "text", "Hell") and not chunk.starts_with("a", "text", "Hello!")
    assert not chunk.starts_with("b", "text", "Hello")  # fields in another order: the caller parses
    assert chunk.may_have_field("b", "text") and not chunk.may_have_field("a", "plural_of")


def test_a_registered_derivation_follows_a_chunk_to_its_next_versions_and_an_unregistered_one_does_not():
    from storage import derivations

    derivations.register("test-handed-on")
    derivations.register("test-counted", update=lambda count, parent, chunk, keys, values: len(chunk))
    first = chunk_of(BASE)
    for name, value in (("test-handed-on", "cache"), ("test-counted", len(first)), ("test-not-registered", 1)):
        first.keep(name, value)
    second = first.with_changes({"d": {"text": "D", "rev": 1}}, ORDER)
    assert (second.kept("test-handed-on"), second.kept("test-counted"), second.kept("test-not-registered")) \
        == ("cache", len(BASE) + 1, None)
    assert "test-counted" not in [derivation.name for derivation in derivations.persisted()]


def test_the_string_values_of_a_chunk_are_what_string_field_finds_in_each_line():
    entries = {"plain": {"n": 1, "type": "text", "context": "Menu", "notes": ""},
               "esc\\ \"key\"": {"n": 2, "notes": 'x", "context": "fake', "context": 'Say "hi" \\ é\n'},
               "backslash": {"n": 3, "notes": "a\\", "context": "real"},
               "after a bracket": {"n": 4, "tags": ["t"], "context": "not read off the line"},
               "nested only": {"n": 5, "meta": {"context": "no"}}, "none": {"n": 6}}
    chunk = Chunk.parse(Chunk({}).with_changes(entries, lambda key: 0).to_bytes())
    for field in ("context", "notes", "type"):
        expected = {key: chunk.string_field(key, field) for key in entries}
        assert chunk.string_values(field) == {key: value for key, value in expected.items() if value is not None}
    assert chunk.string_values("context")["esc\\ \"key\""] == 'Say "hi" \\ é\n'
    assert Chunk({}).string_values("context") == {}


def test_the_keys_mentioning_a_field_are_the_entries_that_may_have_it_at_any_depth():
    entries = {"form": {"n": 1, "plural_of": "base", "text": "x"},
               "plural_of": {"n": 2, "text": "an entry whose key is the field's name"},
               "esc \"q\"": {"n": 3, "meta": {"deep": {"plural_of": 1}}},
               "quoted": {"n": 4, "notes": 'the words "plural_of": in a string'},
               "last": {"n": 5, "plural_of": "form"}}
    data = Chunk({}).with_changes(entries, lambda key: 0).to_bytes()
    for chunk in (Chunk.parse(data), Chunk.lazy(lambda: data, tuple(entries))):
        assert chunk.keys_mentioning("plural_of") == {"form", "esc \"q\"", "last"}
        # may_have_field's answers, but for the entry whose own key is the marker (a "maybe" there)
        assert chunk.keys_mentioning("plural_of") == {key for key in entries if chunk.may_have_field(key, "plural_of")
                                                      and key != "plural_of"}
    assert Chunk({}).keys_mentioning("plural_of") == set()
