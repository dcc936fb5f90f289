"""The one hardened XML parser every reader of the XML family uses, and the small helpers they share.

lxml parses with entity resolution, DTD loading, DTD validation and network access all off and without
libxml2's `huge_tree` relaxation, after a size check. What the parser leaves behind is then judged:
- an external DTD (`<!DOCTYPE x SYSTEM ...>`) or an external entity (XXE, including parameter
  entities) is refused with a ParseError: nothing outside the document is ever read;
- internal entities (`<!ENTITY foo "Foo">`, legitimate in Android resources) are expanded here, not by
  libxml2, with a budget on the characters they may add, so a "billion laughs" file fails in
  microseconds instead of exhausting memory.
"""
from __future__ import annotations

import re

from lxml import etree

from limits import MAX_ENTITY_CHARS, MAX_ENTITY_DEPTH, MAX_XML_BYTES, describe

from ..errors import ExportError, ParseError, TooLarge
from ..reading import file_locale

_ENTITY_REFERENCE = re.compile(r"&([A-Za-z_][\w.\-]*);")
_XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"
# Characters XML 1.0 cannot carry in any form (not even as character references).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CONTROL_BYTES = bytes(code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D))  # as in _NOT_XML


def _parser() -> etree.XMLParser:
    """A parser that reads nothing but the bytes it is given."""
    # Not collect_ids=False: with it libxml2 loads an external DTD (a file:// DOCTYPE would be read).
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False,
        remove_pis=True,
    )


def parse_xml(data: bytes, what: str, known_dtds: frozenset[str] = frozenset()) -> etree._Element:
    """The root element of an XML document; ParseError (4xx) for broken or unsafe input, TooLarge above the limit.

    known_dtds: system identifiers of the format's own DTD (`tmx14.dtd`), accepted in a DOCTYPE because
    they are never loaded; any other external DTD is refused.
    """
    if len(data) > MAX_XML_BYTES:
        raise TooLarge(f"{what} file is {len(data)} bytes; XML files are limited to {MAX_XML_BYTES} bytes")
    if not data.strip():
        raise ParseError(f"{what} file is empty")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as error:
        line = error.lineno if error.lineno else None
        raise ParseError(f"{what} is not well-formed XML: {_syntax_message(error)}", line) from None
    except ValueError as error:  # e.g. a str with an encoding declaration; kept for completeness
        raise ParseError(f"{what} is not valid XML: {error}") from None
    _expand_entities(root, _declared_entities(root, what, known_dtds), what)
    return root


def _syntax_message(error: etree.XMLSyntaxError) -> str:
    """libxml2's message without its trailing `, line N, column M` (the line is reported separately)."""
    return re.sub(r",? line \d+, column \d+$", "", str(error.msg or error)).strip()


def _declared_entities(root: etree._Element, what: str, known_dtds: frozenset[str]) -> dict[str, str]:
    """Internal entity name -> replacement text; ParseError for external DTDs and external entities."""
    info = root.getroottree().docinfo
    if (info.system_url or info.public_id) and info.system_url not in known_dtds:
        raise ParseError(f"{what} refers to an external DTD ({info.system_url or info.public_id}); not allowed")
    dtd = info.internalDTD
    if dtd is None:
        return {}
    table: dict[str, str] = {}
    for entity in dtd.entities():
        if entity.system_url or entity.content is None:
            raise ParseError(
                f"{what} declares the external entity {entity.name!r} ({entity.system_url}); "
                "external entities are never resolved"
            )
        table[entity.name] = entity.content
    return table


class _Expander:
    """Replacement texts of internal entities, nested references included, within one character budget."""

    def __init__(self, table: dict[str, str], what: str) -> None:
        self.table = table
        self.what = what
        self.budget = MAX_ENTITY_CHARS
        self._done: dict[str, str] = {}

    def expand(self, name: str, depth: int = 0) -> str:
        """The full text of entity `name`, charged to the budget every time it is used."""
        text = self._done.get(name)
        if text is None:
            text = self._resolve(name, depth)
            self._done[name] = text
        self.budget -= len(text)
        if self.budget < 0:
            raise ParseError(f"{self.what}: entity expansion exceeds {MAX_ENTITY_CHARS} characters (entity bomb?) "
                              f"{describe('max_entity_chars')}")
        return text

    def _resolve(self, name: str, depth: int) -> str:
        """Expand the references inside one entity's replacement text."""
        if name not in self.table:
            raise ParseError(f"{self.what} uses the undeclared entity &{name};")
        if depth > MAX_ENTITY_DEPTH:
            raise ParseError(f"{self.what}: entities nest deeper than {MAX_ENTITY_DEPTH} levels "
                              f"{describe('max_entity_depth')}")
        return _ENTITY_REFERENCE.sub(lambda match: self.expand(match.group(1), depth + 1), self.table[name])


def _expand_entities(root: etree._Element, table: dict[str, str], what: str) -> None:
    """Replace every entity reference node left by the parser with its text (merged into text/tail)."""
    references = list(root.iter(etree.Entity))
    if not references:
        return
    expander = _Expander(table, what)
    for node in references:
        text = expander.expand(node.name) + (node.tail or "")
        previous, parent = node.getprevious(), node.getparent()
        if previous is not None:
            previous.tail = (previous.tail or "") + text
        else:
            parent.text = (parent.text or "") + text
        parent.remove(node)


# --- reading helpers -----------------------------------------------------------------------------------


def local_name(element: etree._Element) -> str:
    """An element's tag without its namespace ("" for comments and processing instructions)."""
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def children(element: etree._Element, name: str) -> list[etree._Element]:
    """Child elements with a local name, whatever their namespace."""
    return [child for child in element if local_name(child) == name]


