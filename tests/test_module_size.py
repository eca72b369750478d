"""Files stay small enough to read in one sitting: a module over ~400 lines states at its top why
it is one module (the word "Why" in its docstring), or is split by concept."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400
# being split or edited on other branches right now (stats, judge, traces; the writer); remove a name when its split lands
PENDING = {"whileai_core/stats.py", "whileai_core/judge.py", "whileai_core/traces.py",
           "whileai_core/prime_rl/writer.py"}


def _modules():
    for folder in ("whileai_core", "server", "recipes", "scripts"):
        yield from sorted((ROOT / folder).rglob("*.py"))
    yield ROOT / "check.py"


def test_long_modules_say_why():
    long_without_reason = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LIMIT or rel in PENDING:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why" not in doc:
            long_without_reason.append(f"{rel} ({text.count(chr(10))} lines)")
    assert not long_without_reason, (
        f"over {LIMIT} lines with no reason at the top: {long_without_reason}. Fix: split it by "
        "concept, or say why it is one module in its docstring ('Why one module: ...')")
