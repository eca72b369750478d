"""``json.loads`` for text a user gave us: every way it can fail is a ``json.JSONDecodeError``.

The standard parser has two more ways to fail on hostile input, and each reached the user as
"a bug in whileai" (issue 12's re-check): nesting deeper than the interpreter's recursion limit
raises ``RecursionError`` (a line of 100,000 ``[``), and an integer of more than 4,300 digits
raises a plain ``ValueError`` (Python's guard against slow conversions). Both are bad input, so
both become the error the callers already catch, with the line and column of the document.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``; deep nesting and over-long integers raise ``JSONDecodeError``."""
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