def child(element: etree._Element, name: str) -> etree._Element | None:
    """The first child element with a local name, if any."""
    return next((found for found in element if local_name(found) == name), None)


def plain_text(element: etree._Element | None) -> str:
    """All the text inside an element, markup dropped (comments excluded)."""
    if element is None:
        return ""
    return "".join(element.itertext(tag=None, with_tail=True)) if len(element) else (element.text or "")


def has_markup(element: etree._Element) -> bool:
    """Whether an element holds child elements (mixed content)."""
    return any(isinstance(node.tag, str) for node in element)


def inner_markup(element: etree._Element, prefixes: dict[str, str] | None = None) -> str:
    """An element's content as XML text: child elements written without namespace declarations.

    prefixes: namespace -> prefix to keep on tag names (Android's `xliff:g`); other namespaces are dropped.
    """
    parts = [escape_text(element.text or "")]
    for node in element:
        if isinstance(node.tag, str):
            parts.append(_markup(node, prefixes or {}))
        parts.append(escape_text(node.tail or ""))
    return "".join(parts)


def _markup(element: etree._Element, prefixes: dict[str, str]) -> str:
    """One element and its content as XML text."""
    attributes = "".join(f' {_attribute_name(name)}="{escape_attribute(value)}"' for name, value in element.items())
    name = local_name(element)
    namespace = etree.QName(element).namespace
    if namespace in prefixes:
        name = f"{prefixes[namespace]}:{name}"
    content = inner_markup(element, prefixes)
    return f"<{name}{attributes}>{content}</{name}>" if content else f"<{name}{attributes}/>"


def _attribute_name(name: str) -> str:
    """`xml:lang` for the XML namespace, the local name otherwise."""
    if name.startswith("{" + _XML_NAMESPACE + "}"):
        return "xml:" + name.rsplit("}", 1)[-1]
    return name.rsplit("}", 1)[-1]


def xml_attribute(element: etree._Element, name: str) -> str | None:
    """An attribute in the XML namespace (`lang`, `space`)."""
    return element.get(f"{{{_XML_NAMESPACE}}}{name}")


# --- writing helpers -----------------------------------------------------------------------------------


def escape_text(text: str) -> str:
    """Text content escaped for XML (& < >)."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if "\r" in text:  # a literal CR would be read back as a line feed
        text = text.replace("\r", "&#13;")
    return text


def escape_attribute(text: str) -> str:
    """An attribute value escaped for a double-quoted XML attribute (line breaks and tabs kept as references)."""
    text = escape_text(text).replace('"', "&quot;")
    if "\n" in text or "\t" in text:
        text = text.replace("\n", "&#10;").replace("\t", "&#9;")
    return text


def unrepresentable(text: str) -> str | None:
    """The first character XML 1.0 cannot hold at all, if any."""
    # A regex scan of a whole document costs ~15 ns a character (a fifth of an XLIFF export); encoding and
    # deleting the forbidden control bytes run in C, so the regex only runs when there is something to find.
    encoded = text.encode("utf-8", "surrogatepass")
    if (len(encoded.translate(None, _CONTROL_BYTES)) == len(encoded)
            and "\ufffe" not in text and "\uffff" not in text):
        return None
    match = _NOT_XML.search(text)
    return match.group(0) if match else None


def comment(text: str) -> str:
    """Text made safe inside `<!-- -->` (no `--`, no trailing `-`)."""
    text = text.replace("--", "- -")
    return text + " " if text.endswith("-") else text


def banner_comment(lines: list[str]) -> str:
    """The export banner as an XML comment block (empty when there is no banner)."""
    if not lines:
        return ""
    return "<!--\n" + "".join(f" {comment(line)}\n" for line in lines) + "-->\n"


def verified(rendered: str, entries: list) -> str:
    """The rendered document, or ExportError naming the first unit that holds a character XML cannot carry.

    One scan of the whole output instead of a check per field; the culprit is searched only on failure.
    """
    bad = unrepresentable(rendered)
    if bad is None:
        return rendered
    for entry in entries:
        unit = entry.unit
        texts = [entry.key, unit.notes, unit.context, *unit.references]
        for translation in entry.translations.values():
            texts += [translation.text or "", translation.comment, *translation.plurals.values()]
        if any(bad in text for text in texts):
            raise ExportError(f"{entry.key!r} holds the control character U+{ord(bad):04X}, which XML cannot carry")
    raise ExportError(f"the export holds the control character U+{ord(bad):04X}, which XML cannot carry")


def parse_fragment(text: str, namespaces: dict[str, str] | None = None) -> etree._Element | None:
    """Mixed content parsed inside a `<t>` holder (with the given prefix -> namespace declarations), or None."""
    if "<" not in text:
        return None
    declarations = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in (namespaces or {}).items())
    try:
        holder = etree.fromstring(f"<t{declarations}>{text}</t>".encode("utf-8"), _parser())
    except etree.XMLSyntaxError:
        return None
    if holder.getroottree().docinfo.internalDTD is not None or any(True for _ in holder.iter(etree.Entity)):
        return None
    return holder


def well_formed_fragment(text: str, allowed: frozenset[str] | None = None) -> bool:
    """Whether text is mixed content that parses as XML (only `allowed` element names, when given)."""
    holder = parse_fragment(text)
    if holder is None:
        return False
    return allowed is None or all(local_name(node) in allowed for node in holder.iter() if node is not holder)


def named_locale(value: str | None, where: str) -> str | None:
    """A locale an XML file names (`fr_FR`, `pt-br`), spelled like `?locale=` through the readers' one rule;
    None when absent; ParseError naming `where` when it is not a locale code."""
    value = (value or "").strip()
    return file_locale(value, where) if value else None
