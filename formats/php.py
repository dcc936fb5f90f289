"""PHP language files, read as data by a small parser (never executed) and written as plain PHP.

Variants written (all start with `<?php` and the banner in a `/** */` comment):
- php (default, Laravel/Zend):  `return [ 'key' => 'text', 'menu' => [ 'open' => ... ] ];`, dotted keys
                                nested, plurals indexed by form `[0 => 'exemple', 1 => 'exemples']` (Loco).
- php symfony:                  the same array with plurals in Symfony's pipe syntax.
- php codeigniter:              `$lang['<namespace>_key'] = 'text';`, dotted keys as nested brackets
                                (`$lang['test_a']['b']`), plurals indexed as above.
- php constants:                `define('<NAMESPACE>_KEY', 'text');`: upper-case identifiers (`constant_name`),
                                one constant per plural form.
The namespace is the `namespace` option, else the project name (Loco's `$lang['test_sample']`, `TEST_EXAMPLES`).
`phps` is the same family under the extension Loco also accepts.

Reading accepts any mix of `return <array>;`, `$var[...]... = <value>;`, `$var = <array>;`,
`define('NAME', <value>);`, `declare(strict_types=1);`, the `defined('X') or exit(...)` guard and comments.
Values: single/double-quoted strings (with their escapes), heredoc and nowdoc, `.` concatenation of
strings, numbers, true/false/null, `array(...)` and `[...]` literals. Anything else (a function call,
`system(...)`, string interpolation, a variable as value) is a 422 naming its line.
"""
from __future__ import annotations

import re
from typing import Any

from limits import MAX_NESTING_DEPTH

from .banner import block_comment
from .catalogue import Catalogue
from .document import Entry, ExportDocument
from .errors import ParseError
from .nesting import nest
from .options import ReadOptions
from .plurals import plural_rules
from .reading import CatalogueBuilder, add_tree, check_line_lengths, decode_utf8
from .symfony import symfony_plurals, written_values


# --- tokens ----------------------------------------------------------------------------------------

_TOKEN = re.compile(  # the frequent tokens first; strings as unrolled loops (no per-character alternation)
    r"""(?P<space>\s+)
      | (?P<sq>'[^'\\]*(?:\\.[^'\\]*)*')
      | (?P<dq>"[^"\\]*(?:\\.[^"\\]*)*")
      | (?P<variable>\$[A-Za-z_]\w*)
      | (?P<name>[A-Za-z_\\][\w\\]*)
      | (?P<number>0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
      | (?P<op>=>|\|\||[\[\](),;=.!\-+])
      | (?P<comment>//[^\n]*|\#(?!\[)[^\n]*|/\*.*?\*/)
      | (?P<heredoc><<<[ \t]*(?P<quote>["']?)(?P<label>[A-Za-z_]\w*)(?P=quote)\r?\n)
      | (?P<open><\?php\b|<\?=)
      | (?P<close>\?>)
      | (?P<bad>.)
    """,
    re.S | re.X,
)
_DQ_ESCAPE = re.compile(r"\\(?:([nrtvef\\$\"])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u\{([0-9A-Fa-f]{1,6})\})")
_DQ_NAMED = {"n": "\n", "r": "\r", "t": "\t", "v": "\v", "e": "\x1b", "f": "\f", "\\": "\\", "$": "$", '"': '"'}
_INTERPOLATION = re.compile(r"\\.|\$[A-Za-z_{]|\{\$", re.S)


# One PHP token: (kind, value, offset in the text); kind is a group name of _TOKEN, or "string" with the
# decoded text as value. Plain tuples: a language file has a hundred thousand of them.
Token = tuple[str, Any, int]


class _Source:
    """The text being read, for line numbers in errors."""

    def __init__(self, text: str) -> None:
        self.text = text

    def line(self, position: int) -> int:
        """1-based line of an offset."""
        return self.text.count("\n", 0, position) + 1

    def error(self, message: str, position: int) -> ParseError:
        return ParseError(message, self.line(position))


def tokenize(source: _Source) -> list[Token]:
    """The tokens of a PHP file (strings decoded), without spaces and comments; inline HTML is refused."""
    text = source.text
    opening = re.match(r"\s*<\?php\b", text)
    if not opening:
        raise source.error("a PHP language file must start with <?php", 0)
    tokens: list[Token] = []
    position: int | None = opening.end()
    while position is not None:  # one scan, restarted only after a heredoc (its end is found by hand)
        position = _scan(source, position, tokens)
    return tokens


_SKIPPED = frozenset(("space", "comment"))


