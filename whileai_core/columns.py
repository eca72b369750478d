"""Every field of every row, as a column: what :class:`~whileai_core.rows.Rows` keeps besides the
typed arrays every statistic reads (``reward``, ``truncated``, ``model``, the task index).

One interface, two stores:

- :class:`RecordColumns` keeps the row dicts themselves (rows given as a list, or read by the
  exact line-by-line reader) and reads a column out of them on demand, in C
  (``map(dict.get, ...)``).
- :class:`ArrayColumns` keeps one list per field, as the columnar reader
  (:mod:`whileai_core.rows_fast`) decodes it; the row dicts are built only if someone asks for
  :attr:`Rows.records`.

A column is the value of every row, ``None`` where the row does not carry the field; whether it
does is :meth:`Columns.present` (a JSON ``null`` is carried: it is present, with the value
``None``). Where a row's error is (its file and line) is :meth:`Columns.where`, the same for both.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, compress, repeat
from operator import is_not
from typing import Any

import numpy as np

class Columns:
    """Base of the two stores: the number of rows, where each came from, and the interface.

    ``lines``: a row's 1-based line in its file as an int64 array (a JSONL file with blank lines),
    ``"jsonl"`` (row i is line i + 1), ``"array"`` (a JSON array's elements), or None (rows
    given as a list, called ``noun`` in messages).
    """

    __slots__ = ("n", "source", "lines", "noun")

    def __init__(self, n: int, source: str, lines: Any, noun: str = "row") -> None:
        self.n, self.source, self.lines, self.noun = n, source, lines, noun

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

    # --- the interface ---------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every field some row carries, in the order first seen."""
        raise NotImplementedError

    def values(self, name: str) -> list:
        """The field's value in every row (``None`` where a row does not carry it)."""
        raise NotImplementedError

    def present(self, name: str) -> np.ndarray:
        """Per row, whether it carries the field (bool array)."""
        raise NotImplementedError

    def kinds(self, name: str) -> set[type]:
        """The Python types of the field's values where rows carry it (``type(None)`` for a JSON
        null): ``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``."""
        raise NotImplementedError

    def width(self) -> int:
        """Fields per row, to size work by: every field's count where the store knows them at no
        cost, else the first row's."""
        return len(self.names())

    def has(self, name: str) -> bool:
        """Whether any row carries the field: ``present(name).any()``, which a store may know
        without building the mask."""
        return bool(self.present(name).any())

    def records(self) -> list[dict]:
        """The rows as dicts."""
        raise NotImplementedError

    def take(self, keep: np.ndarray) -> Columns:
        """The rows at the increasing indices ``keep``."""
        raise NotImplementedError

    def derive(self, name: str, make: Callable[[], list]) -> None:
        """Say that ``make()`` gives :meth:`values` of ``name`` exactly (the loader found a typed
        array that holds the same values); a store may then drop its own copy."""


class RecordColumns(Columns):
    """Columns read out of the row dicts on demand."""

    __slots__ = ("_records", "_names", "_read")

    def __init__(self, records: list[dict], source: str = "<rows>", lines: Any = None,
                 noun: str = "row") -> None:
        super().__init__(len(records), source, lines, noun)
        self._records = records
        self._names: list[str] | None = None
        self._read: tuple[str, list] | None = None  # the column kinds() just read, for values()

    def names(self) -> list[str]:
        if self._names is None:
            self._names = list(dict.fromkeys(chain.from_iterable(map(dict.keys, self._records))))
        return self._names

    def values(self, name: str) -> list:
        read, self._read = self._read, None
        if read is not None and read[0] == name:
            return read[1]
        return list(map(dict.get, self._records, repeat(name, self.n)))

    def present(self, name: str) -> np.ndarray:
        return np.fromiter(map(dict.__contains__, self._records, repeat(name, self.n)),
                           dtype=bool, count=self.n)

    def width(self) -> int:
        if self._names is not None or not self._records:
            return len(self.names())
        return len(self._records[0])  # the names of every row would cost a pass over them

    def has(self, name: str) -> bool:
        if self._names is not None:
            return name in self._names
        # stops at the first row that carries it
        return any(map(dict.__contains__, self._records, repeat(name, self.n)))

    def kinds(self, name: str) -> set[type]:
        values = self.values(name)
        self._read = (name, values)
        if None not in values:
            return set(map(type, values))
        return set(map(type, compress(values, self.present(name).tolist())))

    def records(self) -> list[dict]:
        return self._records

    def take(self, keep: np.ndarray) -> RecordColumns:
        lines = self.lines[keep] if isinstance(self.lines, np.ndarray) else self.lines
        return RecordColumns(list(map(self._records.__getitem__, keep.tolist())), self.source,
                             lines, self.noun)


