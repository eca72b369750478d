"""Every default lives once, with its source, and something reads it.

The core's defaults are in ``whileai_core.defaults``, one line each (``NAME = value  # source``),
with the full reasoning for each in docs/defaults.md; those only the MCP server reads are in
``server.limits``, those only the recipes read in ``recipes.defaults`` (each followed by
``_source(NAME, text)``).
"""

from __future__ import annotations

import ast
import re
import tokenize
from pathlib import Path

import pytest

import recipes.defaults
import server.limits
from whileai_core import defaults

MODULES = {"whileai_core.defaults": defaults, "server.limits": server.limits,
           "recipes.defaults": recipes.defaults}
SOURCED = ("server.limits", "recipes.defaults")   # the modules that keep a SOURCES table

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "whileai_core" / "defaults.py"
PAGE = REPO / "docs" / "defaults.md"
# where a default can be read or stated: the code, its tests, the skills, the docs
READERS = ("whileai_core", "server", "recipes", "skills", "tests", "scripts", "bench", "docs")
READER_FILES = ("check.py", "README.md")
SUFFIXES = {".py", ".md", ".toml", ".json"}
LINE_MAX = 100


def _names(module) -> list[str]:
    return [n for n in vars(module) if n.isupper() and not n.startswith("_") and n != "SOURCES"]


def _words_outside(*skip: Path) -> set[str]:
    # docs/defaults.md states every core default, so it is never counted as reading one
    skipped = {p.resolve() for p in (*skip, PAGE)}
    files = [REPO / f for f in READER_FILES]
    for top in READERS:
        files += [p for p in (REPO / top).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    words: set[str] = set()
    for path in files:
        if path.resolve() not in skipped and path.is_file():
            words |= set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", path.read_text(encoding="utf-8",
                                                                         errors="replace")))
    return words


def _assignments(path: Path) -> list[tuple[str, ast.stmt]]:
    """Every module-level UPPER_CASE assignment of ``path``, in the file's order."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(t.id, node) for t in targets if isinstance(t, ast.Name)
                      and t.id.isupper() and not t.id.startswith("_")]
    return found


def _comments(path: Path) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    with tokenize.open(path) as f:
        return {tok.start[0]: tok.string.lstrip("#").strip()
                for tok in tokenize.generate_tokens(f.readline) if tok.type == tokenize.COMMENT}


def _page_entries() -> dict[str, str]:
    parts = re.split(r"^### ([A-Z][A-Z0-9_]*)\n", PAGE.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_core_default_is_one_line_with_its_source():
    assigned = _assignments(CORE)
    names = [n for n, _ in assigned]
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"defaults assigned twice in whileai_core/defaults.py: {twice}"
    assert sorted(names) == sorted(_names(defaults))
    comments = _comments(CORE)
    lines = CORE.read_text(encoding="utf-8").splitlines()
    bare = [n for n, node in assigned if not comments.get(node.lineno)]
    assert not bare, f"defaults without a '# source' comment on their line: {bare}"
    long = [n for n, node in assigned if len(lines[node.lineno - 1]) > LINE_MAX]
    assert not long, f"defaults whose line is longer than {LINE_MAX} characters: {long}"
    # the doctor quotes a threshold's source through defaults.source: the same comment
    assert {n: defaults.source(n) for n in names} == {n: comments[node.lineno]
                                                      for n, node in assigned}
    assert not hasattr(defaults, "SOURCES")


def test_every_core_default_has_its_entry_in_the_defaults_page_with_its_value():
    # docs/defaults.md: one ``### NAME`` per default, in the file's order, the value as the file
    # writes it (compared as parsed Python) and the paragraph saying where it comes from
    assigned = _assignments(CORE)
    entries = _page_entries()
    assert list(entries) == [n for n, _ in assigned], "docs/defaults.md: not the file's defaults"
    wrong, unexplained = [], []
    for name, node in assigned:
        match = re.search(r"```python\n(.*?)```|`([^`\n]+)`", entries[name], re.S)
        code = match and (match.group(1) or match.group(2))
        if not code or ast.dump(ast.parse(code).body[0]) != ast.dump(node):
            wrong.append(name)
        elif not entries[name][match.end():].strip():
            unexplained.append(name)
    assert not wrong, f"docs/defaults.md: value differs from whileai_core/defaults.py: {wrong}"
    assert not unexplained, f"docs/defaults.md: an entry without its reasoning: {unexplained}"


@pytest.mark.parametrize("name", SOURCED)
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
    assert "Miller" in defaults.source("HOLDOUT_POWER")
