"""The MCP server's own limits and defaults (a default the core reads too stays in
``whileai_core.defaults``): each UPPER_CASE constant is followed by ``_source(NAME, text)``
saying where its value comes from (``tests/test_defaults.py`` checks).
"""

from __future__ import annotations

SOURCES: dict[str, str] = {}
_source = SOURCES.__setitem__


# --- HTTP: address, frames, the bearer token (server.main, server.transport) ----------------------

MCP_HTTP_HOST = "127.0.0.1"
_source("MCP_HTTP_HOST", "mcp SDK default for streamable HTTP: loopback only, never 0.0.0.0")

MCP_HTTP_PORT = 8000
_source("MCP_HTTP_PORT", "mcp SDK default for streamable HTTP (MCPServer.run_streamable_http_async)")

MCP_MAX_FRAME_BYTES = 4 * 1024 * 1024
_source("MCP_MAX_FRAME_BYTES",
        "mcp SDK 2.3 DEFAULT_MAX_REQUEST_BODY_SIZE (4 MiB) for HTTP bodies, applied to stdio lines "
        "too")

MCP_TOKEN_ENV = "WHILEAI_MCP_TOKEN"
_source("MCP_TOKEN_ENV",
        "convention: the environment variable holding the HTTP bearer token (never a flag: flags "
        "land in shell history and `ps`)")

MCP_TOKEN_MIN_CHARS = 32
_source("MCP_TOKEN_MIN_CHARS",
        "convention: 32 characters of `secrets.token_urlsafe` carry about 190 bits (Python docs, "
        "secrets: 32 bytes is the recommended default)")

TOKEN_MIN_DISTINCT = 10
_source("TOKEN_MIN_DISTINCT",
        "convention: a bearer token needs at least 10 different characters besides its length; "
        "secrets.token_urlsafe(32) and token_hex(16) always pass")


# --- HTTP: connections and sessions (server.transport, server.http_guards) ------------------------

MCP_MAX_CONNECTIONS = 256
_source("MCP_MAX_CONNECTIONS",
        "convention, untested: open HTTP connections at once, and never more than a quarter of "
        "the open-file limit left after a reserve of 64")

MCP_HEAD_TIMEOUT_S = 10.0
_source("MCP_HEAD_TIMEOUT_S",
        "convention, untested: a connection that has not sent a whole request head (request line "
        "and headers) 10 s after it opened, or after its last answer, is closed (slowloris)")

MCP_BODY_TIMEOUT_S = 30.0
_source("MCP_BODY_TIMEOUT_S",
        "convention, untested: a request body (at most MCP_MAX_FRAME_BYTES) must arrive within "
        "30 s of its head, else 408")

MCP_SESSION_IDLE_S = 900.0
_source("MCP_SESSION_IDLE_S",
        "convention, untested: an HTTP session idle for 15 minutes is closed (the SDK's default is "
        "30 minutes); a client reconnects with a new initialize")

MCP_MAX_SESSIONS = 64
_source("MCP_MAX_SESSIONS",
        "convention, untested: at most 64 live HTTP sessions (the SDK allows 10,000); one agent "
        "host opens one or a few")

MCP_SESSION_RECENT_S = 60.0
_source("MCP_SESSION_RECENT_S",
        "convention, untested: a session that made a request in the last 60 s is never displaced "
        "to make room for a new one; when all are that recent a new session is answered 503")

MCP_SESSION_SWEEP_S = 1.0
_source("MCP_SESSION_SWEEP_S",
        "convention: how often the HTTP server looks for sessions past their idle time (an open "
        "GET stream does not keep a session alive)")


# --- tool calls: workers and progress (server.pool, server.tooling) -------------------------------

TOOL_WORKERS = 8
_source("TOOL_WORKERS",
        "convention, untested: tool calls run on their own 8 threads, apart from the threads the "
        "SDK's stdio transport reads and writes with (anyio's default pool of 40)")

TOOL_QUEUE_WAIT_S = 10.0
_source("TOOL_QUEUE_WAIT_S",
        "convention, untested: a call waits up to 10 s for a free tool worker, then is answered "
        "'busy' instead of queueing behind stuck calls")

TOOL_TIMEOUT_S = 600.0
_source("TOOL_TIMEOUT_S",
        "convention, untested: a tool call that has not answered in 10 minutes is answered with "
        "an error")

MCP_PROGRESS_INTERVAL_S = 0.25
_source("MCP_PROGRESS_INTERVAL_S",
        "convention, untested: at most four progress notifications a second per call, so a fast "
        "loop does not flood the client (the last one, done == total, is always sent)")


# --- the Skills extension of MCP, SEP-2640 (server.skills_extension) ------------------------------

SKILLS_TTL_MS = 300_000
_source("SKILLS_TTL_MS",
        "the freshness hint of skills/list and skills/get answers: 5 minutes, the value the "
        "SEP-2640 specification's examples use (the catalog is read on every call)")

SKILLS_PAGE_SIZE = 50
_source("SKILLS_PAGE_SIZE",
        "convention, untested: skills per skills/list page (an entry is a whole manifest)")


# --- runs served as tasks, the Tasks extension of MCP 2026-07-28 (server.run_tasks) ---------------

RUN_TASK_TTL_MS = 24 * 3600 * 1000
_source("RUN_TASK_TTL_MS",
        "convention, untested: a task (its status and its result) is kept 24 hours from its "
        "creation; the run itself stays in the registry, where run_status and collect_run find it")

RUN_TASKS_AT_ONCE = 8
_source("RUN_TASKS_AT_ONCE",
        "convention, untested: at most 8 runs followed as tasks at once, each on a thread of its "
        "own (as many as TOOL_WORKERS); a call beyond that is answered at once, as for a client "
        "without tasks")

TASK_ID_SHOWN_CHARS = 40
_source("TASK_ID_SHOWN_CHARS",
        "convention: an unknown task id is echoed by tasks/get, tasks/cancel and tasks/update "
        "cut to 40 characters with its length (a real one is 22: secrets.token_urlsafe(16))")

RUN_TASKS_KEPT = 256
_source("RUN_TASKS_KEPT",
        "convention, untested: at most 256 tasks remembered; past that the oldest finished ones "
        "are forgotten first (their runs stay in the registry)")


# --- the spend gate (server.spend_gate) -----------------------------------------------------------

SPEND_ASK_ROUNDS = 3
_source("SPEND_ASK_ROUNDS",
        "convention, untested: a launch whose plan changed after the user approved it is asked "
        "about again up to 3 times in one call, then refused (something keeps rewriting the "
        "config); never launched unasked")
