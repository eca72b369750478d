"""``json.loads`` for text a user gave us: every way it can fail is a ``json.JSONDecodeError``.

The standard parser has two more ways to fail on hostile input: nesting deeper than the
recursion limit raises ``RecursionError``, and an integer of more digits than Python converts
raises a plain ``ValueError``. Both are bad input, so both become the error the callers already
catch, with the line and column of the document.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from .defaults import JSON_STEP_CHARS

# where a large array may be cut between two objects: "}" "," "{" with any whitespace between
_BETWEEN_OBJECTS = re.compile(r"\}\s*,\s*(?=\{)")


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``; deep nesting and over-long integers raise ``JSONDecodeError``.

    A large array is parsed in steps of about ``JSON_STEP_CHARS`` characters, so one call does
    not hold the GIL (and a server's event loop) for the whole text. The result is exactly
    ``json.loads``'s: anything doubtful, an error included, is parsed again whole.
    """
    if isinstance(text, str) and len(text) > 2 * JSON_STEP_CHARS and text.lstrip()[:1] == "[":
        stepped = _array_in_steps(text)
        if stepped is not None:
            return stepped
    try:
        return json.loads(text)
    except RecursionError:
        raise _error(text, "nested too deeply (arrays or objects inside each other more than "
                     "about " f"{sys.getrecursionlimit()} levels)") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "digits" not in str(exc):
            raise
        raise _error(text, f"a number with more than {sys.get_int_max_str_digits()} digits"
                     ) from None


def _error(text: str | bytes, msg: str) -> json.JSONDecodeError:
    doc = text.decode("utf-8", errors="replace") if isinstance(text, (bytes, bytearray)) else text
    return json.JSONDecodeError(msg, doc, 0)


def _array_in_steps(text: str) -> list | None:
    """The array ``text`` parsed step by step (see :func:`loads`), or None to parse it whole.

    A step first tries a cut at the first "}, {" past its length, parsed as an array of its own
    (a cut inside a string or a nested value never parses); once a cut fails, the rest goes value
    by value (``raw_decode``).
    """
    scan = _DECODER.raw_decode
    out: list = []
    opened = _SPACE.match(text, text.index("[") + 1)
    pos, cheap = opened.end(), True
    try:
        while len(text) - pos > JSON_STEP_CHARS:
            if cheap:
                cut = _BETWEEN_OBJECTS.search(text, pos + JSON_STEP_CHARS)
                if cut is None:
                    break
                try:
                    out.extend(json.loads("[" + text[pos:cut.start() + 1] + "]"))
                    pos = cut.end()
                    continue
                except ValueError:
                    cheap = False
            goal = pos + JSON_STEP_CHARS
            while pos < goal:
                value, end = scan(text, pos)
                out.append(value)
                comma = _COMMA.match(text, end)
                if comma is None:  # the array ends here, or the text is not one array
                    return out if text[end:].strip() == "]" else None
                pos = comma.end()
        out.extend(json.loads("[" + text[pos:]))
    except (ValueError, RecursionError):
        return None
    return out


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
