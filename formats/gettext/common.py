"""Shared by PO and MO: the gettext message, header fields, export entries -> messages, messages -> catalogue."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Callable

from vocabulary import locale_from_posix

from ..banner import one_line
from ..catalogue import FLAGS, Catalogue, Translation
from ..document import Entry, ExportDocument
from ..options import ReadOptions
from ..plurals import categories_for_indices, code_for_english_name, is_locale_code, locale_display_name, plural_rules
from ..reading import CatalogueBuilder, RowParts, require_language

FORMAT_FLAGS = {"php": "php-format", "python": "python-format", "objc": "objc-format", "java": "java-printf-format"}
_STYLE_OF_FLAG = {flag: style for style, flag in FORMAT_FLAGS.items()}
_LOCO_FLAG_PREFIX = "loco-"
_TEMPLATE_DATE = "YEAR-MO-DA HO:MI+ZONE"


@dataclass(slots=True)
class Message:
    """A gettext message as both PO and MO see it."""

    msgid: str
    msgstr: list[str] = field(default_factory=lambda: [""])
    msgctxt: str | None = None
    msgid_plural: str | None = None
    comments: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    line: int = 0



# --- writing ---------------------------------------------------------------------------------------


def header_fields(doc: ExportDocument) -> list[tuple[str, str]]:
    """The PO header in Loco's field order; templates use gettext's placeholder revision date."""
    locale = doc.locale
    rules = doc.rules(locale)
    created = doc.exported_at.strftime("%Y-%m-%d %H:%M%z")
    fields = [
        ("Project-Id-Version", doc.project or "Gloss"),
        ("Report-Msgid-Bugs-To", ""),
        ("POT-Creation-Date", created),
        ("PO-Revision-Date", _TEMPLATE_DATE if doc.template else created),
        ("Last-Translator", doc.options.exported_by),
        ("Language-Team", locale_display_name(locale) if locale else ""),
        ("Language", locale.replace("-", "_") if locale else ""),
        ("Plural-Forms", rules.header),
        ("MIME-Version", "1.0"),
        ("Content-Type", f"text/plain; charset={doc.charset_label}"),
        ("Content-Transfer-Encoding", "8bit"),
        ("X-Generator", "Gloss (Loco-compatible)"),
        ("X-Loco-Source-Locale", doc.source_locale),
    ]
    if locale:
        fields.append(("X-Loco-Target-Locale", locale))
    return [(name, one_line(value)) for name, value in fields]


def messages(doc: ExportDocument) -> list[Message]:
    """The gettext messages of an export document (header excluded)."""
    return [entry_message(entry, doc) for entry in doc.entries]


def entry_message(entry: Entry, doc: ExportDocument) -> Message:
    """One entry as a gettext message."""
    unit = entry.unit
    target = entry.translation(doc.locale)
    message = Message(
        msgid=entry.key,
        msgctxt=unit.context or None,
        notes=unit.notes.splitlines() if unit.notes else [],
        references=list(unit.references),
        comments=target.comment.splitlines() if target.comment else [],
    )
    if unit.plural:
        message.msgid_plural, message.msgstr = plural_strings(entry, doc, target)
    else:
        message.msgstr = [target.text or ""]
    message.flags = _flags(entry, doc, target)
    return message


def plural_strings(entry: Entry, doc: ExportDocument, target: Translation) -> tuple[str, list[str]]:
    """The msgid_plural of a plural entry and its msgstr forms, in the order of the locale's CLDR forms."""
    forms = doc.rules(doc.locale).forms
    plural = _source_plural(entry.translation(doc.source_locale), entry.key) if doc.index == "text" else entry.key
    return plural, [_plural_form(target, name) for name in forms]


def _source_plural(source: Translation, default: str) -> str:
    """The msgid_plural text: the source's "other" form, else its last one."""
    if not source.plurals:
        return default
    return source.plurals.get("other") or list(source.plurals.values())[-1] or default


def _plural_form(translation: Translation, name: str) -> str:
    """A target plural form; a plural unit translated without forms fills them with its text."""
    if translation.plurals:
        return translation.plurals.get(name, "")
    return translation.text or ""


