"""Load once: loaded rows kept by the file they came from, so many calls on one file parse it once.

An agent asks several questions of one rows file (describe it, route it, its pass rate, compare
it); each question names the file, and without this each would read and parse it again. The MCP
server reads every rows argument through :func:`load_rows_cached`.

The key of a file is read through the door (the file is opened as every read opens it: under the
root, no link, a regular file within the size limit, so a cached answer never skips a check):
its identity (device and inode), its size, its modification and change times in nanoseconds,
and a hash of its first and last 64 KiB. Any write changes the change time, even one that puts
the modification time back, so a changed file is read again; the hash covers file systems whose
clocks are coarse. A file that changes while it is parsed is not kept.

Bounded: each entry is charged an estimate of its memory (``_footprint``), and the least
recently used entries are dropped once the total passes ``ROWS_CACHE_MB`` or the count
``ROWS_CACHE_FILES``. Calls on one file at the same time share one parse: the first reads it,
the others wait for it. Cached rows are shared by every caller, so their arrays are read-only.

What a load reads from the file alone is kept (the columns, the token budgets, which
``truncated`` a ``finish_reason`` implies); the pass mark is not part of the key: a call with
its own ``threshold`` gets the kept rows through :func:`~whileai_core.rows.with_threshold`,
which judges passes and reads the reward's kind (its warning depends on the mark) again.

Rows given inline (a list) and folders (prime-rl runs) are loaded as :func:`load_rows` loads
them, every time.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from . import defaults as D
from .errors import RowsError
from .rows import Rows, load_rows, with_threshold
from .safepath import Root, UserPath, as_user_path, is_path

_EDGE = 64 << 10  # bytes hashed at each end of the file


class RowsCache:
    """Loaded rows by file (see the module docstring). ``max_mb``/``max_files`` bound it."""

    def __init__(self, max_mb: float = D.ROWS_CACHE_MB,
                 max_files: int = D.ROWS_CACHE_FILES) -> None:
        self.max_bytes = int(max_mb * (1 << 20))
        self.max_files = max_files
        self.parses = 0   # files parsed (a miss)
        self.hits = 0     # loads answered from the cache
        self._entries: OrderedDict[tuple, Rows] = OrderedDict()  # key[2] is the file's size
        self._pending: dict[tuple, threading.Event] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def footprint(self) -> int:
        """The estimated bytes held, as the entries are now (rows dicts built since count)."""
        return sum(_footprint(rows, key[2]) for key, rows in self._entries.items())

    def load(self, source: Any, *, threshold: float | None = None,
             root: Root | None = None) -> Rows:
        """:func:`~whileai_core.rows.load_rows` of ``source``, parsed once per version of a file."""
        if not is_path(source):
            return load_rows(source, threshold=threshold)
        path = as_user_path(source, root, argument="rows", error=RowsError)
        while True:
            key = _key(path)
            if key is None:  # a folder, or a path load_rows will refuse with its own message
                return load_rows(path, threshold=threshold)
            with self._lock:
                cached = self._entries.get(key)
                if cached is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return with_threshold(cached, threshold)
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    self.parses += 1
            if waiting is not None:  # another call is parsing this file: wait, then look again
                waiting.wait()
                continue
            try:
                rows = load_rows(path)
                if _key(path) == key:  # unchanged while it was read
                    self._keep(key, _frozen(rows))
            finally:
                with self._lock:
                    del self._pending[key]
                done.set()
            return with_threshold(rows, threshold)

    def _keep(self, key: tuple, rows: Rows) -> None:
        if _footprint(rows, key[2]) > self.max_bytes:
            return
        with self._lock:
            self._entries[key] = rows
            while len(self._entries) > self.max_files or self.footprint() > self.max_bytes:
                self._entries.popitem(last=False)


def _key(path: UserPath) -> tuple | None:
    """What identifies this version of the file (module docstring), or None for a folder or a
    path the door refuses (``load_rows`` then says why, in its own words)."""
    try:
        with path.open_stream("rows", error=RowsError) as fh:
            st = fh.stat
            edges = fh.read_at(0, _EDGE)
            if st.st_size > _EDGE:
                edges += fh.read_at(max(_EDGE, st.st_size - _EDGE), _EDGE)
    except RowsError:
        return None
    digest = hashlib.blake2b(edges, digest_size=16).digest()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)


def _frozen(rows: Rows) -> Rows:
    """``rows`` with its arrays read-only: a cached load is shared by every later caller."""
    for name in ("reward", "passed", "truncated", "task_index", "rollouts", "passes",
                 "reward_sum", "_lines"):
        array = getattr(rows, name)
        if array is not None:
            array.flags.writeable = False
    if rows.budget is not None:
        rows.budget.max_tokens.flags.writeable = False
        rows.budget.completion_tokens.flags.writeable = False
    return rows


def _footprint(rows: Rows, file_size: int) -> int:
    """Bytes the loaded rows hold, estimated from the file's size: loaded as columns, 0.6x the
    file for scalar rows and 2.5x for rows with text (a measurement here: 1M-row bench file,
    85 MB: 54 MB; 200k rows with a completion and a nested field, 54 MB: 133 MB); as row dicts
    (the exact reader, or :attr:`Rows.records` built), 3.4-4.3x."""
    dicts = rows._records is not None or type(rows._columns).__name__ == "RecordColumns"
    budget = 16 if rows.budget is not None else 0  # two float64 columns (whileai_core.budgets)
    return int(file_size * (4.5 if dicts else 2.5)) + rows.n_rows * (40 + budget)


SHARED = RowsCache()
"""The process's cache (the MCP server's session)."""


def load_rows_cached(source: Any, *, threshold: float | None = None,
                     root: Root | None = None) -> Rows:
    """:func:`~whileai_core.rows.load_rows` through the process's shared cache: a file already
    loaded, unchanged, is not read again. Inline rows and folders are loaded every time."""
    return SHARED.load(source, threshold=threshold, root=root)
