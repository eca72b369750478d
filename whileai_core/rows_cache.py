"""Load once: loaded rows kept by the file they came from, so many calls on one file parse it once
(the MCP server reads every rows argument through :func:`load_rows_cached`).

A cached answer is the file's answer. The file is opened once through the door and everything is
read from that handle: its key, the parse, the key again after it (a file that changed meanwhile
is not kept). The key is device, inode, size, and the modification and change times in
nanoseconds, taken after ``fdatasync`` (a write through a mapping into a dirty page stamps no
time until the page is written back), plus a CRC-32 of the content where the times cannot prove
it: a file system whose mapped writes never stamp them (tmpfs) or one not known to, and a file
younger than ``_RACY_S`` (a write within the clock's tick stamps the same time). Such an entry
is checked against the content at each use.

Each entry is charged the bytes its rows keep (:meth:`Rows.nbytes`, never an estimate from the
file's size); the least recently used go past ``ROWS_CACHE_MB`` or ``ROWS_CACHE_FILES``. Each
caller gets its own view (:meth:`Rows.shared`); calls on one file at once share one parse;
cached arrays are read-only. The pass mark is not in the key
(:func:`~whileai_core.rows.with_threshold`). Inline rows, folders and other systems' files are
loaded as :func:`load_rows` loads them, every time.
"""

from __future__ import annotations

import os
import threading
import time
import zlib
from collections import OrderedDict
from contextlib import suppress
from typing import Any

from . import defaults as D
from .errors import RowsError
from .progress import note, step
from .rows import Rows, _foreign, imported, load_open, load_rows, with_threshold
from .safepath import OpenFile, Root, as_user_path, is_path

_RACY_S = 2.0  # younger than this, a file's times may not show a write (a coarse clock's tick,
               # and file systems that keep whole seconds)
# Local file systems whose mapped writes stamp the file's times once its pages are written
# back (they implement page_mkwrite); on any other, the content is checked at each use.
_STAMPING = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "bcachefs"})


class RowsCache:
    """Loaded rows by file (see the module docstring). ``max_mb``/``max_files`` bound it."""

    def __init__(self, max_mb: float = D.ROWS_CACHE_MB,
                 max_files: int = D.ROWS_CACHE_FILES) -> None:
        self.max_bytes = int(max_mb * (1 << 20))
        self.max_files = max_files
        self.parses = 0   # files parsed (a miss)
        self.hits = 0     # loads answered from the cache
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._pending: dict[tuple, threading.Event] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def held(self) -> int:
        """The bytes the kept rows hold, as charged when each was kept."""
        return sum(entry.nbytes for entry in self._entries.values())

    def load(self, source: Any, *, threshold: float | None = None,
             root: Root | None = None) -> Rows:
        """:func:`~whileai_core.rows.load_rows` of ``source``, parsed once per version of a file."""
        if not is_path(source):
            return load_rows(source, threshold=threshold)
        path = as_user_path(source, root, argument="rows", error=RowsError)
        step(0, 3, f"reading {path}")
        if not path.is_file():  # a folder, or a path the loader refuses in its own words
            return load_rows(path, threshold=threshold)
        foreign = _foreign(path)
        if foreign is not None:
            return imported(path, foreign, threshold=threshold)
        with path.open_stream("rows", error=RowsError) as fh:
            return with_threshold(self._load(fh), threshold)

    def _load(self, fh: OpenFile) -> Rows:
        synced = None  # before a parse: whether the file's dirty pages were written back
        while True:
            key = _key(fh)
            with self._lock:
                entry = self._entries.get(key)
                waiting = self._pending.get(key) if entry is None else None
                if entry is None and waiting is None and synced is not None:
                    done = self._pending[key] = threading.Event()
                    self.parses += 1
            if entry is not None:
                if entry.digest is not None and not entry.still(fh):
                    with self._lock:  # the same times, another content: parse it again
                        self._entries.pop(key, None)
                    continue
                with self._lock:
                    if key in self._entries:
                        self._entries.move_to_end(key)
                    self.hits += 1
                for said in entry.rows.notes:  # what the parse noted, said again by this call
                    note(said)
                return entry.rows.shared()
            if waiting is not None:  # another call is parsing this file: wait, then look again
                waiting.wait()
                continue
            if synced is None:  # (a hit needs none: the kept load was keyed after one)
                synced = _write_back(fh)
                continue  # the key again, after it
            try:
                rows = load_open(fh)
                if _key(fh) == key:  # unchanged while it was read
                    self._keep(key, _Entry(_frozen(rows), fh, synced))
            finally:
                with self._lock:
                    del self._pending[key]
                done.set()
            return rows.shared()

    def _keep(self, key: tuple, entry: _Entry) -> None:
        if entry.nbytes > self.max_bytes:
            return
        with self._lock:
            self._entries[key] = entry
            total = self.held()
            while len(self._entries) > self.max_files or total > self.max_bytes:
                total -= self._entries.popitem(last=False)[1].nbytes


