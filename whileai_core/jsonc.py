"""JSON and JSONC text a person keeps: read it strictly, add one member without touching the rest.

Re-serialising a parsed file would lose its comments (VS Code's ``mcp.json`` is JSONC), line
endings and layout, and numbers a float cannot hold (``1e400`` would come back as
``Infinity``). So ``whileai-skills init`` adds its entry to the text itself, at the end of the
object it belongs to, in the file's own indent and line ending, and parses the result again to
check it means exactly the old data plus the entry.

Stricter than Python's ``json``: a key twice in one object, ``NaN``, ``Infinity`` and
``-Infinity`` are errors. Every failure is a ``json.JSONDecodeError`` with the line and column
in the original text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import safejson

_WS = " \t\r\n"


def blank_comments(text: str) -> str:
    """``text`` with every JSONC comment and trailing comma replaced by spaces (newlines kept),
    so positions, lines and columns stay those of the original."""
    out = list(text)
    i, n = 0, len(text)
    last_comma = None  # index of a comma not yet followed by a value
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            last_comma = None
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end == -1 else (end if text[i + 1] == "/" else end + 2)
            for k in range(i, end):
                if out[k] not in "\r\n":
                    out[k] = " "
            i = end
            continue
        if c == ",":
            last_comma = i
        elif c in "]}":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif c not in _WS:
            last_comma = None
        i += 1
    return "".join(out)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} appears twice in one object (a reader keeps one "
                             "and drops the other)")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (write a number or a string)")


def loads(text: str, *, comments: bool = False) -> Any:
    """Parse ``text`` strictly (see the module docstring); ``comments`` allows JSONC."""
    clean = blank_comments(text) if comments else text
    try:
        return json.loads(clean, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        return safejson.loads(clean)  # raises its own JSONDecodeError
    except ValueError as exc:  # a duplicate key or a constant: find where, for the message
        where = _locate(clean, str(exc))
        raise json.JSONDecodeError(str(exc), text, where) from None


def _locate(clean: str, message: str) -> int:
    match = re.search(r"the key '((?:[^'\\]|\\.)*)'", message)
    if match:
        needle = json.dumps(match.group(1))
        first = clean.find(needle)
        second = clean.find(needle, first + 1) if first != -1 else -1
        return max(second, 0)
    match = re.search(r"-?(NaN|Infinity)", clean)
    return match.start() if match else 0


# --- finding and editing -------------------------------------------------------------------------

def _skip_ws(clean: str, i: int) -> int:
    while i < len(clean) and clean[i] in _WS:
        i += 1
    return i


def _value_end(clean: str, i: int) -> int:
    """The index just after the JSON value starting at ``i`` (in comment-free text)."""
    c = clean[i]
    if c == '"':
        return json.decoder.scanstring(clean, i + 1)[1]
    if c in "{[":
        depth, j = 0, i
        while j < len(clean):
            ch = clean[j]
            if ch == '"':
                j = json.decoder.scanstring(clean, j + 1)[1]
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ValueError("unclosed")
    j = i
    while j < len(clean) and clean[j] not in ",}] \t\r\n":
        j += 1
    return j


def members(clean: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object whose ``{`` is at ``start``: ``(key, key start, value start,
    value end)`` in order, and the index of its closing ``}``."""
    out = []
    i = _skip_ws(clean, start + 1)
    while clean[i] != "}":
        at = i
        key, i = json.decoder.scanstring(clean, i + 1)
        i = _skip_ws(clean, i)
        i = _skip_ws(clean, i + 1)  # past ':'
        end = _value_end(clean, i)
        out.append((key, at, i, end))
        i = _skip_ws(clean, end)
        if clean[i] == ",":
            i = _skip_ws(clean, i + 1)
    return out, i


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when its lines end so, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def indent_unit(text: str) -> str:
    """The file's indent step (the first indented line's leading blanks), default two spaces."""
    match = re.search(r"^([ \t]+)\S", text, re.M)
    if not match:
        return "  "
    ws = match.group(1)
    return "\t" if ws.startswith("\t") else ws


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    match = re.match(r"[ \t]*", text[start:pos])
    return match.group(0) if match else ""


