"""Independent readers and validators of exported files: gettext, xmllint, aapt, Qt's lrelease/lconvert, ICU's
genrb, Ruby's Psych, PHP itself, Java's Properties/ResourceBundle, ICU4C.

Readers return what the other implementation read, so tests compare it with what we meant to write; validators
fail the test when the tool refuses the file. `EXPORT_VALIDATORS` names the one for each exported format.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.support import IN_CI, require_tool, schema_path

from .samples import run_tool


def _run_json(*command: str | Path) -> Any:
    """Run a validator printing JSON; fail with its stderr when it refuses the file."""
    result = run_tool(*command)
    assert result.returncode == 0, f"{command[0]} refused the file:\n{result.stderr}{result.stdout}"
    return json.loads(result.stdout)


def psych_load(path: Path) -> Any:
    """The document as Ruby's Psych reads it (`YAML.load_file`, safe by default in Psych 4)."""
    ruby = require_tool("ruby")
    return _run_json(ruby, "-ryaml", "-rjson", "-e", "puts JSON.generate(YAML.load_file(ARGV[0]))", path)


def php_lint(path: Path) -> None:
    """`php -l` accepts the file."""
    php = require_tool("php")
    result = run_tool(php, "-l", path)
    assert result.returncode == 0, result.stdout + result.stderr + path.read_text(encoding="utf-8")


def php_eval(path: Path, script: str) -> Any:
    """Run a PHP snippet with `$file` set to the path and return the JSON it echoes."""
    php = require_tool("php")
    code = f"$file = $argv[1]; {script}"
    return _run_json(php, "-r", code, path)


def php_include(path: Path) -> Any:
    """What `include` of a `return [...]` file returns."""
    return php_eval(path, "echo json_encode(include $file, JSON_FORCE_OBJECT);")


def php_codeigniter(path: Path) -> Any:
    """The `$lang` array a CodeIgniter language file fills."""
    return php_eval(path, "define('BASEPATH', '.'); $lang = []; include $file; echo json_encode($lang, JSON_FORCE_OBJECT);")


def php_constants(path: Path) -> Any:
    """The user constants a `define()` file declares."""
    return php_eval(path, "include $file; echo json_encode(get_defined_constants(true)['user'] ?? [], JSON_FORCE_OBJECT);")


def php_parse_ini(path: Path, raw: bool) -> Any:
    """parse_ini_string with sections, in the raw or the normal scanner mode."""
    mode = "INI_SCANNER_RAW" if raw else "INI_SCANNER_NORMAL"
    return php_eval(
        path,
        f"$r = parse_ini_string(file_get_contents($file), true, {mode});"
        "if ($r === false) { fwrite(STDERR, 'parse_ini_string failed'); exit(1); }"
        "echo json_encode($r, JSON_FORCE_OBJECT);",
    )


_JAVA_CHECKER = r"""
import java.io.*;
import java.text.MessageFormat;
import java.util.*;

/** Prints, as JSON, what Properties.load and PropertyResourceBundle read from a file (args[0]);
 *  keys named after it are also formatted with MessageFormat (arguments "A", "B", "C"). */
public class PropertiesCheck {
    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static String object(Map<String, String> map) {
        StringJoiner joiner = new StringJoiner(",", "{", "}");
        for (Map.Entry<String, String> entry : new TreeMap<>(map).entrySet())
            joiner.add(quote(entry.getKey()) + ":" + quote(entry.getValue()));
        return joiner.toString();
    }

    public static void main(String[] args) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = new FileInputStream(args[0])) { properties.load(in); }
        Map<String, String> loaded = new HashMap<>();
        for (String name : properties.stringPropertyNames()) loaded.put(name, properties.getProperty(name));
        PropertyResourceBundle bundle;
        try (InputStream in = new FileInputStream(args[0])) { bundle = new PropertyResourceBundle(in); }
        Map<String, String> bundled = new HashMap<>();
        for (String name : bundle.keySet()) bundled.put(name, bundle.getString(name));
        Map<String, String> formatted = new HashMap<>();
        for (int i = 1; i < args.length; i++)
            formatted.put(args[i], MessageFormat.format(bundle.getString(args[i]), "A", "B", "C"));
        System.out.println("{\"properties\":" + object(loaded) + ",\"bundle\":" + object(bundled)
            + ",\"formatted\":" + object(formatted) + "}");
    }
}
"""


def java_checker(directory: Path) -> Path:
    """Compile the checker into a directory (once per session) and return that class path."""
    javac = require_tool("javac")
    if not (directory / "PropertiesCheck.class").exists():
        source = directory / "PropertiesCheck.java"
        source.write_text(_JAVA_CHECKER, encoding="utf-8")
        result = run_tool(javac, "-d", directory, source)
        assert result.returncode == 0, result.stderr
    return directory


def java_read_properties(classes: Path, path: Path, *format_keys: str) -> dict[str, dict[str, str]]:
    """{"properties": ..., "bundle": ..., "formatted": ...} as Java reads the file."""
    java = require_tool("java")
    return _run_json(java, "-cp", classes, "PropertiesCheck", path, *format_keys)


