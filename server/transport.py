"""How whileai-mcp talks: stdio with every frame answered, streamable HTTP behind a secret.

stdio: the SDK's transport drops a line it cannot parse and the client waits forever, so
:class:`FramedStdin` answers it: not JSON gets "Parse error" (-32700), not a valid JSON-RPC
message or over ``MCP_MAX_FRAME_BYTES`` "Invalid Request" (-32600); valid lines go to the SDK.
HTTP: the SDK's streamable HTTP app with Host and Origin checked (never switched off), bounded
sessions, and :class:`BearerAuth` in front. Every bind, loopback included, needs the token (from
``$WHILEAI_MCP_TOKEN`` or a file, never a flag): without it any local process could call every
tool and displace a client's sessions. Hostile clients: ``server.http_guards``.
"""

from __future__ import annotations

import asyncio
import fcntl
import hmac
import io
import ipaddress
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from whileai_core.errors import ArgumentError

from .limits import (MCP_BODY_TIMEOUT_S, MCP_HEAD_TIMEOUT_S, MCP_MAX_CONNECTIONS,
                     MCP_MAX_FRAME_BYTES, MCP_MAX_SESSIONS, MCP_SESSION_IDLE_S,
                     MCP_SESSION_RECENT_S, MCP_TOKEN_ENV,
                     MCP_TOKEN_MIN_CHARS, TOKEN_MIN_DISTINCT)

LOOPBACK = ("127.0.0.1", "::1", "localhost")
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]      # the SDK's own defaults
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


# --- every outgoing message can be written ------------------------------------------------------

_GUARDED = False


def guard_outgoing() -> None:
    """Every message the server writes is one the writer can encode: a lone surrogate (a file
    name that is not UTF-8) goes out escaped, or, in a result, as an internal error naming the
    field (the SDK's writer raised on it). mcp 2.3 has no public hook, hence the patch of
    ``JSONRPCDispatcher._write`` (once)."""
    global _GUARDED
    if _GUARDED:
        return
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    write = JSONRPCDispatcher._write

    async def _write(self, message, metadata=None):
        await write(self, sendable(message), metadata)

    JSONRPCDispatcher._write = _write
    _GUARDED = True


def sendable(message: Any) -> Any:
    """``message`` (a JSON-RPC message model) itself when it encodes; else its sendable form."""
    from pydantic_core import PydanticSerializationError

    from .errors import escaped, shown_field, unencodable, unsendable_message

    try:
        message.model_dump_json(by_alias=True, exclude_unset=True)
        return message
    except (PydanticSerializationError, UnicodeError):
        pass
    dumped = message.model_dump(by_alias=True, exclude_unset=True)
    where = unencodable(dumped)
    if where is None:  # another failure: the SDK's own handling
        return message
    import logging

    logging.getLogger("whileai.server").warning(
        "outgoing message: field %s is not valid Unicode; sent %s", shown_field(where),
        "as an error" if isinstance(message, types.JSONRPCResponse) else "with it escaped")
    if isinstance(message, types.JSONRPCResponse):
        return _error(message.id, types.INTERNAL_ERROR, unsendable_message(where))
    return type(message).model_validate(escaped(dumped))


# --- stdio -------------------------------------------------------------------------------------

