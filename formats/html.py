"""An HTML table of translations (written only): key column, then one column per locale."""
from __future__ import annotations

from html import escape

from .document import ExportDocument
from .plurals import locale_display_name
from .tabular import table_locales, table_rows


def write_html(doc: ExportDocument) -> str:
    """A standalone HTML5 page whose table has one row per unit (per plural form for plurals)."""
    locales = table_locales(doc)
    title = escape(f"{doc.project} translations" if doc.project else "Translations")
    parts = ["<!DOCTYPE html>\n"]
    if doc.banner:
        # "--" cannot appear inside an HTML comment.
        parts.append("<!--\n" + "".join(f" {line.replace('--', '- -')}\n" for line in doc.banner) + "-->\n")
    parts.append(f'<html lang="{escape(locales[0] if locales else doc.source_locale)}">\n<head>\n')
    parts.append(f'<meta charset="{escape(doc.charset_label)}">\n<title>{title}</title>\n')
    parts.append("<style>td { white-space: pre-wrap; vertical-align: top; }</style>\n</head>\n<body>\n<table>\n")
    header_cells = "".join(f'<th class="{escape(code)}">{escape(locale_display_name(code))}</th>' for code in locales)
    parts.append(f"<thead>\n<tr><th>Key</th>{header_cells}</tr>\n</thead>\n<tbody>\n")
    for row in table_rows(doc, locales):
        label = f"<code>{escape(row.entry.key)}</code>"
        if row.entry.unit.context:
            label += f' <small class="context">{escape(row.entry.unit.context)}</small>'
        if row.form:
            label += f' <small class="plural">{escape(row.form)}</small>'
        cells = "".join(f'<td class="{escape(code)}">{escape(row.texts[code] or "")}</td>' for code in locales)
        parts.append(f"<tr><td>{label}</td>{cells}</tr>\n")
    parts.append("</tbody>\n</table>\n</body>\n</html>\n")
    return "".join(parts)
