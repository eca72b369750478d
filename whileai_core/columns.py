"""Every field of every row, as a column: what :class:`~whileai_core.rows.Rows` keeps besides the
typed arrays every statistic reads (``reward``, ``truncated``, ``model``, the task index).

A field is stored for the rows that carry it alone (sparse fields cost their cells, not fields x
rows), in pieces in row order, each holding ``raw`` JSON text (one JSON array, decoded on each
read), ``values`` (Python objects) or one ``const`` value. :meth:`Columns.values` is a field's
value in every row; :meth:`Columns.carried` the carrying rows and their values alone.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import msgspec
import numpy as np

_DECODE = msgspec.json.Decoder().decode


class Piece:
    """The values of one field over one stretch of rows: the rows ``start..stop`` (every one, when
    ``index`` is None) or the rows in ``index`` (global, increasing); and one payload, ``raw`` (a
    JSON array's text), ``values`` (a list) or ``const`` (a 1-tuple). ``pick`` selects positions
    of the payload (a piece taken from another, sharing its text)."""

    __slots__ = ("start", "stop", "index", "raw", "values", "const", "pick")

    def __init__(self, start: int, stop: int, index: np.ndarray | None = None, *,
                 raw: bytes | None = None, values: list | None = None,
                 const: tuple | None = None, pick: np.ndarray | None = None) -> None:
        self.start, self.stop, self.index = start, stop, index
        self.raw, self.values, self.const, self.pick = raw, values, const, pick

    @property
    def size(self) -> int:
        return self.stop - self.start if self.index is None else int(self.index.shape[0])

    def rows(self) -> np.ndarray:
        return np.arange(self.start, self.stop) if self.index is None else self.index

    def decode(self) -> list:
        if self.const is not None:
            return [self.const[0]] * self.size
        if self.values is not None:
            return self.values
        values = decode_raw(self.raw)
        return values if self.pick is None else list(map(values.__getitem__, self.pick.tolist()))

    def take(self, kept: np.ndarray, position: np.ndarray) -> Piece | None:
        """This piece's part among the kept rows (``kept``: a mask of every row), renumbered to
        their ``position`` among them; None when it has none of them."""
        if self.index is None and self.stop - self.start == 1:  # (a field on one row: no numpy)
            if not kept[self.start]:
                return None
            at = int(position[self.start])
            return Piece(at, at + 1, const=self.const, values=self.values, raw=self.raw,
                         pick=self.pick)
        if self.index is None:
            mine = np.flatnonzero(kept[self.start:self.stop])
            if not mine.shape[0]:
                return None
            new_rows = position[mine + self.start]
        else:
            mine = np.flatnonzero(kept[self.index])
            if not mine.shape[0]:
                return None
            new_rows = position[self.index[mine]]
        start, stop = int(new_rows[0]), int(new_rows[-1]) + 1
        index = None if stop - start == new_rows.shape[0] else new_rows
        if self.const is not None:
            return Piece(start, stop, index, const=self.const)
        if self.values is not None:
            return Piece(start, stop, index, values=list(map(self.values.__getitem__,
                                                             mine.tolist())))
        pick = mine if self.pick is None else self.pick[mine]
        return Piece(start, stop, index, raw=self.raw, pick=pick)

    def nbytes(self) -> int:
        """Bytes this piece holds: itself, its arrays (owning their data), its text or values."""
        held = sys.getsizeof(self) + sum(map(sys.getsizeof, filter(
            lambda part: part is not None, (self.index, self.raw, self.pick))))
        if self.values is not None:
            held += deep_size(self.values)
        elif self.const is not None:
            held += deep_size(self.const)
        return held


def decode_raw(raw: bytes) -> list:
    """A JSON array's text as a list, as it was read (``1e400`` is ``inf``, as in ``json``)."""
    try:
        return _DECODE(raw)
    except msgspec.ValidationError:  # a number msgspec will not make a float of (1e400)
        return json.loads(raw)


def deep_size(values: Iterable) -> int:
    """Bytes Python spends on ``values`` (a list, its items and what they hold, each object once)."""
    seen: set[int] = set()
    size = sys.getsizeof(values) if isinstance(values, list) else 0
    stack = list(values)
    while stack:
        obj = stack.pop()
        if obj is None or obj is True or obj is False or id(obj) in seen:
            continue
        seen.add(id(obj))
        size += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
    return size


class _Field:
    """One column: its pieces in row order, the types of its values (None until asked), or
    ``make`` (the loader's typed array gives the values: no copy kept)."""

    __slots__ = ("pieces", "kinds", "make", "count")

    def __init__(self, pieces: list[Piece], kinds: set[type] | None = None,
                 make: Callable[[], list] | None = None, count: int | None = None) -> None:
        self.pieces, self.kinds, self.make = pieces, kinds, make
        self.count = count if count is not None else pieces[0].size if len(pieces) == 1 else \
            sum(p.size for p in pieces)


class Columns:
    """The rows' fields, their number and where each row came from: ``lines``, a row's line as
    an int64 array, ``"jsonl"`` (row i is line i + 1), ``"array"`` or None (a list, its rows
    called ``noun``). ``notes``: what the reader changed to keep the values valid JSON."""

    __slots__ = ("n", "source", "lines", "noun", "_fields", "notes", "typed")

    def __init__(self, n: int, fields: dict[str, _Field], source: str, lines: Any,
                 noun: str = "row", notes: list[str] | None = None,
                 typed: dict[str, Any] | None = None) -> None:
        self.n, self.source, self.lines, self.noun = n, source, lines, noun
        self._fields = fields
        self.notes = notes or []
        self.typed = typed or {}  # what the reader read into typed columns (records.read_rows)

    @classmethod
    def from_dicts(cls, records: list[dict], source: str = "<rows>", lines: Any = None,
                   noun: str = "row") -> Columns:
        """Columns of rows given as dicts, their values kept as they are."""
        fields: dict[str, list[Piece]] = {}
        for name, start, stop, index, values in pieces_of_dicts(records, 0):
            fields.setdefault(name, []).append(Piece(start, stop, index, values=values))
        return cls(len(records), {k: _Field(v) for k, v in fields.items()}, source, lines, noun)

    # --- where a row came from ---------------------------------------------------------------
    def where(self, i: int) -> dict[str, Any]:
        """The :class:`~whileai_core.errors.RowsError` keywords naming row ``i``'s place."""
        if isinstance(self.lines, np.ndarray):
            return {"source": self.source, "line": int(self.lines[i])}
        if self.lines == "jsonl":
            return {"source": self.source, "line": i + 1}
        if self.lines == "array":
            return {"source": f"{self.source} array element {i + 1}"}
        return {"source": f"{self.source} {self.noun} {i + 1}"}

    def line_numbers(self) -> np.ndarray | None:
        """Each row's line as an int64 array when the file has blank lines, else None."""
        return self.lines if isinstance(self.lines, np.ndarray) else None

    # --- the fields --------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every field some row carries, in the order first seen."""
        return list(self._fields)

    def width(self) -> int:
        """Fields per row, to size work by."""
        return len(self._fields)

    def has(self, name: str) -> bool:
        """Whether any row carries the field (a JSON null counts)."""
        return name in self._fields

    def present(self, name: str) -> np.ndarray:
        """Per row, whether it carries the field (bool array)."""
        mask = np.zeros(self.n, dtype=bool)
        field = self._fields.get(name)
        if field is not None:
            if field.count == self.n:
                mask[:] = True
            for piece in (() if field.count == self.n else field.pieces):
                if piece.index is None:
                    mask[piece.start:piece.stop] = True
                else:
                    mask[piece.index] = True
        return mask

    def carried(self, name: str) -> tuple[np.ndarray, list]:
        """The rows that carry the field (increasing) and their values, nothing for the rest."""
        field = self._fields.get(name)
        if field is None:
            return np.zeros(0, dtype=np.int64), []
        if field.make is not None:
            return np.arange(self.n), field.make()
        if len(field.pieces) == 1:
            piece = field.pieces[0]
            return piece.rows(), piece.decode()
        values: list = []
        for piece in field.pieces:
            values += piece.decode()
        return np.concatenate([p.rows() for p in field.pieces]), values

    def values(self, name: str) -> list:
        """The field's value in every row (``None`` where a row does not carry it)."""
        field = self._fields.get(name)
        if field is None:
            return [None] * self.n
        if field.make is not None:
            return field.make()
        if field.count == self.n:
            out: list = []
            for piece in field.pieces:
                out += piece.decode()  # (a list extended by a list: copied in C, not iterated)
            return out
        rows, values = self.carried(name)
        out = np.full(self.n, None, dtype=object)
        # (fromiter: a list among the values stays one item, never a second axis)
        out[rows] = np.fromiter(values, dtype=object, count=len(values))
        return out.tolist()

    def shared_values(self, name: str) -> list:
        """:meth:`values`, but the store's own list where one piece holds the field for every
        row (no copy). Read it, never change it."""
        field = self._fields.get(name)
        if field is not None and field.make is None and len(field.pieces) == 1:
            piece = field.pieces[0]
            if piece.values is not None and piece.index is None and piece.size == self.n:
                return piece.values
        return self.values(name)

    def constant(self, name: str) -> tuple | None:
        """``(value,)`` when every row carries the field with that one value as the reader
        decoded it (one model, one flag throughout), else None; nothing is built per row."""
        field = self._fields.get(name)
        if field is None or field.make is not None or len(field.pieces) != 1:
            return None
        piece = field.pieces[0]
        return piece.const if piece.const is not None and piece.size == self.n else None

    def kinds(self, name: str) -> set[type]:
        """The Python types of the field's values where rows carry it (``type(None)``: null)."""
        field = self._fields.get(name)
        if field is None:
            return set()
        if field.kinds is None:
            field.kinds = set(map(type, self.carried(name)[1]))
        return set(field.kinds)

    def derive(self, name: str, make: Callable[[], list]) -> None:
        """Say that ``make()`` gives :meth:`values` of ``name`` exactly, every row carrying it:
        the store drops its copy."""
        field = self._fields.get(name)
        if field is not None and field.count == self.n:
            field.pieces, field.make = [], make

    # --- rows as dicts, a subset, what it holds ------------------------------------------------
    def records(self) -> list[dict]:
        """The rows as dicts (each with the fields it carries, in the order first seen)."""
        full = [k for k, f in self._fields.items() if f.count == self.n]
        records = ([dict(zip(full, row)) for row in zip(*map(self.values, full))]
                   if full else [{} for _ in range(self.n)])
        for name, field in self._fields.items():
            if field.count != self.n:
                rows, values = self.carried(name)
                for i, value in zip(rows.tolist(), values):
                    records[i][name] = value
        return records

    def take(self, keep: np.ndarray) -> Columns:
        """The rows at the increasing indices ``keep`` (a field none of them carries is dropped;
        the values of a kept text stay shared with these columns)."""
        keep = np.asarray(keep, dtype=np.int64)
        kept = np.zeros(self.n, dtype=bool)
        kept[keep] = True
        position = np.cumsum(kept) - 1  # a kept row's place among the kept
        fields = {}
        for name, field in self._fields.items():
            if field.make is not None:
                index = keep.tolist()
                fields[name] = _Field([], field.kinds, count=len(index), make=(
                    lambda make=field.make, index=index: list(map(make().__getitem__, index))))
                continue
            pieces = [p for p in (piece.take(kept, position) for piece in field.pieces)
                      if p is not None]
            if pieces:
                fields[name] = _Field(pieces, field.kinds)  # (a superset of the kept rows')
        lines = self.lines[keep] if isinstance(self.lines, np.ndarray) else self.lines
        return Columns(keep.shape[0], fields, self.source, lines, self.noun, self.notes)

    def nbytes(self) -> int:
        """Bytes the columns hold: their text, index arrays and kept objects (what a cache of
        loaded rows charges)."""
        held = sys.getsizeof(self._fields) + (sys.getsizeof(self.lines) if isinstance(
            self.lines, np.ndarray) else 0)
        for name, field in self._fields.items():
            held += sys.getsizeof(name) + sys.getsizeof(field) + sys.getsizeof(field.pieces) + (
                0 if field.kinds is None else sys.getsizeof(field.kinds))
            held += sum(p.nbytes() for p in field.pieces)
        return held


def pieces_of_dicts(records: list[dict], base: int) -> list[tuple]:
    """Per field of the dicts ``records`` (rows ``base``, ``base + 1``, ...), in the order first
    seen, ``(name, start, stop, index, values)``: a :class:`Piece`'s rows and its values, grouped
    in C (the keys flattened and sorted by field, stably), not a Python step per cell."""
    n = len(records)
    if not n:
        return []
    sizes = np.fromiter(map(len, records), dtype=np.int64, count=n)
    keys = list(chain.from_iterable(map(dict.keys, records)))
    code = dict.fromkeys(keys)
    for i, key in enumerate(code):
        code[key] = i
    width = len(code)
    if len(keys) == n * width and _same_order(records, code):
        # every row carries every field, in one order: a field is every width-th value
        values = list(chain.from_iterable(map(dict.values, records)))
        return [(name, base, base + n, None, values[i::width]) for i, name in enumerate(code)]
    return _grouped(records, keys, code, sizes, base)


def _same_order(records: list[dict], code: dict) -> bool:
    order = tuple(code)
    return all(map(order.__eq__, map(tuple, map(dict.keys, records))))


def _grouped(records: list[dict], keys: list, code: dict, sizes: np.ndarray,
             base: int) -> list[tuple]:
    codes = np.fromiter(map(code.__getitem__, keys), dtype=np.int64, count=len(keys))
    rows = np.repeat(np.arange(base, base + len(records), dtype=np.int64), sizes)
    order = np.argsort(codes, kind="stable")
    values = list(chain.from_iterable(map(dict.values, records)))
    values = list(map(values.__getitem__, order.tolist()))
    rows = rows[order]
    ends = np.cumsum(np.bincount(codes, minlength=len(code)))
    begins = ends - np.bincount(codes, minlength=len(code))
    firsts, lasts = rows[begins].tolist(), (rows[ends - 1] + 1).tolist()
    out = []
    for name, lo, hi, first, last in zip(code, begins.tolist(), ends.tolist(), firsts, lasts):
        # rows in one stretch need no index (a field on one row, or on every row)
        index = None if last - first == hi - lo else rows[lo:hi].copy()
        out.append((name, first, last, index, values[lo:hi]))
    return out
