"""Every default lives once, with its source, and something reads it.

The core's defaults are in ``whileai_core.defaults``; those only the MCP server reads are in
``server.limits``, those only the recipes read in ``recipes.defaults``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import recipes.defaults
import server.limits
from whileai_core import defaults

MODULES = {"whileai_core.defaults": defaults, "server.limits": server.limits,
           "recipes.defaults": recipes.defaults}

REPO = Path(__file__).resolve().parent.parent
# where a default can be read or stated: the code, its tests, the skills, the docs
READERS = ("whileai_core", "server", "recipes", "skills", "tests", "scripts", "bench", "docs")
READER_FILES = ("check.py", "README.md")
SUFFIXES = {".py", ".md", ".toml", ".json"}


def _names(module) -> list[str]:
    return [n for n in vars(module) if n.isupper() and not n.startswith("_") and n != "SOURCES"]


def _words_outside(skip: Path) -> set[str]:
    files = [REPO / f for f in READER_FILES]
    for top in READERS:
        files += [p for p in (REPO / top).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    words: set[str] = set()
    for path in files:
        if path.resolve() != skip.resolve() and path.is_file():
            words |= set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", path.read_text(encoding="utf-8",
                                                                         errors="replace")))
    return words


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_default_names_its_source(name):
    module = MODULES[name]
    names = _names(module)
    missing = [n for n in names if not module.SOURCES.get(n, "").strip()]
    assert not missing, f"{name}: defaults without a _source(...) line: {missing}"
    stray = sorted(set(module.SOURCES) - set(names))
    assert not stray, f"{name}: _source(...) for names that are not defaults: {stray}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_default_is_read_or_stated_somewhere_else(name):
    # a default nothing names outside its own module is a stale rule: delete it with its source
    module = MODULES[name]
    words = _words_outside(Path(module.__file__))
    unread = sorted(n for n in _names(module) if n not in words)
    assert not unread, f"{name}: defaults nothing reads (delete them and their sources): {unread}"


def test_each_default_lives_in_one_place():
    seen: dict[str, list[str]] = {}
    for name, module in MODULES.items():
        for n in _names(module):
            seen.setdefault(n, []).append(name)
    twice = {n: where for n, where in seen.items() if len(where) > 1}
    assert not twice, f"defaults defined in more than one module: {twice}"


def test_the_documented_core_defaults():
    # values the README and the issue state; the sources cite where each comes from
    assert defaults.PROVE_EFFECT == 0.05 and defaults.PASS_THRESHOLD == 1.0
    assert defaults.CONFIDENCE_LEVEL == 0.95 and defaults.MIN_TASKS_FOR_INTERVAL == 3
    assert "Miller" in defaults.SOURCES["HOLDOUT_POWER"]
