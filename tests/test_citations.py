"""Docstrings and comments cite what a reader of this repository can open: a docs/ page, a paper,
a pinned upstream file. Never a path outside the repository or a tracker's issue number."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("whileai_core", "server", "recipes", "tests", "scripts", "bench")
# written so that this file does not match itself
OUTSIDE = re.compile(r"shared/(?:reference|seeds)\b|\b[Ii]ssues?\s+#?[0-9]+")


def _sources():
    for folder in FOLDERS:
        yield from sorted((REPO / folder).rglob("*.py"))
    yield REPO / "check.py"
    # the prose a reader opens first: the README, the docs, the skills, the recipes' READMEs
    yield from (REPO / name for name in ("README.md", "CONTRIBUTING.md"))
    for folder in ("docs", "skills", "recipes", "examples"):
        yield from sorted((REPO / folder).rglob("*.md"))


def test_no_citation_a_reader_cannot_follow():
    found = []
    for path in _sources():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO).as_posix()}:{n}: {line.strip()[:100]}")
    assert not found, ("cites a path outside the repository or an issue number (cite a docs/ page, "
                       "a paper or a pinned upstream file instead, or state the fact):\n"
                       + "\n".join(found))


def test_the_pattern_catches_what_it_is_for():
    # the examples are built from parts so that the first test does not flag this file
    assert OUTSIDE.search("see shared/" + "reference/stats.md sec. 5")
    assert OUTSIDE.search("(iss" + "ue 12: NaN)") and OUTSIDE.search("Iss" + "ue 11's checker")
    assert not OUTSIDE.search("docs/statistics-study.md, Sources")
    assert not OUTSIDE.search("an issue with 12 tasks")
