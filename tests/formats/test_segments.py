"""Segmented exports (formats/segments.py): a catalogue in runs, rendered with a cache, gives the very file an
export without cache gives, whatever the options; unchanged runs are rendered once."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from formats import Catalogue, CharsetError, ExportOptions, KeyCollision, RenderCache, Translation, Unit, export_file

WHEN = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def _unit(n: int, source: str, context: str = "", **extra) -> Unit:
    return Unit(id=f"asset.{n}", context=context, notes=f"note {n}" if n % 2 else "",
                translations={"en": Translation(source), "fr": Translation(f"fr {n}", flag="fuzzy" if n % 3 else "")},
                **extra)


def _catalogue(units: list[Unit], run: int = 3) -> Catalogue:
    segments = [(("run", start, tuple(unit.translations["en"].text for unit in units[start:start + run])),
                 len(units[start:start + run])) for start in range(0, len(units), run)]
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units, project="P", segments=segments)


UNITS = [_unit(n, f"Text {n}", context="ctx" if n == 4 else "", tags=["a"] if n % 2 else []) for n in range(12)]  # asset.10 sorts before asset.2
UNITS.append(Unit(id="plural", plural=True, translations={
    "en": Translation("%d file", plurals={"one": "%d file", "other": "%d files"}),
    "fr": Translation("%d fichier", plurals={"one": "%d fichier", "other": "%d fichiers"})}))


@pytest.mark.parametrize("options", [
    ExportOptions(locale="fr"), ExportOptions(locale="fr", index="id"), ExportOptions(locale="en"),
    ExportOptions(locale="fr", filter="a"), ExportOptions(locale="fr", status="fuzzy"),
    ExportOptions(locale="fr", order="id"), ExportOptions(locale="fr", printf="java"),
    ExportOptions(locale="fr", no_comments=True), ExportOptions(locale="fr", breaks="DOS"),
    ExportOptions(template=True),
])
@pytest.mark.parametrize("ext", ["po", "pot", "mo", "json"])
def test_a_segmented_export_is_the_export_without_cache(options, ext):
    options = replace(options, exported_at=WHEN)
    catalogue = _catalogue(UNITS)
    cache = RenderCache(1 << 20)
    first = export_file(catalogue, ext, "", options, cache)
    again = export_file(catalogue, ext, "", options, cache)
    assert first == again == export_file(catalogue, ext, "", options)


@pytest.mark.parametrize("collisions", ["auto", "ignore", "overwrite", "legacy"])
def test_keys_shared_across_runs_or_within_one_are_resolved_as_in_a_whole_export(collisions):
    options = ExportOptions(locale="fr", exported_at=WHEN, collisions=collisions)
    across = UNITS[:2] + [_unit(20, "Text 0")] + UNITS[2:]  # runs of 3: "Text 0" twice, in different runs
    within = [_unit(21, "Same"), _unit(22, "Same")] + UNITS
    for units in (across, within):
        catalogue = _catalogue(units)
        assert export_file(catalogue, "po", "", options, RenderCache(1 << 20)) == export_file(catalogue, "po", "",
                                                                                             options)


def _error(exception: type[Exception], catalogue: Catalogue, options: ExportOptions, cache: RenderCache | None) -> str:
    with pytest.raises(exception) as error:
        export_file(catalogue, "po", "", options, cache)
    return str(error.value)


def test_a_collision_fails_and_a_charset_error_names_the_same_text_with_or_without_cache():
    catalogue = _catalogue(UNITS[:4] + [_unit(30, "Text 1")])
    options = ExportOptions(locale="fr", collisions="fail")
    assert _error(KeyCollision, catalogue, options, RenderCache(1 << 20)) == _error(KeyCollision, catalogue, options,
                                                                                   None)
    catalogue = _catalogue(UNITS[:5] + [_unit(31, "Prix en €")])
    options = ExportOptions(locale="fr", charset="ISO-8859-1")
    assert _error(CharsetError, catalogue, options, RenderCache(1 << 20)) == _error(CharsetError, catalogue, options,
                                                                                   None)


def test_unchanged_runs_are_rendered_once_and_a_changed_run_again():
    cache = RenderCache(1 << 20)
    options = ExportOptions(locale="fr", exported_at=WHEN)
    export_file(_catalogue(UNITS), "po", "", options, cache)
    held = cache.size
    export_file(_catalogue(UNITS), "po", "", options, cache)
    assert cache.size == held  # every run found
    changed = UNITS[:3] + [_unit(3, "Text 3 changed")] + UNITS[4:]
    data = export_file(_catalogue(changed), "po", "", options, cache).data
    assert cache.size > held and data == export_file(_catalogue(changed), "po", "", options).data
    assert b'msgid "Text 3 changed"' in data
