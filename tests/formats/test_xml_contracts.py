"""Round-trip contract of every XML-family format (superseded by the generated contract once merged)."""
from __future__ import annotations

from .contract import FormatContract


class TestXliffContract(FormatContract):
    ext = "xlf"
    supports_comments = True
    supports_references = True


class TestXliffMultiContract(FormatContract):
    ext = "xlf"
    multi_locale = True


class TestXcodeContract(FormatContract):
    ext = "xlf"
    variant = "xcode"
    supports_context = False


class TestTmxContract(FormatContract):
    ext = "tmx"
    multi_locale = True
    supports_comments = True


class TestAndroidContract(FormatContract):
    ext = "xml"
    supports_context = False
    supports_flags = False
    supports_untranslated = False


class TestJavaXmlContract(FormatContract):
    ext = "xml"
    variant = "java"
    supports_context = False
    supports_notes = False
    supports_flags = False
    supports_plurals = False
    supports_untranslated = False


class TestTizenContract(TestJavaXmlContract):
    variant = "tizen"


class TestTsContract(FormatContract):
    ext = "ts"
    supports_comments = True
    supports_references = True


class TestResxContract(FormatContract):
    ext = "resx"
    supports_context = False
    supports_flags = False
    supports_plurals = False
    supports_untranslated = False