def _scan(source: _Source, position: int, tokens: list[Token]) -> int | None:
    """Append the tokens from a position; the offset to resume at after a heredoc, None at the end."""
    text, append = source.text, tokens.append
    for match in _TOKEN.finditer(text, position):
        kind = match.lastgroup or ""
        if kind in _SKIPPED:
            continue
        start = match.start()
        if kind == "sq":
            append(("string", _single_quoted(match.group()[1:-1]), start))
        elif kind == "dq":
            append(("string", _double_quoted(source, match.group()[1:-1], start), start))
        elif kind == "bad":
            raise source.error(_unexpected(text, start), start)
        elif kind in ("heredoc", "quote", "label"):
            value, end = _heredoc(source, match)
            append(("string", value, start))
            return end
        elif kind == "close":
            if text[match.end():].strip():
                raise source.error("content after ?> is not PHP data", match.end())
            return None
        else:
            append((kind, match.group(), start))
    return None


def _unexpected(text: str, position: int) -> str:
    """Why no token starts here."""
    char = text[position]
    if char in "'\"":
        return "unterminated string"
    if text.startswith("/*", position):
        return "unterminated comment"
    return f"unexpected character {char!r}"


def _single_quoted(body: str) -> str:
    """A single-quoted string: only `\\\\` and `\\'` are escapes."""
    return re.sub(r"\\([\\'])", r"\1", body) if "\\" in body else body


def _double_quoted(source: _Source, body: str, position: int) -> str:
    """A double-quoted (or heredoc) string with its escapes; interpolation is code, not data."""
    if "$" in body or "{" in body:
        for match in _INTERPOLATION.finditer(body):
            if not match.group(0).startswith("\\"):
                raise source.error(f"string interpolation ({match.group(0)}...) is code, not data", position)
    if "\\" not in body:
        return body
    return _DQ_ESCAPE.sub(_dq_escape, body)


def _dq_escape(match: re.Match[str]) -> str:
    """The character of one double-quoted escape."""
    named, octal, hexadecimal, code_point = match.groups()
    if named:
        return _DQ_NAMED[named]
    if octal:
        return chr(int(octal, 8) & 0xFF)
    if hexadecimal:
        return chr(int(hexadecimal, 16))
    return chr(int(code_point, 16)) if int(code_point, 16) <= 0x10FFFF else match.group(0)


def _heredoc(source: _Source, match: re.Match[str]) -> tuple[str, int]:
    """A heredoc/nowdoc body (closing indentation removed, PHP 7.3 style) and the offset after its label."""
    label, nowdoc = match.group("label"), match.group("quote") == "'"
    closing = re.compile(rf"^([ \t]*){re.escape(label)}\b", re.M)
    end = closing.search(source.text, match.end())
    if end is None:
        raise source.error(f"heredoc {label} is never closed", match.start())
    body = source.text[match.end():end.start()]
    body = body[:-2] if body.endswith("\r\n") else body[:-1] if body.endswith("\n") else body
    indent = end.group(1)
    if indent:
        body = "\n".join(line.removeprefix(indent) for line in body.split("\n"))
    value = body if nowdoc else _double_quoted(source, body, match.start())
    return value, end.end()


# --- parser ----------------------------------------------------------------------------------------


