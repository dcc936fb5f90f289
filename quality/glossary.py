"""A project's glossary as the checks and the grid read it: terms found in a text, forbidden terms used.

Terms match case-insensitively on word boundaries (`log` is not found in `login`), longest first, so that
`pull request` wins over `pull` where both match. One regular expression serves every text: the lower-cased
terms' on the lower-cased text, whenever lower-casing keeps the text's length (then the spans are the text's);
IGNORECASE made the same search three times slower (bench_checks: 12-15 us a text against 4-5, 200 terms).

    >>> glossary = Glossary({"pull request": {"translations": {"fr": "demande de tirage"}}})
    >>> [(found.term.term, found.start, found.end) for found in glossary.found_in("Open a Pull Request now")]
    [('pull request', 7, 19)]
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping


@dataclass(frozen=True)
class Term:
    """One glossary term: its translation per locale, a note, and whether it is forbidden."""

    term: str
    translations: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    forbidden: bool = False

    @classmethod
    def from_record(cls, term: str, record: Mapping[str, Any]) -> "Term":
        """A term from its stored record (glossary.json's entry)."""
        return cls(term, dict(record.get("translations", {})), record.get("note", ""),
                   bool(record.get("forbidden", False)))


@dataclass(frozen=True)
class Found:
    """A term found in a text, at text[start:end]."""

    term: Term
    start: int
    end: int

    def as_json(self, locale: str) -> dict[str, Any]:
        """What the grid highlights: the span, the term and its translation in `locale`."""
        return {"term": self.term.term, "start": self.start, "end": self.end,
                "translation": self.term.translations.get(locale, ""), "note": self.term.note,
                "forbidden": self.term.forbidden}


_WORD = re.compile(r"\w+")


class _Matcher:
    """Words (terms) found in texts, case-insensitively: (the words as the text spells them, start, end)."""

    def __init__(self, words: list[str]) -> None:
        ordered = sorted(words, key=len, reverse=True)
        self.lower = re.compile(rf"(?<!\w)(?:{'|'.join(re.escape(word.lower()) for word in ordered)})(?!\w)")
        self.any_case = re.compile(rf"(?<!\w)(?:{'|'.join(re.escape(word) for word in ordered)})(?!\w)",
                                   re.IGNORECASE)
        # The words that are one run of word characters, lower-cased: found exactly as a text's words (below).
        self.single = {word.lower() for word in words if _WORD.fullmatch(word.lower())}
        # The leading word-run of every other word: a text without it as a word cannot hold that word.
        others = [word.lower() for word in words if word.lower() not in self.single]
        leads = [_WORD.match(word) for word in others]
        self.leads: set[str] | None = None if not all(leads) else {lead.group(0) for lead in leads if lead}
        if len(words) > 1 and os.path.commonprefix([word.lower() for word in words]):
            self.leads = None  # sre factors out a prefix every word shares: the expression is then the cheaper

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        lower = text.lower()
        matches = self.lower.finditer(lower) if len(lower) == len(text) else self.any_case.finditer(text)
        return (match.span() for match in matches)

    def words(self, text: str) -> list[str]:
        """The words found, lower-cased (no spans: what most callers need, at the cost of one findall)."""
        lower = text.lower()
        if len(lower) == len(text):
            if self.leads is None:  # see __init__: the expression finds these words, or finds them cheaper
                return self.lower.findall(lower)
            tokens = _WORD.findall(lower)
            if not self.leads.isdisjoint(tokens):
                return self.lower.findall(lower)
            # No word of several runs can match: a match is then a whole word of the text, preceded and followed
            # by no word character, and every such word is one (the expression over 200 terms costs 4x more).
            single = self.single
            return [token for token in tokens if token in single]
        return [found.lower() for found in self.any_case.findall(text)]


def _matcher(words: list[str]) -> _Matcher | None:
    return _Matcher(words) if words else None


class Glossary:
    """The terms of one glossary, compiled once for every text checked against it."""

    def __init__(self, records: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.terms = {term: Term.from_record(term, record) for term, record in (records or {}).items()}
        self._by_folded = {term.casefold(): found for term, found in self.terms.items()}
        self._by_lower = {term.lower(): found for term, found in self.terms.items()}
        self._matcher = _matcher(list(self.terms))
        self._forbidden: dict[str, tuple[_Matcher | None, dict[str, Term]]] = {}

    def __bool__(self) -> bool:
        return bool(self.terms)

    def found_in(self, text: str) -> Iterator[Found]:
        """The terms of the glossary in a (source) text, in order."""
        if self._matcher is None:
            return
        for start, end in self._matcher.spans(text):
            term = self._by_folded.get(text[start:end].casefold())
            if term is not None:
                yield Found(term, start, end)

    def terms_in(self, text: str) -> list[Term]:
        """Each term found in a text, once (what the checks ask of every source text: no spans made)."""
        if self._matcher is None:
            return []
        found: dict[str, Term] = {}
        for words in self._matcher.words(text):
            term = self._by_lower.get(words) or self._by_folded.get(words.casefold())
            if term is not None and term.term not in found:
                found[term.term] = term
        return list(found.values())

    def forbidden_in(self, text: str, locale: str) -> list[tuple[Term, str]]:
        """(term, the words used) for each forbidden term a translation in `locale` uses: its translation in the
        locale, else the term itself."""
        matcher, words = self._forbidden_words(locale)
        if matcher is None or not matcher.words(text):  # the usual case: no forbidden word, no spans needed
            return []
        used: dict[str, str] = {}
        for start, end in matcher.spans(text):
            used.setdefault(text[start:end].casefold(), text[start:end])
        return [(words[folded], spelled) for folded, spelled in used.items() if folded in words]

    def _forbidden_words(self, locale: str) -> tuple[_Matcher | None, dict[str, Term]]:
        cached = self._forbidden.get(locale)
        if cached is None:
            words = {(term.translations.get(locale) or term.term).casefold(): term
                     for term in self.terms.values() if term.forbidden}
            cached = self._forbidden[locale] = (_matcher(list(words)), words)
        return cached


EMPTY_GLOSSARY = Glossary()
