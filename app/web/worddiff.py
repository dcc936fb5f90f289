"""Word-level differences between an old and a new translation, for the change pages.

Texts are split into words, runs of white space and single punctuation marks; ideographs and kana count one
character as a word (Japanese and Chinese put no spaces between words). A segment is (changed, text): the
template wraps changed segments of the old text in <del> and of the new text in <ins>.
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher

# One ideograph/kana/hangul syllable, a word, a run of white space, or any other single character.
TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+|\s+|.", re.S)

Segment = tuple[bool, str]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _join(parts: list[Segment]) -> list[Segment]:
    """Merge neighbouring segments of the same kind (fewer tags in the page)."""
    merged: list[Segment] = []
    for changed, text in parts:
        if merged and merged[-1][0] == changed:
            merged[-1] = (changed, merged[-1][1] + text)
        elif text:
            merged.append((changed, text))
    return merged


def word_diff(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    """The old and the new text as segments, changed words marked.

    >>> word_diff("Add a note", "Add the note")
    ([(False, 'Add '), (True, 'a'), (False, ' note')], [(False, 'Add '), (True, 'the'), (False, ' note')])
    """
    a, b = tokens(old), tokens(new)
    before: list[Segment] = []
    after: list[Segment] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        before.append((op != "equal", "".join(a[i1:i2])))
        after.append((op != "equal", "".join(b[j1:j2])))
    return _join(before), _join(after)
