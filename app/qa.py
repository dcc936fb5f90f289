"""Quality checks of translations against their source text (GET /api/locales/{locale}/errors)."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from formats.printf import Placeholder, detect_printf, placeholders
from storage import AssetRecord

# A tag cannot contain `<`: stopping there keeps the scan linear (`<a` * n made the lazy `[^>]*?` quadratic).
HTML_TAG = re.compile(r"<\s*+(/?)\s*+([A-Za-z][\w:-]*+)[^<>]*+>")


def placeholder_label(token: Placeholder, style: str) -> str:
    """How a placeholder reads in messages: `%s`, `%2$d`, `{name}`."""
    if style == "icu":
        return "{" + (token.name or str((token.position or 1) - 1)) + "}"
    if style == "python" and token.name:
        return f"%({token.name}){token.spec}{token.conversion}"
    position = f"{token.position}$" if token.position else ""
    return f"%{position}{token.spec}{token.length}{token.conversion}"


def placeholder_errors(source: str, target: str, style: str) -> list[str]:
    style = style or detect_printf(source)
    if not style:
        return []
    wanted = Counter(placeholder_label(p, style) for p in placeholders(source, style))
    found = Counter(placeholder_label(p, style) for p in placeholders(target, style))
    errors = [f"Missing placeholder {label}" for label in (wanted - found).elements()]
    errors += [f"Unexpected placeholder {label}" for label in (found - wanted).elements()]
    return errors


def html_errors(source: str, target: str) -> list[str]:
    def tags(text: str) -> Counter:
        return Counter(("</" if close else "<") + name.lower() + ">"
                       for close, name in HTML_TAG.findall(text))

    wanted, found = tags(source), tags(target)
    errors = [f"Missing HTML tag {tag}" for tag in sorted((wanted - found).elements())]
    errors += [f"Unexpected HTML tag {tag}" for tag in sorted((found - wanted).elements())]
    return errors


def whitespace_errors(source: str, target: str) -> list[str]:
    errors = []
    if target and not target.strip():
        errors.append("Translation is only whitespace")
    elif target == "":
        errors.append("Translation is empty")
    else:
        if (source[:1].isspace()) != (target[:1].isspace()):
            errors.append("Leading whitespace differs from the source")
        if (source[-1:].isspace()) != (target[-1:].isspace()):
            errors.append("Trailing whitespace differs from the source")
    return errors


def check_translation(asset: AssetRecord, source: str | None, target: str, is_source: bool) -> list[str]:
    """Every problem found in one translation (or, for the source locale, in the source text itself)."""
    if is_source or source is None:
        return whitespace_errors(target, target) if not target.strip() else []
    errors = whitespace_errors(source, target)
    if target.strip():
        errors += placeholder_errors(source, target, asset.get("printf", ""))
        if asset.get("type") == "html":
            errors += html_errors(source, target)
    return errors
