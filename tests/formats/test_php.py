"""PHP (array, symfony, codeigniter, constants): round trips, php -l and include, corpus, code refused."""
from __future__ import annotations

from pathlib import Path

import pytest

from formats import Catalogue, ParseError, ReadOptions, Translation, Unit, export_file, read_file, restore_keys
from tests.support import corpus_path

from .samples import PLURAL_LOCALES, options, plural_texts, rich_catalogue
from .validators import php_codeigniter, php_constants, php_include, php_lint


TEXTS = {
    "plain": "Bonjour",
    "quotes": "l'été \"chaud\"",
    "backslashes": "C:\\dir\\new\\",
    "dollar": "$price {$x} ${y} \\$z",
    "breaks": "Line one\nLine two\r\n\ttabbed\x0b\x1b\x00",
    "unicode": "Fête 🎉 日本語",
    "empty": "",
    "close_tag": "?> <?php echo 1; ?>",
    "comment": "/* not */ // a comment",
}


def texts_catalogue() -> Catalogue:
    units = [Unit(id=key, translations={"en": Translation("x"), "fr": Translation(text)}) for key, text in TEXTS.items()]
    units.append(Unit(id="menu.file.open", translations={"fr": Translation("Ouvrir")}))
    units.append(Unit(id="menu.edit", translations={"fr": Translation("Édition")}))
    units.append(Unit(id="files", plural=True, translations={"fr": Translation("x", plural_texts("fr"))}))
    units.append(Unit(id="missing", translations={"en": Translation("x")}))
    return Catalogue(source_locale="en", locales=["en", "fr"], units=units)


