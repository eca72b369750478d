"""How the HTTP server holds under hostile clients: connections, request timeouts, sessions.

- connections past :func:`connection_limit` (below the open-file limit) are answered 503 before
  a byte is read, and one without a whole request head within ``MCP_HEAD_TIMEOUT_S`` is closed
  (:func:`guarded_protocol`; the body's timeout is ``server.transport.FrameCheck``'s);
- the event loop's error handler never raises (:func:`quiet_loop_errors`);
- a session expires after ``--session-idle`` seconds without a request, an open GET stream or
  not, and when all are taken a new one displaces the least recently active session idle for
  over ``MCP_SESSION_RECENT_S`` (:class:`SessionGuard`), else gets 503: one client cannot lock
  out the others, and no working client loses its session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any

import anyio

from .limits import MCP_MAX_CONNECTIONS, MCP_SESSION_RECENT_S, MCP_SESSION_SWEEP_S
from .transport import _error, _header, _send_json, _wire


class SessionGuard:
    """ASGI middleware over the SDK's session manager: sessions expire, and none is held forever.

    The SDK's idle timer stops while a request is open, and a GET stream stays open at will:
    here activity is when a request starts or (but for a GET stream) ends. An evicted client
    gets 404 and starts anew. Sessions are read and ended through the manager's private
    ``_server_instances`` and ``_discard_session`` (mcp 2.3).
    """

    def __init__(self, app: Any, manager: Any, *, idle_s: float, max_sessions: int,
                 recent_s: float = MCP_SESSION_RECENT_S) -> None:
        self.app, self.manager = app, manager
        self.idle_s, self.max_sessions = idle_s, max_sessions
        self.recent_s = min(recent_s, idle_s)
        self.activity: dict[str, float] = {}
        self.in_flight: dict[str, int] = {}
        self._room = anyio.Lock()

    def _sessions(self) -> dict[str, Any]:
        return self.manager._server_instances

    def _touch(self, session: str) -> None:
        self.activity[session] = time.monotonic()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = _header(scope, b"mcp-session-id")
        session = None if raw is None else raw.decode("latin-1")
        stream = scope.get("method") == "GET"
        if session is None:
            if scope.get("method") == "POST" and not await self._make_room():
                await _full(send, self.max_sessions, self.recent_s)
                return

            async def capture(message: dict) -> None:  # a new session: its id, active now
                if message["type"] == "http.response.start":
                    for name, value in message.get("headers") or ():
                        if name == b"mcp-session-id":
                            self._touch(value.decode("latin-1"))
                await send(message)

            await self.app(scope, receive, capture)
            return
        known = session in self._sessions()
        if known:
            self._touch(session)
            if not stream:
                self.in_flight[session] = self.in_flight.get(session, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            if known and not stream:
                self.in_flight[session] -= 1
                self._touch(session)

    async def _make_room(self) -> bool:
        """Whether a new session fits: now, or once the least recently active session idle for
        over ``recent_s`` (none of its requests in flight) has given way."""
        async with self._room:
            sessions = self._sessions()
            if len(sessions) < self.max_sessions:
                return True
            old = time.monotonic() - self.recent_s
            idle = [(self.activity.get(s, 0.0), s) for s in sessions
                    if not self.in_flight.get(s) and self.activity.get(s, 0.0) < old]
            if not idle:
                return False
            await self._expire(min(idle)[1], "to make room for a new session")
            return True

    async def _expire(self, session: str, why: str) -> None:
        transport = self._sessions().get(session)
        self.activity.pop(session, None)
        self.in_flight.pop(session, None)
        if transport is None:
            return
        logging.getLogger("whileai.server").info("closing HTTP session %s %s", session[:16], why)
        await self.manager._discard_session(session, transport)

    async def sweep(self, every_s: float = MCP_SESSION_SWEEP_S) -> None:
        """Forever: expire the sessions idle past ``idle_s`` (see the class docstring)."""
        while True:
            await anyio.sleep(every_s)
            now = time.monotonic()
            sessions = self._sessions()
            for session in list(sessions):
                last = self.activity.setdefault(session, now)
                if not self.in_flight.get(session) and now - last > self.idle_s:
                    await self._expire(session, f"idle for over {self.idle_s:g} s")
            for gone in set(self.activity) - set(sessions):
                self.activity.pop(gone, None)
                self.in_flight.pop(gone, None)


async def _full(send: Any, max_sessions: int, recent_s: float) -> None:
    await _send_json(send, 503, _wire(_error(None, -32000, (
        f"Service Unavailable: all {max_sessions} sessions are in use (each made a request in the "
        f"last {recent_s:g} s), and none is displaced while in use. Fix: retry in a minute, or "
        "reuse the session this client already has"))),
        headers=[(b"retry-after", str(int(recent_s)).encode())])


# --- connections: counted, timed, never past the open-file limit -----------------------------

FD_RESERVE = 64  # descriptors kept for what the server itself opens: files, pipes, the registry


def connection_limit(wanted: int = MCP_MAX_CONNECTIONS) -> int:
    """Connections served at once: ``wanted``, and never more than a quarter of what the
    open-file limit leaves after ``FD_RESERVE`` (asyncio accepts a burst of connections before
    the first is counted: the rest is headroom for it), and at least 4."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(4, min(wanted, (soft - FD_RESERVE) // 4))


_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n%s")


def guarded_protocol(max_connections: int, head_timeout_s: float) -> type:
    """uvicorn's h11 protocol, counting connections and timing request heads (module docstring):
    past ``max_connections`` a connection is answered 503 as it opens, before a byte is read."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    body = json.dumps(_wire(_error(None, -32000, (
        "Service Unavailable: the server has as many connections as it serves at once. Fix: "
        "retry in a moment")))).encode()
    refused = _REFUSED % (len(body), body)

    class GuardedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _refused = False

        def connection_made(self, transport) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections:
                self._refused = True
                self.transport = transport
                transport.write(refused)
                transport.close()
                return
            super().connection_made(transport)
            self._wait_for_head()

        def _wait_for_head(self) -> None:
            self._stop_head_timer()
            self._head_timer = self.loop.call_later(head_timeout_s, self._head_too_slow)

        def _stop_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.close()  # no request under way: nothing is cut short

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a whole request head arrived
                self._stop_head_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait_for_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_head_timer()
            if self._refused:
                return
            super().connection_lost(exc)

    return GuardedH11Protocol


def quiet_loop_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The event loop's error handler: one short line to stderr, and it never raises (logging
    may need a file past the open-file limit, and a raise here ends the loop)."""
    try:
        exc = context.get("exception")
        what = f"{type(exc).__name__}: {exc}" if exc is not None else ""
        os.write(2, f"whileai-mcp: {context.get('message', 'event loop error')} {what}\n"
                 .encode("utf-8", "replace")[:1000])
    except Exception:  # noqa: BLE001 - nothing may escape the loop's error handler
        pass


