"""The Loco-style banner that heads exported files, written by each format in its own comment syntax."""
from __future__ import annotations

from datetime import datetime

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
    lines.append(f"Exported at: {rfc2822_date(exported_at)}")
    return lines


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def rfc2822_date(moment: datetime) -> str:
    """`Mon, 01 Jan 2024 00:00:00 +0000` (email.utils.format_datetime's text, without importing the email
    package, a fifth of `import formats`); English names whatever the process locale, `-0000` when naive."""
    offset = moment.utcoffset()
    if offset is None:
        zone = "-0000"
    else:
        minutes = int(offset.total_seconds()) // 60
        zone = f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
    return (f"{_DAYS[moment.weekday()]}, {moment.day:02d} {_MONTHS[moment.month - 1]} {moment.year:04d} "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} {zone}")


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
