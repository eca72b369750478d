"""Records: the one reader of every JSONL or JSON-array input (rows, traces, judge items, pairs,
episodes), with the file and line of each record for error messages.

:func:`read_records` opens a path through the door (``whileai_core.safepath``) and decodes it with
the columnar reader's msgspec pass (``whileai_core.rows_fast``) when that can vouch for the file,
else line by line here, which names the first bad line. :mod:`whileai_core.rows` builds graded
rows on top; the importers read other systems' files with it, so they need nothing from rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import RowsError, plural
from .progress import step
from .safepath import Root, UserPath, as_user_path, decode_text, is_path
from . import file_shapes, safejson

TASK_FIELD = "task_id"
TASK_ALIASES = ("scenario_id",)  # accepted in place of task_id
_PEEK_LINE_MAX = 64 * 1024 * 1024


# --- reading records (shared by every JSONL input: rows, traces, judge items) ---------------

class Records:
    """Records read from a JSONL/JSON file or given as a list, and where each one came from.

    ``where(i)`` gives the keyword arguments of a :class:`RowsError` for record ``i``: the file and
    its line (JSONL), the file and array element (JSON array), or ``<rows> row i`` for a list.
    """

    __slots__ = ("items", "name", "_lines", "_noun")

    def __init__(self, items: list, name: str, lines: list[int] | None | str, noun: str):
        self.items, self.name, self._lines, self._noun = items, name, lines, noun

    def __len__(self) -> int:
        return len(self.items)

    def where(self, i: int) -> dict[str, Any]:
        if isinstance(self._lines, list):
            return {"source": self.name, "line": self._lines[i]}
        if self._lines == "jsonl":
            return {"source": self.name, "line": i + 1}
        if self._lines == "array":
            return {"source": f"{self.name} array element {i + 1}"}
        return {"source": f"{self.name} {self._noun} {i + 1}"}


# what one record of each kind looks like, for the fix of a file that holds none
RECORD_FORMS = {
    "row": '{"task_id": "t1", "reward": 1.0}',
    "item": '{"id": "t1", "label": true, "grades": {"judge-a": true}}',
    "pair": '{"id": "p1", "forward": "first", "reversed": "second"}',
    "DPO pair": ('{"prompt": [{"role": "user", "content": "..."}], "chosen": [{"role": '
                 '"assistant", "content": "..."}], "rejected": [{"role": "assistant", '
                 '"content": "..."}]}'),
    "trace": ('{"task_id": "t1", "messages": [{"role": "user", "content": "..."}, '
              '{"role": "assistant", "content": "..."}]}'),
    "record": '{"task_id": "t1", ...}',
    "held-out record": '{"task_id": "h1", "prompt": "..."}',
}


def read_records(source: Any, *, noun: str = "row", root: Root | None = None) -> Records:
    """Records from a path (JSONL, or one JSON array of objects) or a list of mappings.

    Every record is an object; anything else raises :class:`RowsError` naming the file and line
    (or the list position, called ``noun`` in messages) and the fix. A path is opened through
    the door (``whileai_core.safepath``): under ``root`` when one is given (confined: no ``..``,
    no link, nothing outside it), else as the user's own path; regular files only, within the
    size limit for rows files.
    """
    if is_path(source):
        path = as_user_path(source, root, argument=f"{plural(noun)}", error=RowsError)
        found = _fast_dicts(path)
        if found is not None:
            return Records(found[0], str(path), found[1], noun)
        items, lines, name = read_file(path, noun)
        return Records(items, name, "jsonl" if lines is None else lines, noun)
    if isinstance(source, Mapping):
        raise RowsError(f"got one {noun} (a dict), expected a list of them",
                        fix=f"wrap it in a list: [{noun}]")
    if not isinstance(source, Iterable) or isinstance(source, (str, bytes, bytearray)):
        raise RowsError(f"cannot read {plural(noun)} from a {type(source).__name__}",
                        fix="pass a path to a .jsonl/.json file or a list of dicts")
    items = list(source)
    for i, rec in enumerate(items):
        if not isinstance(rec, Mapping):
            raise RowsError(f"{noun} {i + 1} is a {type(rec).__name__}, expected an object",
                            source=f"<{plural(noun)}>",
                            fix='give each as a JSON object, e.g. {"task_id": "...", "reward": 1.0}')
    if items and not all(type(r) is dict for r in items):
        items = [dict(r) for r in items]
    return Records(items, f"<{plural(noun)}>", None, noun)


# the fields each kind of record must carry, for naming a table's columns (file_shapes)
NEEDED = {"row": (TASK_FIELD, "reward"), "trace": (TASK_FIELD, "messages")}


def read_file(path: UserPath, noun: str = "row") -> tuple[list, list[int] | None | str, str]:
    name = str(path)
    data = path.read_buffer("rows", error=RowsError)  # (a gzip file comes unpacked)
    wrong = file_shapes.binary_shape(data, name)
    if wrong is not None:
        raise wrong
    text = decode_text(data, path.where, RowsError, fix="save the rows as UTF-8 JSONL")
    del data
    step(1, 3, f"parsing {len(text):,} characters of {name}")
    stripped = text.lstrip()
    if not stripped:
        form = RECORD_FORMS.get(noun)
        raise RowsError(f"is empty: no {plural(noun)}", source=name,
                        fix=f"write one JSON object per line, one {noun} each"
                        + (f", e.g. {form}" if form else ""))
    if stripped[0] not in "[{":
        wrong = file_shapes.text_shape(text, name, noun, NEEDED.get(noun, ()))
        if wrong is not None:
            raise wrong
    if stripped[0] == "{":
        try:
            return _read_jsonl(text, name)
        except RowsError as err:  # a first line that is not JSON: one document over many lines?
            first = len(text) - len(stripped)
            first_line = text.count("\n", 0, first) + 1
            if err.line != first_line or "invalid JSON" not in str(err):
                raise
            raise file_shapes.document_shape(text, name, noun, first_line) or err from None
    if stripped[0] == "[":
        try:
            data = safejson.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # "[...]" then more lines: JSONL whose first row is bad
                return _read_jsonl(text, name)
            raise RowsError(f"invalid JSON ({exc.msg})", source=name, line=exc.lineno,
                            fix="make the file one JSON array of row objects, or JSONL") from None
        if not isinstance(data, list):
            raise RowsError("is not a JSON array of rows", source=name,
                            fix="write one JSON object per line (JSONL)")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise RowsError(f"array element {i + 1} is a {type(rec).__name__}, expected an "
                                "object", source=name,
                                fix='give each row as {"task_id": "...", "reward": 1.0}')
        return data, "array", name
    return _read_jsonl(text, name)


def _read_jsonl(text: str, name: str) -> tuple[list, list[int] | None, str]:
    # Fast path: one C-level parse of all rows as an array. It is taken only when the text is
    # "{...}" lines with every newline between "}" and "{" (counted in C; a JSON string cannot
    # hold a raw newline, so these newlines are exactly the line breaks, and a blank line breaks
    # the count) and the number of objects equals the number of lines. Anything else goes line
    # by line, which skips blank lines and names the first bad one.
    breaks = text.count("\n")
    n = breaks if text.endswith("\n") else breaks + 1
    if (text.startswith("{") and text.endswith(("}", "}\n"))
            and text.count("}\n{") == n - 1):
        try:
            # the first n - 1 newlines become commas; a final newline stays as JSON whitespace
            parsed = safejson.loads("[" + text.replace("\n", ",", n - 1) + "]")
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if parsed is not None and len(parsed) == n and set(map(type, parsed)) == {dict}:
            return parsed, None, name  # no blank line: row i is line i + 1
    lines = text.split("\n")
    numbers = [i + 1 for i, ln in enumerate(lines) if ln and not ln.isspace()]
    records = []
    for lineno in numbers:
        ln = lines[lineno - 1]
        try:
            rec = safejson.loads(ln)
        except json.JSONDecodeError as exc:
            raise RowsError(f"invalid JSON at column {exc.colno} ({exc.msg})", source=name,
                            line=lineno, fix="write exactly one JSON object per line") from None
        if not isinstance(rec, dict):
            raise RowsError(f"a {type(rec).__name__}, expected a JSON object", source=name,
                            line=lineno, fix='write each row as {"task_id": "...", "reward": 1.0}')
        records.append(rec)
    return records, numbers, name


def _fast_dicts(path: UserPath) -> tuple[list[dict], list[int] | str] | None:
    """``read_records``' fast path: the file's records decoded by msgspec, or None (the exact
    reader reads it, and names what is wrong)."""
    try:
        from . import rows_fast  # lazy: rows_fast loads only when _fast_dicts() runs
    except ImportError:  # msgspec is a core dependency; without it, the exact reader
        return None
    with path.open_stream("rows", error=RowsError) as fh:
        return rows_fast.read_dicts(fh)


def first_line(path: UserPath) -> str | None:
    """The first non-blank line of the file ``path`` (at most 64 MiB of it), or None when there
    is none within that much or the file cannot be read."""
    try:
        with path.open_binary("rows", error=RowsError) as fh:
            for raw in fh:
                if raw.strip():  # (a UTF-8 byte-order mark dropped, as every reader drops it)
                    return raw[:_PEEK_LINE_MAX].decode("utf-8", errors="replace").lstrip(
                        "\ufeff")
                if fh.tell() > _PEEK_LINE_MAX:
                    return None
    except (OSError, RowsError):
        return None
    return None


def first_record(line: str | None) -> Any:
    """``line`` decoded as JSON, or None when it is not JSON."""
    if line is None:
        return None
    try:
        return safejson.loads(line)
    except ValueError:
        return None


def is_graded_row(record: Any) -> bool:
    """Whether ``record`` is one of this project's graded rows (it names its task)."""
    return isinstance(record, dict) and any(f in record for f in (TASK_FIELD, *TASK_ALIASES))
