"""A table of graded rows (CSV, TSV, semicolon-separated; a spreadsheet's export) -> graded rows.

The first non-blank line names the columns (``whileai_core.file_shapes.table_header``); each
later line is one row. Cells are typed as a person reads them (true/false, empty as null, whole
numbers, decimals, else text); a column whose name ends in ``id`` or is ``model`` stays text, so
``007`` keeps its zeros. A column that looks like a field graded rows need (``score`` for
``reward``: ``whileai_core.field_names.look_alikes``) is read under that name, and a note says
so. ``load_rows`` does not read a table: only ``import_rows`` does, when asked.
"""

from __future__ import annotations

import csv
import math
import re
from typing import Any

from ..errors import RowsError
from ..file_shapes import table_header
from ..field_names import look_alikes
from ..records import first_line, first_record, read_records
from ..safepath import UserPath, as_user_path
from .foreign import ForeignRows

FORMAT = "csv"
NEEDED = ("task_id", "reward")
_INT = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")


def looks_like_table(path: UserPath) -> bool:
    """Whether the file's first non-blank line is a table's header line (and not JSON)."""
    line = first_line(path) if path.is_file() else None
    return line is not None and not line.lstrip().startswith(("{", "[")) \
        and table_header(line.rstrip("\r\n")) is not None


def _cell(text: str, as_text: bool) -> Any:
    if as_text:
        return text
    if text == "":
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _renames(names: list[str], source: str, line: int | None) -> tuple[dict[str, str], list[str]]:
    """``({found: expected}, notes)`` for the fields graded rows need that go by another name;
    a needed field with no look-alike is refused by name."""
    renames: dict[str, str] = {}
    notes = []
    for want in NEEDED:
        if want in names:
            continue
        alikes = look_alikes(want, [n for n in names if n not in renames])
        if not alikes:
            raise RowsError(f"has no `{want}` field (fields {', '.join(names[:12])})",
                            source=source, line=line, field=want,
                            fix=f"name the field that holds it `{want}`")
        renames[alikes[0][0]] = want
        notes.append(f"`{alikes[0][0]}` is read as `{want}` ({alikes[0][1]})")
    return renames, notes


def read_table(source: str | UserPath) -> ForeignRows:
    """Graded rows from a table file (module docstring), with notes on what was renamed."""
    path = as_user_path(source, None, argument="path", error=RowsError)
    text = path.read_text("rows", error=RowsError,
                          fix="save the table as UTF-8 (CSV UTF-8 in a spreadsheet's Save As)")
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    header = table_header(lines[start]) if start is not None else None
    if header is None:
        raise RowsError("is not a table with a header line of column names", source=str(path),
                        fix="give a CSV or TSV whose first line names the columns (task_id,reward)")
    delimiter, what, names = header
    renames, notes = _renames(names, str(path), start + 1)
    keys = [renames.get(n, n) for n in names]
    as_text = [k == "model" or k.lower().endswith("id") for k in keys]
    rows: list[dict] = []
    reader = csv.reader(lines[start + 1:], delimiter=delimiter)
    for cells in reader:
        lineno = start + 1 + reader.line_num
        if not cells or not any(c.strip() for c in cells):
            continue
        if len(cells) != len(keys):
            raise RowsError(f"has {len(cells)} cells; the header names {len(keys)} columns",
                            source=str(path), line=lineno,
                            fix=f"give every line one cell per column (quote a cell that "
                                f"holds the separator {delimiter!r})")
        row = {k: _cell(c.strip(), t) for k, c, t in zip(keys, cells, as_text)}
        if not row["task_id"]:
            raise RowsError("has an empty task_id", source=str(path), line=lineno,
                            field="task_id", fix="give every row the id of its task")
        reward = row["reward"]
        if not isinstance(reward, (bool, int, float)) or not math.isfinite(reward):
            shown = "an empty cell" if reward is None else repr(reward)
            raise RowsError(f"reward is {shown}, not a number", source=str(path), line=lineno,
                            field="reward", fix="give every row a numeric reward (1 and 0, "
                                                "or true and false, for pass and fail)")
        row["reward"] = float(reward)  # 1, 0, true and false alike: a reward is a number
        rows.append(row)
    if not rows:
        raise RowsError(f"is {what} with a header line and no rows", source=str(path),
                        fix="export the table with its rows")
    notes.insert(0, f"read as {what}: {len(names)} columns, cells typed (true/false, numbers, "
                    "empty as null; ids and model as text)")
    return ForeignRows(format=FORMAT, source=str(path), files=[str(path)], rows=rows, errored=0,
                       kept_errored=False, notes=notes)


# --- JSON lines whose fields go by other names ------------------------------------------------

RENAMED_FORMAT = "jsonl"


def renamed_fields(path: UserPath) -> dict[str, str] | None:
    """``{found: expected}`` when the file's first record is an object that lacks a field graded
    rows need but carries a look-alike of each one it lacks (``score`` for ``reward``), else
    None."""
    record = first_record(first_line(path)) if path.is_file() else None
    if isinstance(record, list) and record and isinstance(record[0], dict):
        record = record[0]  # a JSON array of rows on one line
    if not isinstance(record, dict) or all(want in record for want in NEEDED):
        return None
    try:
        return _renames(list(record), str(path), None)[0]
    except RowsError:
        return None


def read_renamed(source: str | UserPath) -> ForeignRows:
    """Graded rows from JSON lines (or a JSON array) whose ``task_id`` or ``reward`` go by
    another name: each look-alike read under the name it stands for (a note says which); a
    true/false reward becomes 1.0/0.0. Nothing else changes."""
    path = as_user_path(source, None, argument="path", error=RowsError)
    recs = read_records(path, noun="row")
    names = list(dict.fromkeys(k for r in recs.items for k in r))
    renames, notes = _renames(names, str(path), None)
    rows = []
    for i, rec in enumerate(recs.items):
        row = {renames.get(k, k): v for k, v in rec.items()}
        if isinstance(row.get("reward"), bool):
            row["reward"] = float(row["reward"])
        for want in NEEDED:
            if row.get(want) is None:
                raise RowsError(f"row has no `{want}` (nor {', '.join(f'`{k}`' for k, v in renames.items() if v == want) or 'a look-alike'})",
                                **recs.where(i), field=want, fix=f"give every row its `{want}`")
        rows.append(row)
    return ForeignRows(format=RENAMED_FORMAT, source=str(path), files=[str(path)], rows=rows,
                       errored=0, kept_errored=False, notes=notes)