def _flags(entry: Entry, doc: ExportDocument, target: Translation) -> list[str]:
    """The `#,` flags: fuzzy, loco-<flag>, and a format flag when the msgid is a text holding a placeholder.

    A format flag makes msgfmt demand the msgid's arguments in every msgstr; a msgid without any (an asset
    ID, or a text such as "1 string" whose plural alone counts) is not a format string, so it gets none.
    """
    flags = []
    if target.flag == "fuzzy":
        flags.append("fuzzy")
    elif target.flag:
        flags.append(_LOCO_FLAG_PREFIX + target.flag)
    style = doc.options.printf or entry.unit.printf
    if doc.index == "text" and style in FORMAT_FLAGS:
        from ..printf import placeholders  # imported on demand: a PO conversion rarely has format flags

        if placeholders(entry.key, style):
            flags.append(FORMAT_FLAGS[style])
    return flags


# --- messages -> catalogue -------------------------------------------------------------------------


def parse_header(text: str) -> dict[str, str]:
    """`Name: value` lines of a header msgstr as a dict."""
    fields = {}
    for line in text.split("\n"):
        name, colon, value = line.partition(":")
        if colon and name.strip():
            fields[name.strip()] = value.strip()
    return fields


def catalogue_of(parsed: list[Message], options: ReadOptions) -> Catalogue:
    """Messages turned into units through the shared builder."""
    header_message = next((m for m in parsed if m.msgid == "" and m.msgctxt is None), None)
    body = [m for m in parsed if m is not header_message]
    reader = MessageReader(header_fields_of(header_message), options, lambda: any(any(m.msgstr) for m in body))
    for message in body:
        reader.add(message)
    return reader.build()


def header_fields_of(header: Message | None) -> dict[str, str]:
    """The header entry's fields (its first msgstr), none without a header."""
    return parse_header(header.msgstr[0]) if header and header.msgstr else {}


class MessageReader:
    """Turns the messages of one file into units: the file's locale and plural names, then one unit each."""

    def __init__(self, headers: dict[str, str], options: ReadOptions, translated: Callable[[], bool]) -> None:
        """`translated` says whether any message has a msgstr (asked only when no locale is known)."""
        detected = _detected_locale(headers)
        require_language(options, detected, translated, "no Language or X-Loco-Target-Locale header")
        self.headers = headers
        self.builder = CatalogueBuilder(options, "text", detected, headers.get("X-Loco-Source-Locale") or None)
        self.plural_names = _PluralNames(self.builder.locale, headers.get("Plural-Forms", ""))
        self._source_names: list[str] | None = None  # the source locale's plural forms, once a message needs them

    def add_plain(self, key: str, text: str, context: str | None, notes: str, references: list[str]) -> None:
        """A singular message without flags or translator comments (most messages of a file)."""
        self.builder.add(key, Translation(text) if text else None, context=context or "", notes=notes,
                         references=references)

    def add(self, message: Message) -> None:
        """One message as a unit (target translation, source forms for plurals, flags, comments)."""
        if message.msgid_plural is None and not message.flags and not message.comments:
            self.add_plain(message.msgid, message.msgstr[0], message.msgctxt,
                           "\n".join(message.notes) if message.notes else "", message.references)
        else:
            parts = self._parts(message)
            self.builder.add(
                message.msgid, parts.target, context=message.msgctxt or "", notes="\n".join(message.notes),
                source=parts.source, plural=parts.plural, references=message.references, printf=parts.printf,
            )

    def add_columns(self, keys: list[str], texts: list[str], contexts: list[str], notes: list[str],
                    references: list[list[str]], messages: dict[int, Message],
                    plurals: dict[int, tuple[str, list[str]]]) -> None:
        """Messages in file order, most of them as columns: row i is messages[i] when there is one (entries with
        flags or translator comments), else a message as `add_plain` takes it (msgid keys[i], msgstr texts[i],
        msgctxt contexts[i] or "" for none, notes[i], references[i]), made plural by plurals[i] when there is
        one (msgid_plural, msgstr[n]...). The columns are consumed."""
        special = {row: self._plural_parts(keys[row], *plural) for row, plural in plurals.items()}
        for row, message in messages.items():
            special[row] = self._parts(message)
            contexts[row], notes[row] = message.msgctxt or "", "\n".join(message.notes)
            references[row] = message.references
        self.builder.add_rows(keys, texts, contexts, notes, references, special)

    def _parts(self, message: Message) -> RowParts:
        """A message's target translation (None if it has none), source translation (plural forms by text, else
        None), plural flag and printf style (from its format flag)."""
        flags = message.flags
        if message.msgid_plural is not None and not flags and not message.comments:
            return self._plural_parts(message.msgid, message.msgid_plural, message.msgstr)
        flag = _loco_flag(flags) if flags else ""
        printf = next((_STYLE_OF_FLAG[f] for f in flags if f in _STYLE_OF_FLAG), "") if flags else ""
        comment = "\n".join(message.comments)
        source = None
        if message.msgid_plural is not None:
            forms = self._forms(message.msgstr)
            text = next(iter(forms.values()), None)
            if self.builder.by_text:
                source = self._source_forms(message.msgid, message.msgid_plural)
        else:
            forms, text = {}, message.msgstr[0] or None
        target = Translation(text, forms, flag, comment) if text is not None or flag or comment else None
        return RowParts(target, source, message.msgid_plural is not None, printf)

    def _plural_parts(self, msgid: str, msgid_plural: str, strings: list[str]) -> RowParts:
        """`_parts` of a plural message without flags or translator comments (from its msgstr[n] strings)."""
        forms = self._forms(strings)
        text = next(iter(forms.values()), None)
        return RowParts(None if text is None else Translation(text, forms, "", ""),
                        self._source_forms(msgid, msgid_plural) if self.builder.by_text else None, True, "")

    def _forms(self, strings: list[str]) -> dict[str, str]:
        """CLDR category -> text of msgstr[n] strings: the named and translated ones."""
        names = self.plural_names.names(len(strings))
        if all(strings) and None not in names:  # every form named and translated: the usual case
            return dict(zip(names, strings))  # type: ignore[arg-type]  # no None among the names
        return {name: text for name, text in zip(names, strings) if text and name}

    def _source_forms(self, msgid: str, msgid_plural: str) -> Translation:
        """Source plural forms from msgid/msgid_plural: the first form is the msgid, the others the plural."""
        names = self._source_names
        if names is None:
            names = self._source_names = plural_rules(self.builder.source_locale).forms
        plurals = dict.fromkeys(names, msgid_plural)
        plurals[names[0]] = msgid
        return Translation(msgid, plurals)

    def build(self) -> Catalogue:
        """The catalogue of every message added."""
        return self.builder.build(self.headers, project=self.headers.get("Project-Id-Version", ""))


