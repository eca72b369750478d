"""Features of a reply that a reward may pay for instead of the task: one number per row.

Built in, from the reply text (the first of ``REPLY_FIELDS`` present) or the row's own fields:
``length`` (``completion_tokens`` / ``tokens`` / ``length`` when the row gives one, else the
reply's characters), ``truncated`` (the row's flag: hit the token cap), ``markdown`` (headers,
bullets, bold/italic runs, tables), ``xml_tags`` (``<answer>``, ``<tool_call>``...), ``boxed``
(LaTeX ``\\boxed{}``), ``repeated_ngrams`` (the share of word 3-grams that repeat an earlier one:
a looping reply scores near 1). A user feature is a row field holding a number or a bool, or in
the library a function ``record -> number``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from ..defaults import SCAN_NGRAM
from ..errors import ArgumentError, did_you_mean

REPLY_FIELDS = ("completion", "reply", "response", "output", "text")
LENGTH_FIELDS = ("completion_tokens", "tokens", "length", "chars")
BUILT_IN = ("length", "truncated", "markdown", "xml_tags", "boxed", "repeated_ngrams")

_MARKDOWN = re.compile(r"(?m)^\s{0,3}(?:#{1,6}\s|[-*+]\s|\d+\.\s|\|)|\*\*|__|`")
_XML = re.compile(r"</?[A-Za-z_][\w:-]*(?:\s[^<>]*)?>")
_BOXED_TEXT = "\\boxed{"
_BOXED = re.compile(re.escape(_BOXED_TEXT))
_WORDS = re.compile(r"\w+")


def chat_text(value: Any) -> str | None:
    """A text as is, a chat list as its messages' contents joined; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [m.get("content") for m in value if isinstance(m, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def reply_text(record: dict) -> str | None:
    """The reply of a row: the first text field of ``REPLY_FIELDS`` (a chat list: its contents)."""
    for field in REPLY_FIELDS:
        text = chat_text(record.get(field))
        if text is not None:
            return text
    return None


# The pieces of an answer-format marker, each linear to find (none can hold a '<' or, for
# \boxed{}, a brace): they are paired by position, never by a backtracking "(.*?)</\1>",
# which is quadratic on a long prompt.
_OPEN_TAG = re.compile(r"<([A-Za-z_][\w:-]*)(\s[^<>]*)?>")
_CLOSE_TAG = re.compile(r"</([A-Za-z_][\w:-]*)\s*>")
_BOXED_CONTENT = re.compile(r"\\boxed\{([^{}]*)\}")


def format_markers(text: str) -> list[tuple[str, str, str]]:
    """The answer-format markers of ``text`` in order: ``(open, content, close)`` for every
    XML-like tag pair (``<answer>42</answer>``: an opening tag and the first closing tag of the
    same name after it) and every ``\\boxed{42}``; markers do not overlap, the leftmost wins.
    Linear in the length of ``text``: an opening tag finds its closing tag by binary search.
    """
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _CLOSE_TAG.finditer(text):
        closes.setdefault(m.group(1), []).append((m.start(), m.end()))
    starts = {name: [c[0] for c in found] for name, found in closes.items()}
    found = [(m.start(), 0, m) for m in _OPEN_TAG.finditer(text)]
    found += [(m.start(), 1, m) for m in _BOXED_CONTENT.finditer(text)]
    found.sort(key=lambda f: (f[0], f[1]))
    out, at = [], 0
    for start, boxed, m in found:
        if start < at:
            continue
        if boxed:
            out.append(("\\boxed{", m.group(1), "}"))
            at = m.end()
            continue
        name = m.group(1)
        i = bisect_left(starts.get(name, ()), m.end())
        if name not in closes or i == len(closes[name]):
            continue  # no closing tag after it: not a marker (the scan goes on past it)
        close_start, close_end = closes[name][i]
        out.append((f"<{name}{m.group(2) or ''}>", text[m.end():close_start], f"</{name}>"))
        at = close_end
    return out


def repeated_ngram_share(text: str, n: int = SCAN_NGRAM) -> float:
    words = _WORDS.findall(text.lower())
    total = len(words) - n + 1
    if total <= 1:
        return 0.0
    grams = set(zip(*(words[i:] for i in range(n))))
    return 1.0 - len(grams) / total


