"""Qt TS (lrelease + lconvert) and .NET ResX/ResW (translate-toolkit as a second reader); corpus imports."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats import Catalogue, ReadOptions, Translation, Unit, export_file, read_file
from tests.support import corpus_path, require_tool

from .samples import PLURAL_LOCALES, export_text, options, rich_catalogue, run_tool
from .validators import lrelease_and_lconvert


@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_ts_export_compiles_with_lrelease_and_converts_with_lconvert(tmp_path: Path, locale: str) -> None:
    data = export_file(rich_catalogue(), "ts", "", options(locale=locale)).data
    po = lrelease_and_lconvert(tmp_path, data)
    assert 'msgctxt "File menu|"' in po  # lconvert writes "context|disambiguation"
    if locale != "en":
        assert f'msgstr "[{locale}] Open"' in po


def test_id_based_ts_compiles_with_lrelease_idbased(tmp_path: Path) -> None:
    data = export_file(rich_catalogue(("fr",)), "ts", "", options(locale="fr", index="id")).data
    assert b'<message id="menu.open">' in data
    lrelease_and_lconvert(tmp_path, data, "-idbased")
    read = read_file("ts", "", data, ReadOptions(index="id"))
    assert read.unit("menu.open").translation("fr").text == "[fr] Open"


def test_numerus_forms_follow_the_target_language(tmp_path: Path) -> None:
    data = export_file(rich_catalogue(("ru",)), "ts", "", options(locale="ru")).data
    text = data.decode()
    assert '<message numerus="yes">' in text and text.count("<numerusform>") == 3
    lrelease_and_lconvert(tmp_path, data)
    read = read_file("ts", "", data, ReadOptions())
    files = read.unit("%d file")  # read by source text, TS's default index
    assert files.plural and files.translation("ru").plurals == {"one": "%d one (ru)", "few": "%d few (ru)",
                                                                "many": "%d many (ru)"}


def test_unfinished_vanished_and_comments() -> None:
    data = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>Main</name>
    <message><source>Done</source><translation>Fertig</translation></message>
    <message><source>Draft</source><translation type="unfinished">Entwurf</translation></message>
    <message><source>Empty</source><translation type="unfinished"></translation></message>
    <message><source>Gone</source><translation type="vanished">Weg</translation></message>
    <message><source>Old</source><translation type="obsolete">Alt</translation></message>
    <message>
        <source>Save</source>
        <comment>verb</comment>
        <extracomment>Toolbar button</extracomment>
        <translatorcomment>short!</translatorcomment>
        <translation>Sichern</translation>
    </message>
</context>
</TS>""".encode()
    read = read_file("ts", "", data, ReadOptions())
    assert read.locales == ["en", "de-DE"]
    assert [unit.key for unit in read.units] == ["Done", "Draft", "Empty", "Save"]
    assert read.units[1].translation("de-DE").flag == "fuzzy"
    assert not read.units[2].translation("de-DE").translated
    save = read.units[3]
    assert save.context == "Main" and save.id == "Main.Save"
    assert save.notes == "Toolbar button\nverb"
    assert save.translation("de-DE").comment == "short!"


def test_flags_other_than_fuzzy_survive_as_unfinished_with_a_marker(tmp_path: Path) -> None:
    units = [Unit("a", translations={"en": Translation("A"), "fr": Translation("Ah", flag="incorrect")})]
    data = export_file(Catalogue(source_locale="en", locales=["en", "fr"], units=units), "ts", "",
                       options(locale="fr")).data
    assert b'<translation type="unfinished">Ah</translation>' in data
    lrelease_and_lconvert(tmp_path, data)
    assert read_file("ts", "", data, ReadOptions()).units[0].translation("fr").flag == "incorrect"


def test_corpus_kdrive_ts(tmp_path: Path) -> None:
    data = corpus_path("ts/desktop-kDrive__client_fr.ts").read_bytes()
    read = read_file("ts", "", data, ReadOptions())
    assert len(read.units) == 564  # 564 messages in 56 contexts, none vanished
    assert len({unit.context for unit in read.units}) == 56
    assert read.locales == ["en", "fr-FR"]  # language="fr_FR"
    assert sum(1 for unit in read.units if unit.plural) == 11  # numerus="yes"
    about = read.unit("KDC::AboutDialog.About")
    assert about.translation("fr-FR").text == "À propos" and about.references == ["../src/gui/aboutdialog.cpp:73"]
    removed = next(unit for unit in read.units if unit.key == "%1 and %n other file(s) have been removed.")
    assert removed.translation("fr-FR").plurals == {"one": "%1 a été supprimé.",
                                                    "other": "%1 et %n autres fichiers ont été supprimés."}
    exported = export_file(read, "ts", "", options(locale="fr-FR")).data
    lrelease_and_lconvert(tmp_path, exported)


# --- ResX -----------------------------------------------------------------------------------------


def test_resx_has_the_standard_resheaders_and_space_preserve() -> None:
    text = export_text(rich_catalogue(("fr",)), "resx", locale="fr")
    for name, value in (("resmimetype", "text/microsoft-resx"), ("version", "2.0")):
        assert f'<resheader name="{name}">\n    <value>{value}</value>' in text
    assert "System.Resources.ResXResourceReader" in text and "System.Resources.ResXResourceWriter" in text
    assert '<data name="greeting" xml:space="preserve">\n    <value>[fr] Hello %s</value>\n' in text
    assert "<comment>Shown on the home page</comment>" in text


def test_resx_is_read_by_translate_toolkit() -> None:
    resx = pytest.importorskip("translate.storage.resx")
    data = export_file(rich_catalogue(("fr",)), "resx", "", options(locale="fr")).data
    store = resx.RESXFile.parsestring(data)
    units = {unit.getid(): unit for unit in store.units}
    assert units["quote"].target == '[fr] "salut" \\ \nfin' or units["quote"].source == '[fr] "salut" \\ \nfin'
    assert len(units) == 6  # the plural unit is two entries: files and files-plural (issue #26 item 2)
    assert units["files-plural"].target == "%d other (fr)" or units["files-plural"].source == "%d other (fr)"


def test_resx_skips_non_string_resources() -> None:
    data = b"""<root><data name="icon" type="System.Drawing.Bitmap, System.Drawing" mimetype="application/x-microsoft.net.object.bytearray.base64"><value>AAAA</value></data>
<data name="title" xml:space="preserve"><value>  Title  </value><comment>window</comment></data></root>"""
    read = read_file("resx", "", data, ReadOptions(locale="de"))
    assert [unit.id for unit in read.units] == ["title"]
    assert read.unit("title").translation("de").text == "  Title  "
    assert read.unit("title").notes == "window"


def test_corpus_kdrive_resw() -> None:
    data = corpus_path("resx/desktop-kDrive__fr-FR_Resources.resw").read_bytes()
    read = read_file("resx", "", data, ReadOptions(locale="auto"))
    assert len(read.units) == 520
    assert read.locales == ["fr"]  # Loco's locoLocaleCode metadata
    assert sum(1 for unit in read.units if unit.notes) == 32
    assert read.unit("aboutAppVersionCopyright").translation("fr").text == (
        "Version %@.%@\n© 2019-%@ Infomaniak Network SA -")
    assert read.headers["resmimetype"] == "text/microsoft-resx"
