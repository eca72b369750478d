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
    """Base class: an input the library refuses, with a message that names the fix: built as
    ``XError(problem, fix=...)``, read as ``"<problem>. Fix: <fix>"`` (``err.fix`` alone)."""

    def __init__(self, problem: str = "", *, fix: str | None = None) -> None:
        super().__init__(problem if fix is None else f"{problem}. Fix: {fix}")
        self.fix = fix


class RowsError(WhileaiError):
    """Graded rows that cannot be read: missing file, bad JSON, a bad or missing field."""

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None, fix: str | None = None) -> None:
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
        self.source, self.line, self.field, self.fix = source, line, field, fix


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


_JSON_KINDS = ((bool, "a boolean"), (str, "a string"), ((int, float), "a number"),
               ((list, tuple), "an array"), (dict, "an object"))


def as_json(value: object, limit: int = 80) -> str:
    """A value read from a JSON row, in JSON's words: ``"1" (a string)``, ``false``, ``["a"]``,
    ``null or missing`` (None); cut at ``limit`` characters. The rows are JSON: Python's
    ``'1' (a str)`` is not what their writer wrote."""
    import json

    if value is None:  # a row's null, or a field ``.get`` did not find: they read alike
        return "null or missing"
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar, as the row wrote it
    if type(value) is int and abs(value) > 10 ** 30:  # JSON allows 4,300 digits
        return f"an integer of {len(str(abs(value)))} digits"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > limit:
        text = text[:limit] + "...(truncated)"
    # a string's quotes are easy to miss ("1" read as the number 1): its kind is said
    return f"{text} (a string)" if isinstance(value, str) else text


def json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words: "a string", "an array", "null"."""
    if value is None:
        return "null"
    return next((word for types, word in _JSON_KINDS if isinstance(value, types)),
                f"a {type(value).__name__}")


def plural(noun: str) -> str:
    """The noun's plural in a message: "reply" -> "replies", "trajectory" -> "trajectories",
    "row" -> "rows" (the record nouns this package names; no irregular ones among them)."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    return noun if noun.endswith("s") else noun + "s"
