"""Quality of translations: the checks (`checks.checks_for`) and the glossary they read (`glossary.Glossary`).

Pure: knows texts, placeholder styles and plural rules (formats/), nothing of Flask, Git or files.
"""
from .checks import CHECK_NAMES, CheckResult, checks_for
from .glossary import EMPTY_GLOSSARY, Found, Glossary, Term

__all__ = ["CHECK_NAMES", "CheckResult", "checks_for", "EMPTY_GLOSSARY", "Found", "Glossary", "Term"]