def feature_matrix(records: Sequence[dict], truncated: np.ndarray,
                   features: Sequence[str] | dict[str, Any] | None) -> tuple[
                       list[str], np.ndarray, dict[str, str]]:
    """(names, matrix n x m, skipped name -> why) for the built-ins and the user's features."""
    n = len(records)
    columns, skipped = _built_in(records, truncated)
    for name, how in _user_features(features).items():
        if name not in columns:
            columns[name] = _user_column(records, name, how)
    names = list(columns)
    matrix = np.column_stack([columns[k] for k in names]) if names else np.zeros((n, 0))
    if not np.isfinite(matrix).all():
        j = int(np.flatnonzero(~np.isfinite(matrix).all(axis=0))[0])
        raise ArgumentError(f"feature {names[j]!r} has a non-finite value", fix="give finite "
                            "numbers")
    return names, matrix, skipped


def _built_in(records: Sequence[dict], truncated: np.ndarray) -> tuple[dict[str, np.ndarray],
                                                                       dict[str, str]]:
    """The built-in columns, and the ones skipped (no reply text or length)."""
    n = len(records)
    texts = [reply_text(r) for r in records]
    have_text = sum(t is not None for t in texts)
    columns: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    length = None
    for field in LENGTH_FIELDS:
        col = list(map(dict.get, records, repeat(field, n)))
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in col):
            length = np.asarray(col, dtype=np.float64)
            break
    if length is None and have_text == n:
        length = np.fromiter(map(len, texts), dtype=np.float64, count=n)
    if length is not None:
        columns["length"] = length
    else:
        skipped["length"] = ("no reply text (completion/reply/response/output/text) or token "
                             "count (completion_tokens/tokens/length) on every row")
    columns["truncated"] = truncated.astype(np.float64)
    if have_text < n:
        for name in ("markdown", "xml_tags", "boxed", "repeated_ngrams"):
            skipped[name] = f"needs the reply text on every row ({have_text} of {n} have it)"
        return columns, skipped
    columns["markdown"] = np.fromiter((len(_MARKDOWN.findall(t)) for t in texts), np.float64, n)
    # the same counts as the patterns' findall: no tag without a "<", and a literal
    # pattern's matches are its non-overlapping occurrences (str.count, much faster)
    columns["xml_tags"] = np.fromiter((len(_XML.findall(t)) if "<" in t else 0
                                       for t in texts), np.float64, n)
    columns["boxed"] = np.fromiter(map(str.count, texts, repeat(_BOXED_TEXT, n)), np.float64, n)
    columns["repeated_ngrams"] = np.fromiter(map(repeated_ngram_share, texts), np.float64, n)
    return columns, skipped


def _user_features(features: Sequence[str] | dict[str, Any] | None) -> dict[str, Any]:
    """The user's features as name -> field name or function."""
    if isinstance(features, dict):
        return dict(features)
    if features is None:
        return {}
    if isinstance(features, str):
        raise ArgumentError(f"`features` must be a list of field names, got the string "
                            f"{features!r}", fix=f"features=[{features!r}]")
    return {name: name for name in features}


def _user_column(records: Sequence[dict], name: str, how: Any) -> np.ndarray:
    """One user feature's values, each a number or a bool, or the error naming the bad row."""
    if callable(how):
        try:
            values = [how(r) for r in records]
        except Exception as exc:  # the user's function: say which and why
            raise ArgumentError(f"feature {name!r} failed on a row: {type(exc).__name__}: "
                                f"{exc}", fix="make it return a number for every row") from None
    elif isinstance(how, str):
        values = list(map(dict.get, records, repeat(how, len(records))))
    else:
        raise ArgumentError(f"feature {name!r} must be a row field name or a function, got "
                            f"{type(how).__name__}")
    bad = next((i for i, v in enumerate(values) if isinstance(v, str) or v is None
                or not isinstance(v, (int, float, bool, np.number))), None)
    if bad is None:
        return np.asarray(values, dtype=np.float64)
    row = records[bad]
    if isinstance(how, str) and how not in row:  # a typo is named with its close one
        close = did_you_mean(how, [*BUILT_IN, *(k for k in row if isinstance(k, str))])
        raise ArgumentError(f"feature `{name}`: row {bad + 1} has no field `{how}`"
                            + (f" ({close})" if close else ""), fix="name a field "
                            "every row carries (a number or a bool), or a built-in: "
                            + ", ".join(BUILT_IN))
    shown = "null" if values[bad] is None else repr(values[bad])
    raise ArgumentError(f"feature `{name}` is {shown} on row {bad + 1}; a feature "
                        "must be a number or a bool on every row", fix="add the field to "
                        "every row, or drop the feature")


FeatureFn = Callable[[dict], float]
