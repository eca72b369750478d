"""What a rows file is when it is not JSONL, named in one error with the way to convert it.

The exact reader asks here before it reports a file it cannot read as JSON lines: a Parquet
file, a zip or another compressor's archive, UTF-16 text (PowerShell's ``>``), CSV or TSV, one
JSON document over many lines (gzip never gets here: ``safepath.gunzip``). Magic numbers:
Parquet's file format spec (``PAR1`` at both ends), PKWARE's APPNOTE (``PK\\x03\\x04``), bzip2
(``BZh``), xz's file format spec (``\\xfd7zXZ\\x00``), RFC 8878 for zstd (``28 b5 2f fd``), the
Unicode byte-order marks of UTF-16.
"""

from __future__ import annotations

import csv
import json
import shlex

from . import safejson, voice
from .errors import RowsError, plural
from .field_names import _file_arg, _q, jsonl_command, look_alikes
from .io import new_name

_NAMES_SHOWN = 8
_PEEK = 200   # characters of a line shown

_UNPACK = "or pass it gzip-compressed (gzip FILE), which is read as it is"
MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"PAR1", "a Parquet file",
     "convert it to JSONL, e.g. python3 -c 'import pandas as pd, sys; pd.read_parquet("
     "sys.argv[1]).to_json(open(sys.argv[2], \"x\"), orient=\"records\", lines=True)' {file} "
     "{out} (needs pandas and pyarrow)"),
    (b"PK\x03\x04", "a zip archive (a zipped file, or an .xlsx workbook)",
     "unzip it and pass the JSONL inside (a workbook: save the sheet as CSV and convert that)"),
    (b"BZh", "bzip2-compressed", f"unpack it (bunzip2 -k {{file}}) {_UNPACK}"),
    (b"\xfd7zXZ\x00", "xz-compressed", f"unpack it (xz -dk {{file}}) {_UNPACK}"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", f"unpack it (zstd -d {{file}}) {_UNPACK}"),
    (b"\xff\xfe", "UTF-16 text (what Windows PowerShell's `>` writes)",
     "save it as UTF-8, e.g. python3 -c 'import sys; open(sys.argv[2], \"x\", encoding=\"utf-8\")"
     ".write(open(sys.argv[1], encoding=\"utf-16\").read())' {file} {out}"),
    (b"\xfe\xff", "UTF-16 text",
     "save it as UTF-8, e.g. python3 -c 'import sys; open(sys.argv[2], \"x\", encoding=\"utf-8\")"
     ".write(open(sys.argv[1], encoding=\"utf-16\").read())' {file} {out}"),
)


def binary_shape(data: bytes | bytearray, source: str) -> RowsError | None:
    """The error for a file whose first bytes say it is not text (``MAGIC``), else None."""
    for magic, what, fix in MAGIC:
        if data[:len(magic)] == magic:
            return RowsError(f"is {what}, not JSONL", source=source,
                             fix=fix.format(file=_file_arg(source),
                                            out=shlex.quote(new_name(source))))
    return None


TABLES = (("\t", "TSV (tab-separated)"), (",", "CSV"), (";", "semicolon-separated values"))


def table_header(line: str) -> tuple[str, str, list[str]] | None:
    """``(delimiter, what, column names)`` when ``line`` is a table's header line (two or more
    non-empty cells, none a number), else None: what :func:`text_shape` names and the ``csv``
    importer reads."""
    for delimiter, what in TABLES:
        cells = [c.strip() for c in next(csv.reader([line], delimiter=delimiter))]
        if len(cells) < 2:
            continue
        if all(cells) and not any(_number(c) for c in cells):
            return delimiter, what, cells
        return None
    return None


