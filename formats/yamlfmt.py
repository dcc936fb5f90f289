"""YAML family: simple (flat, the default), nested, rails (locale roots) and symfony (pipe plurals).

Shapes written:
- yml (simple):  `key: text` per unit, dotted keys kept flat; plurals as a sub-hash of CLDR forms.
- yml nested:    the locale as root key, then the `namespace` (when given) as Loco writes them, then dotted keys
                 expanded into nested mappings; plurals as sub-hashes. Read back into that locale, the
                 namespace root (ReadOptions.namespace) taken off.
- yml rails:     `fr:` locale root(s) (every locale for all.yml), then the optional `yaml-prefix` namespace,
                 then nested keys; plurals as Rails sub-hashes (`one:`/`few:`/`many:`/`other:`).
- yml symfony:   nested keys; plurals in Symfony's pipe syntax (`one file|%count% files`, CLDR order).
Untranslated units are `~` (null); notes are `#` comment lines right above their key, and reading takes
a comment block directly above a key as that unit's notes. Scalars that YAML would read as something
else than text (`yes`, `no`, `~`, `1.0`, leading `%`, `@`, `:`...) are double-quoted; multi-line texts
are literal blocks where YAML can hold them exactly, else double-quoted with escapes.

Reading never constructs objects: the document is composed into nodes by PyYAML's safe composer (the
C one when available) and walked here. Only the standard scalar tags are accepted (their source text
is kept: `yes` reads as "yes", not true), any other tag is a 422; a duplicate key keeps its last value
(as PyYAML, Ruby's Psych and JavaScript loaders do) and the import answer warns naming both lines; alias expansion is bounded so an alias bomb is a 422 instead of a hang.
"""
from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .catalogue import Catalogue
from .document import ExportDocument
from .errors import ParseError
from .nesting import nest
from .options import ReadOptions
from .plurals import is_locale_code
from .reading import CatalogueBuilder, add_tree, check_line_lengths, decode_utf8, duplicate_key_warning
from .symfony import symfony_plurals, written_values

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CORE = "tag:yaml.org,2002:"
_NULL = _CORE + "null"
_MERGE = _CORE + "merge"
# Scalars of these standard tags are read as the text they are written with.
_TEXT_TAGS = frozenset(_CORE + name for name in ("str", "bool", "int", "float", "timestamp", "value"))
# Each node costs at least a couple of characters unless it is an alias: more visits than this is an alias bomb.
_MIN_VISIT_BUDGET = 50_000


# --- reading ---------------------------------------------------------------------------------------


