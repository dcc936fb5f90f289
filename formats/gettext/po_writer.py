"""PO and POT written: plain entries laid out straight from the entry, their strings escaped in one batch;
entries with a flag or a translator comment go through the gettext `Message` (as MO does)."""
from __future__ import annotations

import re

from ..document import Entry, ExportDocument
from .common import Message, entry_message, header_fields, plural_strings

_PO_ESCAPES = str.maketrans({
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v",
    **{chr(code): f"\\{code:03o}" for code in range(32) if chr(code) not in "\n\t\r\a\b\f\v"},
})


_NEEDS_PO_ESCAPE = re.compile(r'[\x00-\x1f"\\]')
_RARE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")  # controls other than tab and newline


def _po_escape(text: str) -> str:
    """PO string escaping; most texts need none, and one regex scan is far cheaper than str.translate.
    Texts with quotes, backslashes, newlines or tabs only (the usual ones) take four C-level replaces."""
    if not _NEEDS_PO_ESCAPE.search(text):
        return text
    if _RARE_CONTROL.search(text):
        return text.translate(_PO_ESCAPES)
    return _escape_usual(text)


def _escape_usual(text: str) -> str:
    """PO escaping of a text without rare controls (as `_RARE_CONTROL` finds): four C-level replaces."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _po_string(keyword: str, text: str) -> str:
    """`keyword "text"`, multi-line texts split after each newline as gettext tools do."""
    if not _NEEDS_PO_ESCAPE.search(text):  # most texts: no escape, hence no newline to split at
        return f'{keyword} "{text}"\n'
    return _po_line(keyword, _po_escape(text))


def _po_line(keyword: str, escaped: str) -> str:
    """`keyword "escaped"`, split after each escaped newline (but a final one) as gettext tools do."""
    if "\\n" not in escaped[:-2]:
        return f'{keyword} "{escaped}"\n'
    lines = escaped.split("\\n")
    pieces = [piece + "\\n" for piece in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return f'{keyword} ""\n' + "".join(f'"{piece}"\n' for piece in pieces)


def _po_message(message: Message) -> str:
    """One message in PO syntax."""
    parts = [f"# {line}".rstrip() + "\n" for line in message.comments] if message.comments else []
    if message.notes:
        parts += [f"#. {line}".rstrip() + "\n" for line in message.notes]
    if message.references:
        parts += [f"#: {reference}\n" for reference in message.references]
    if message.flags:
        parts.append("#, " + ", ".join(message.flags) + "\n")
    if message.msgctxt is not None:
        parts.append(_po_string("msgctxt", message.msgctxt))
    parts.append(_po_string("msgid", message.msgid))
    if message.msgid_plural is None:
        parts.append(_po_string("msgstr", message.msgstr[0]))
    else:
        parts.append(_po_string("msgid_plural", message.msgid_plural))
        parts += [_po_string(f"msgstr[{index}]", text) for index, text in enumerate(message.msgstr)]
    return "".join(parts)


def write_po(doc: ExportDocument) -> str:
    """A PO file (a POT when the document is a template: every msgstr empty)."""
    return po_head(doc) + po_body(doc)


def po_head(doc: ExportDocument) -> str:
    """The banner comments and the header entry."""
    header = "".join(f"{name}: {value}\n" for name, value in header_fields(doc))
    parts = [f"# {line}".rstrip() + "\n" for line in doc.banner]
    parts.append(_po_string("msgid", ""))
    parts.append(_po_string("msgstr", header))
    return "".join(parts)


def po_body(doc: ExportDocument) -> str:
    """Every message, each after a blank line: the body of a run of entries depends on those entries only.

    Plain entries (without flag or translator comment: most of a file) are laid out straight from the
    entry, the strings of singular ones escaped all at once; any other goes through the gettext `Message`.
    """
    locale = doc.locale
    # A format flag needs a text msgid and a printf style: entries that may get one take the Message path.
    may_flag_format = doc.index == "text"
    printf = doc.options.printf
    openings: list[str] = []  # per plain entry: the blank line, comments and msgctxt before its msgid
    keys: list[str] = []
    texts: list[str] = []
    others: list[tuple[int, str]] = []  # the other entries: (plain entries before it, its whole text)
    for entry in doc.entries:
        unit = entry.unit
        target = entry.translations.get(locale) if locale else None
        if (may_flag_format and (printf or unit.printf)) or (target is not None and (target.flag or target.comment)):
            others.append((len(keys), "\n" + _po_message(entry_message(entry, doc))))
            continue
        if unit.plural:
            others.append((len(keys), _plain_plural(entry, doc)))
            continue
        openings.append(_plain_opening(unit.notes, unit.references, unit.context))
        keys.append(entry.key)
        texts.append((target.text or "") if target is not None else "")
    keys, keys_multiline = _escaped_all(keys)
    texts, texts_multiline = _escaped_all(texts)
    if keys_multiline or texts_multiline:
        plain = [opening + _po_line("msgid", key) + _po_line("msgstr", text)
                 for opening, key, text in zip(openings, keys, texts)]
    else:  # no string to split over lines (the usual case)
        plain = [f'{opening}msgid "{key}"\nmsgstr "{text}"\n' for opening, key, text in zip(openings, keys, texts)]
    return "".join(_merged(plain, others))


def _plain_opening(notes: str, references: list[str], context: str) -> str:
    """The blank line, `#.` notes, `#:` references and msgctxt opening a plain entry, as `_po_message`
    writes them."""
    if not notes:
        opening = "\n"
    elif notes.isprintable() and notes[-1] != " ":  # one line, which neither splitlines nor rstrip changes
        opening = f"\n#. {notes}\n"
    else:
        opening = "\n" + "".join(f"#. {line}".rstrip() + "\n" for line in notes.splitlines())
    if references:
        opening += "#: " + "\n#: ".join(references) + "\n"
    return opening + _po_string("msgctxt", context) if context else opening


def _plain_plural(entry: Entry, doc: ExportDocument) -> str:
    """A plural entry without flag or translator comment, as `_po_message` writes it."""
    unit = entry.unit
    msgid_plural, msgstrs = plural_strings(entry, doc, entry.translation(doc.locale))
    return _plain_opening(unit.notes, unit.references, unit.context) + _po_string("msgid", entry.key) + \
        _po_string("msgid_plural", msgid_plural) + \
        "".join([_po_string(f"msgstr[{index}]", text) for index, text in enumerate(msgstrs)])


def _merged(plain: list[str], others: list[tuple[int, str]]) -> list[str]:
    """The plain entries' texts with the others' inserted where they were (after so many plain ones)."""
    if not others:
        return plain
    merged: list[str] = []
    done = 0
    for before, text in others:
        merged += plain[done:before]
        merged.append(text)
        done = before
    return merged + plain[done:]


# Joins the texts escaped at once: DEL, which no escape touches (nor is it in any usual text). The count
# of separators tells whether a text held one itself; the texts are then escaped one by one.
_BATCH_SEPARATOR = "\x7f"
_RARE_CONTROLS = [chr(code) for code in range(32) if chr(code) not in "\t\n"]  # as _RARE_CONTROL matches


def _escaped_all(texts: list[str]) -> tuple[list[str], bool]:
    """Every text PO-escaped, in a few passes over all of them rather than a scan per text; and whether
    any escaped text holds an escaped newline (`\\n`), which may make it span several lines."""
    joined = _BATCH_SEPARATOR.join(texts)
    if len(texts) < 2 or joined.count(_BATCH_SEPARATOR) != len(texts) - 1 or any(
            control in joined for control in _RARE_CONTROLS):  # str.translate: far too slow on a whole file
        escaped = [_po_escape(text) for text in texts]
        return escaped, any("\\n" in text for text in escaped)
    joined = _escape_usual(joined)
    return joined.split(_BATCH_SEPARATOR), "\\n" in joined
