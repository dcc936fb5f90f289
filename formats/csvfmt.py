"""CSV in Gloss's own multi-locale layout (also reads Godot-style translation CSV).

Header row: `id` (or `text` when keys are source texts), `context`, `notes`, `plural`, then one column
per locale, source first. A singular unit is one row with an empty `plural` cell; a plural unit is one
row per CLDR form (`one`, `few`, `other`...) with the same id, context and notes, and each locale's
text for that form (empty where the locale has no such form). Every field is quoted. An empty cell
means untranslated, so blank translations cannot be told apart from untranslated ones, and flags are
not kept. Reading accepts any subset of the fixed columns in any order after the key column, ignores
columns whose header starts with `_` (Godot comments), and treats other headers as locale codes, which
makes a Godot CSV (empty first header cell, then locale codes) a valid input.
"""
from __future__ import annotations

import csv
import io

from .catalogue import Catalogue, Translation, Unit
from .document import ExportDocument
from .errors import ParseError
from .options import ReadOptions
from .plurals import CATEGORIES, is_locale_code
from .reading import CatalogueBuilder, plural_translation
from .tabular import table_locales, table_rows

FIXED_COLUMNS = ("context", "notes", "plural")


def write_csv(doc: ExportDocument) -> str:
    """The CSV table, all fields quoted."""
    locales = table_locales(doc)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["text" if doc.index == "text" else "id", *FIXED_COLUMNS, *locales])
    cell = formula_safe if doc.options.escape_formulas else str
    for row in table_rows(doc, locales):
        unit = row.entry.unit
        texts = [row.texts[code] or "" for code in locales]
        writer.writerow([cell(value) for value in (row.entry.key, unit.context, unit.notes, row.form, *texts)])
    return out.getvalue()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(value: str) -> str:
    """A cell a spreadsheet will not evaluate: a leading formula character gets a `'` in front (OWASP).

    >>> print(formula_safe('=HYPERLINK("http://x")'), formula_safe("-1"), formula_safe("plain"))
    '=HYPERLINK("http://x") '-1 plain
    """
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def read_csv(data: bytes, options: ReadOptions) -> Catalogue:
    """A CSV of this layout (or Godot's) as a multi-locale catalogue."""
    rows = _rows(_decode(data))
    if not rows:
        raise ParseError("empty CSV: a header row is needed")
    header = [cell.strip() for cell in rows[0]]
    if not header:  # a blank first line
        raise ParseError("empty CSV header: the first row must name the columns", 1)
    fixed, locales = _columns(header)
    default_index = "text" if header[0].lower() == "text" else "id"
    builder = CatalogueBuilder(options, default_index, detected_source=locales[0][1] if locales else None)
    plural_texts: dict[tuple[int, str], dict[str, str]] = {}
    units: dict[int, Unit] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        _add_row(builder, _fit(row, len(header), number), number, fixed, locales, plural_texts, units)
    for (unit_key, code), forms in plural_texts.items():
        translation = plural_translation(dict(forms), code)
        if translation is not None:
            builder.add_translation(units[unit_key], code, translation)
    return builder.build()


def _decode(data: bytes) -> str:
    """CSV bytes as text (UTF-8, optional BOM)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ParseError("CSV is not valid UTF-8", data.count(b"\n", 0, error.start) + 1) from None


def _rows(text: str) -> list[list[str]]:
    """Parsed rows; ParseError with the line where Python's csv module gave up."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        return list(reader)
    except csv.Error as error:
        raise ParseError(f"malformed CSV: {error}", reader.line_num) from None


def _columns(header: list[str]) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """Positions of the fixed columns and of the locale columns (ParseError for unknown headers)."""
    fixed: dict[str, int] = {}
    locales: list[tuple[int, str]] = []
    for position, name in enumerate(header[1:], 1):
        lowered = name.lower()
        if lowered in FIXED_COLUMNS:
            fixed[lowered] = position
        elif name.startswith("_") or (not name and position == len(header) - 1):
            continue
        elif is_locale_code(name):
            locales.append((position, name))
        else:
            raise ParseError(
                f"CSV column {position + 1} is headed {name!r}, which is neither a locale code "
                f"nor one of {', '.join(FIXED_COLUMNS)}", 1,
            )
    return fixed, locales


def _fit(row: list[str], width: int, number: int) -> list[str]:
    """The row padded to the header's width; extra non-empty cells are an error."""
    if len(row) > width and any(cell.strip() for cell in row[width:]):
        raise ParseError(f"row has {len(row)} cells but the header has {width}", number)
    return (row + [""] * width)[:width]


def _add_row(
    builder: CatalogueBuilder,
    row: list[str],
    number: int,
    fixed: dict[str, int],
    locales: list[tuple[int, str]],
    plural_texts: dict[tuple[int, str], dict[str, str]],
    units: dict[int, Unit],
) -> None:
    """One row: a singular unit's texts, or one plural form of a plural unit."""
    key = row[0]
    if not key:
        raise ParseError("empty key in the first column", number)
    context = row[fixed["context"]] if "context" in fixed else ""
    form = row[fixed["plural"]].strip() if "plural" in fixed else ""
    if form and form not in CATEGORIES:
        raise ParseError(f"plural form {form!r} is not one of {', '.join(CATEGORIES)}", number)
    unit = builder.unit_for(key, context, plural=bool(form))
    units[id(unit)] = unit
    if "notes" in fixed and row[fixed["notes"]] and not unit.notes:
        unit.notes = row[fixed["notes"]]
    for position, code in locales:
        cell = row[position]
        if cell == "":
            continue
        if form:
            plural_texts.setdefault((id(unit), code), {})[form] = cell
        else:
            builder.add_translation(unit, code, Translation(text=cell))
