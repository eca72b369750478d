"""Records: the one reader of every JSONL or JSON-array input (rows, traces, judge items, pairs,
episodes, the importers' JSONL files), with the file and line of each record for error messages.

A file is opened through the door (``whileai_core.safepath``: under the root, no link, a regular
file within the size and time limits; gzip unpacked as it is read) and read in chunks of
``CHUNK`` bytes, each cut at its last newline. msgspec decodes each run of whole lines in one C
call, into the form the caller keeps: dicts (:func:`read_records`) or columns (:func:`read_rows`,
what ``load_rows`` reads: the known fields typed, every other field kept as its JSON text). A JSON
array is read the same way, in runs of objects cut between two of them, so no single call holds
the interpreter for the whole file (the server's event loop answers between runs).

Only when msgspec refuses a run does the reader look closer: it halves the run until the lines
msgspec refuses stand alone, and reads each of those with Python's own ``json`` (through
``safejson``): what Python accepts is read as Python reads it (``NaN``, a number past a float's
range, a lone surrogate), and anything else is refused naming its file, line and column in
Python's words, with the fix. A file that is not JSON lines at all (CSV, Parquet, one document
over many lines) is named by ``whileai_core.file_shapes``. The answer is what Python's ``json``
reads, line by line, with three rules of its own, each enforced once here:

- nesting deeper than ``JSON_MAX_DEPTH`` levels is refused (Python's limit moves with the stack
  it runs on; a record this deep is not data any reader here uses);
- an integer of more digits than Python converts (4,300) is refused, as ``json`` refuses it;
- a lone surrogate (``"\\ud800"``, which no UTF-8 text can carry and no JSON writer can write
  back) is read as U+FFFD, and ``notes`` says so, naming the line and the field.

Line numbers: a line break is ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as Python's text mode
reads it); blank lines are skipped but counted; a UTF-8 byte-order mark on the first line is
dropped.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, compress, repeat
from operator import attrgetter, is_not
from typing import Any, Literal

import msgspec
import numpy as np

from . import file_shapes, safejson
from .columns import Columns, Piece, _Field, decode_raw, pieces_of_dicts
from .defaults import JSON_MAX_DEPTH
from .errors import RowsError, plural
from . import progress
from .progress import step
from .safepath import OpenFile, Root, UserPath, as_user_path, decode_text, is_path

TASK_FIELD = "task_id"
TASK_ALIASES = ("scenario_id",)  # accepted in place of task_id
_PEEK_LINE_MAX = 64 * 1024 * 1024
CHUNK = 8 << 20    # bytes decoded at once: per-chunk costs vanish (1 MB chunks were 1.7x slower
                   # in total) and one C call lasts ~15 ms, so the event loop gets its turns


class Records:
    """Records read from a JSONL/JSON file or given as a list, and where each one came from.

    ``where(i)`` gives the keyword arguments of a :class:`RowsError` for record ``i``: the file and
    its line (JSONL), the file and array element (JSON array), or ``<rows> row i`` for a list.
    ``notes``: what the reader changed to keep the records valid JSON (module docstring).
    """

    __slots__ = ("items", "name", "_lines", "_noun", "notes")

    def __init__(self, items: list, name: str, lines: np.ndarray | None | str, noun: str,
                 notes: list[str] | None = None):
        self.items, self.name, self._lines, self._noun = items, name, lines, noun
        self.notes = notes or []

    def __len__(self) -> int:
        return len(self.items)

    def where(self, i: int) -> dict[str, Any]:
        if isinstance(self._lines, np.ndarray):
            return {"source": self.name, "line": int(self._lines[i])}
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
# the fields each kind of record must carry, for naming a table's columns (file_shapes)
NEEDED = {"row": (TASK_FIELD, "reward"), "trace": (TASK_FIELD, "messages")}


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
        with path.open_stream("rows", error=RowsError) as fh:
            sink = _Dicts()
            reader = _Reader(fh, noun, sink)
            lines = reader.read()
            return Records(sink.items, reader.name, lines, noun, reader.notes)
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


def read_rows(fh: OpenFile, noun: str = "row") -> Columns:
    """Every record of the open file ``fh`` as columns (:mod:`whileai_core.columns`): the fields
    ``load_rows`` checks decoded (``TYPED``), every other field kept as its JSON text."""
    sink = _Rows()
    reader = _Reader(fh, noun, sink)
    lines = reader.read()
    return sink.columns(reader.name, lines, reader.notes)


# --- the reader --------------------------------------------------------------------------------

class _GiveUp(Exception):
    """msgspec refused a run of lines: look closer."""


class _TooDeep(Exception):
    """Record ``i`` of a run is nested past ``JSON_MAX_DEPTH``, or holds an over-long integer."""

    def __init__(self, i: int, problem: str) -> None:
        self.i, self.problem = i, problem


_GENERIC = msgspec.json.Decoder()
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_SPACE = b" \t\r\n\x0b\x0c"  # what bytes.strip() strips: the blank lines' test
_BOM = b"\xef\xbb\xbf"
_CUT = re.compile(rb"\}\s*,\s*\{")  # where an array may be cut between two objects
_CUT_TRIES = 8  # cuts tried past one that lands inside a value, before reading the file exactly


class _Reader:
    """One file read into ``sink`` (:class:`_Dicts` or :class:`_Rows`); ``read`` returns where
    each record came from (see :class:`Records`)."""

    def __init__(self, fh: OpenFile, noun: str, sink: Any) -> None:
        self.fh, self.noun, self.sink = fh, noun, sink
        self.name = str(fh.path)
        self.notes: list[str] = []
        self.spans: list[tuple[int, np.ndarray | None, int]] = []  # (lines before, where its
        # records are among its lines (None: its first lines, in order), records)
        self.plain = True  # every record so far is on line (record + 1)
        self.rows = 0
        self.form = "jsonl"  # or "array"

    # --- the file as a whole ---------------------------------------------------------------
    def read(self) -> np.ndarray | str:
        step(1, 3, f"parsing {self.fh.stat.st_size:,} bytes of {self.name}")
        chunks = self.fh.chunks(CHUNK)
        first = next(chunks, b"")
        wrong = file_shapes.binary_shape(first, self.name)
        if wrong is not None:
            raise wrong
        first = first[3:] if first[:3] == _BOM else first
        head = first.lstrip()[:1]
        if head == b"{":
            self._jsonl(chain((first,), chunks))
        elif head != b"[" or not self._array(chain((first,), chunks)):
            return self._exact()
        if self.rows == 0:
            return self._exact()
        return self._lines()

    def _lines(self) -> np.ndarray | str:
        if self.form == "array":
            return "array"
        if self.plain:
            return "jsonl"
        lines = np.empty(self.rows, dtype=np.int64)
        row = 0
        for before, at, size in self.spans:
            lines[row:row + size] = before + 1 + (np.arange(size) if at is None else at)
            row += size
        return lines

    def _text(self) -> str:
        """The whole file as text (read again through the same handle)."""
        data = bytearray().join(self.fh.chunks(CHUNK))
        return decode_text(data, self.fh.path.where, RowsError,
                           fix="save the rows as UTF-8 JSONL")

    def _exact(self) -> np.ndarray | str:
        """The whole file read by Python's ``json``, as the reader reads a line it looks closer
        at: for a file msgspec cannot cut into runs (not JSON lines, a JSON array it refuses),
        so that its error names what the file is and where it goes wrong."""
        self.sink.reset()
        self.spans, self.plain, self.rows, self.notes, self.form = [], True, 0, [], "jsonl"
        text = self._text()
        stripped = text.lstrip()
        if not stripped:
            form = RECORD_FORMS.get(self.noun)
            raise RowsError(f"is empty: no {plural(self.noun)}", source=self.name,
                            fix=f"write one JSON object per line, one {self.noun} each"
                            + (f", e.g. {form}" if form else ""))
        if stripped[0] not in "[{":
            wrong = file_shapes.text_shape(text, self.name, self.noun,
                                           NEEDED.get(self.noun, ()))
            if wrong is not None:
                raise wrong
        if stripped[0] == "[":
            try:
                data = safejson.loads(text)
            except json.JSONDecodeError as exc:
                if exc.msg != "Extra data":  # "[...]" then more lines: JSONL, a bad first row
                    raise RowsError(f"invalid JSON ({exc.msg})", source=self.name,
                                    line=exc.lineno, fix="make the file one JSON array of row "
                                    "objects, or JSONL") from None
            else:
                return self._exact_array(data)
        at, records, _ = self._exact_lines(text, 0)
        self._keep_exact(records, 0, np.asarray(at))
        return self._lines()

    def _exact_array(self, data: Any) -> str:
        if not isinstance(data, list):
            raise RowsError("is not a JSON array of rows", source=self.name,
                            fix="write one JSON object per line (JSONL)")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise RowsError(f"array element {i + 1} is a {type(rec).__name__}, expected an "
                                "object", source=self.name,
                                fix='give each row as {"task_id": "...", "reward": 1.0}')
            data[i] = self._checked(rec, {"source": f"{self.name} array element {i + 1}"},
                                    f"array element {i + 1}")
        self.form = "array"
        self.sink.add_dicts(data, 0)
        self.rows = len(data)
        return "array"

    # --- JSON lines --------------------------------------------------------------------------
    def _jsonl(self, chunks: Iterable[bytes]) -> None:
        before = 0
        for data, start, end in _bodies(chunks):
            if not before:  # the first row (blank lines before it count) decides the decoder
                opens = data.find(b"{", start, end)
                if opens >= 0:
                    stop = data.find(b"\n", opens, end)
                    self.sink.start(data[opens:end if stop < 0 else stop])
            before += self._span(data, start, end, before)

    def _span(self, data: bytes, start: int, end: int, before: int) -> int:
        """Read the lines ``data[start:end]`` (the file's lines after ``before``); return how
        many lines they are."""
        if _lone_cr(data, start, end):  # a line break msgspec does not see: read them exactly
            return self._slow(data, start, end, before)
        try:  # (the view is not released: the JSON text kept points into it until kept)
            batch = self.sink.decode_lines(memoryview(data)[start:end])
        except _GiveUp:
            batch = None
        place = None if batch is None else _placed(data, start, end, len(batch[1]))
        if place is None:  # refused, or two records on one line: halve it, or read it exactly
            mid = data.rfind(b"\n", start, (start + end) // 2)
            if mid < 0:
                mid = data.find(b"\n", (start + end) // 2, end - 1)
            if mid < 0:
                return self._slow(data, start, end, before)
            got = self._span(data, start, mid + 1, before)
            return got + self._span(data, mid + 1, end, before + got)
        at, n_lines = place
        self._keep(batch, before, at)
        return n_lines

    def _keep(self, batch: Any, before: int, at: np.ndarray | None) -> None:
        size = len(batch[1])
        try:
            self.sink.commit(batch, self.rows)
        except _TooDeep as exc:
            line = before + 1 + (exc.i if at is None else int(at[exc.i]))
            raise _too_deep_error(exc.problem, source=self.name, line=line) from None
        self.plain = self.plain and at is None and before == self.rows
        self.spans.append((before, at, size))
        self.rows += size

    def _slow(self, data: bytes, start: int, end: int, before: int) -> int:
        """The lines ``data[start:end]`` read one by one by Python's ``json``."""
        try:
            text = bytes(data[start:end]).decode("utf-8")
        except UnicodeDecodeError:
            self._text()  # raises the door's error, naming the byte in the whole file
            raise
        at, records, n_lines = self._exact_lines(text, before)
        self._keep_exact(records, before, np.asarray(at, dtype=np.int64))
        return n_lines

    def _keep_exact(self, records: list[dict], before: int, at: np.ndarray) -> None:
        if not records:
            return
        self.sink.add_dicts(records, self.rows)
        self.plain = self.plain and before == self.rows and bool(
            (at == np.arange(at.shape[0])).all())
        self.spans.append((before, at, len(records)))
        self.rows += len(records)

    def _exact_lines(self, text: str, before: int) -> tuple[list[int], list[dict], int]:
        """``(positions, records, lines)`` of the text ``text`` (the file's lines after
        ``before``): each record's 0-based line in it, the records, and its line count."""
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        at, records = [], []
        for k, line in enumerate(lines):
            if not line or line.isspace():
                continue
            lineno = before + k + 1
            try:
                rec = safejson.loads(line)
            except json.JSONDecodeError as exc:
                if exc.msg.startswith("nested too deeply"):
                    raise _too_deep_error("nested", source=self.name, line=lineno) from None
                err = RowsError(f"invalid JSON at column {exc.colno} ({exc.msg})",
                                source=self.name, line=lineno,
                                fix="write exactly one JSON object per line")
                if self.rows == 0 and not records:  # the first row: one document over lines?
                    raise file_shapes.document_shape(self._text(), self.name, self.noun,
                                                     lineno) or err from None
                raise err from None
            if not isinstance(rec, dict):
                raise RowsError(f"a {type(rec).__name__}, expected a JSON object",
                                source=self.name, line=lineno,
                                fix='write each row as {"task_id": "...", "reward": 1.0}')
            at.append(k)
            records.append(self._checked(rec, {"source": self.name, "line": lineno},
                                         f"line {lineno}"))
        return at, records, len(lines) - (1 if text.endswith("\n") else 0)

    def _checked(self, rec: dict, where: dict[str, Any], place: str) -> dict:
        """A record Python's ``json`` read, within the depth limit and with every lone
        surrogate read as U+FFFD (noted)."""
        if _deeper_than(rec, JSON_MAX_DEPTH):
            raise _too_deep_error("nested", **where)
        try:
            _UTF8(rec)
            return rec
        except UnicodeEncodeError:
            pass
        clean = {}
        for key, value in rec.items():
            fixed_key, fixed = _replaced(key), _replaced(value)
            if fixed_key is not key or fixed is not value:
                self._note(f"{place}: `{_visible(key)}` held a lone surrogate (an unpaired "
                           "\\ud800-\\udfff escape, which UTF-8 text cannot carry); read as "
                           "U+FFFD")
            clean[fixed_key] = fixed
        return clean

    def _note(self, note: str) -> None:
        self.notes.append(f"{self.name}, {note}")
        progress.note(self.notes[-1])

    # --- a JSON array --------------------------------------------------------------------------
    def _array(self, chunks: Iterable[bytes]) -> bool:
        """A JSON array of objects, decoded in runs of objects cut between two of them; False
        when a run cannot be cut or decoded (the caller reads the file exactly)."""
        self.form = "array"
        self.sink.start(None)
        buf = bytearray()
        pos = -1
        for chunk in chunks:
            buf += chunk
            if pos < 0:
                pos = buf.index(b"[") + 1
            while len(buf) - pos > 2 * CHUNK:
                cut = self._array_run(buf, pos, len(buf) - CHUNK)
                if cut is None:
                    return False
                if cut == pos:
                    break
                pos = cut
            del buf[:pos]
            pos = 0
        tail = bytes(buf[pos:]).rstrip()
        if not tail.endswith(b"]"):
            return False
        try:
            batch = self.sink.decode_array(b"[" + tail)
        except _GiveUp:
            return False
        self._keep_array(batch)
        return True

    def _array_run(self, buf: bytearray, pos: int, limit: int) -> int | None:
        """Decode the objects from ``pos`` up to a cut at least ``CHUNK`` bytes on (trying a
        later cut when one lands inside a value); the position after the run, ``pos`` when no
        cut is found before ``limit``, None when none decodes."""
        search = pos + CHUNK
        for _ in range(_CUT_TRIES):
            found = _CUT.search(buf, search, limit)
            if found is None:
                return pos
            try:
                batch = self.sink.decode_array(b"[" + buf[pos:found.start() + 1] + b"]")
            except _GiveUp:
                search = found.end()
                continue
            self._keep_array(batch)
            return found.end() - 1
        return None

    def _keep_array(self, batch: Any) -> None:
        try:
            self.sink.commit(batch, self.rows)
        except _TooDeep as exc:
            raise _too_deep_error(exc.problem, source=f"{self.name} array element "
                                  f"{self.rows + exc.i + 1}") from None
        self.rows += len(batch[1])


def _too_deep_error(problem: str, **where: Any) -> RowsError:
    if problem == "nested":
        return RowsError(f"nested too deeply (objects or arrays inside each other more than "
                         f"{JSON_MAX_DEPTH} levels)", **where,
                         fix=f"write records at most {JSON_MAX_DEPTH} levels deep (flatten "
                             "the value, or store it as a JSON string)")
    return RowsError(f"invalid JSON at column 1 (a number with more than "
                     f"{sys.get_int_max_str_digits()} digits)", **where,
                     fix="write exactly one JSON object per line")


_UTF8 = msgspec.json.Encoder().encode  # raises UnicodeEncodeError on a lone surrogate
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replaced(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings replaced by U+FFFD (``value`` itself
    when it holds none)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        fixed = list(map(_replaced, value))
        return fixed if any(map(is_not, fixed, value)) else value
    if isinstance(value, dict):
        keys, values = list(map(_replaced, value)), list(map(_replaced, value.values()))
        changed = any(map(is_not, keys, value)) or any(map(is_not, values, value.values()))
        return dict(zip(keys, values)) if changed else value
    return value


def _visible(name: str) -> str:
    return name.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")[:80]


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects or arrays more than ``limit`` levels deep (iteratively:
    the check must not need the depth it measures)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        inner = item.values() if isinstance(item, dict) else item
        stack.extend((v, depth + 1) for v in inner if isinstance(v, (dict, list)))
    return False


# --- runs of lines ----------------------------------------------------------------------------

def _bodies(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, int, int]]:
    """Runs of whole lines as ``(data, start, end)``: slices of the chunks read, not copies
    (only a line that straddles two chunks is joined, and a line longer than a chunk)."""
    pending: list[bytes] = []  # the start of a line that the next chunk ends
    for data in chunks:
        start = 0
        if pending:
            nl = data.find(b"\n")
            if nl < 0:
                pending.append(data)
                continue
            joint = b"".join(pending) + data[:nl + 1]
            pending = []
            yield joint, 0, len(joint)
            start = nl + 1
        cut = max(data.rfind(b"\n") + 1, start)
        if cut > start:
            yield data, start, cut
        if cut < len(data):
            pending.append(data[cut:])
    if pending:
        tail = b"".join(pending)
        yield tail, 0, len(tail)


def _lone_cr(data: bytes, start: int, end: int) -> bool:
    """A carriage return outside a CRLF in ``data[start:end]`` (a line break msgspec ignores)."""
    return data.find(b"\r", start, end) >= 0 and \
        data.count(b"\r", start, end) != data.count(b"\r\n", start, end)


def _placed(data: bytes, start: int, end: int, n_recs: int) -> tuple[np.ndarray | None,
                                                                     int] | None:
    """Where the ``n_recs`` records decoded from the run of lines ``data[start:end]`` are:
    ``(at, lines)``, ``at`` None when they are its first lines in order (no blank line among
    them), else each record's 0-based line in the run; ``lines`` the run's line count. None when
    they do not line up with its non-blank lines (two records on one line)."""
    breaks = _count_newlines(data, start, end)
    last = end  # the end of the last line with something on it
    while last > start and data[last - 1] in _SPACE:
        last -= 1
    filled = breaks - data.count(b"\n", last, end) + 1 if last > start else 0  # (a short tail)
    if filled == n_recs:
        at = None
    else:
        at = np.flatnonzero(np.fromiter(map(bool, map(bytes.strip, data[start:end].split(
            b"\n"))), dtype=bool))
        if at.shape[0] != n_recs:
            return None
    return at, breaks + (data[end - 1] != 10)


def _count_newlines(data: bytes, start: int, end: int) -> int:
    # numpy's vectorised compare: 4x faster than bytes.count on a chunk (measured here)
    return int(np.count_nonzero(np.frombuffer(data, np.uint8, end - start, start) == 10))


def _suspects(raw: bytes, sizes: np.ndarray) -> np.ndarray:
    """Of the values in the JSON array text ``raw`` (sizes ``sizes``, one comma apart), those
    that may nest past ``JSON_MAX_DEPTH`` or hold an integer longer than Python converts: one
    with more opening brackets than the limit, or a digit run longer than it (in C, not per
    value)."""
    a = np.frombuffer(raw, dtype=np.uint8)
    opening = (a == 0x5B) | (a == 0x7B)
    digits = (a >= 0x30) & (a <= 0x39)
    digit_max = sys.get_int_max_str_digits() or sys.maxsize
    if int(np.count_nonzero(opening)) <= JSON_MAX_DEPTH and \
            int(np.count_nonzero(digits)) <= digit_max:
        return np.zeros(0, dtype=np.int64)
    starts = 1 + np.concatenate([[0], np.cumsum(sizes[:-1] + 1)]) if sizes.shape[0] else sizes
    hits = np.flatnonzero(np.add.reduceat(opening, starts) >= JSON_MAX_DEPTH) \
        if starts.shape[0] else np.zeros(0, dtype=np.int64)
    if int(np.count_nonzero(digits)) > digit_max:
        edge = np.flatnonzero(np.diff(np.concatenate([[0], digits.view(np.int8), [0]])))
        long = edge[::2][(edge[1::2] - edge[::2]) > digit_max]
        hits = np.union1d(hits, np.searchsorted(starts, long, side="right") - 1)
    return hits.astype(np.int64)


def _check_values(raws: list, sizes: np.ndarray, raw: bytes, base: np.ndarray | None) -> None:
    """Raise :class:`_TooDeep` for the first value of ``raws`` (msgspec Raw, the text ``raw``
    joins) nested past the limit or holding an over-long integer. ``base``: each value's record
    in the run (None: value i is record i)."""
    for k in _suspects(raw, sizes).tolist():
        i = k if base is None else int(base[k])
        try:
            value = safejson.loads(bytes(raws[k]))
        except json.JSONDecodeError as exc:
            raise _TooDeep(i, "nested" if exc.msg.startswith("nested") else "digits") from None
        if _deeper_than(value, JSON_MAX_DEPTH - 1):  # (its record is the level above)
            raise _TooDeep(i, "nested")


# --- what the reader keeps: dicts ----------------------------------------------------------------

class _Dicts:
    """Records as dicts (:func:`read_records`)."""

    def __init__(self) -> None:
        self.items: list[dict] = []

    def reset(self) -> None:
        self.items = []

    def start(self, first: bytes | None) -> None:
        pass

    def decode_lines(self, view: memoryview) -> tuple[None, list]:
        try:
            return self._checked(_GENERIC.decode_lines(view), view)
        except _REFUSED:
            raise _GiveUp from None

    def decode_array(self, data: bytes) -> tuple[None, list]:
        try:
            return self._checked(_GENERIC.decode(data), data)
        except _REFUSED:
            raise _GiveUp from None

    @staticmethod
    def _checked(recs: Any, data: Any) -> tuple[None, list]:
        if not isinstance(recs, list) or (recs and set(map(type, recs)) != {dict}):
            raise _GiveUp
        # nested past the limit: read exactly, which names the line (an integer Python would
        # not convert, msgspec refuses as well)
        a = np.frombuffer(data, dtype=np.uint8)
        if int(np.count_nonzero((a == 0x5B) | (a == 0x7B))) - len(recs) >= JSON_MAX_DEPTH and \
                any(_deeper_than(rec, JSON_MAX_DEPTH) for rec in recs):
            raise _GiveUp
        return None, recs

    def commit(self, batch: tuple[None, list], base: int) -> None:
        self.items += batch[1]

    def add_dicts(self, records: list[dict], base: int) -> None:
        self.items += records


# --- what the reader keeps: columns --------------------------------------------------------------

# The fields load_rows checks (and the budgets it reads): decoded to Python values as the rows
# load; every other field is kept as its JSON text. While every row so far has them in these
# types, the decoder vouches for their types and nothing is looked at per value.
TYPED = ("task_id", "scenario_id", "reward", "truncated", "model", "max_tokens",
         "completion_tokens", "finish_reason")
_STRICT = {"task_id": str | int, "scenario_id": str | int, "reward": int | float,
           "truncated": bool | None, "model": str | None, "max_tokens": int | float | None,
           "completion_tokens": int | float | None, "finish_reason": str | None}
_KNOWN = {"task_id": {str}, "scenario_id": {str}}  # at the literal level: str, and only str
STRUCT_FIELDS = 32  # fields a struct decodes (past this, or a name msgspec cannot rename: dicts)
_UNSET = msgspec.UNSET
_DICT_OF_RAW = msgspec.json.Decoder(dict[str, msgspec.Raw])
_DICTS_OF_RAW = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_NOT_RENAMED = re.compile(r'[\\"\x00-\x1f]')  # msgspec refuses these in a renamed field


class _Level:
    """One way to decode rows with the fields ``names``: a msgspec struct, the known fields
    typed, every other field its JSON text. ``first``: the first row, whose fields every row
    must then carry (none is looked for per row), a string task id, and its ``model`` and
    ``truncated`` as literals (one model and one flag throughout cost nothing per row); without
    it, every field optional, of any type ``load_rows`` reads."""

    def __init__(self, names: list[str], first: dict | None) -> None:
        literal = {} if first is None else {
            n: first[n] for n in ("model", "truncated")
            if n in first and type(first[n]) is {"model": str, "truncated": bool}[n]}
        slots = [f"f{i}" for i in range(len(names))]
        fields = []
        for slot, name in zip(slots, names):
            if name in literal:
                fields.append((slot, Literal[literal[name]]))
                continue
            kind = (str if first and name in _KNOWN else _STRICT[name]) \
                if name in _STRICT else msgspec.Raw
            fields.append((slot, kind) if first else (slot, kind, _UNSET))
        row = msgspec.defstruct("Row", fields, rename=dict(zip(slots, names)),
                                forbid_unknown_fields=True, gc=False, kw_only=True)
        self.names, self.literal, self.required = names, literal, first is not None
        self.lines = msgspec.json.Decoder(row).decode_lines
        self.array = msgspec.json.Decoder(list[row]).decode
        self.getters = [attrgetter(s) for s in slots]


class _Rows:
    """Records as columns (:func:`read_rows`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.fields: dict[str, list[Piece]] = {}
        self.kinds: dict[str, set[type] | None] = {}
        self.levels: list[_Level] = []  # tried in order; none: a run is read as dicts
        self.n = 0

    def columns(self, source: str, lines: Any, notes: list[str]) -> Columns:
        fields = {name: _Field(pieces, self.kinds.get(name))
                  for name, pieces in self.fields.items()}
        return Columns(self.n, fields, source, lines, notes=notes)

    # --- decoding a run ------------------------------------------------------------------
    def decode_lines(self, view: memoryview) -> tuple[_Level | None, list]:
        return self._decode(view, lambda level: level.lines, _DICT_OF_RAW.decode_lines)

    def decode_array(self, data: bytes) -> tuple[_Level | None, list]:
        return self._decode(data, lambda level: level.array, _DICTS_OF_RAW.decode)

    def _decode(self, data: Any, by_struct: Any, by_dicts: Any) -> tuple[_Level | None, list]:
        while self.levels:
            level = self.levels[0]
            try:
                return level, by_struct(level)(data)
            except msgspec.ValidationError as exc:
                if level.required:  # not every field, one model or one flag throughout
                    self.levels.pop(0)
                    continue
                if "unknown field" not in str(exc):
                    break  # a value of another type: this run as dicts, then the struct again
                self.levels = []  # a new field: learned from this run's dicts (commit)
            except (msgspec.DecodeError, RecursionError):
                break
        try:
            recs = by_dicts(data)
        except _REFUSED:
            raise _GiveUp from None
        if not isinstance(recs, list) or (recs and set(map(type, recs)) != {dict}):
            raise _GiveUp
        return None, recs

    def start(self, first: bytes | None) -> None:
        """Decode with a struct of the first row's fields (``first``, its line; None: learn
        them from the first run, read as dicts)."""
        try:
            row = None if first is None else _GENERIC.decode(first)
        except _REFUSED:
            row = None
        self.levels = self._levels(list(row), row) if isinstance(row, dict) else []

    @staticmethod
    def _levels(names: list[str], first: dict | None) -> list[_Level]:
        if len(names) > STRUCT_FIELDS or any(_NOT_RENAMED.search(n) for n in names):
            return []
        return ([_Level(names, first)] if first else []) + [_Level(names, None)]

    # --- keeping a decoded run --------------------------------------------------------------
    def commit(self, batch: tuple[_Level | None, list], base: int) -> None:
        level, recs = batch
        if not recs:
            return
        if level is None:
            self._commit_dicts(recs, base)
        else:
            self._commit_structs(level, recs, base)
        self.n = base + len(recs)

    def _commit_structs(self, level: _Level, recs: list, base: int) -> None:
        n = len(recs)
        for name, getter in zip(level.names, level.getters):
            if name in level.literal:
                self._add(name, Piece(base, base + n, const=(level.literal[name],)),
                          {type(level.literal[name])})
                continue
            values = list(map(getter, recs))
            absent = 0 if level.required else values.count(_UNSET)
            if absent == n:
                continue
            index = None
            if absent:
                mask = np.fromiter(map(is_not, values, repeat(_UNSET)), dtype=bool, count=n)
                index = np.flatnonzero(mask)
                values = list(compress(values, mask.tolist()))
                index += base
            start = base if index is None else int(index[0])
            stop = base + n if index is None else int(index[-1]) + 1
            if name in _STRICT:
                kinds = _KNOWN[name] if level.required and name in _KNOWN else \
                    set(map(type, values))
                self._add(name, Piece(start, stop, index, values=values), kinds)
            else:
                self._add(name, self._raw_piece(values, start, stop, index,
                                                None if index is None else index - base), None)

    def _commit_dicts(self, recs: list[dict], base: int) -> None:
        for name, piece in pieces_of_dicts(recs, base):
            local = None if piece.index is None else piece.index - base
            raws, piece.values = piece.values, None
            raw = self._raw_piece(raws, piece.start, piece.stop, piece.index, local)
            if name in _STRICT:
                values = decode_raw(raw.raw)
                self._add(name, Piece(piece.start, piece.stop, piece.index, values=values),
                          set(map(type, values)))
            else:
                self._add(name, raw, None)
        if self.levels == [] and self.fields and len(self.fields) <= STRUCT_FIELDS:
            self.levels = self._levels(list(self.fields), None)  # (the fields learned)

    @staticmethod
    def _raw_piece(raws: list, start: int, stop: int, index: np.ndarray | None,
                   local: np.ndarray | None) -> Piece:
        raw = b"[" + b",".join(raws) + b"]"
        sizes = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
        _check_values(raws, sizes, raw, local)
        return Piece(start, stop, index, raw=raw)

    def add_dicts(self, records: list[dict], base: int) -> None:
        """Records Python's ``json`` read (a line msgspec refused, or the whole file)."""
        for name, piece in pieces_of_dicts(records, base):
            self._add(name, piece, set(map(type, piece.values)))
        self.n = base + len(records)

    def _add(self, name: str, piece: Piece, kinds: set[type] | None) -> None:
        if name not in self.fields:
            self.fields[name] = [piece]
            self.kinds[name] = kinds
            return
        self.fields[name].append(piece)
        known = self.kinds[name]
        self.kinds[name] = None if known is None or kinds is None else known | kinds


# --- a peek at the first record ----------------------------------------------------------------

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
