"""The Loco-style banner that heads exported files, written by each format in its own comment syntax."""
from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime

from .plurals import locale_display_name


def banner_lines(
    ext: str,
    label: str,
    project: str,
    locales: list[str],
    exported_by: str,
    exported_at: datetime,
    tags: str = "",
) -> list[str]:
    """Banner text lines without comment markers, e.g. `Loco po export: Gettext PO`, `Project: Demo`."""
    project, exported_by, tags = (one_line(value) for value in (project, exported_by, tags))
    lines = [f"Loco {ext} export: {label}", f"Project: {project}", "Release: Working copy"]
    if len(locales) == 1:
        lines.append(f"Locale: {locales[0]}, {locale_display_name(locales[0])}")
    elif locales:
        lines.append("Locales: " + ", ".join(locales))
    if tags:
        lines.append(f"Tagged: {tags}")
    lines.append(f"Exported by: {exported_by}")
    lines.append(f"Exported at: {format_datetime(exported_at)}")
    return lines


def one_line(value: str) -> str:
    """A value with its line breaks turned into spaces, so it cannot break out of a comment or header line."""
    return " ".join(value.splitlines()) if "\n" in value or "\r" in value else value


def line_comments(lines: list[str], marker: str) -> str:
    """Lines prefixed with a line-comment marker (`# `, `-- `), each ending with a newline."""
    return "".join(f"{marker}{line}".rstrip() + "\n" for line in lines)


def block_comment(lines: list[str], opener: str = "/**", prefix: str = " * ", closer: str = " */") -> str:
    """Lines in a block comment (`/** ... */` by default), with the closing sequence kept out of the text."""
    ending = closer.strip()
    body = "".join((prefix + line.replace(ending, ending[0] + " " + ending[1:])).rstrip() + "\n" for line in lines)
    return f"{opener}\n{body}{closer}\n" if lines else ""
