"""How many heavy reads a process runs at once: memory per call is bounded by its input, and the
number of calls holding that memory is bounded here.

A parsed file takes several times its size in Python objects. The size limits of the path door
(``safepath.Limits``) bound one call; this bounds how many such calls hold their memory at once:
a heavy read (``HEAVY_READ_BYTES`` or more) takes one of ``HEAVY_READS_AT_ONCE`` places until its
call ends; a call that finds none free waits ``HEAVY_WAIT_S``, then fails with
:class:`BusyError`. Python's GIL parses one file at a time anyway, so the places cost no
throughput. Only a call scope (:func:`call_scope`, opened by the MCP server around each tool
call) takes places, at most one per call whatever it reads, so a call never waits on itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator

from .defaults import HEAVY_READ_BYTES, HEAVY_READS_AT_ONCE, HEAVY_WAIT_S
from .errors import WhileaiError


class BusyError(WhileaiError):
    """Every place for a heavy read is taken, and none freed up in time."""


class _Places:
    def __init__(self, count: int) -> None:
        self.count, self.taken = count, 0
        self._free = threading.Condition()

    def take(self, wait_s: float) -> bool:
        deadline = time.monotonic() + wait_s
        with self._free:
            while self.taken >= self.count:
                left = deadline - time.monotonic()
                if left <= 0 or not self._free.wait(left):
                    if self.taken >= self.count:
                        return False
            self.taken += 1
            return True

    def give(self) -> None:
        with self._free:
            self.taken -= 1
            self._free.notify()


PLACES = _Places(HEAVY_READS_AT_ONCE)
_SCOPE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("whileai_call", default=None)


@contextlib.contextmanager
def call_scope(places: _Places | None = None) -> Iterator[None]:
    """One call: a heavy read inside it takes a place (from ``places``, default the process's)
    and gives it back when the call ends."""
    scope = {"places": places or PLACES, "holding": False}
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)
        if scope["holding"]:
            scope["places"].give()


def admit(size: int, what: str, *, wait_s: float | None = None) -> None:
    """Before reading ``size`` bytes of ``what``: take a place if the read is heavy and the call
    holds none yet; :class:`BusyError` if none frees up within ``wait_s`` (``HEAVY_WAIT_S``)."""
    scope = _SCOPE.get()
    if scope is None or scope["holding"] or size < HEAVY_READ_BYTES:
        return
    wait_s = HEAVY_WAIT_S if wait_s is None else wait_s
    places = scope["places"]
    if not places.take(wait_s):
        raise BusyError(
            f"{what}: {places.count} other calls are reading large files (of "
            f"{HEAVY_READ_BYTES >> 20} MB or more) and none finished within {wait_s:g} s; one "
            "call at a time parses a large file, so they queue", fix="retry when they are done, "
            "or split the file")
    scope["holding"] = True
