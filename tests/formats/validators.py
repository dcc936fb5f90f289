"""Independent readers of exported files: Ruby's Psych, PHP itself, Java's Properties/ResourceBundle, ICU4C.

Each returns what the other implementation read, so tests compare it with what we meant to write.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import IN_CI, require_tool

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