class _Parser:
    """Statements of a language file over its tokens, collecting the data they declare."""

    def __init__(self, source: _Source, tokens: list[Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.index = 0
        self.returned: dict[str, Any] | None = None
        self.variables: dict[str, Any] = {}
        self.constants: dict[str, Any] = {}

    # token helpers
    def peek(self, offset: int = 0) -> Token | None:
        position = self.index + offset
        return self.tokens[position] if position < len(self.tokens) else None

    def current(self) -> Token:
        """The next token; the end of the file is an error here."""
        token = self.peek()
        if token is None:
            raise self.unexpected(None)
        return token

    def take(self, kind: str, value: str | None = None) -> Token:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and str(token[1]).lower() != value):
            raise self.unexpected(token, f"expected {value or kind}")
        self.index += 1
        return token

    def accept(self, kind: str, value: str | None = None) -> Token | None:
        token = self.peek()
        if token is not None and token[0] == kind and (value is None or str(token[1]).lower() == value):
            self.index += 1
            return token
        return None

    def unexpected(self, token: Token | None, expectation: str = "") -> ParseError:
        if token is None:
            return self.source.error(f"unexpected end of file{'; ' + expectation if expectation else ''}",
                                     len(self.source.text))
        shown = "a string" if token[0] == "string" else repr(str(token[1])[:40])
        detail = f" ({expectation})" if expectation else ""
        return self.source.error(
            f"unexpected {shown}{detail}: only array data, define() and $var[...] assignments are read "
            "from PHP files", token[2],
        )

    # statements
    def parse(self) -> None:
        while self.peek() is not None:
            self.statement()

    def statement(self) -> None:
        token = self.current()
        if token[0] == "op" and token[1] == ";":
            self.index += 1
        elif token[0] == "name" and token[1].lower() == "return":
            self.index += 1
            self.returned = self.returned_value()
            self.accept("op", ";")
        elif token[0] == "variable":
            self.assignment()
        elif token[0] == "name" and token[1].lower() == "define":
            self.define()
        elif token[0] == "name" and token[1].lower() == "declare":
            self.declare()
        elif token[0] == "name" and token[1].lower() in ("defined", "if"):
            self.guard()
        else:
            raise self.unexpected(token)

    def returned_value(self) -> dict[str, Any]:
        """`return <array>` or `return $var` (a variable assigned before)."""
        variable = self.accept("variable")
        if variable is not None:
            if variable[1] not in self.variables:
                raise self.source.error(f"{variable[1]} is returned but never assigned", variable[2])
            return self.variables[variable[1]]
        value = self.value(0)
        if not isinstance(value, dict):
            raise self.source.error("a PHP language file must return an array", self.tokens[self.index - 1][2])
        return value

    def assignment(self) -> None:
        """`$var = <value>;` or `$var['a']['b'] = <value>;`."""
        name = self.take("variable")
        keys: list[Token] = []
        while self.accept("op", "["):
            keys.append(self.key_token())
            self.take("op", "]")
        self.take("op", "=")
        value = self.value(0)
        self.take("op", ";")
        if not keys:
            if not isinstance(value, dict):
                raise self.source.error(f"{name[1]} must be assigned an array", name[2])
            self.variables[name[1]] = value
            return
        node = self.variables.setdefault(name[1], {})
        for token in keys[:-1]:
            child = node.setdefault(str(token[1]), {})
            if not isinstance(child, dict):
                raise self.source.error(f"{name[1]}[{token[1]!r}] is already a text", token[2])
            node = child
        self.put(node, keys[-1], value)

    def key_token(self) -> Token:
        token = self.peek()
        if token is not None and token[0] in ("string", "number"):
            self.index += 1
            return token
        raise self.unexpected(token, "expected a string or number key")

    def put(self, node: dict[str, Any], key: Token, value: Any) -> None:
        """Store a value under a key, refusing a key given twice."""
        name = str(key[1])
        if name in node:
            raise self.source.error(f"duplicate key {name!r}", key[2])
        node[name] = value

    def define(self) -> None:
        """`define('NAME', <value>);`."""
        self.take("name")
        self.take("op", "(")
        name = self.take("string")
        self.take("op", ",")
        value = self.value(0)
        self.take("op", ")")
        self.take("op", ";")
        self.put(self.constants, name, value)

    def declare(self) -> None:
        """`declare(strict_types=1);` and the like: no data."""
        self.take("name")
        self.take("op", "(")
        self.take("name")
        self.take("op", "=")
        self.take("number")
        self.take("op", ")")
        self.take("op", ";")

    def guard(self) -> None:
        """`defined('BASEPATH') OR exit('...');` / `if (!defined('X')) exit;`: recognised, never run."""
        if self.accept("name", "if"):
            self.take("op", "(")
            self.take("op", "!")
            self.defined_call()
            self.take("op", ")")
        else:
            self.defined_call()
            if not self.accept("op", "||"):
                self.take("name", "or")
        stop = self.peek()
        if stop is None or stop[0] != "name" or stop[1].lower() not in ("exit", "die"):
            raise self.unexpected(stop, "expected exit or die after the defined() guard")
        self.index += 1
        if self.accept("op", "("):
            self.accept("string")
            self.take("op", ")")
        self.take("op", ";")

    def defined_call(self) -> None:
        self.take("name", "defined")
        self.take("op", "(")
        self.take("string")
        self.take("op", ")")

    # values
    def value(self, depth: int) -> Any:
        """A data value: string (with `.` concatenation), number, constant word, or array literal."""
        if depth > MAX_NESTING_DEPTH:
            raise self.source.error(f"arrays nested deeper than {MAX_NESTING_DEPTH} levels", self.current()[2])
        token = self.peek()
        if token is None:
            raise self.unexpected(None, "expected a value")
        if token[0] == "string":
            self.index += 1
            parts = [token[1]]
            while self.accept("op", "."):
                parts.append(self.take("string")[1])
            return "".join(parts)
        if token[0] == "number":
            self.index += 1
            return token[1]
        if token[0] == "op" and token[1] in "-+":
            self.index += 1
            return token[1].replace("+", "") + self.take("number")[1]
        if token[0] == "op" and token[1] == "[":
            self.index += 1
            return self.array_items("]", depth)
        if token[0] == "name":
            word = token[1].lower()
            following = self.peek(1)
            if word == "array" and following is not None and following[1] == "(":
                self.index += 2
                return self.array_items(")", depth)
            if word in ("true", "false"):
                self.index += 1
                return word
            if word == "null":
                self.index += 1
                return None
        raise self.unexpected(token, "expected a string, number, true/false/null or an array")

    def array_items(self, closer: str, depth: int) -> dict[str, Any]:
        """Items up to the closing bracket; items without a key get PHP's next integer index."""
        result: dict[str, Any] = {}
        next_index = 0
        while not self.accept("op", closer):
            start = self.current()
            item = self.value(depth + 1)
            if self.accept("op", "=>"):
                if not isinstance(item, str) or start[0] not in ("string", "number"):
                    raise self.source.error("an array key must be a string or a number", start[2])
                key = ("string", item, start[2])
                value = self.value(depth + 1)
                if start[0] == "number" and item.isdigit():
                    next_index = max(next_index, int(item) + 1)
            else:
                key, value = ("string", str(next_index), start[2]), item
                next_index += 1
            self.put(result, key, value)
            if not self.accept("op", ","):
                self.take("op", closer)
                break
        return result


def parse_php(data: bytes) -> dict[str, Any]:
    """The data a PHP language file declares: its returned array, else its assignments and constants."""
    source = _Source(decode_utf8(data, "PHP file"))
    check_line_lengths(source.text)
    parser = _Parser(source, tokenize(source))
    parser.parse()
    if parser.returned is not None:
        return parser.returned
    tree: dict[str, Any] = {}
    for variable in parser.variables.values():
        tree.update(variable)
    tree.update(parser.constants)
    return tree


def _scalar_text(value: Any, key: str) -> str | None:
    """PHP leaves are already texts (numbers and true/false as written) or None for null."""
    return value


def _read(data: bytes, options: ReadOptions, symfony: bool = False, prefix: str = "") -> Catalogue:
    """The units of a PHP file; keys starting with `prefix` (a pack's namespace prefix) lose it."""
    tree = parse_php(data)
    builder = CatalogueBuilder(options, "id")
    tree = symfony_plurals(tree, builder.locale) if symfony else indexed_plurals(tree, plural_rules(builder.locale).forms)
    if prefix:
        tree = {key.removeprefix(prefix) if key != prefix else key: value for key, value in tree.items()}
    add_tree(builder, tree, builder.locale, _scalar_text)
    return builder.build()


def indexed_plurals(tree: Any, forms: list[str]) -> Any:
    """The tree with every array indexed by plural form (`[0 => 'exemple', 1 => 'exemples']`: keys below the
    locale's number of forms, texts as values) as CLDR-keyed plural forms."""
    if not isinstance(tree, dict):
        return tree
    if tree and all(key.isdigit() and int(key) < len(forms) and (value is None or isinstance(value, str))
                    for key, value in tree.items()):
        return {forms[int(key)]: value for key, value in tree.items()}
    return {key: indexed_plurals(value, forms) for key, value in tree.items()}


def read_php(data: bytes, options: ReadOptions) -> Catalogue:
    """Any PHP language file (array, $lang assignments or constants); nested arrays fold into dotted keys,
    arrays indexed by plural form are plurals."""
    return _read(data, options)


def read_symfony(data: bytes, options: ReadOptions) -> Catalogue:
    """A Symfony PHP translation array: pipe-separated texts are plurals."""
    return _read(data, options, symfony=True)


def read_codeigniter(data: bytes, options: ReadOptions) -> Catalogue:
    """A CodeIgniter language file: keys lose the `<namespace>_` prefix the export gives them."""
    return _read(data, options, prefix=f"{options.namespace}_" if options.namespace else "")


def read_constants(data: bytes, options: ReadOptions) -> Catalogue:
    """A file of define() constants: names lose the `<NAMESPACE>_` prefix the export gives them (the rest is
    the constant name of the asset ID: the importer matches it back, formats.restore_keys)."""
    return _read(data, options, prefix=f"{constant_name(options.namespace)}_" if options.namespace else "")


# --- writing ---------------------------------------------------------------------------------------

_NEEDS_DOUBLE = re.compile(r"[\x00-\x1f\x7f]")
_DQ_SPECIAL = re.compile(r'[\\"$\x00-\x1f\x7f]')
_DQ_WRITE = {"\\": "\\\\", '"': '\\"', "$": "\\$", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
             "\f": "\\f", "\x1b": "\\e"}


def literal(value: str | int | dict | None) -> str:
    """A PHP literal: single-quoted text, double-quoted when it holds control characters, an integer, null, or an
    array."""
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "[" + ", ".join(f"{literal(key)} => {literal(item)}" for key, item in value.items()) + "]"
    if _NEEDS_DOUBLE.search(value):
        return '"' + _DQ_SPECIAL.sub(lambda match: _DQ_WRITE.get(match.group(0)) or f"\\x{ord(match.group(0)):02x}",
                                     value) + '"'
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"




class _Leaf:
    """A unit's value in the nested tree (kept apart from key namespaces)."""

    __slots__ = ("value",)

    def __init__(self, value: str | dict[str, str] | None) -> None:
        self.value = value


def _header(doc: ExportDocument) -> str:
    """`<?php` and the banner comment."""
    return "<?php\n" + block_comment(doc.banner)


def _array_lines(tree: dict[str, Any], indent: str, out: list[str]) -> None:
    """The items of a nested array literal, one per line."""
    for key, item in tree.items():
        if isinstance(item, _Leaf):
            out.append(f"{indent}{literal(key)} => {literal(item.value)},")
        else:
            out.append(f"{indent}{literal(key)} => [")
            _array_lines(item, indent + "    ", out)
            out.append(f"{indent}],")


def _tree(doc: ExportDocument, symfony: bool) -> dict[str, Any]:
    return nest((entry.path, _Leaf(value)) for entry, value in _values(doc, symfony))


def _values(doc: ExportDocument, symfony: bool = False) -> list[tuple[Entry, str | dict | None]]:
    """(entry, value) of every written entry; plural forms as an array indexed by form, as Loco writes them
    (`1 => 'exemples'`), unless in Symfony's pipe syntax."""
    values = written_values(doc, doc.locale, symfony)
    if symfony or not any(isinstance(value, dict) for _, value in values):
        return values  # type: ignore[return-value]
    forms = doc.rules(doc.locale).forms
    return [(entry, {forms.index(name): text for name, text in value.items()} if isinstance(value, dict) else value)
            for entry, value in values]


def _write_array(doc: ExportDocument, symfony: bool) -> str:
    out = [_header(doc) + "return ["]
    _array_lines(_tree(doc, symfony), "    ", out)
    out.append("];")
    return "\n".join(out) + "\n"


def write_php(doc: ExportDocument) -> str:
    """`return [...]` with nested arrays and plural-form arrays."""
    return _write_array(doc, symfony=False)


def write_symfony(doc: ExportDocument) -> str:
    """`return [...]` with Symfony pipe plurals."""
    return _write_array(doc, symfony=True)


def _prefix(doc: ExportDocument) -> str:
    """`<namespace>_`: the namespace option, else the project name ([obs LEG-conv] `$lang['test_sample']`)."""
    return f"{doc.namespace}_" if doc.namespace else ""


def write_codeigniter(doc: ExportDocument) -> str:
    """`$lang['<namespace>_key'] = ...;` lines, dotted keys as nested brackets."""
    prefix = _prefix(doc)
    lines = [_header(doc).rstrip("\n")]
    for entry, value in _values(doc):
        path = (prefix + entry.path[0], *entry.path[1:])
        brackets = "".join(f"[{literal(segment)}]" for segment in path)
        lines.append(f"$lang{brackets} = {literal(value)};")
    return "\n".join(lines) + "\n"


_NOT_IN_CONSTANT = re.compile(r"[^A-Z0-9_]")


def constant_name(key: str) -> str:
    """A key as a PHP constant name ([obs LEG-conv] `TEST_EXAMPLES`): upper-cased, each character other than
    A-Z, 0-9 and `_` replaced by `_`, and `_` in front of a leading digit (the format's key filter)."""
    name = _NOT_IN_CONSTANT.sub("_", key.upper())
    return f"_{name}" if name[:1].isdigit() else name


def write_constants(doc: ExportDocument) -> str:
    """`define('<NAMESPACE>_KEY', ...);` lines; keys are constant names already (the spec's key filter), plural
    forms are constants of their own (the format has no plural syntax: pipeline.plural_forms_apart)."""
    prefix = f"{constant_name(doc.namespace)}_" if doc.namespace else ""
    lines = [_header(doc).rstrip("\n")]
    for entry, value in written_values(doc, doc.locale, False):
        # again on the key: a collision suffix (`KEY-2`) must not leave the identifier rule
        lines.append(f"define({literal(prefix + constant_name(entry.key))}, {literal(value)});")
    return "\n".join(lines) + "\n"
