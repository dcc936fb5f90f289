"""The import rules of docs/architecture.md hold for every module: the test reads the doc's table of layers and
checks the imports of every module (parsed with `ast`, so imports inside functions and under TYPE_CHECKING count
too). Layers are found by package, never by module name: moving modules within a layer changes nothing here."""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

DOC = REPO_ROOT / "docs" / "architecture.md"
NOT_LAYERS = {"tests", "bench", "tools"}  # outside the house: they may import anything


@dataclass(frozen=True)
class Layer:
    name: str
    may_import: frozenset[str]  # layers of ours, besides itself
    libraries: frozenset[str]  # third-party libraries whose home it is


def rules_table(text: str) -> dict[str, Layer]:
    """The layers of the doc's rules table: `| `layer` | `a`, `b` | `lib`, ... |`, one row per layer."""
    table = text.split("<!-- the rules:", 1)[1].split("\n\n", 1)[0]
    layers = {}
    for row in table.splitlines()[3:]:
        name, may_import, libraries = (re.findall(r"`([\w.]+)`", cell) for cell in row.strip("|").split("|"))
        layers[name[0]] = Layer(name[0], frozenset(may_import), frozenset(libraries))
    return layers


LAYERS = rules_table(DOC.read_text("utf-8"))
HOME = {library: layer.name for layer in LAYERS.values() for library in layer.libraries}


def modules_of(layer: str) -> list[Path]:
    """The source files of a layer: a package's every module, or one module at the top of the repository."""
    package = REPO_ROOT / layer
    return sorted(package.rglob("*.py")) if package.is_dir() else [REPO_ROOT / f"{layer}.py"]


def imported_names(source: str, package: tuple[str, ...]) -> set[str]:
    """Every absolute module name `source` imports, its relative imports resolved against `package`."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            names.add(".".join([*base, *([node.module] if node.module else [])]))
    return names


def imports_of(path: Path) -> set[str]:
    parts = path.relative_to(REPO_ROOT).parts
    package = parts[:-1]  # the package a module (or an __init__.py) belongs to
    return imported_names(path.read_text("utf-8"), package)


def offences(layer: Layer, names: set[str]) -> list[str]:
    """The imports of a module of `layer` that the rules forbid, each with the rule it breaks."""
    found = []
    for name in sorted(names):
        top = name.split(".")[0]
        if top == layer.name or top == "__future__":
            continue
        if top in LAYERS:
            if top not in layer.may_import:
                found.append(f"{name}: {layer.name} may import only {sorted(layer.may_import) or 'no layer'}")
        elif top in HOME:
            if HOME[top] != layer.name:
                found.append(f"{name}: only {HOME[top]} imports {top}")
        elif top not in sys.stdlib_module_names:
            found.append(f"{name}: a library with no home layer in docs/architecture.md")
    return found


def test_the_rules_table_names_every_layer_and_only_layers_it_names() -> None:
    tops = {path.name for path in REPO_ROOT.iterdir() if (path / "__init__.py").is_file()}
    tops |= {path.stem for path in REPO_ROOT.glob("*.py")}
    assert tops - NOT_LAYERS == set(LAYERS)
    assert {"app", "storage", "formats", "limits", "vocabulary"} <= set(LAYERS)
    for layer in LAYERS.values():
        assert layer.may_import <= set(LAYERS) - {layer.name}, layer


def test_no_layer_imports_a_layer_above_it_so_the_arrows_have_no_cycle() -> None:
    order: list[str] = []
    while len(order) < len(LAYERS):
        ready = [name for name, layer in LAYERS.items() if name not in order and layer.may_import <= set(order)]
        assert ready, f"the may-import arrows make a cycle among {set(LAYERS) - set(order)}"
        order += ready


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_module_of_a_layer_imports_only_what_its_row_allows(name: str) -> None:
    layer = LAYERS[name]
    paths = modules_of(name)
    assert paths and all(path.is_file() for path in paths), name
    broken = {str(path.relative_to(REPO_ROOT)): offences(layer, imports_of(path)) for path in paths}
    assert {path: found for path, found in broken.items() if found} == {}


def test_the_check_sees_imports_inside_functions_and_resolves_relative_ones() -> None:
    source = "import json\nfrom .. import limits\ndef late():\n    from flask import request\n    import dulwich.repo\n"
    names = imported_names(source, ("formats", "xml"))
    assert names == {"json", "formats", "flask", "dulwich.repo"}
    assert offences(LAYERS["formats"], names) == ["dulwich.repo: only storage imports dulwich",
                                                  "flask: only app imports flask"]


# What a snapshot keeps inside (its chunk tables, file table, memo and persisted store) and a chunk's own store of
# derived data:
# app/ reads them through Snapshot's and Chunk's public methods (DESIGN §10), so storage may change them alone.
SNAPSHOT_INSIDES = {"asset_chunks", "locale_chunks", "files", "memo", "_memo", "derived", "peek_all", "persisted"}


def test_app_reads_snapshots_through_their_public_methods_never_their_chunk_tables() -> None:
    reached = [f"{path.relative_to(REPO_ROOT)}:{node.lineno} .{node.attr}"
               for path in modules_of("app")
               for node in ast.walk(ast.parse(path.read_text("utf-8")))
               if isinstance(node, ast.Attribute) and node.attr in SNAPSHOT_INSIDES
               and not (isinstance(node.value, ast.Name) and node.value.id == "request")]  # Flask's uploads
    assert reached == []