# ICU4C's MessageFormat through PyICU (Debian python3-icu, for the system python3, not this venv's).
SYSTEM_PYTHON = "/usr/bin/python3"
_ICU_FORMAT = r"""
import icu, json, sys
results = []
for pattern, arguments in json.load(sys.stdin):
    try:
        message = icu.MessageFormat(pattern, icu.Locale("en"))
        names = list(arguments)
        results.append([True, message.format(names, [icu.Formattable(arguments[name]) for name in names])])
    except icu.ICUError as error:
        results.append([False, str(error)])
print(json.dumps(results))
"""


def icu_format_all(patterns: list[tuple[str, dict[str, str | int]]]) -> list[tuple[bool, str]]:
    """For each (pattern, arguments): (True, the text ICU4C's MessageFormat makes) or (False, ICU's error)."""
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import icu"], capture_output=True) \
        if Path(SYSTEM_PYTHON).exists() else None
    if probe is None or probe.returncode != 0:
        if IN_CI:
            pytest.fail("python3-icu is not installed (make test installs it)")
        pytest.skip("python3-icu not installed")
    result = subprocess.run([SYSTEM_PYTHON, "-c", _ICU_FORMAT], input=json.dumps(patterns),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [(ok, text) for ok, text in json.loads(result.stdout)]


def icu_format(pattern: str, arguments: dict[str, str | int] | None = None) -> str:
    """The text ICU4C makes of one pattern; fails the test when ICU refuses the pattern."""
    ((ok, text),) = icu_format_all([(pattern, arguments or {})])
    assert ok, f"ICU refused {pattern!r}: {text}"
    return text


# --- validators: the tool refuses the file, the test fails ------------------------------------------

MANIFEST = ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.stub"/>\n')


def msgfmt_check(path: Path) -> None:
    """Assert that `msgfmt -c --check-format` accepts the file."""
    msgfmt = require_tool("msgfmt")
    result = run_tool(msgfmt, "-c", "--check-format", "-o", "/dev/null", path)
    assert result.returncode == 0, result.stderr + "\n" + path.read_text(encoding="utf-8", errors="replace")


def aapt_package(tmp_path: Path, files: dict[str, bytes]) -> None:
    """Assert that `aapt package` accepts the resource files in a stub project (no android.jar needed)."""
    aapt = require_tool("aapt")
    (tmp_path / "AndroidManifest.xml").write_text(MANIFEST)
    for relative, data in files.items():
        path = tmp_path / "res" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    result = run_tool(aapt, "package", "-f", "-M", tmp_path / "AndroidManifest.xml", "-S", tmp_path / "res",
                      "-F", tmp_path / "out.apk")
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert result.returncode == 0 and not errors, result.stderr[-3000:]


def lrelease_and_lconvert(tmp_path: Path, data: bytes, *extra: str) -> str:
    """Assert lrelease compiles the TS file and lconvert converts it to PO; the PO text."""
    lrelease, lconvert = require_tool("lrelease"), require_tool("lconvert")
    source = tmp_path / "export.ts"
    source.write_bytes(data)
    compiled = run_tool(lrelease, *extra, source, "-qm", tmp_path / "export.qm")
    assert compiled.returncode == 0 and (tmp_path / "export.qm").stat().st_size > 0, compiled.stderr
    assert "error" not in compiled.stderr.lower(), compiled.stderr
    converted = run_tool(lconvert, "-i", source, "-o", tmp_path / "export.po")
    assert converted.returncode == 0, converted.stderr
    return (tmp_path / "export.po").read_text(encoding="utf-8")


def genrb(tmp_path: Path, data: bytes) -> bytes:
    """Compile a .txt with ICU's genrb, failing the test when genrb refuses it; returns the .res."""
    tool = require_tool("genrb")
    source = tmp_path / "bundle.txt"
    source.write_bytes(data)
    out = tmp_path / "genrb-out"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.res"):
        old.unlink()
    result = run_tool(tool, "-k", "-d", out, source)
    assert result.returncode == 0, result.stderr + "\n" + data.decode("utf-8", "replace")
    produced = list(out.glob("*.res"))
    assert len(produced) == 1
    return produced[0].read_bytes()


def xmllint_schema(tmp_path: Path, data: bytes, schema: str) -> None:
    """Assert that xmllint validates the document against a schema of ../shared/schemas."""
    xmllint = require_tool("xmllint")
    path = tmp_path / "export.xlf"
    path.write_bytes(data)
    result = run_tool(xmllint, "--noout", "--nonet", "--schema", schema_path(schema), path)
    assert result.returncode == 0, result.stderr + "\n" + data.decode("utf-8", "replace")[:3000]


def dtd_check(tmp_path: Path, data: bytes) -> None:
    """Assert that xmllint validates the document against tmx14.dtd."""
    xmllint = require_tool("xmllint")
    path = tmp_path / "export.tmx"
    path.write_bytes(data)
    result = run_tool(xmllint, "--noout", "--nonet", "--dtdvalid", schema_path("tmx14.dtd"), path)
    assert result.returncode == 0, result.stderr + "\n" + data.decode("utf-8", "replace")[:3000]


# --- one validator per exported format ------------------------------------------------------------------

def _saved(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _accepted(*command: str | Path) -> None:
    result = run_tool(*command)
    assert result.returncode == 0, f"{command[0]} refused the file:\n{result.stderr[-3000:]}{result.stdout[-1000:]}"


def _plist(tmp_path: Path, data: bytes) -> None:
    _accepted(require_tool("plistutil"), "-i", _saved(tmp_path, "in.plist", data), "-o", tmp_path / "out.plist",
              "-f", "xml")


def _strict_json(tmp_path: Path, data: bytes) -> None:
    def no_constants(name: str) -> None:
        raise AssertionError(f"JSON constant {name} is not JSON")

    try:
        json.loads(data.decode("utf-8-sig"), parse_constant=no_constants)
    except ValueError as error:
        raise AssertionError(f"not strict JSON: {error}") from None


def _properties(tmp_path: Path, data: bytes) -> None:
    java_read_properties(java_checker(tmp_path), _saved(tmp_path, "Messages.properties", data))


def _yaml(tmp_path: Path, data: bytes) -> None:
    psych_load(_saved(tmp_path, "export.yml", data))


def _html(tmp_path: Path, data: bytes) -> None:
    from html.parser import HTMLParser

    HTMLParser().feed(data.decode("utf-8"))
    assert data.startswith(b"<!DOCTYPE html>")


def _sql(tmp_path: Path, data: bytes) -> None:
    import sqlglot

    assert any(isinstance(statement, sqlglot.exp.Insert)
               for statement in sqlglot.parse(data.decode("utf-8"), read="mysql")) or b"INSERT" not in data


def _csv(tmp_path: Path, data: bytes) -> None:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows and all(len(row) == len(rows[0]) for row in rows)


# (ext, variant) -> validator(tmp_path, data): the tool each format's consumers use refuses a bad file.
EXPORT_VALIDATORS: dict[tuple[str, str], Callable[[Path, bytes], object]] = {
    ("po", ""): lambda tmp, data: msgfmt_check(_saved(tmp, "export.po", data)),
    ("pot", ""): lambda tmp, data: msgfmt_check(_saved(tmp, "export.pot", data)),
    ("mo", ""): lambda tmp, data: _accepted(require_tool("msgunfmt"), _saved(tmp, "export.mo", data)),
    ("xlf", ""): lambda tmp, data: xmllint_schema(tmp, data, "xliff-core-1.2-transitional.xsd"),
    ("xlf", "xcode"): lambda tmp, data: xmllint_schema(tmp, data, "xliff-core-1.2-transitional.xsd"),
    ("tmx", ""): dtd_check,
    ("ts", ""): lrelease_and_lconvert,
    ("xml", ""): lambda tmp, data: aapt_package(tmp, {"values/strings.xml": data}),
    ("xml", "java"): lambda tmp, data: _accepted(require_tool("xmllint"), "--noout", "--nonet",
                                                 _saved(tmp, "export.xml", data)),
    ("xml", "tizen"): lambda tmp, data: _accepted(require_tool("xmllint"), "--noout", "--nonet",
                                                  _saved(tmp, "export.xml", data)),
    ("resx", ""): lambda tmp, data: _accepted(require_tool("xmllint"), "--noout", "--nonet",
                                              _saved(tmp, "export.resx", data)),
    ("yml", ""): _yaml, ("yml", "nested"): _yaml, ("yml", "rails"): _yaml, ("yml", "symfony"): _yaml,
    **{("php", variant): lambda tmp, data: php_lint(_saved(tmp, "export.php", data))
       for variant in ("", "symfony", "codeigniter", "constants")},
    ("properties", ""): _properties,
    ("ini", ""): lambda tmp, data: (php_parse_ini(_saved(tmp, "export.ini", data), raw=False),
                                    php_parse_ini(tmp / "export.ini", raw=True)),
    ("strings", ""): lambda tmp, data: _accepted(require_tool("sfparse"), _saved(tmp, "Localizable.strings", data)),
    ("stringsdict", ""): _plist, ("plist", ""): _plist, ("bplist", ""): _plist,
    ("txt", ""): genrb,
    ("res", ""): lambda tmp, data: _accepted(require_tool("derb"), _saved(tmp, "export.res", data)),
    ("csv", ""): _csv, ("html", ""): _html, ("sql", ""): _sql,
    ("js", ""): lambda tmp, data: _accepted(require_tool("node"), "--check", _saved(tmp, "export.js", data)),
}


def validate_export(ext: str, variant: str, tmp_path: Path, data: bytes) -> None:
    """Fail the test when the format's independent tool refuses an exported file; JSON formats are parsed
    strictly (no NaN or comments)."""
    from formats.registry import lookup

    spec = lookup(ext, variant, writing=True)
    validator = EXPORT_VALIDATORS.get((spec.ext, spec.variant))
    if validator is None and spec.content_type.startswith("application/json"):
        validator = _strict_json
    if validator is None and spec.ext == "js":
        validator = EXPORT_VALIDATORS[("js", "")]
    assert validator is not None, f"no independent validator for {spec.name}"
    validator(tmp_path, data)