class _Field:
    """One column of :class:`ArrayColumns`: its values (None where absent), or ``make`` that
    gives them; ``present`` is None when every row carries the field; ``kinds`` the types of
    the values carried (None until asked)."""

    __slots__ = ("values", "present", "kinds", "make")

    def __init__(self, values: list | None, present: np.ndarray | None, kinds: set[type] | None,
                 make: Callable[[], list] | None = None) -> None:
        self.values, self.present, self.kinds, self.make = values, present, kinds, make

    def get(self) -> list:
        return self.values if self.values is not None else self.make()  # type: ignore[misc]


class ArrayColumns(Columns):
    """One list per field (a field no row carries is not stored)."""

    __slots__ = ("_fields",)

    def __init__(self, n: int, fields: dict[str, _Field], source: str, lines: Any,
                 noun: str = "row") -> None:
        super().__init__(n, source, lines, noun)
        self._fields = fields

    def names(self) -> list[str]:
        return list(self._fields)

    def values(self, name: str) -> list:
        field = self._fields.get(name)
        return [None] * self.n if field is None else field.get()

    def has(self, name: str) -> bool:
        return name in self._fields  # a field no row carries is not stored

    def present(self, name: str) -> np.ndarray:
        field = self._fields.get(name)
        if field is None:
            return np.zeros(self.n, dtype=bool)
        return np.ones(self.n, dtype=bool) if field.present is None else field.present

    def kinds(self, name: str) -> set[type]:
        field = self._fields.get(name)
        if field is None:
            return set()
        if field.kinds is None:
            values = field.get()
            field.kinds = (set(map(type, values)) if field.present is None else
                           set(map(type, compress(values, field.present.tolist()))))
        return set(field.kinds)

    def records(self) -> list[dict]:
        full = [name for name, f in self._fields.items() if f.present is None]
        records = ([dict(zip(full, row)) for row in zip(*(self._fields[k].get() for k in full))]
                   if full else [{} for _ in range(self.n)])
        for name, field in self._fields.items():
            if field.present is not None:
                rows = np.flatnonzero(field.present).tolist()
                values = field.get()
                for i in rows:
                    records[i][name] = values[i]
        return records

    def take(self, keep: np.ndarray) -> ArrayColumns:
        index = keep.tolist()
        fields = {}
        for name, field in self._fields.items():
            present = None if field.present is None else field.present[keep]
            if present is not None and not present.any():
                continue
            # the kinds of the whole column: a superset of the kept rows' (enough for a check)
            if field.values is not None:
                fields[name] = _Field(list(map(field.values.__getitem__, index)), present,
                                      field.kinds)
            else:
                make = field.make
                fields[name] = _Field(None, present, field.kinds,
                                      lambda make=make: list(map(make().__getitem__, index)))
        lines = self.lines[keep] if isinstance(self.lines, np.ndarray) else self.lines
        return ArrayColumns(len(index), fields, self.source, lines, self.noun)

    def derive(self, name: str, make: Callable[[], list]) -> None:
        field = self._fields.get(name)
        if field is not None:
            field.values, field.make = None, make


def column_from_parts(parts: list[tuple[list | int, set[type]]], n: int,
                      unset: Any) -> _Field | None:
    """One column of :class:`ArrayColumns` from the reader's pieces, in row order.

    Each piece is ``(values, kinds)``: ``values`` holds ``unset`` where a row does not carry the
    field, and ``kinds`` is ``set(map(type, values))`` (so an absent row shows as the type of
    ``unset``), or None when every row of the piece carries the field and its types were not
    looked at; a piece where no row carries the field may give its size instead of the values.
    None when no row carries the field at all. ``parts`` is emptied as it is read (each piece
    freed once copied).
    """
    gap = type(unset)
    if all(kinds == {gap} for _, kinds in parts):
        return None
    if len(parts) == 1 and (parts[0][1] is None or gap not in parts[0][1]):
        values, kinds = parts.pop()
        return _Field(values, None, kinds)  # one piece, every row carries it: as it is
    out: list = []
    pieces: list[tuple[int, np.ndarray | None]] = []  # (size, mask or None: all carried)
    seen: set[type] = set()
    unknown = False  # some piece's types were not looked at: look when asked
    parts.reverse()
    while parts:
        values, kinds = parts.pop()
        size = values if isinstance(values, int) else len(values)
        if kinds is None or gap not in kinds:
            out.extend(values)  # type: ignore[arg-type]
            pieces.append((size, None))
        elif kinds == {gap}:
            out.extend(repeat(None, size))
            pieces.append((size, np.zeros(size, dtype=bool)))
        else:
            pieces.append((size, np.fromiter(map(is_not, values, repeat(unset)), dtype=bool,
                                             count=size)))
            out.extend(None if v is unset else v for v in values)  # type: ignore[union-attr]
        if kinds is None:
            unknown = True
        else:
            seen |= kinds
    seen.discard(gap)
    if len(out) != n:
        raise AssertionError(f"a column of {len(out)} values for {n} rows")
    present = None
    if any(mask is not None for _, mask in pieces):
        present = np.concatenate([np.ones(size, dtype=bool) if mask is None else mask
                                  for size, mask in pieces])
    return _Field(out, present, None if unknown else seen)
