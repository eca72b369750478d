"""Records: the one reader of every JSONL or JSON-array input (rows, traces, judge items, pairs,
episodes, the importers' JSONL files), with the file and line of each record for error messages.

A file is opened through the door (``whileai_core.safepath``) and read in chunks of ``CHUNK``
bytes, each cut at its last newline. msgspec decodes each run of whole lines (about ``RUN``
bytes) in one C call into columns (``whileai_core.columns``): the fields ``load_rows`` checks
typed (``_TYPED``), every other field kept as its JSON text; while a run is in the CPU's cache,
its task ids become codes of runs of equal ids and its float rewards a float64 array
(``_Typed``). A JSON array is read in runs of objects too, so a server's event loop answers
between runs.

When msgspec refuses a run, it is halved until the refused lines stand alone, each then read by
Python's ``json`` (``safejson``): the records are exactly what Python's ``json`` reads line by
line, anything else refused naming file, line and column (``whileai_core.file_shapes`` names a
file that is not JSON lines at all). Three rules on top, enforced here:

- nesting deeper than ``JSON_MAX_DEPTH`` levels is refused (Python's own limit moves with the
  stack it runs on);
- an integer of more digits than Python converts is refused, as ``json`` refuses it;
- a lone surrogate (no UTF-8 text can carry it) is read as U+FFFD, and ``notes`` says so.

A line break is ``\\n``, ``\\r\\n`` or a lone ``\\r``; blank lines are skipped but counted; a
UTF-8 byte-order mark on the first line is dropped.
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

from . import file_shapes, progress, safejson
from .columns import Columns, Piece, _Field, decode_raw, pieces_of_dicts
from .defaults import JSON_MAX_DEPTH
from .errors import RowsError, json_kind, plural
from .safepath import OpenFile, Root, UserPath, as_user_path, decode_text, is_path

TASK_FIELD = "task_id"
TASK_ALIASES = ("scenario_id",)  # accepted in place of task_id
CHUNK = 8 << 20    # bytes read at once (and a JSON array's runs): per-read costs vanish
RUN = 1 << 19      # bytes of lines decoded by one C call: short, so the event loop gets its
                   # turns and the records are still in the CPU's cache when their columns are read
_PEEK_LINE_MAX = 64 * 1024 * 1024


class Records:
    """Records read from a JSONL/JSON file or given as a list. ``where(i)``: the keyword
    arguments of a :class:`RowsError` for record ``i``; ``notes``: what the reader changed."""

    __slots__ = ("items", "name", "_lines", "_noun", "notes")

    def __init__(self, items: list, name: str, lines: Any, noun: str,
                 notes: list[str] | None = None):
        self.items, self.name, self._lines, self._noun = items, name, lines, noun
        self.notes = notes or []

    def __len__(self) -> int:
        return len(self.items)

    def where(self, i: int) -> dict[str, Any]:
        return Columns(len(self.items), {}, self.name, self._lines, self._noun).where(i)


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
    """Records from a path (JSONL, or one JSON array of objects) or a list of mappings, each
    an object, else a :class:`RowsError` naming where (``noun``: a record's name there). A path
    is opened through the door, under ``root`` when given."""
    if is_path(source):
        path = as_user_path(source, root, argument=f"{plural(noun)}", error=RowsError)
        with path.open_stream("rows", error=RowsError) as fh:
            reader = _Reader(fh, noun, dicts=True)
            lines = reader.read()
        return Records(reader.items, reader.name, lines, noun, reader.notes)
    if isinstance(source, Mapping):
        raise RowsError(f"got one {noun} (a dict), expected a list of them",
                        fix=f"wrap it in a list: [{noun}]")
    if not isinstance(source, Iterable) or isinstance(source, (str, bytes, bytearray)):
        raise RowsError(f"cannot read {plural(noun)} from a {type(source).__name__}",
                        fix="pass a path to a .jsonl/.json file or a list of dicts")
    items = list(source)
    for i, rec in enumerate(items):
        if not isinstance(rec, Mapping):
            raise RowsError(f"{noun} {i + 1} is {json_kind(rec)}, expected an object",
                            source=f"<{plural(noun)}>",
                            fix='give each as a JSON object, e.g. {"task_id": "...", "reward": 1.0}')
    if items and not all(type(r) is dict for r in items):
        items = [dict(r) for r in items]
    return Records(items, f"<{plural(noun)}>", None, noun)


def read_rows(fh: OpenFile, noun: str = "row") -> Columns:
    """Every record of the open file ``fh`` as columns; a task id or reward column read typed
    is carried as ``Columns.typed`` and the field made from it when read."""
    reader = _Reader(fh, noun)
    lines = reader.read()
    typed = {name: made for name in (TASK_FIELD, "reward")
             if (made := reader.typed(name)) is not None}
    fields = {k: _Field(v, reader.kinds[k]) for k, v in reader.fields.items()}
    if TASK_FIELD in typed:
        index, ids, _ = typed[TASK_FIELD]
        fields[TASK_FIELD] = _Field([], {str}, count=reader.rows, make=(
            lambda: list(map(ids.__getitem__, index.tolist()))))
    if "reward" in typed:
        fields["reward"] = _Field([], {float}, count=reader.rows, make=typed["reward"].tolist)
    return Columns(reader.rows, fields, reader.name, lines, noun, reader.notes, typed)


# --- the reader --------------------------------------------------------------------------------

# The fields load_rows checks (and the budgets it reads): decoded to Python values as the rows
# load, in these types while every row so far has them so (the decoder vouches for them, nothing
# is looked at per value); every other field is kept as its JSON text.
_TYPED = {"task_id": str | int, "scenario_id": str | int, "reward": int | float,
          "truncated": bool | None, "model": str | None, "max_tokens": int | float | None,
          "completion_tokens": int | float | None, "finish_reason": str | None}
_STRUCT_FIELDS = 32  # fields a struct decodes (past this, or a name msgspec cannot rename: dicts)
_NOT_RENAMED = re.compile(r'[\\"\x00-\x1f]')  # what msgspec refuses in a renamed field
_GENERIC = msgspec.json.Decoder()
_DICT_OF_RAW = msgspec.json.Decoder(dict[str, msgspec.Raw])
_DICTS_OF_RAW = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_UNSET = msgspec.UNSET
_SPACE = b" \t\r\n\x0b\x0c"  # what bytes.strip() strips: the blank lines' test
_CUT = re.compile(rb"\}\s*,\s*\{")  # where an array may be cut between two objects
_CUT_TRIES = 8  # later cuts tried when one lands inside a value, before reading exactly


def distinct(ids: list[str]) -> bool:
    """Whether no two of ``ids`` are equal: each after the one before (numpy, in C), or else
    none seen twice (hashed)."""
    if len(ids) > 1:
        at = np.array(ids, dtype=object)
        if bool(np.greater(at[1:], at[:-1]).all()):
            return True
    return len(set(ids)) == len(ids)


class _Typed(Piece):
    """A run's task ids (``codes``: runs of equal ids in ``_Reader.keys`` and ``starts``) or
    float64 rewards (``array``), while every row has one of the type; joined into one column,
    or turned back into values, by :meth:`_Reader.typed`."""

    __slots__ = ("codes", "array")

    def __init__(self, start: int, stop: int, *, codes: bool | None = None,
                 array: np.ndarray | None = None) -> None:
        super().__init__(start, stop)
        self.codes, self.array = codes, array


class _Refused(Exception):
    """msgspec refused a run of lines: look closer."""


class _TooDeep(Exception):
    """Record ``i`` of a run nests past ``JSON_MAX_DEPTH`` (``problem`` "nested") or holds an
    over-long integer ("digits")."""

    def __init__(self, i: int, problem: str) -> None:
        self.i, self.problem = i, problem


class _Level:
    """One way to decode rows of the fields ``names``: a msgspec struct, the typed fields typed,
    every other its JSON text. ``first``: the first row, whose fields every row must carry, with
    a string task id and its ``model`` and ``truncated`` as literals; None: every field optional."""

    def __init__(self, names: list[str], first: dict | None) -> None:
        self.literal = {} if first is None else {
            n: first[n] for n, kind in (("model", str), ("truncated", bool))
            if type(first.get(n)) is kind}
        slots = [f"f{i}" for i in range(len(names))]
        fields = []
        for slot, name in zip(slots, names):
            kind = Literal[self.literal[name]] if name in self.literal else (
                str if first and name in TASK_ALIASES + (TASK_FIELD,) else
                _TYPED.get(name, msgspec.Raw))
            fields.append((slot, kind) if first else (slot, kind, _UNSET))
        row = msgspec.defstruct("Row", fields, rename=dict(zip(slots, names)), kw_only=True,
                                forbid_unknown_fields=True, gc=False)
        self.names, self.required = names, first is not None
        self.lines = msgspec.json.Decoder(row).decode_lines
        self.array = msgspec.json.Decoder(list[row]).decode
        self.getters = list(map(attrgetter, slots))

    @classmethod
    def tried(cls, names: list[str], first: dict | None) -> list[_Level]:
        """The levels to try, in order (none when a struct cannot hold these fields)."""
        if len(names) > _STRUCT_FIELDS or any(map(_NOT_RENAMED.search, names)):
            return []
        return ([cls(names, first)] if first else []) + [cls(names, None)]


class _Reader:
    """One file read into columns (:func:`read_rows`), or into dicts (:func:`read_records`)."""

    def __init__(self, fh: OpenFile, noun: str, *, dicts: bool = False) -> None:
        self.fh, self.noun, self.name, self.dicts = fh, noun, str(fh.path), dicts
        self._reset()

    def _reset(self) -> None:
        self.items: list[dict] = []
        self.fields: dict[str, list[Piece]] = {}
        self.kinds: dict[str, set[type] | None] = {}
        self.levels: list[_Level] = []  # tried in order; none: a run is read as dicts
        self.notes: list[str] = []
        self.spans: list[tuple[int, np.ndarray | None, int]] = []  # per run: lines before it,
        # where its records are among its lines (None: its first lines, in order), records
        self.plain, self.rows, self.form = True, 0, "jsonl"  # plain: record i on line i + 1
        self.keys: list[str] = []  # the task id of each run of equal ones (_Typed.codes)
        self.starts: list[np.ndarray] = []  # the row where each of those runs starts
        self.last_id: str | None = None  # the task id of the last row read into codes
        self.ordered = True  # whether each run's id so far sorts after the one before

    # --- the file as a whole ---------------------------------------------------------------
    def read(self) -> np.ndarray | str:
        """Read the file; return where each record came from (see :class:`Records`)."""
        progress.step(1, 3, f"parsing {self.fh.stat.st_size:,} bytes of {self.name}")
        chunks = self.fh.chunks(CHUNK)
        first = next(chunks, b"")
        wrong = file_shapes.binary_shape(first, self.name)
        if wrong is not None:
            raise wrong
        first = first.removeprefix(b"\xef\xbb\xbf")
        head = first.lstrip()[:1]
        if head == b"{":
            self._jsonl(chain((first,), chunks))
        if head == b"[" and not self._array(chain((first,), chunks)) or not self.rows:
            self._exact()
        return self._lines()

    def _lines(self) -> np.ndarray | str:
        if self.form == "array" or self.plain:
            return self.form
        lines = np.empty(self.rows, dtype=np.int64)
        row = 0
        for before, at, size in self.spans:
            lines[row:row + size] = before + 1 + (np.arange(size) if at is None else at)
            row += size
        return lines

    def _text(self) -> str:
        """The whole file as text (read again through the same handle)."""
        return decode_text(bytearray().join(self.fh.chunks(CHUNK)), self.fh.path.where,
                           RowsError, fix="save the rows as UTF-8 JSONL")

    def _exact(self) -> None:
        """The whole file read by Python's ``json``: a file msgspec cannot cut into runs (not
        JSON lines, an array it refuses), so that its error names what it is and where."""
        self._reset()
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
                if not isinstance(data, list):
                    raise RowsError("is not a JSON array of rows", source=self.name,
                                    fix="write one JSON object per line (JSONL)")
                for i, rec in enumerate(data):
                    if not isinstance(rec, dict):
                        raise RowsError(f"array element {i + 1} is {json_kind(rec)}, "
                                        "expected an object", source=self.name,
                                        fix='give each row as {"task_id": "...", "reward": 1.0}')
                    data[i] = self._checked(rec, f"array element {i + 1}")
                self.form = "array"
                return self._keep_dicts(data, 0, None)
        at, records, _ = self._exact_lines(text, 0)
        self._keep_dicts(records, 0, np.asarray(at, dtype=np.int64))

    # --- JSON lines --------------------------------------------------------------------------
    def _jsonl(self, chunks: Iterable[bytes]) -> None:
        before = 0
        for data, start, end in _bodies(chunks):
            past = start  # where a run's RUN bytes start (the first: at the first record)
            if not before:  # the first row (blank lines before it count) decides the struct
                opens = data.find(b"{", start, end)
                stop = data.find(b"\n", opens, end)
                try:
                    row = _GENERIC.decode(data[opens:end if stop < 0 else stop])
                except _REFUSED:
                    row = None
                self._start(row if opens >= 0 else None)
                past = max(opens, start)
            while start < end:  # in runs of about RUN bytes, cut at a line's end
                cut = end if end - past < 2 * RUN else data.find(b"\n", past + RUN, end) + 1
                cut = cut or end
                before += self._span(data, start, cut, before)
                start = past = cut

    def _span(self, data: bytes, start: int, end: int, before: int) -> int:
        """Read the lines ``data[start:end]`` (after the file's first ``before``); how many."""
        if _lone_cr(data, start, end):  # a line break msgspec does not see: read them exactly
            return self._slow(data, start, end, before)
        # (counted before the decode, while the lines are in the CPU's cache)
        breaks = _breaks(data, start, end)
        try:  # (the view is not released: the JSON text kept points into it until kept)
            level, recs = self._decode(memoryview(data)[start:end], lines=True)
            place = _placed(data, start, end, len(recs), breaks)
        except _Refused:
            place = None
        if place is None:  # refused, or two records on one line: halve it, or read it exactly
            mid = data.rfind(b"\n", start, (start + end) // 2)
            if mid < 0:
                mid = data.find(b"\n", (start + end) // 2, end - 1)
            if mid < 0:
                return self._slow(data, start, end, before)
            got = self._span(data, start, mid + 1, before)
            return got + self._span(data, mid + 1, end, before + got)
        self._keep(level, recs, before, place[0])
        return place[1]

    def _slow(self, data: bytes, start: int, end: int, before: int) -> int:
        """The lines ``data[start:end]`` read one by one by Python's ``json``."""
        try:
            text = bytes(data[start:end]).decode("utf-8")
        except UnicodeDecodeError:
            self._text()  # raises the door's error, naming the byte in the whole file
            raise
        at, records, n_lines = self._exact_lines(text, before)
        self._keep_dicts(records, before, np.asarray(at, dtype=np.int64))
        return n_lines

    def _exact_lines(self, text: str, before: int) -> tuple[list[int], list[dict], int]:
        """``(positions, records, lines)`` of ``text``, the file's lines after ``before``: each
        record's 0-based line in it, the records, and its line count."""
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        at, records = [], []
        for k, line in enumerate(lines):
            if not line or line.isspace():
                continue
            lineno = before + k + 1
            try:
                rec = safejson.loads(line)
            except json.JSONDecodeError as exc:
                if exc.msg.startswith("nested too deeply"):
                    raise _too_deep("nested", source=self.name, line=lineno) from None
                err = RowsError(f"invalid JSON at column {exc.colno} ({exc.msg})",
                                source=self.name, line=lineno,
                                fix="write exactly one JSON object per line")
                if self.rows == 0 and not records:  # the first row: one document over lines?
                    raise file_shapes.document_shape(self._text(), self.name, self.noun,
                                                     lineno) or err from None
                raise err from None
            if not isinstance(rec, dict):
                raise RowsError(f"{json_kind(rec)}, expected a JSON object",
                                source=self.name, line=lineno,
                                fix='write each row as {"task_id": "...", "reward": 1.0}')
            at.append(k)
            records.append(self._checked(rec, f"line {lineno}"))
        return at, records, len(lines) - (1 if text.endswith(("\n", "\r")) else 0)

    def _checked(self, rec: dict, place: str) -> dict:
        """A record Python's ``json`` read, within the depth limit, every lone surrogate in it
        read as U+FFFD (and noted)."""
        if _deeper_than(rec, JSON_MAX_DEPTH):
            raise _too_deep("nested", **self._where(place))
        try:
            _UTF8(rec)
            return rec
        except UnicodeEncodeError:
            pass
        clean = {}
        for key, value in rec.items():
            fixed_key, fixed = _replaced(key), _replaced(value)
            if fixed_key is not key or fixed is not value:
                self.notes.append(f"{self.name}, {place}: `{_visible(key)}` held a lone "
                                  "surrogate (an unpaired \\ud800-\\udfff escape, which UTF-8 "
                                  "text cannot carry); read as U+FFFD")
                progress.note(self.notes[-1])
            clean[fixed_key] = fixed
        return clean

    def _where(self, place: str) -> dict[str, Any]:
        if place.startswith("line "):
            return {"source": self.name, "line": int(place[5:])}
        return {"source": f"{self.name} {place}"}

    # --- a JSON array --------------------------------------------------------------------------
    def _array(self, chunks: Iterable[bytes]) -> bool:
        """A JSON array of objects, decoded in runs cut between two objects; False when a run
        cannot be cut or decoded (the caller reads the file exactly)."""
        self.form = "array"
        buf, pos = bytearray(), -1
        for chunk in chunks:
            buf += chunk
            if pos < 0:
                pos = buf.index(b"[") + 1
                self._start(first_record(bytes(buf[:1 << 16]).decode("utf-8", "replace")))
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
        try:
            if not tail.endswith(b"]"):
                raise _Refused
            self._keep(*self._decode(b"[" + tail, lines=False), None, None)
        except _Refused:
            return False
        return True

    def _array_run(self, buf: bytearray, pos: int, limit: int) -> int | None:
        """Decode the objects from ``pos`` up to a cut at least ``CHUNK`` bytes on (a later cut
        when one lands inside a value); the position after them, ``pos`` when no cut is found
        before ``limit``, None when none decodes."""
        search = pos + CHUNK
        for _ in range(_CUT_TRIES):
            found = _CUT.search(buf, search, limit)
            if found is None:
                return pos
            try:
                run = self._decode(b"[" + buf[pos:found.start() + 1] + b"]", lines=False)
            except _Refused:
                search = found.end()
                continue
            self._keep(*run, None, None)
            return found.end() - 1
        return None

    # --- decoding a run ----------------------------------------------------------------------
    def _start(self, row: Any) -> None:
        """Decode by a struct of the first record's fields, when it is an object."""
        self.levels = _Level.tried(list(row), row) if isinstance(row, dict) else []

    def _decode(self, data: Any, *, lines: bool) -> tuple[_Level | None, list]:
        """A run's records: structs and the level that made them, or dicts of JSON text (a
        field not seen before, a value of another type: the next run tries the struct again),
        or of values (``dicts``); :class:`_Refused` when msgspec refuses it."""
        if self.dicts:
            try:
                recs = (_GENERIC.decode_lines if lines else _GENERIC.decode)(data)
            except _REFUSED:
                raise _Refused from None
            if not isinstance(recs, list) or (recs and set(map(type, recs)) != {dict}) or \
                    _too_nested(data, recs):
                raise _Refused  # (read closer: the line is named there)
            return None, recs
        while self.levels:
            level = self.levels[0]
            try:
                return level, (level.lines if lines else level.array)(data)
            except msgspec.ValidationError as exc:
                if level.required:  # not every field, one model or one flag throughout
                    self.levels.pop(0)
                    continue
                if "unknown field" in str(exc):
                    self.levels = []  # learned from this run's dicts (_keep)
                break
            except (msgspec.DecodeError, RecursionError):
                break
        try:
            recs = (_DICT_OF_RAW.decode_lines if lines else _DICTS_OF_RAW.decode)(data)
        except _REFUSED:
            raise _Refused from None
        return None, recs

    # --- keeping a decoded run ---------------------------------------------------------------
    def _keep(self, level: _Level | None, recs: list, before: int | None,
              at: np.ndarray | None) -> None:
        base, n = self.rows, len(recs)
        if self.dicts:
            self.items += recs
            return self._advance(n, before, at)
        try:
            if level is not None:
                self._keep_structs(level, recs, base)
            else:
                for name, start, stop, index, raws in pieces_of_dicts(recs, base):
                    raw = _raw_piece(raws, start, stop, index, base)
                    if name in _TYPED:
                        raw = Piece(start, stop, index, values=decode_raw(raw.raw))
                    self._add(name, raw, set(map(type, raw.values)) if name in _TYPED else None)
                if not self.levels and len(self.fields) <= _STRUCT_FIELDS:
                    self.levels = _Level.tried(list(self.fields), None)  # (the fields learned)
        except _TooDeep as exc:
            place = f"array element {base + exc.i + 1}" if before is None else \
                f"line {before + 1 + (exc.i if at is None else int(at[exc.i]))}"
            raise _too_deep(exc.problem, **self._where(place)) from None
        self._advance(n, before, at)

    def _keep_structs(self, level: _Level, recs: list, base: int) -> None:
        n = len(recs)
        for name, getter in zip(level.names, level.getters):
            if name in level.literal:
                value = level.literal[name]
                self._add(name, Piece(base, base + n, const=(value,)), {type(value)})
                continue
            if level.required and name == TASK_FIELD and n:  # (every row, every id a string)
                self._add(name, self._task_codes(np.fromiter(
                    map(getter, recs), dtype=object, count=n), base), {str})
                continue
            values = list(map(getter, recs))
            absent = 0 if level.required else values.count(_UNSET)
            if absent == n:
                continue
            index = None
            if absent:
                mask = np.fromiter(map(is_not, values, repeat(_UNSET)), dtype=bool, count=n)
                index = np.flatnonzero(mask) + base
                values = list(compress(values, mask.tolist()))
            start, stop = (base, base + n) if index is None else (int(index[0]),
                                                                  int(index[-1]) + 1)
            if index is not None and stop - start == index.shape[0]:
                index = None  # (rows in one stretch need no index)
            if name in _TYPED:
                known = {str} if level.required and name in TASK_ALIASES else None
                kinds = known or set(map(type, values))
                if name == "reward" and index is None and kinds == {float}:
                    floats = np.fromiter(values, dtype=np.float64, count=len(values))
                    self._add(name, _Typed(start, stop, array=floats), kinds)
                else:
                    self._add(name, Piece(start, stop, index, values=values), kinds)
            else:
                self._add(name, _raw_piece(values, start, stop, index, base), None)

    def _task_codes(self, ids: np.ndarray, base: int) -> _Typed:
        """The task ids ``ids`` of rows ``base``... as runs of equal ids (compared in C): each
        new run's id added to ``keys``, the row it starts at to ``starts``."""
        n = ids.shape[0]
        change = np.empty(n, dtype=bool)
        change[0] = ids[0] != self.last_id
        np.not_equal(ids[1:], ids[:-1], out=change[1:])
        at = np.flatnonzero(change)
        new = ids[at]
        if self.ordered and new.shape[0]:  # (each run's id after the one before: all distinct)
            self.ordered = (self.last_id is None or bool(new[0] > self.last_id)) and \
                bool(np.greater(new[1:], new[:-1]).all())
        self.keys += new.tolist()
        self.starts.append(at + base)
        self.last_id = ids[-1]
        return _Typed(base, base + n, codes=True)

    def typed(self, name: str) -> Any:
        """The typed column of field ``name`` when every row was read into it: ``(task index,
        task ids, starts)`` in first-appearance order (``starts``: the row where each task's
        rows start when each task's rows are one run, else None), or the float64 rewards;
        else None, and the runs read typed are values again."""
        pieces = self.fields.get(name, [])
        if not any(isinstance(p, _Typed) for p in pieces):
            return None
        if all(isinstance(p, _Typed) for p in pieces) and \
                sum(p.size for p in pieces) == self.rows:
            if name != TASK_FIELD:
                return np.concatenate([p.array for p in pieces])
            keys, starts = self.keys, np.concatenate(self.starts)
            codes = np.repeat(np.arange(len(keys), dtype=np.int64),
                              np.diff(np.append(starts, self.rows)))  # (each row's run)
            if self.ordered or distinct(keys):  # each task's rows in one run
                return codes, keys, starts
            order = dict.fromkeys(keys)  # (a task in several runs: first appearance)
            for i, key in enumerate(order):
                order[key] = i
            runs = np.fromiter(map(order.__getitem__, keys), dtype=np.int64, count=len(keys))
            return runs[codes], list(order), None
        starts = np.concatenate(self.starts) if self.starts else None
        self.fields[name] = []
        for p in pieces:
            if isinstance(p, _Typed):  # (a row's run: the last to start at or before it)
                p = Piece(p.start, p.stop, values=p.array.tolist() if p.codes is None else
                          list(map(self.keys.__getitem__, (np.searchsorted(
                              starts, np.arange(p.start, p.stop), side="right") - 1).tolist())))
            self._join(name, p)
        return None

    def _keep_dicts(self, records: list[dict], before: int, at: np.ndarray | None) -> None:
        """Records Python's ``json`` read (lines msgspec refused, or the whole file)."""
        if self.dicts:
            self.items += records
            return self._advance(len(records), before, at)
        for name, start, stop, index, values in pieces_of_dicts(records, self.rows):
            self._add(name, Piece(start, stop, index, values=values), set(map(type, values)))
        self._advance(len(records), before, at)

    def _advance(self, n: int, before: int | None, at: np.ndarray | None) -> None:
        if before is not None and n:
            plain = at is None or bool((at == np.arange(n)).all())
            self.plain = self.plain and plain and before == self.rows
            self.spans.append((before, at, n))
        self.rows += n

    def _add(self, name: str, piece: Piece, kinds: set[type] | None) -> None:
        known = self.kinds.get(name, set()) if name in self.fields else set()
        self._join(name, piece)
        self.kinds[name] = None if known is None or kinds is None else known | kinds

    def _join(self, name: str, piece: Piece) -> None:
        pieces = self.fields.setdefault(name, [])
        last = pieces[-1] if pieces else None
        if last is not None and last.stop == piece.start and last.index is None and \
                piece.index is None and last.pick is None and (
                    last.const is not None and piece.const is not None and
                    last.const[0] is piece.const[0] or
                    last.values is not None and piece.values is not None):
            # the runs before it end where this one starts: one piece, read without joining
            if last.values is not None:
                last.values += piece.values
            last.stop = piece.stop
        else:
            pieces.append(piece)


def _raw_piece(raws: list, start: int, stop: int, index: np.ndarray | None,
               base: int) -> Piece:
    """The values ``raws`` (msgspec Raw) of the rows ``start..stop`` or ``index`` (a run's
    records from row ``base``) kept as one JSON array's text, once none nests too deep or holds
    too long a number."""
    raw = b"[" + b",".join(raws) + b"]"
    for k in _suspects(raw, raws):
        i = (start + k if index is None else int(index[k])) - base  # (the record in the run)
        try:
            value = safejson.loads(bytes(raws[k]))
        except json.JSONDecodeError as exc:
            raise _TooDeep(i, "nested" if exc.msg.startswith("nested") else "digits") from None
        if _deeper_than(value, JSON_MAX_DEPTH - 1):  # (its record is the level above)
            raise _TooDeep(i, "nested")
    return Piece(start, stop, index, raw=raw)


def _suspects(raw: bytes, values: list) -> list[int]:
    """Of the ``values`` in the JSON array text ``raw`` (their texts, one comma apart), those
    that may nest past ``JSON_MAX_DEPTH`` (more opening brackets than it) or hold an integer
    longer than Python converts (a longer run of digits): found in C, not per value."""
    digit_max = sys.get_int_max_str_digits() or sys.maxsize
    if len(raw) <= digit_max and raw.count(b"[") + raw.count(b"{") <= JSON_MAX_DEPTH:
        return []  # (a short text: counted by bytes.count, without numpy's per-call cost)
    a = np.frombuffer(raw, dtype=np.uint8)
    opening = np.flatnonzero((a | 0x20) == 0x7B)[1:]  # (not the array's own "[")
    digits = (a >= 0x30) & (a <= 0x39)
    many_digits = int(np.count_nonzero(digits)) > digit_max
    if opening.shape[0] < JSON_MAX_DEPTH and not many_digits:
        return []
    sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    starts = 1 + np.concatenate([[0], np.cumsum(sizes[:-1] + 1)])
    inside = np.searchsorted(opening, starts + sizes) - np.searchsorted(opening, starts)
    hits = np.flatnonzero(inside >= JSON_MAX_DEPTH)
    if many_digits:
        edge = np.flatnonzero(np.diff(np.concatenate([[0], digits.view(np.int8), [0]])))
        long = edge[::2][(edge[1::2] - edge[::2]) > digit_max]
        hits = np.union1d(hits, np.searchsorted(starts, long, side="right") - 1)
    return hits.astype(np.int64).tolist()


def _too_nested(data: Any, recs: list[dict]) -> bool:
    """Whether a record decoded from ``data`` nests past ``JSON_MAX_DEPTH``: looked at only in
    a record whose line holds that many opening brackets (counted in C)."""
    a = np.frombuffer(data, dtype=np.uint8)
    opening = np.flatnonzero((a | 0x20) == 0x7B)  # "[" or "{": they differ in bit 5 alone
    if opening.shape[0] - len(recs) < JSON_MAX_DEPTH:
        return False
    ends = np.flatnonzero(a == 0x0A)
    per_line = np.bincount(np.searchsorted(ends, opening), minlength=ends.shape[0] + 1)
    if not (per_line >= JSON_MAX_DEPTH).any():
        return False
    return any(_deeper_than(rec, JSON_MAX_DEPTH) for rec in recs)


def _too_deep(problem: str, **where: Any) -> RowsError:
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


def _breaks(data: bytes, start: int, end: int) -> int:
    """The line breaks (``\\n``) in ``data[start:end]`` (numpy's compare beats bytes.count)."""
    return int(np.count_nonzero(np.frombuffer(data, np.uint8, end - start, start) == 10))


def _placed(data: bytes, start: int, end: int, n_recs: int, breaks: int) -> tuple[
        np.ndarray | None, int] | None:
    """Where the ``n_recs`` records decoded from the lines ``data[start:end]`` (``breaks``
    line breaks) are: ``(at, lines)``, ``at`` None when they are its first lines in order (no
    blank line among them), else each record's 0-based line; ``lines`` its line count. None
    when they do not line up with its non-blank lines (two records on one line)."""
    last = end  # the end of the last line with something on it
    while last > start and data[last - 1] in _SPACE:
        last -= 1
    filled = breaks - data.count(b"\n", last, end) + 1 if last > start else 0  # (a short tail)
    at = None
    if filled != n_recs:
        at = np.flatnonzero(np.fromiter(map(bool, map(bytes.strip, data[start:end].split(
            b"\n"))), dtype=bool))
        if at.shape[0] != n_recs:
            return None
    return at, breaks + (data[end - 1] != 10)


# --- a peek at the first record ----------------------------------------------------------------

def first_line(path: UserPath) -> str | None:
    """The first non-blank line of the file ``path`` (cut at ``_PEEK_LINE_MAX``), or None when
    there is none within that much or the file cannot be read."""
    try:
        with path.open_binary("rows", error=RowsError) as fh:
            while fh.tell() <= _PEEK_LINE_MAX:
                raw = fh.readline(_PEEK_LINE_MAX)
                if not raw:
                    return None
                if raw.strip():  # (a UTF-8 byte-order mark dropped, as every reader drops it)
                    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    except (OSError, RowsError):
        return None
    return None


def first_record(line: str | None) -> Any:
    """The first record of ``line``: the line decoded as JSON, or the first element of the JSON
    array it starts (decoded alone); None when it is not JSON."""
    text = (line or "").lstrip()
    try:
        if text.startswith("["):
            return _DECODER.raw_decode(text, len(text) - len(text[1:].lstrip()))[0]
        return safejson.loads(text) if text else None
    except (ValueError, RecursionError):
        return None


_DECODER = json.JSONDecoder()


def is_graded_row(record: Any) -> bool:
    """Whether ``record`` is one of this project's graded rows (it names its task)."""
    return isinstance(record, dict) and any(f in record for f in (TASK_FIELD, *TASK_ALIASES))
