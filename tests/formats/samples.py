"""Catalogues and helpers shared by the format tests."""
from __future__ import annotations

import subprocess
from pathlib import Path

from formats import Catalogue, ExportOptions, Translation, Unit, export_file, plural_rules

from .contract import EXPORTED_AT, PLURAL_TEXTS

PLURAL_LOCALES = ("en", "fr", "ru", "ar", "ja", "pl")


def plural_texts(locale: str) -> dict[str, str]:
    """Plural texts with a %d placeholder in every form, for the locale's CLDR forms."""
    return {name: f"%d {name} ({locale})" for name in plural_rules(locale).forms}


def rich_catalogue(target_locales: tuple[str, ...] = PLURAL_LOCALES) -> Catalogue:
    """Singular, contextual, noted, flagged, printf and plural units translated into several locales."""
    units = [
        Unit(id="greeting", notes="Shown on the home page", tags=["web"], printf="php",
             translations={"en": Translation("Hello %s")}),
        Unit(id="menu.open", context="File menu", tags=["desktop"],
             translations={"en": Translation("Open")}),
        Unit(id="menu.close", tags=["web", "desktop"], translations={"en": Translation("Close")}),
        Unit(id="quote", translations={"en": Translation('Say "hi" \\ wave\nthen\tleave')}),
        Unit(id="files", plural=True, printf="php", references=["src/files.php:12"],
             translations={"en": Translation("%d file", dict(PLURAL_TEXTS["en"]))}),
        Unit(id="untouched", translations={"en": Translation("Never translated")}),
    ]
    for locale in target_locales:
        if locale == "en":
            continue
        units[0].translations[locale] = Translation(f"[{locale}] Hello %s", flag="fuzzy", comment="check tone")
        units[1].translations[locale] = Translation(f"[{locale}] Open")
        units[2].translations[locale] = Translation(f"[{locale}] Close", flag="provisional")
        units[3].translations[locale] = Translation(f'[{locale}] "salut" \\ \nfin')
        forms = plural_texts(locale)
        units[4].translations[locale] = Translation(next(iter(forms.values())), forms)
    locales = ["en"] + [code for code in target_locales if code != "en"]
    return Catalogue(source_locale="en", locales=locales, units=units, project="Sample")


def options(**fields) -> ExportOptions:
    """Export options with a fixed date and user, overridden by the given fields."""
    base = dict(project_name="Sample", exported_by="Tester", exported_at=EXPORTED_AT)
    base.update(fields)
    return ExportOptions(**base)


def export_text(catalogue: Catalogue, ext: str, variant: str = "", **fields) -> str:
    """An export decoded as UTF-8."""
    return export_file(catalogue, ext, variant, options(**fields)).data.decode("utf-8")


def run_tool(*command: str | Path) -> subprocess.CompletedProcess[str]:
    """Run an external validator, returning its completed process (never raising on failure)."""
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=60)