def _render(value: Any, unit: str, base: str, nl: str) -> str:
    """``value`` as JSON whose continuation lines start at ``base`` (the member's indent)."""
    text = json.dumps(value, indent=unit, ensure_ascii=False, allow_nan=False)
    return text.replace("\n", nl + base)


def add_member(text: str, path: tuple[str, ...], key: str, value: Any, *,
               comments: bool = False) -> str:
    """``text`` with ``key: value`` added to the object at ``path`` (keys from the top), the
    missing objects on ``path`` created; nothing else in the text changes.

    Raises ``ValueError`` when the text is not an object at that place, or when the key is
    already there (the caller decides what a clash means). The result is parsed again and
    checked to be the old data with the one member added.
    """
    if not text.strip():
        body: Any = value
        for name in reversed((*path, key)):
            body = {name: body}
        return _render(body, "  ", "", "\n") + "\n"
    old = loads(text, comments=comments)
    clean = blank_comments(text) if comments else text
    obj, rest = _deepest(clean, path, key)
    body = value  # what to add at this object: the rest of the path, then key: value
    for name in reversed((*rest[1:], key) if rest else ()):
        body = {name: body}
    new = _insert(text, clean, obj, rest[0] if rest else key, body)
    expected = json.loads(json.dumps(old))
    where = expected
    for name in path:
        where = where.setdefault(name, {})
    where[key] = json.loads(json.dumps(value))
    if loads(new, comments=comments) != expected:
        raise ValueError("the merged text does not parse to the old data plus the entry")
    return new


def _deepest(clean: str, path: tuple[str, ...], key: str) -> tuple[int, list[str]]:
    """Where the deepest object on ``path`` that exists starts, and the names of ``path`` below
    it that do not exist yet."""
    start = _skip_ws(clean, 0)
    if clean[start] != "{":
        raise ValueError("the file is not a JSON object")
    obj, rest = start, list(path)
    while True:
        found, _ = members(clean, obj)
        name = rest[0] if rest else key
        hit = next((m for m in found if m[0] == name), None)
        if not rest:
            if hit is not None:
                raise ValueError(f"`{key}` is already there")
            return obj, rest
        if hit is None:
            return obj, rest
        if clean[hit[2]] != "{":
            raise ValueError(f"`{name}` is not an object")
        obj = hit[2]
        rest.pop(0)


def _insert(text: str, clean: str, obj: int, new_key: str, body: Any) -> str:
    """``text`` with ``new_key: body`` added last to the object at ``obj``, in its layout."""
    nl, unit = newline_of(text), indent_unit(text)
    found, close = members(clean, obj)
    if "\n" not in text.strip():  # a file written on one line gets its member so too
        member = f"{json.dumps(new_key, ensure_ascii=False)}: " + json.dumps(
            body, ensure_ascii=False, allow_nan=False)
        if found:
            at = found[-1][3]
            return text[:at] + ", " + member + text[at:]
        if not text[obj + 1:close].strip():
            return text[:obj + 1] + member + text[close:]
        return text[:obj + 1] + text[obj + 1:close].rstrip() + " " + member + " " + text[close:]
    if found:
        # the members' own indent when they sit on lines of their own, else one step in
        first_key = found[0][1]
        base = _line_indent(text, first_key) if "\n" in text[obj:first_key] else \
            _line_indent(text, obj) + unit
        member = f"{json.dumps(new_key, ensure_ascii=False)}: {_render(body, unit, base, nl)}"
        at = found[-1][3]
        return text[:at] + "," + nl + base + member + text[at:]
    outer = _line_indent(text, obj)
    base = outer + unit
    member = f"{json.dumps(new_key, ensure_ascii=False)}: {_render(body, unit, base, nl)}"
    inside = text[obj + 1:close]
    keep = inside if inside.strip() else ""  # comments inside an empty object stay
    return text[:obj + 1] + keep.rstrip(" \t\r\n") + nl + base + member + nl + outer + \
        text[close:]