def save(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "lang.php"
    path.write_bytes(data)
    php_lint(path)
    return path


def indexed(forms: dict[str, str]) -> dict[str, str]:
    """Plural forms as Loco's PHP array writes them ([obs LEG-conv] `1 => 'exemples'`), as json_encode shows them."""
    return {str(index): text for index, text in enumerate(forms.values())}


def prefixed(tree: dict, prefix: str) -> dict:
    return {prefix + key: value for key, value in tree.items()}


def test_array_export_is_included_by_php_as_the_expected_array(tmp_path: Path) -> None:
    path = save(tmp_path, export_file(texts_catalogue(), "php", "", options(locale="fr")).data)
    assert php_include(path) == {
        **TEXTS, "menu": {"file": {"open": "Ouvrir"}, "edit": "Édition"}, "files": indexed(plural_texts("fr")),
    }  # the untranslated unit is left out: PHP apps fall back for a missing key, never print a null


def test_symfony_export_has_pipe_plurals(tmp_path: Path) -> None:
    path = save(tmp_path, export_file(texts_catalogue(), "php", "symfony", options(locale="fr")).data)
    included = php_include(path)
    assert included["files"] == "|".join(plural_texts("fr").values())
    assert included["menu"]["file"]["open"] == "Ouvrir"


def test_codeigniter_export_fills_lang(tmp_path: Path) -> None:
    path = save(tmp_path, export_file(texts_catalogue(), "php", "codeigniter", options(locale="fr")).data)
    assert php_codeigniter(path) == prefixed({  # the project name prefixes keys ([obs LEG-conv] `test_sample`)
        **TEXTS, "menu": {"file": {"open": "Ouvrir"}, "edit": "Édition"}, "files": indexed(plural_texts("fr")),
    }, "Sample_")  # the untranslated unit is left out: PHP apps fall back for a missing key, never print a null


def test_codeigniter_and_constants_take_an_explicit_namespace_prefix(tmp_path: Path) -> None:
    data = export_file(texts_catalogue(), "php", "codeigniter", options(locale="fr", namespace="app")).data
    assert php_codeigniter(save(tmp_path, data))["app_plain"] == "Bonjour"
    data = export_file(texts_catalogue(), "php", "constants", options(locale="fr", namespace="app")).data
    assert php_constants(save(tmp_path, data))["APP_PLAIN"] == "Bonjour"


def test_constants_export_defines_every_key(tmp_path: Path) -> None:
    path = save(tmp_path, export_file(texts_catalogue(), "php", "constants", options(locale="fr")).data)
    forms = list(plural_texts("fr").values())
    assert php_constants(path) == prefixed({  # upper-case identifiers, prefix included ([obs] `TEST_EXAMPLES`)
        **{key.upper(): text for key, text in TEXTS.items()}, "MENU_FILE_OPEN": "Ouvrir", "MENU_EDIT": "Édition",
        "FILES": forms[0], "FILES_PLURAL": forms[1],  # a constant per plural form: no plural syntax
    }, "SAMPLE_")  # the untranslated unit is left out: PHP apps fall back for a missing key, never print a null


@pytest.mark.parametrize("variant", ["", "symfony", "codeigniter", "constants"])
@pytest.mark.parametrize("locale", PLURAL_LOCALES)
def test_rich_exports_pass_php_lint_and_read_back(tmp_path: Path, variant: str, locale: str) -> None:
    data = export_file(rich_catalogue(), "php", variant, options(locale=locale, breaks="DOS")).data
    save(tmp_path, data)
    read = read_file("php", variant, data, ReadOptions(locale=locale, namespace="Sample"))
    restore_keys(read, "php", variant, ["quote"])
    assert read.unit("quote").translation(locale).text == rich_catalogue().unit("quote").translation(locale).text


def test_every_variant_round_trips_texts_through_our_reader() -> None:
    for variant in ("", "symfony", "codeigniter", "constants"):
        data = export_file(texts_catalogue(), "php", variant, options(locale="fr")).data
        read = read_file("php", variant, data, ReadOptions(locale="fr", namespace="Sample"))
        restore_keys(read, "php", variant, TEXTS)
        assert {key: read.unit(key).translation("fr").text for key in TEXTS} == TEXTS


# --- reading ---------------------------------------------------------------------------------------


def read_php(source: str, variant: str = "") -> dict[str, str | None]:
    read = read_file("php", variant, source.encode(), ReadOptions(locale="fr"))
    return {unit.id: unit.translation("fr").text for unit in read.units}


def test_reading_strings_heredoc_nowdoc_concatenation_and_long_arrays() -> None:
    source = """<?php
declare(strict_types=1);
// a comment
# another
/* block */
return array(
    'single' => 'it\\'s \\\\ \\n raw',
    "double" => "tab\\there \\x41\\101\\u{1F389} \\$x \\"q\\"",
    'heredoc' => <<<EOT
        Line "one"
          Line \\t two
        EOT,
    'nowdoc' => <<<'EOT'
    raw \\t $x
    EOT,
    'joined' => 'a' . "b" . 'c',
    'number' => 42,
    'negative' => -1.5,
    'flag' => true,
    'nothing' => null,
    'list' => ['zero', 'one', 5 => 'five', 'six'],
    'nested' => ['deeper' => ['key' => 'value']],
);
"""
    assert read_php(source) == {
        "single": "it's \\ \\n raw", "double": 'tab\there AA🎉 $x "q"', "heredoc": 'Line "one"\n  Line \t two',
        "nowdoc": "raw \\t $x", "joined": "abc", "number": "42", "negative": "-1.5", "flag": "true",
        "nothing": None, "list.0": "zero", "list.1": "one", "list.5": "five", "list.6": "six",
        "nested.deeper.key": "value",
    }


def test_reading_variables_returned_and_defines() -> None:
    assert read_php("<?php\n$messages = ['a' => 'A'];\n$messages['b'] = 'B';\nreturn $messages;\n") == {"a": "A", "b": "B"}
    assert read_php("<?php\ndefine('GREETING', 'Salut');\ndefine(\"BYE\", 'Ciao');\n") == {"GREETING": "Salut",
                                                                                          "BYE": "Ciao"}
    assert read_php("<?php\nif ( ! defined('BASEPATH')) exit('No direct script access allowed');\n"
                    "$lang['x']['y'] = 'z';\n?>\n") == {"x.y": "z"}


@pytest.mark.parametrize("source, message", [
    ("<?php\nsystem('rm -rf /');\n", r"line 2: unexpected 'system'"),
    ("<?php\nreturn ['a' => system('id')];\n", r"line 2: unexpected 'system'"),
    ("<?php\nreturn ['a' => strtoupper('x')];\n", r"line 2: unexpected 'strtoupper'"),
    ("<?php\n\nreturn ['a' => \"hi $name\"];\n", r"line 3: string interpolation \(\$n\.\.\.\) is code"),
    ("<?php\nreturn ['a' => \"{$obj->x}\"];\n", r"line 2: string interpolation"),
    ("<?php\nreturn ['a' => `ls`];\n", r"line 2: unexpected character '`'"),
    ("<?php\nreturn ['a' => $x];\n", r"line 2: unexpected '\$x'"),
    ("<?php\neval('return 1;');\n", r"line 2: unexpected 'eval'"),
    ("<?php\ninclude 'other.php';\n", r"line 2: unexpected 'include'"),
    ("<?php\nreturn ['a' => 'x', 'a' => 'y'];\n", r"line 2: duplicate key 'a'"),
    ("<?php\nreturn ['a' => 'unterminated];\n", r"line 2: unterminated string"),
    ("<?php\nreturn ['a' => <<<EOT\nnever closed\n", r"line 2: heredoc EOT is never closed"),
    ("<?php\nreturn 'not an array';\n", r"must return an array"),
    ("hello <?php return [];", r"must start with <\?php"),
    ("<?php\nreturn [];\n?>\n<b>html</b>", r"content after \?> is not PHP data"),
    ("<?php\nreturn " + "[" * 100 + "]" * 100 + ";", r"nested deeper than 64"),
])
def test_code_and_broken_php_are_format_errors(source: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_php(source)


def test_a_ten_megabyte_line_is_refused() -> None:
    with pytest.raises(ParseError, match="line 2: line is"):
        read_file("php", "", b"<?php\nreturn ['a' => '" + b"x" * (10 << 20) + b"'];", ReadOptions(locale="fr"))


def test_corpus_codeigniter_file_with_its_guard() -> None:
    data = corpus_path("php/codeigniter3-translations__french_form_validation_lang.php").read_bytes()
    read = read_file("php", "codeigniter", data, ReadOptions(locale="fr"))
    assert len(read.units) == 29  # one per $lang[...] line; the defined() OR exit() guard is recognised, not run
    assert read.unit("form_validation_required").translation("fr").text == "Le champ {field} est requis."
    assert read_file("php", "", data, ReadOptions(locale="fr")).units == read.units