def load_yaml(data: bytes) -> tuple[Any, dict[str, str], list[str]]:
    """The document as plain dicts/lists/strings, notes (comment blocks) by dotted key, and warnings."""
    text = decode_utf8(data, "YAML")
    check_line_lengths(text)
    node = _compose(text)
    if node is None:
        return {}, {}, []
    walker = _Walker(_comment_blocks(text), _MIN_VISIT_BUDGET + len(text) // 2)
    return walker.value(node, ""), walker.notes, walker.warnings


def _compose(text: str) -> Node | None:
    """The single document's node graph (aliases shared, nothing constructed); ParseError with the line."""
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        if "expected a single document" in str(error.context):
            problem = "more than one YAML document in the file"
        raise ParseError(f"invalid YAML: {problem}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as error:
        raise ParseError(f"invalid YAML: {error}") from None
    finally:
        loader.dispose()


def _comment_blocks(text: str) -> dict[int, str]:
    """Full-line comment blocks by the 0-based line right after them (where the key they describe sits)."""
    blocks: dict[int, str] = {}
    block: list[str] = []
    for number, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if stripped.startswith("#"):
            block.append(stripped[1:].strip())
            continue
        if block and stripped:
            blocks[number] = "\n".join(block)
        block = []
    return blocks


class _Walker:
    """Turns composed nodes into dicts, lists and strings, checking tags, duplicates and expansion size."""

    def __init__(self, comments: dict[int, str], budget: int) -> None:
        self.comments = comments
        self.budget = budget
        self.notes: dict[str, str] = {}
        self.warnings: list[str] = []

    def value(self, node: Node, path: str) -> Any:
        """The plain value of a node (path: its dotted key, for notes)."""
        self.budget -= 1
        if self.budget < 0:
            raise ParseError(
                "YAML aliases expand to too many nodes (an alias bomb?)", node.start_mark.line + 1
            )
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if isinstance(node, SequenceNode):
            self.check_tag(node, _CORE + "seq")
            return [self.value(item, f"{path}{position}.") for position, item in enumerate(node.value)]
        self.check_tag(node, _CORE + "map")
        return self.mapping(node, path)

    def scalar(self, node: ScalarNode) -> str | None:
        """A scalar's source text; None for null."""
        if node.tag == _NULL:
            return None
        if node.tag not in _TEXT_TAGS:
            raise _tag_error(node)
        return node.value

    @staticmethod
    def check_tag(node: Node, expected: str) -> None:
        """Collections may carry only their standard tag (`!!omap`, `!!set`, `!!python/...` are refused)."""
        if node.tag != expected:
            raise _tag_error(node)

    def mapping(self, node: MappingNode, path: str) -> dict[str, Any]:
        """A mapping as a dict: merge keys (`<<`) applied, a duplicate key's last value kept (and warned of)."""
        result: dict[str, Any] = {}
        lines: dict[str, int] = {}
        merged: list[dict[str, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.extend(self.merge_sources(value_node, path))
                continue
            if not isinstance(key_node, ScalarNode):
                raise ParseError("a mapping key must be a plain value, not a list or mapping",
                                  key_node.start_mark.line + 1)
            key = key_node.value
            line = key_node.start_mark.line
            if key in lines:
                self.warnings.append(duplicate_key_warning(path + key, line + 1, lines[key] + 1))
            lines[key] = line
            note = self.comments.get(line)
            if note is not None:
                self.notes[path + key] = note
            result[key] = self.value(value_node, f"{path}{key}.")
        for source in merged:  # explicit keys win over merged ones, earlier merges over later ones
            for key, value in source.items():
                result.setdefault(key, value)
        return result

    def merge_sources(self, node: Node, path: str) -> list[dict[str, Any]]:
        """The mappings a `<<` key merges in (one mapping or a list of them)."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        values = [self.value(source, path) for source in sources]
        if not all(isinstance(value, dict) for value in values):
            raise ParseError("`<<` merges only mappings", node.start_mark.line + 1)
        return values


def _tag_error(node: Node) -> ParseError:
    """The refusal of a tag that would construct something other than text."""
    tag = node.tag.replace(_CORE, "!!")
    return ParseError(f"YAML tag {tag} is not allowed in a translation file", node.start_mark.line + 1)


def _scalar_text(value: Any, key: str) -> str | None:
    """A YAML leaf as text; lists were folded into keys already, so only strings and null remain."""
    if value is None or isinstance(value, str):
        return value
    raise ParseError(f"key {key!r}: expected text, found {type(value).__name__}")


def _locale_roots(tree: Any) -> bool:
    """Whether every top-level key is a locale code holding a mapping (the Rails shape)."""
    return isinstance(tree, dict) and bool(tree) and all(
        isinstance(value, dict) and is_locale_code(code) for code, value in tree.items()
    )


def _read(data: bytes, options: ReadOptions, variant: str) -> Catalogue:
    """Units of a YAML file of the variant; a file with locale roots reads as Rails whatever the variant."""
    tree, notes, warnings = load_yaml(data)
    catalogue = _catalogue(tree, notes, options, variant)
    catalogue.warnings.extend(warnings)
    return catalogue


def _catalogue(tree: Any, notes: dict[str, str], options: ReadOptions, variant: str) -> Catalogue:
    """The units of a loaded YAML tree."""
    if not isinstance(tree, dict):
        raise ParseError(f"expected a YAML mapping at the top level, found {type(tree).__name__}")
    rails = _locale_roots(tree) and (variant == "rails" or len(tree) == 1)
    if variant == "rails" and tree and not rails:
        raise ParseError("Rails YAML needs locale codes at the root (e.g. `fr:`), each holding a mapping")
    if not rails:
        builder = CatalogueBuilder(options, "id")
        add_tree(builder, symfony_plurals(tree, builder.locale) if variant == "symfony" else tree,
                 builder.locale, _scalar_text, notes)
        return builder.build()
    codes = list(tree)
    builder = CatalogueBuilder(options, "id", detected_locale=codes[-1] if len(codes) == 1 else None,
                               detected_source=codes[0] if len(codes) > 1 else None)
    for code, subtree in tree.items():
        prefix = f"{code}."
        if options.namespace and list(subtree) == [options.namespace] and isinstance(subtree[options.namespace], dict):
            subtree, prefix = subtree[options.namespace], f"{prefix}{options.namespace}."  # nested YAML's namespace
        local_notes = {key.removeprefix(prefix): note for key, note in notes.items() if key.startswith(prefix)}
        add_tree(builder, subtree, builder.canonical(code), _scalar_text, local_notes)
    return builder.build()


def read_simple(data: bytes, options: ReadOptions) -> Catalogue:
    """Flat or nested YAML (nested keys fold into dotted IDs); a single locale root reads as Rails."""
    return _read(data, options, "")


def read_rails(data: bytes, options: ReadOptions) -> Catalogue:
    """Rails i18n YAML: one root per locale."""
    return _read(data, options, "rails")


def read_symfony(data: bytes, options: ReadOptions) -> Catalogue:
    """Symfony translation YAML: texts with pipe-separated forms are plurals."""
    return _read(data, options, "symfony")


# --- writing ---------------------------------------------------------------------------------------

_RESERVED = frozenset(
    "y n yes no true false on off null ~ = <<".split()
)
# A plain scalar is written only when it cannot read back as anything but this very text.
_PLAIN = re.compile(
    r"(?![\u2028\u2029\ufeff])[A-Za-z_\u00a0-\ud7ff\ue000-\ufffc\U00010000-\U0010ffff]"
    r"[^\x00-\x1f\x7f-\x9f:#\u2028\u2029\ufeff\ufffe\uffff]*"
)
_DQ_SPECIAL = re.compile(r'["\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]')
_DQ_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}
_BLOCK_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]|[ \t]\n|[ \t]$")


def quote(text: str) -> str:
    """A scalar YAML reads back as exactly this text: plain when unambiguous, else double-quoted."""
    if _PLAIN.fullmatch(text) and text[-1] != " " and text.lower() not in _RESERVED:
        return text
    return '"' + _DQ_SPECIAL.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    """A double-quoted YAML escape for one character."""
    char = match.group(0)
    return _DQ_NAMED.get(char) or f"\\u{ord(char):04x}"


def _printable(line: str) -> str:
    """A comment line with the characters YAML forbids anywhere shown as `\\uXXXX` (comments have no escapes)."""
    return _DQ_SPECIAL.sub(lambda match: match.group(0) if match.group(0) in '"\\' else f"\\u{ord(match.group(0)):04x}",
                           line)


def _literal_block(text: str, indent: str) -> str | None:
    """A multi-line text as a literal block (`|` / `|-`), or None when a block cannot hold it exactly."""
    body = text[:-1] if text.endswith("\n") else text
    if (
        "\n" not in body or body.startswith(("\n", " ", "\t")) or body.endswith("\n")
        or _BLOCK_UNSAFE.search(body) or "\r" in text
    ):
        return None
    lines = "".join(f"\n{indent}{line}" if line else "\n" for line in body.split("\n"))
    return ("|" if text.endswith("\n") else "|-") + lines


class _Leaf:
    """A unit's value in the tree being written (keeps it apart from nested key mappings)."""

    __slots__ = ("value", "notes")

    def __init__(self, value: str | dict[str, str] | None, notes: str) -> None:
        self.value = value
        self.notes = notes




def _tree(doc: ExportDocument, locale: str | None, symfony: bool = False) -> dict[str, Any]:
    """The keys of one locale, nested by the entries' paths, with notes unless no_comments."""
    with_notes = not doc.options.no_comments
    return nest(
        (entry.path, _Leaf(value, entry.unit.notes if with_notes else ""))
        for entry, value in written_values(doc, locale, symfony)
    )


def _emit(tree: dict[str, Any], indent: str, out: list[str]) -> None:
    """Block-style lines of a mapping whose leaves are `_Leaf`s."""
    for key, item in tree.items():
        if isinstance(item, _Leaf):
            if item.notes:
                out.extend(f"{indent}# {_printable(line)}".rstrip() for line in item.notes.splitlines())
            value = item.value
            if value is None:
                out.append(f"{indent}{quote(key)}: ~")
            elif isinstance(value, dict):
                out.append(f"{indent}{quote(key)}:")
                _emit({name: _Leaf(text, "") for name, text in value.items()}, indent + "  ", out)
            else:
                block = _literal_block(value, indent + "  ") if "\n" in value else None
                out.append(f"{indent}{quote(key)}: {block or quote(value)}")
        elif not item:  # `key:` alone would be null: a locale root that the filters emptied stays a mapping
            out.append(f"{indent}{quote(key)}: {{}}")
        else:
            out.append(f"{indent}{quote(key)}:")
            _emit(item, indent + "  ", out)


def _document(doc: ExportDocument, tree: dict[str, Any]) -> str:
    """The banner comment and the mapping (`{}` when empty)."""
    out = [f"# {line}".rstrip() for line in doc.banner]
    if out:
        out.append("")
    if tree:
        _emit(tree, "", out)
    else:
        out.append("{}")
    return "\n".join(out) + "\n"


def write_simple(doc: ExportDocument) -> str:
    """Flat YAML of the target locale."""
    return _document(doc, _tree(doc, doc.locale))


def write_nested(doc: ExportDocument) -> str:
    """Nested YAML under a locale root, then the `namespace` root when one is given ([obs LEG-conv]
    `fr-FR:` / `  test:` / `    sample: échantillon`)."""
    return _rooted(doc, doc.options.namespace.strip())


def write_symfony(doc: ExportDocument) -> str:
    """Nested YAML with Symfony pipe plurals."""
    return _document(doc, _tree(doc, doc.locale, symfony=True))


def write_rails(doc: ExportDocument) -> str:
    """One locale root per exported locale, then the yaml-prefix namespace if any, then the keys."""
    return _rooted(doc, doc.options.yaml_prefix.strip())


def _rooted(doc: ExportDocument, prefix: str) -> str:
    """One locale root per exported locale (the source's in a template), then `prefix` if any, then the keys."""
    locales = doc.locales or [doc.source_locale]
    roots: dict[str, Any] = {}
    for code in locales:
        tree = _tree(doc, code if doc.locales else None)
        roots[code] = {prefix: tree} if prefix else tree
    return _document(doc, roots)
