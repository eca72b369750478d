"""Every default lives once in whileai_core.defaults, with its source, and something reads it."""

from __future__ import annotations

import re
from pathlib import Path

from whileai_core import defaults

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


def test_every_default_names_its_source():
    names = _names(defaults)
    missing = [n for n in names if not defaults.SOURCES.get(n, "").strip()]
    assert not missing, f"defaults without a _source(...) line: {missing}"
    stray = sorted(set(defaults.SOURCES) - set(names))
    assert not stray, f"_source(...) for names that are not defaults: {stray}"


def test_every_default_is_read_or_stated_somewhere_else():
    # a default nothing names outside its own module is a stale rule: delete it with its source
    words = _words_outside(Path(defaults.__file__))
    unread = sorted(n for n in _names(defaults) if n not in words)
    assert not unread, f"defaults nothing reads (delete them and their _source lines): {unread}"


def test_the_documented_core_defaults():
    # values the README and the issue state; the sources cite where each comes from
    assert defaults.PROVE_EFFECT == 0.05 and defaults.PASS_THRESHOLD == 1.0
    assert defaults.CONFIDENCE_LEVEL == 0.95 and defaults.MIN_TASKS_FOR_INTERVAL == 3
    assert "Miller" in defaults.SOURCES["HOLDOUT_POWER"]
