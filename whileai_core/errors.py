"""The error types of whileai_core.

Every expected bad input raises a subclass of :class:`WhileaiError` whose message says what is
wrong, where (file, line, field or knob), the bad value, and the fix. Callers (the CLI, the MCP
server) show ``str(err)`` as it is; nobody needs a traceback to act on one of these.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable


_MISSING = re.compile(r"(`[^`]+`) is None\b")


class WhileaiError(ValueError):
    """Base class: an input the library refuses, with a message that names the fix."""


class RowsError(WhileaiError):
    """Graded rows that cannot be read: missing file, bad JSON, a bad or missing field."""

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None, fix: str | None = None) -> None:
        self.source, self.line, self.field, self.fix = source, line, field, fix
        problem = _MISSING.sub(r"\1 is missing", problem)  # never Python's None to a reader
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        prefix = ":".join(where[:1]) + (f", {where[1]}" if len(where) > 1 else "")
        text = f"{prefix}: {problem}" if prefix else problem
        if field is not None and f"`{field}`" not in problem:
            text += f" (field `{field}`)"
        if fix:
            text += f". Fix: {fix}"
        super().__init__(text)


class SpecError(WhileaiError):
    """A method spec or knob outside its allowed range; the message names knob, range, default."""


class ConfigError(WhileaiError):
    """A config that prime-rl (or our recipes) would refuse, or a file we will not overwrite."""


class ArgumentError(WhileaiError):
    """A function argument outside its allowed range (level, k, effect, power...)."""


def close_to(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The choices that look like ``word`` (what a typo most likely meant), closest first:
    difflib's similarity ratio at its default cutoff, 0.6."""
    return difflib.get_close_matches(word, list(dict.fromkeys(choices)), n=n)


def did_you_mean(word: str, choices: Iterable[str], *,
                 spell: Callable[[str], str] = lambda c: f"`{c}`") -> str:
    """"did you mean `x`?" (or "`x` or `y`") for a misspelt ``word``; "" when nothing is close."""
    close = close_to(word, choices)
    return f"did you mean {' or '.join(spell(c) for c in close)}?" if close else ""


def plural(noun: str) -> str:
    """The noun's plural in a message: "reply" -> "replies", "trajectory" -> "trajectories",
    "row" -> "rows" (the record nouns this package names; no irregular ones among them)."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    return noun if noun.endswith("s") else noun + "s"