def text_shape(text: str, source: str, noun: str, expected: tuple[str, ...]) -> RowsError | None:
    """The error for text whose first line is not JSON: CSV or TSV with a header line (named
    with its columns and the command that converts it), else plain text; None when the first
    non-blank line parses as JSON (the reader's own errors then say what is wrong)."""
    lines = text.split("\n")
    lineno, first = next((i + 1, ln) for i, ln in enumerate(lines) if ln.strip())
    try:
        safejson.loads(first)
        return None
    except (ValueError, RecursionError):
        pass
    header = table_header(first)
    if header is not None:
        return _table(header[1], header[2], source, noun, lineno, expected)
    for delimiter, what in TABLES:
        cells = [c.strip() for c in next(csv.reader([first], delimiter=delimiter))]
        if len(cells) < 2:
            continue
        return RowsError(f"looks like {what} without a header line (line {lineno} begins "
                         f"{_peek(first)})", source=source,
                         fix="add a first line naming the columns (e.g. task_id"
                             f"{delimiter}reward), then convert it to JSONL, one {noun} per line")
    return RowsError(f"is not JSON: line {lineno} begins {_peek(first)}", source=source,
                     fix=f"write one JSON object per line (JSONL), one {noun} each")


def _table(what: str, names: list[str], source: str, noun: str, lineno: int,
           expected: tuple[str, ...]) -> RowsError:
    shown = ", ".join(names[:_NAMES_SHOWN])
    if len(names) > _NAMES_SHOWN:
        shown += f" ({_NAMES_SHOWN} of {len(names)} columns)"
    notes = []
    for want in expected:
        if want not in names:
            alikes = look_alikes(want, names)
            notes.append(f"`{alikes[0][0]}` is read as `{want}`" if alikes else
                         f"no column is `{want}`")
    said = f" ({'; '.join(notes)})" if notes else ""
    if noun != "row":  # only graded rows have an importer
        return RowsError(f"looks like {what} with columns {shown}, not JSONL", source=source,
                         line=lineno if lineno > 1 else None,
                         fix=f"convert it to JSONL, one {noun} per line{said}")
    if source.startswith("<"):  # no file to import: standard input, or records given inline
        return RowsError(f"looks like {what} with columns {shown}, not JSONL", source=source,
                         fix=f"save it to a file and import that: "
                             f"{voice.call('import_rows', path='rows.csv', out=new_name('rows.csv'))}")
    return RowsError(f"looks like {what} with columns {shown}, not JSONL", source=source,
                     line=lineno if lineno > 1 else None,
                     fix=f"convert it to JSONL{said}: "
                         f"{voice.call('import_rows', path=source, out=new_name(source))}")


def document_shape(text: str, source: str, noun: str, lineno: int) -> RowsError | None:
    """The error for a file that is one JSON object spread over several lines (a pretty-printed
    row, or a document holding the rows under a key), else None."""
    try:
        doc = safejson.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    inside = nested_rows(doc)
    if inside is not None:
        key, count = inside
        return RowsError(f"is one JSON document (keys {_keys(doc)}), not one {noun} per line; "
                         f"its `{key}` holds a list of {count} objects", source=source,
                         fix=f"if those are the {plural(noun)}, write them one per line, e.g. "
                             + jsonl_command("import json,sys; rs=json.load(open(sys.argv[1], "
                                             f"encoding=\"utf-8-sig\"))[{_q(key)}]", source))
    spread = text.strip().count("\n") + 1
    return RowsError(f"a JSON object spread over {spread} lines (keys {_keys(doc)}); JSONL holds "
                     f"each {noun} on one line", source=source, line=lineno,
                     fix="write each object on a single line (json.dumps without indent; "
                         "jq -c . FILE)")


def nested_rows(record: dict) -> tuple[str, int] | None:
    """``(key, n)`` when a field of ``record`` holds a list of ``n`` objects (rows kept inside
    a document, as many eval tools write them), else None."""
    for key, value in record.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value[:100]):
            return key, len(value)
    return None


def _keys(doc: dict) -> str:
    keys = [f"`{k}`" for k in list(doc)[:_NAMES_SHOWN]]
    more = len(doc) - _NAMES_SHOWN
    return ", ".join(keys) + (f" and {more} more" if more > 0 else "")


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _peek(line: str) -> str:
    shown = line.strip()
    return json.dumps(shown if len(shown) <= _PEEK else shown[:_PEEK] + "...")