class _Entry:
    """A kept load: its rows, what they hold, and the content's CRC-32 when the file's times
    cannot prove it unchanged (None: they can)."""

    __slots__ = ("rows", "nbytes", "digest")

    def __init__(self, rows: Rows, fh: OpenFile, synced: bool) -> None:
        self.rows, self.nbytes = rows, rows.nbytes()
        self.digest = None if synced and _settled(fh) else _crc(fh)

    def still(self, fh: OpenFile) -> bool:
        """Whether ``fh`` holds the content kept; a young file that is now settled, still the
        same, is not checked again."""
        if _crc(fh) != self.digest:
            return False
        if _settled(fh):
            self.digest = None
        return True


def _key(fh: OpenFile) -> tuple:
    """What identifies this version of the file (module docstring)."""
    st = os.fstat(fh.fd)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _write_back(fh: OpenFile) -> bool:
    """Write the file's dirty pages back, so that the next write through a mapping stamps its
    times; False when the file system cannot (its times then prove nothing)."""
    try:
        os.fdatasync(fh.fd)
        return True
    except OSError:
        return False


def _settled(fh: OpenFile) -> bool:
    """Whether the file's times prove its content: old enough, on a file system that stamps
    them (module docstring)."""
    st = os.fstat(fh.fd)
    young = time.time() - max(st.st_mtime_ns, st.st_ctime_ns) / 1e9 < _RACY_S
    return not young and _file_system(st.st_dev) in _STAMPING


def _crc(fh: OpenFile) -> int:
    """The CRC-32 of the whole file, read in chunks (never mapped: a file truncated under a
    mapping kills the reader with SIGBUS)."""
    crc, offset = 0, 0
    while True:
        data = fh.read_at(offset, _CRC_CHUNK)
        if not data:
            return crc
        crc, offset = zlib.crc32(data, crc), offset + len(data)


_CRC_CHUNK = 8 << 20


_FS_TYPES: dict[int, str] = {}


def _file_system(dev: int) -> str | None:
    """The type of the file system on device ``dev`` (Linux's mount table), None when unknown."""
    if dev not in _FS_TYPES:
        wanted = f"{os.major(dev)}:{os.minor(dev)}"
        with suppress(OSError):
            with open("/proc/self/mountinfo", encoding="utf-8") as table:
                for line in table:
                    fields = line.split()
                    if len(fields) > 4 and fields[2] == wanted and " - " in line:
                        _FS_TYPES[dev] = line.split(" - ", 1)[1].split()[0]
                        break
    return _FS_TYPES.get(dev)


def _frozen(rows: Rows) -> Rows:
    """``rows`` with its arrays read-only (a cached load is shared by every later caller), and
    what every caller reads of them read once (the reward's kind, the models)."""
    rows.reward_scale, rows.models()  # noqa: B018 - computed once, kept with the rows
    for name in ("reward", "passed", "truncated", "task_index", "rollouts", "passes",
                 "reward_sum", "_lines"):
        array = getattr(rows, name)
        if array is not None:
            array.flags.writeable = False
    if rows.budget is not None:
        rows.budget.max_tokens.flags.writeable = False
        rows.budget.completion_tokens.flags.writeable = False
    return rows


SHARED = RowsCache()
"""The process's cache (the MCP server's session)."""


def load_rows_cached(source: Any, *, threshold: float | None = None,
                     root: Root | None = None) -> Rows:
    """:func:`~whileai_core.rows.load_rows` through the process's shared cache: a file already
    loaded, unchanged, is not read again. Inline rows, folders and other systems' files are
    loaded every time."""
    return SHARED.load(source, threshold=threshold, root=root)