def frame_error(line: str) -> types.JSONRPCError | None:
    """The JSON-RPC error a line deserves, or None when it is a valid message (or blank)."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, types.PARSE_ERROR, "Parse error: the frame is not valid JSON. Fix: "
                      "send one JSON-RPC 2.0 message as JSON on one line")
    request_id = value.get("id") if isinstance(value, dict) else None
    valid_id = not isinstance(request_id, bool) and isinstance(request_id, (int, str))
    # a request whose id is null, a float, a bool or an object would pass as a notification
    # (the SDK ignores the unknown field) and never be answered: it is an invalid request
    bad_id = isinstance(value, dict) and "method" in value and "id" in value and not valid_id
    if not valid_id:
        request_id = None
    if not bad_id:
        try:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            return None
        except ValueError as exc:
            if "surrogate" in str(exc):  # json.loads takes "\ud800"; no UTF-8 text holds it
                return _error(request_id, types.PARSE_ERROR, (
                    "Parse error: the frame holds a lone UTF-16 surrogate escape (\\ud800 to "
                    "\\udfff without its pair), which is no character. Fix: send valid Unicode "
                    "text (the character itself, or both halves of its pair)"))
    what = (f"a JSON {_JSON_TYPES.get(type(value), 'value')}" if not isinstance(value, dict)
            else "a request whose id is not an integer or a string" if bad_id
            else "an object that is not a JSON-RPC 2.0 request, notification or response")
    return _error(request_id, types.INVALID_REQUEST,
                  f"Invalid Request: the frame is {what}. Fix: send {{\"jsonrpc\": \"2.0\", "
                  "\"id\": <int or string>, \"method\": <string>, \"params\": <object>}")


_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
               type(None): "null"}


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id,
                              error=types.ErrorData(code=code, message=message))


def _wire(error: types.JSONRPCError) -> dict:
    return error.model_dump(mode="json", exclude_unset=True)


def _too_large(max_frame: int) -> types.JSONRPCError:
    return _error(None, types.INVALID_REQUEST, f"Invalid Request: the frame is over {max_frame} "
                  "bytes. Fix: send smaller requests (a large input belongs in a file under the "
                  "workspace root, passed by path)")


def _header(scope: dict, name: bytes) -> bytes | None:
    """The first value of header ``name`` of an ASGI request, or None."""
    return next((value for key, value in scope.get("headers") or () if key == name), None)


class FramedStdin:
    """stdin for the SDK's stdio transport: yields the valid lines, answers the others itself."""

    def __init__(self, fd: int, *, max_frame: int = MCP_MAX_FRAME_BYTES) -> None:
        self._file = io.open(fd, "rb", closefd=False)
        self._max = max_frame
        self._replies: Any = None
        self._ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        """Where error replies go: the SDK transport's write stream (one writer on stdout)."""
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> FramedStdin:
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            raw = await anyio.to_thread.run_sync(self._file.readline, self._max + 1,
                                                 abandon_on_cancel=True)
            if not raw:
                raise StopAsyncIteration
            if len(raw) > self._max and not raw.endswith(b"\n"):
                await self._skip_rest()
                await self._reply(_too_large(self._max))
                continue
            line = raw.decode("utf-8", errors="replace")
            error = frame_error(line)
            if error is None:
                if line.strip():
                    return line
                continue
            await self._reply(error)

    async def _skip_rest(self) -> None:
        while True:
            chunk = await anyio.to_thread.run_sync(self._file.readline, self._max,
                                                   abandon_on_cancel=True)
            if not chunk or chunk.endswith(b"\n"):
                return

    async def _reply(self, error: types.JSONRPCError) -> None:
        try:
            await self._replies.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


async def serve_stdio(server: MCPServer, *, max_frame: int = MCP_MAX_FRAME_BYTES) -> None:
    """Serve ``server`` on stdin/stdout, answering every frame. fd 0 points at the null device
    while serving, as in the SDK, so a child process never reads the protocol's input."""
    guard_outgoing()
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    stdin = FramedStdin(private, max_frame=max_frame)
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            stdin.attach(write_stream)
            # MCPServer.run_stdio_async does exactly this with its own stdin; the SDK (2.x) has
            # no public hook for the stdin it reads, hence the private attribute.
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream,
                               lowlevel.create_initialization_options())
    finally:
        os.dup2(private, 0)
        os.close(private)