class _PluralNames:
    """CLDR names of msgstr[i] for one locale and Plural-Forms header, cached per form count."""

    def __init__(self, locale: str, plural_forms: str) -> None:
        self.locale = locale
        match = re.search(r"nplurals\s*=\s*(\d+)", plural_forms)
        digits = match.group(1) if match else "0"
        self.nplurals = int(digits) if len(digits) <= 6 else 10 ** 6  # any huge count is refused as too many
        equation = re.search(r"plural\s*=\s*([^;]+)", plural_forms)
        self.equation = equation.group(1).strip() if equation else None
        self._cache: dict[int, list[str]] = {}
        self._by_count: dict[int, tuple[str | None, ...]] = {}

    def names(self, count: int) -> tuple[str | None, ...]:
        """Names for `count` msgstr forms; forms beyond a declared nplurals are None (gettext never uses them)."""
        found = self._by_count.get(count)
        if found is not None:
            return found
        wanted = self.nplurals or count
        if wanted not in self._cache:
            equation = self.equation if wanted == self.nplurals else None
            self._cache[wanted] = categories_for_indices(self.locale, wanted, equation)
        names: list[str | None] = list(self._cache[wanted][:count])
        found = tuple(names + [None] * (count - len(names)))
        if count <= 16:  # the counts files use; a hostile file's many others are not kept
            self._by_count[count] = found
        return found


def _loco_flag(flags: list[str]) -> str:
    """The Loco flag of gettext flags: loco-<flag> wins over fuzzy."""
    for flag in flags:
        if flag.startswith(_LOCO_FLAG_PREFIX) and flag[len(_LOCO_FLAG_PREFIX):] in FLAGS:
            return flag[len(_LOCO_FLAG_PREFIX):]
    return "fuzzy" if "fuzzy" in flags else ""


def _detected_locale(headers: dict[str, str]) -> str | None:
    """The file's language: X-Loco-Target-Locale, else Language (`ru_RU`, `sr@latin`, or an English name)."""
    for name in ("X-Loco-Target-Locale", "Language"):
        value = headers.get(name, "").strip()
        code = locale_from_posix(value) if value else None
        if code and is_locale_code(code):
            return code
    return code_for_english_name(headers.get("Language", "").strip())
