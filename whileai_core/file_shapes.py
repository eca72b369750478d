"""What a rows file is when it is not JSONL, named in one error with the way to convert it.

The exact reader (``whileai_core.rows``) asks here before it reports a file it cannot read as
JSON lines, so the error says what the file looks like instead of where JSON parsing stopped: a
Parquet file, a zip or another compressor's archive, UTF-16 text (Windows PowerShell's ``>``
writes it), CSV or TSV (a header line of names), one JSON document spread over many lines. A gzip
file never gets here: the path door unpacks it (``safepath.gunzip``). Magic numbers: Parquet's
file format spec (``PAR1`` at both ends), PKWARE's APPNOTE (``PK\\x03\\x04``), bzip2 (``BZh``),
xz's file format spec (``\\xfd7zXZ\\x00``), RFC 8878 for zstd (``28 b5 2f fd``), the Unicode
byte-order marks of UTF-16.
"""

from __future__ import annotations

import csv
import json
import shlex

from . import safejson
from .errors import RowsError, plural
from .field_names import EMIT, _file_arg, _q, look_alikes

_NAMES_SHOWN = 8
_PEEK = 200   # characters of a line shown

_UNPACK = "or pass it gzip-compressed (gzip FILE), which is read as it is"
MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"PAR1", "a Parquet file",
     "convert it to JSONL, e.g. python3 -c 'import pandas as pd, sys; pd.read_parquet("
     "sys.argv[1]).to_json(sys.argv[2], orient=\"records\", lines=True)' {file} rows.jsonl "
     "(needs pandas and pyarrow)"),
    (b"PK\x03\x04", "a zip archive (a zipped file, or an .xlsx workbook)",
     "unzip it and pass the JSONL inside (a workbook: save the sheet as CSV and convert that)"),
    (b"BZh", "bzip2-compressed", f"unpack it (bunzip2 -k {{file}}) {_UNPACK}"),
    (b"\xfd7zXZ\x00", "xz-compressed", f"unpack it (xz -dk {{file}}) {_UNPACK}"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", f"unpack it (zstd -d {{file}}) {_UNPACK}"),
    (b"\xff\xfe", "UTF-16 text (what Windows PowerShell's `>` writes)",
     "save it as UTF-8, e.g. python3 -c 'import sys; open(sys.argv[2], \"w\", encoding=\"utf-8\")"
     ".write(open(sys.argv[1], encoding=\"utf-16\").read())' {file} rows.jsonl"),
    (b"\xfe\xff", "UTF-16 text",
     "save it as UTF-8, e.g. python3 -c 'import sys; open(sys.argv[2], \"w\", encoding=\"utf-8\")"
     ".write(open(sys.argv[1], encoding=\"utf-16\").read())' {file} rows.jsonl"),
)


def binary_shape(data: bytes | bytearray, source: str) -> RowsError | None:
    """The error for a file whose first bytes say it is not text (``MAGIC``), else None."""
    for magic, what, fix in MAGIC:
        if data[:len(magic)] == magic:
            return RowsError(f"is {what}, not JSONL", source=source,
                             fix=fix.format(file=_file_arg(source)))
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
    for delimiter, what in (("\t", "TSV (tab-separated)"), (",", "CSV"),
                            (";", "semicolon-separated values")):
        cells = [c.strip() for c in next(csv.reader([first], delimiter=delimiter))]
        if len(cells) < 2:
            continue
        if all(cells) and not any(_number(c) for c in cells):
            return _table(what, delimiter, cells, source, noun, lineno, expected)
        return RowsError(f"looks like {what} without a header line (line {lineno} begins "
                         f"{_peek(first)})", source=source,
                         fix="add a first line naming the columns (e.g. task_id"
                             f"{delimiter}reward), then convert it to JSONL, one {noun} per line")
    return RowsError(f"is not JSON: line {lineno} begins {_peek(first)}", source=source,
                     fix=f"write one JSON object per line (JSONL), one {noun} each")


def _table(what: str, delimiter: str, names: list[str], source: str, noun: str, lineno: int,
           expected: tuple[str, ...]) -> RowsError:
    shown = ", ".join(names[:_NAMES_SHOWN])
    if len(names) > _NAMES_SHOWN:
        shown += f" ({_NAMES_SHOWN} of {len(names)} columns)"
    renames, notes = {}, []
    for want in expected:
        if want in names:
            continue
        alikes = look_alikes(want, names)
        if alikes:
            renames[alikes[0][0]] = want
            notes.append(f"`{alikes[0][0]}` is read as `{want}`")
        else:
            notes.append(f"no column is `{want}`")
    script = (
        "import csv,json,sys; R={%s}; J=lambda s: {\"true\": True, \"false\": False, \"\": None}"
        ".get(s.lower(), int(s) if s.lstrip(\"-\").isdigit() else float(s) if s.replace(\".\", "
        "\"\", 1).lstrip(\"-\").isdigit() else s); rs=({k: J(v) for k, v in d.items()} for d in "
        "csv.DictReader(open(sys.argv[1], newline=\"\", encoding=\"utf-8-sig\"), delimiter=%s)); %s"
        % (", ".join(f"{_q(a)}: {_q(b)}" for a, b in renames.items()), _q(delimiter), EMIT))
    fix = (f"convert it to JSONL ({'; '.join(notes)}), e.g. " if notes else
           "convert it to JSONL, e.g. ")
    return RowsError(f"looks like {what} with columns {shown}, not JSONL", source=source,
                     line=lineno if lineno > 1 else None,
                     fix=fix + f"python3 -c {shlex.quote(script)} {_file_arg(source)} > rows.jsonl")


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
                         fix=f"if those are the {plural(noun)}, write them one per line, e.g. python3 "
                             "-c " + shlex.quote(
                                 "import json,sys; [print(json.dumps(r)) for r in json.load(open("
                                 f"sys.argv[1], encoding=\"utf-8-sig\"))[{_q(key)}]]")
                             + f" {_file_arg(source)} > rows.jsonl")
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
