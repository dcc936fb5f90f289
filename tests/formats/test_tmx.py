"""TMX 1.4: DTD validity (xmllint --dtdvalid), every locale of a unit, creation data, plurals, corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats import ReadOptions, export_file, read_file
from tests.support import corpus_path, require_tool, schema_path

from .samples import export_text, options, rich_catalogue, run_tool
from .validators import dtd_check


@pytest.mark.parametrize("shape", [{"all_locales": True}, {"locale": "ru"}, {"template": True},
                                   {"all_locales": True, "index": "text"}])
def test_export_is_dtd_valid(tmp_path: Path, shape: dict) -> None:
    dtd_check(tmp_path, export_file(rich_catalogue(), "tmx", "", options(**shape)).data)


def test_every_locale_of_a_unit_is_one_tu() -> None:
    text = export_text(rich_catalogue(("fr", "ja")), "tmx", all_locales=True)
    greeting = text.split('<tu tuid="greeting">')[1].split("</tu>")[0]
    assert [part.split('"')[0] for part in greeting.split('xml:lang="')[1:]] == ["en", "fr", "ja"]
    read = read_file("tmx", "", text.encode(), ReadOptions())
    assert read.locales == ["en", "fr", "ja"]
    assert read.unit("greeting").translation("ja").text == "[ja] Hello %s"
    assert read.unit("greeting").translation("fr").flag == "fuzzy"
    assert read.unit("menu.open").context == "File menu"
    assert read.unit("files").translation("ja").plurals == {"other": "%d other (ja)"}
    assert read.unit("files").translation("en").plurals == {"one": "%d file", "other": "%d files"}
    assert not read.unit("untouched").translation("fr").translated


def test_creation_data_is_written_and_read() -> None:
    text = export_text(rich_catalogue(("fr",)), "tmx", all_locales=True)
    assert 'creationdate="20240506T070809Z"' in text and 'creationid="Tester"' in text
    assert 'creationtool="Gloss"' in text
    headers = read_file("tmx", "", text.encode(), ReadOptions()).headers
    assert headers["creationdate"] == "20240506T070809Z" and headers["creationid"] == "Tester"


def test_a_unit_without_any_text_keeps_a_valid_tu(tmp_path: Path) -> None:
    catalogue = rich_catalogue(("fr",))
    catalogue.units[5].translations.clear()
    data = export_file(catalogue, "tmx", "", options(all_locales=True)).data
    dtd_check(tmp_path, data)
    read = read_file("tmx", "", data, ReadOptions())
    assert read.unit("untouched").translations == {}


def test_corpus_pontoon_tmx() -> None:
    data = corpus_path("tmx/pontoon__valid_entries.tmx").read_bytes()
    read = read_file("tmx", "", data, ReadOptions(source_locale="en"))
    assert len(read.units) == 5  # five <tu>, four sharing one tuid: kept apart
    assert read.locales == ["en", "sl"]  # the file's en-US source is the catalogue's source
    assert [unit.id for unit in read.units][:3] == ["pontoon:aa/bb/ccc:xxx", "pontoon:aa/bb/ccc:xyz",
                                                     "pontoon:aa/bb/ccc:xxx-2"]
    assert read.units[3].translation("sl").text == "<p>translation łążśźć</p>"
    assert read.headers["creationtool"] == "pontoon"


def test_translate_toolkit_reads_our_export() -> None:
    tmx = pytest.importorskip("translate.storage.tmx")
    data = export_file(rich_catalogue(("fr",)), "tmx", "", options(all_locales=True)).data
    store = tmx.tmxfile.parsestring(data)
    sources = [unit.source for unit in store.units]
    assert "Open" in sources and 'Say "hi" \\ wave\nthen\tleave' in sources


def test_a_doctype_naming_an_older_tmx_dtd_as_omegat_writes_it_reads_without_loading_it() -> None:
    data = (b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE tmx SYSTEM "tmx11.dtd">\n<tmx version="1.1">\n'
            b'<header creationtool="OmegaT" o-tmf="OmegaT TMX" adminlang="EN-US" datatype="plaintext" '
            b'segtype="sentence" srclang="EN"/>\n<body><tu><tuv lang="EN"><seg>Open</seg></tuv>'
            b'<tuv lang="AR"><seg>\xd9\x81\xd8\xaa\xd8\xad</seg></tuv></tu></body></tmx>\n')
    catalogue = read_file("tmx", "", data, ReadOptions())
    assert [unit.translation("ar").text for unit in catalogue.units] == ["فتح"]
