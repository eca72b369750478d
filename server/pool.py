"""The threads tool calls run on: bounded, apart from the SDK's own, and never waited on forever.

The SDK runs a synchronous tool in anyio's default pool, the one its stdio transport reads and
writes with: stuck tools could stop the protocol itself. Here calls run on ``workers`` threads of
their own, each holding its slot until its function returns; a call that finds all busy waits
``queue_wait_s`` then is answered "busy"; one past ``timeout_s`` is answered with an error. Each
call is one ``whileai_core.admission`` scope (at most ``HEAVY_READS_AT_ONCE`` large parses hold
memory at once).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError

from whileai_core.admission import call_scope

from .limits import TOOL_QUEUE_WAIT_S, TOOL_TIMEOUT_S, TOOL_WORKERS

T = TypeVar("T")


class ToolPool:
    """At most ``workers`` tool calls at once, on threads of their own."""

    def __init__(self, workers: int = TOOL_WORKERS, *, queue_wait_s: float = TOOL_QUEUE_WAIT_S,
                 timeout_s: float = TOOL_TIMEOUT_S) -> None:
        if workers < 1:
            raise ValueError("a tool pool needs at least one worker")
        self.workers, self.queue_wait_s, self.timeout_s = workers, queue_wait_s, timeout_s
        # a slot is given back by the worker thread when the function returns, even when the
        # caller has given up: the slots, not the limiter, bound the threads
        self._slots = anyio.Semaphore(workers)
        self._busy = 0
        self._lock = threading.Lock()
        # our own limiter, never the default one the stdio transport reads with
        self._limiter = anyio.CapacityLimiter(2 * workers)

    @property
    def busy(self) -> int:
        """Slots held now (running calls, including ones whose caller has given up)."""
        with self._lock:
            return self._busy

    async def run(self, tool: str, call: Callable[[], T]) -> T:
        """``call()`` on a worker thread; a ``ToolError`` if none frees up or it runs too long."""
        try:
            with anyio.fail_after(self.queue_wait_s):
                await self._slots.acquire()
        except TimeoutError:
            raise ToolError(
                f"the server is busy: all {self.workers} tool workers are still running earlier "
                f"calls (waited {self.queue_wait_s:g} s for one). Fix: retry in a moment; if it "
                "stays busy, a call is stuck on a slow file or backend: restart whileai-mcp"
            ) from None
        with self._lock:
            self._busy += 1

        def work() -> T:
            try:
                with call_scope():
                    return call()
            finally:
                with self._lock:
                    self._busy -= 1
                try:  # back to the event loop that owns the semaphore
                    anyio.from_thread.run_sync(self._slots.release)
                except RuntimeError:  # the loop is gone (shutting down): nobody waits
                    pass

        try:
            with anyio.fail_after(self.timeout_s):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True,
                                                      limiter=self._limiter)
        except TimeoutError:
            raise ToolError(
                f"no answer within {self.timeout_s:g} s. The call may still finish in the "
                f"background (it keeps one of the server's {self.workers} tool workers until "
                "then). Fix: use a smaller input, or check the file or backend it reads") from None