# --- HTTP --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HttpSettings:
    """Everything that decides who may talk to the HTTP server, checked before it starts."""

    host: str
    port: int
    token: str | None
    token_source: str | None
    allowed_hosts: list[str]
    allowed_origins: list[str]
    session_idle_s: float
    max_sessions: int
    read_only: bool
    session_recent_s: float = MCP_SESSION_RECENT_S
    head_timeout_s: float = MCP_HEAD_TIMEOUT_S
    body_timeout_s: float = MCP_BODY_TIMEOUT_S
    max_connections: int = MCP_MAX_CONNECTIONS

    def describe(self, root: str, tools: str | None = None) -> str:
        """What the server says on start (stderr): where, who may call, which tools it lists
        (``tools``: the server's own line, ``WhileaiServer.listing``), what is switched off."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        lines = [f"whileai-mcp: streamable HTTP at http://{shown}:{self.port}/mcp, workspace {root}"]
        lines.append(f"  every request needs 'Authorization: Bearer <token>' (token from "
                     f"{self.token_source})")
        lines.append(f"  Host must be one of: {', '.join(self.allowed_hosts)}")
        lines.append("  Origin (browsers) must be one of: "
                     + (", ".join(self.allowed_origins) or "none allowed"))
        lines.append(f"  sessions close after {self.session_idle_s:g} s idle (an open stream "
                     f"or not); at most {self.max_sessions} at once, the least recently active "
                     f"one idle over {min(self.session_recent_s, self.session_idle_s):g} s giving "
                     "way to a new one (one used more recently never does)")
        from .http_guards import connection_limit

        lines.append(f"  at most {connection_limit(self.max_connections)} connections at once "
                     f"(more are answered 503); a request head must arrive within "
                     f"{self.head_timeout_s:g} s, its body within {self.body_timeout_s:g} s")
        if tools:
            lines.append(f"  {tools}")
        lines.append("  read-only: tools that write files, launch or cancel runs are off"
                     if self.read_only else
                     "  launch_run spends money on Modal (--read-only turns the writing and "
                     "launching tools off)")
        return "\n".join(lines)


def is_loopback(host: str) -> bool:
    return host in LOOPBACK


def http_settings(host: str, port: int, *, environ: Mapping[str, str] | None = None,
                  token_file: str | None = None, allowed_hosts: Sequence[str] = (),
                  allowed_origins: Sequence[str] = (), session_idle_s: float = MCP_SESSION_IDLE_S,
                  max_sessions: int = MCP_MAX_SESSIONS, read_only: bool = False,
                  session_recent_s: float = MCP_SESSION_RECENT_S) -> HttpSettings:
    """Check the HTTP settings; raise :class:`ArgumentError` (the server does not start) when
    there is no token (on any bind), or the token or host names are unusable."""
    env = os.environ if environ is None else environ
    token, source = _token(env, token_file)
    loopback = is_loopback(host)
    if token is None:
        who = ("any program on this machine that reaches the port" if loopback else
               f"anyone who reaches --host {host} from another machine")
        raise ArgumentError(
            f"--http needs a bearer token whatever the address: without one {who} could call "
            "every tool (launch_run spends money on your Modal account) and open sessions that "
            "displace yours", fix="export "
            f"{MCP_TOKEN_ENV}=\"$(python -c 'import secrets; print(secrets.token_urlsafe(32))')\" "
            "(or --token-file FILE holding it), give the same token to the client (its "
            "'Authorization: Bearer <token>' header), and restart")
    hosts = [h.strip() for h in allowed_hosts if h.strip()]
    for h in hosts:
        if any(c.isspace() for c in h) or "/" in h:
            raise ArgumentError(f"--allowed-host {h!r} is not a host[:port]", fix="e.g. "
                                f"--allowed-host gpu-box.lan:{port}")
    if loopback:
        hosts = _LOOPBACK_HOSTS + hosts
    elif not hosts:
        if _wildcard(host):
            raise ArgumentError(
                f"--host {host} listens on every address, so the Host header clients send cannot "
                "be guessed (it is checked against DNS rebinding)", fix="--allowed-host "
                f"NAME:{port} for each name or address clients use (repeat the flag)")
        hosts = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    origins = [o.strip() for o in allowed_origins if o.strip()]
    if loopback:
        origins = _LOOPBACK_ORIGINS + origins
    if not 0 < session_idle_s <= 7 * 24 * 3600:
        raise ArgumentError(f"--session-idle {session_idle_s:g} must be in (0, 604800] seconds",
                            fix=f"e.g. --session-idle {MCP_SESSION_IDLE_S:g}")
    return HttpSettings(host=host, port=port, token=token, token_source=source,
                        allowed_hosts=hosts, allowed_origins=origins,
                        session_idle_s=session_idle_s, max_sessions=max_sessions,
                        read_only=read_only, session_recent_s=session_recent_s)


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _token(env: Mapping[str, str], token_file: str | None) -> tuple[str | None, str | None]:
    if token_file is not None:
        from whileai_core.safepath import user_path

        path = user_path(token_file, argument="--token-file")
        with path.open_binary("config") as fh:  # the mode of the file read, not of a name
            mode = os.fstat(fh.fileno()).st_mode
            raw = fh.read()
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ArgumentError(
                f"--token-file {token_file} can be read by other users (mode "
                f"{stat.S_IMODE(mode):03o}), so the token is not a secret", fix="chmod 600 "
                f"{token_file} (and make a new token if others could have read it)")
        try:
            token = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            token = ""
        source = f"--token-file {token_file}"
    elif env.get(MCP_TOKEN_ENV, "").strip():
        token, source = env[MCP_TOKEN_ENV].strip(), f"${MCP_TOKEN_ENV}"
    else:
        return None, None
    if (len(token) < MCP_TOKEN_MIN_CHARS or not token.isascii() or not token.isprintable()
            or any(c.isspace() for c in token) or len(set(token)) < TOKEN_MIN_DISTINCT):
        raise ArgumentError(
            f"the bearer token from {source} is unusable: it must be at least "
            f"{MCP_TOKEN_MIN_CHARS} printable ASCII characters without spaces, at least "
            f"{TOKEN_MIN_DISTINCT} of them different (its value is not shown)",
            fix="python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return token, source


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``, compared
    in constant time; else 401 with a JSON-RPC error, never reaching the SDK."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            given = _header(scope, b"authorization") or b""
            if not hmac.compare_digest(given, self._expected):
                await _send_json(send, 401, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32001,
                    "message": "Unauthorized: missing or wrong bearer token. Fix: send "
                               "'Authorization: Bearer <token>' with the token the server was "
                               f"started with (its {MCP_TOKEN_ENV} or --token-file)"}},
                    headers=[(b"www-authenticate", b'Bearer realm="whileai-mcp"')])
                return
        await self.app(scope, receive, send)


class FrameCheck:
    """ASGI middleware: a POSTed frame that is not a valid JSON-RPC message gets stdio's answer
    (:func:`frame_error`) with 400; a body over ``max_frame`` bytes 413 before it is held in
    memory; one still incomplete ``body_timeout_s`` after its head 408."""

    def __init__(self, app: Any, *, max_frame: int = MCP_MAX_FRAME_BYTES,
                 body_timeout_s: float = MCP_BODY_TIMEOUT_S) -> None:
        self.app, self.max_frame, self.body_timeout_s = app, max_frame, body_timeout_s

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        deadline = anyio.current_time() + self.body_timeout_s
        while more:
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as waited:
                message = await receive()
            if waited.cancelled_caught:
                await _send_json(send, 408, _wire(_error(None, types.INVALID_REQUEST, (
                    f"Invalid Request: the body did not arrive within {self.body_timeout_s:g} s. "
                    "Fix: send the whole request at once"))), headers=[(b"connection", b"close")])
                return
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_frame:
                await _send_json(send, 413, _wire(_too_large(self.max_frame)))
                return
            chunks.append(body)
            more = message.get("more_body", False)
        data = b"".join(chunks)
        error = frame_error(data.decode("utf-8", errors="replace"))
        if error is None and not data.strip():
            error = _error(None, types.PARSE_ERROR, "Parse error: the body is empty. Fix: POST "
                           "one JSON-RPC 2.0 message")
        if error is not None:
            await _send_json(send, 400, _wire(error))
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _send_json(send: Any, status: int, payload: dict, headers: Sequence = ()) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *headers]})
    await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer, settings: HttpSettings) -> tuple[Any, Any]:
    """The ASGI app: the SDK's streamable HTTP app with explicit security, its sessions
    guarded, behind the token; and the guard, whose :meth:`SessionGuard.sweep` the server runs."""
    from mcp.server.transport_security import TransportSecuritySettings

    guard_outgoing()

    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=settings.allowed_hosts,
                                         allowed_origins=settings.allowed_origins)
    from .http_guards import SessionGuard

    sdk = server.streamable_http_app(transport_security=security,
                                     session_idle_timeout=settings.session_idle_s,
                                     max_sessions=settings.max_sessions, host=settings.host)
    guard = SessionGuard(sdk, server.session_manager, idle_s=settings.session_idle_s,
                         max_sessions=settings.max_sessions, recent_s=settings.session_recent_s)
    app = FrameCheck(guard, body_timeout_s=settings.body_timeout_s)
    if not settings.token:  # http_settings never makes these: a caller built settings by hand
        raise ArgumentError("the HTTP server needs a bearer token", fix="build its settings "
                            f"with http_settings (and {MCP_TOKEN_ENV} set)")
    return BearerAuth(app, settings.token), guard


async def serve_http(server: MCPServer, settings: HttpSettings, *, log_level: str) -> None:
    import uvicorn

    from .http_guards import connection_limit, guarded_protocol, quiet_loop_errors

    asyncio.get_running_loop().set_exception_handler(quiet_loop_errors)
    app, guard = http_app(server, settings)
    limit = connection_limit(settings.max_connections)
    config = uvicorn.Config(app, host=settings.host, port=settings.port,
                            log_level=log_level.lower(),
                            http=guarded_protocol(limit, settings.head_timeout_s),
                            backlog=limit, timeout_keep_alive=5)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(guard.sweep)
        await uvicorn.Server(config).serve()
        tasks.cancel_scope.cancel()
