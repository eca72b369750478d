"""Build the whileai MCP server: the operations of the toolsets turned on, the toolset switch,
and the skills as resources and prompts.

Every tool is built (from ``server.schema_cache``); one is listed and callable when its toolset
is on. ``enable_toolset`` turns one on mid-session and tells the client its list changed. The
toolsets on belong to the process: under HTTP every client sees the same list.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import CallToolResult, ListToolsResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from whileai_core import __version__
from whileai_core.errors import ArgumentError
from whileai_core.operations import DEFAULT_TOOLSETS, RENAMED, TOOLSETS, renamed
from whileai_core.operations.args import METHOD_SCHEMA_URI
from whileai_core.result import Result
from whileai_core.safepath import Limits

from .paths import Workspace
from .pool import ToolPool
from .run_tasks import TasksExtension
from .task_store import TaskStore
from .schema_cache import CACHE, mcp_tools
from .skills import SkillCatalog, register_skills
from .skills_extension import SkillsExtension
from .tooling import Env, ToolInput, WhileaiTool, lean, op_answer

NAME = "whileai"
SWITCH = "enable_toolset"

INSTRUCTIONS = """\
Decide how to post-train an open-weight model from graded rollouts, then write the config.
Rows are read from files under the workspace root: pass paths (relative to the root), never paste
large row sets. Typical order: describe_rows / route (which method, and why) -> rate / compare
(pass rates with intervals; did it move?) -> prime_rl_config (write the config) ->
validate_config -> launch_run (plan first, free; confirm=true spends money) -> run_status /
collect_run (the paired before/after verdict); watch_run while it trains. More tools come in
toolsets: enable_toolset turns one on (stats: every row fact, noise floor, holdout size, many
comparisons, the teacher gate; evals: freeze the holdout, can it fail, by category; judge; sft:
split, select, export, import rows; hacking: reward probes, hack scan, the run doctor; methods;
skills).
Answers are summaries; a per-task table is paged (detail=true) or written (task_table). The
playbooks (each step as tool calls) are the skill://<name>/SKILL.md resources, listed by
skills/list (extension io.modelcontextprotocol/skills) and the index whileai://skills/index.md."""

READ_ONLY_NOTE = """
This server is read-only (--read-only): tools that write files, launch or cancel runs are off."""


def parse_toolsets(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """``--toolsets``: names separated by commas, or ``all``; None: the default."""
    if value is None:
        return DEFAULT_TOOLSETS
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value)]
    names = [n for n in names if n]
    if "all" in names:
        return tuple(TOOLSETS)
    unknown = [n for n in names if n not in TOOLSETS]
    if unknown or not names:
        raise ArgumentError(f"--toolsets {','.join(names) or '(none)'}: "
                            f"{'unknown ' + ', '.join(unknown) if unknown else 'empty'}",
                            fix=f"name some of {', '.join(TOOLSETS)}, or all")
    return tuple(dict.fromkeys(names))


class ToolsetSwitch(Result):
    """The toolsets now on, the tools the call added, and those of the toolset a --read-only
    server leaves out (they write)."""

    toolset: str
    was_on: bool
    added: list[str]
    withheld: list[str]
    on: list[str]
    off: list[str]

    def render(self) -> str:
        on = f"on: {', '.join(self.on)}"
        left = (f"; left out by --read-only (they write): {', '.join(self.withheld)}"
                if self.withheld else "")
        if self.was_on:
            return f"toolset {self.toolset} was already on{left}; {on}"
        if not self.added:
            return f"toolset {self.toolset} is on, but adds no tool{left}; {on}"
        return (f"toolset {self.toolset} is on: {', '.join(self.added)} added (list the tools "
                f"again to see them){left}; {on}; off: {', '.join(self.off) or 'none'}")


class WhileaiServer(MCPServer):
    """The SDK's server, listing and calling only the tools of the toolsets turned on (and, in
    --read-only, only the read-only ones); a call of any other says why, and the fix."""

    def __init__(self, *, toolset_of: dict[str, str | None], on: tuple[str, ...],
                 read_only: bool, writes: set[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolset_of, self.on = toolset_of, set(on)
        self.read_only, self.writes = read_only, writes

    def refusal(self, name: str) -> str | None:
        """Why ``name`` cannot be called now, with the fix (None: it can)."""
        if name not in self.toolset_of:
            return renamed(name) if name in RENAMED else None
        if self.read_only and name in self.writes:
            return (f"`{name}` is disabled by --read-only: this server writes, launches and "
                    "cancels nothing. Fix: ask the user to restart whileai-mcp without "
                    "--read-only")
        toolset = self.toolset_of[name]
        if toolset is not None and toolset not in self.on:
            return (f"`{name}` is in the toolset `{toolset}`, which is off. Fix: call "
                    f"{SWITCH}(toolset=\"{toolset}\") first (or start whileai-mcp with "
                    f"--toolsets {toolset})")
        return None

    def listing(self) -> str:
        """Which tools a client lists now, in one line (what the HTTP server says on start)."""
        listed = sum(self.listed(n) for n in self.toolset_of)
        off = sum(s is not None and s not in self.on for s in self.toolset_of.values())
        on = [s for s in TOOLSETS if s in self.on]
        line = (f"{listed + 1} tools listed: {listed} of the toolset{'s' * (len(on) > 1)} "
                f"{', '.join(on)}, and {SWITCH}")
        return line + (f"; {off} more in the toolsets off: {SWITCH} or --toolsets all turns "
                       "them on" if off else "")

    def listed(self, name: str) -> bool:
        return name == SWITCH or (name in self.toolset_of and self.refusal(name) is None)

    async def _handle_list_tools(self, ctx, params):
        return ListToolsResult(tools=[t for t in await self.list_tools() if self.listed(t.name)])

    async def _handle_call_tool(self, ctx, params):
        refusal = self.refusal(params.name)
        if refusal is not None:
            return CallToolResult(content=[TextContent(
                type="text", text=f"Error executing tool {params.name}: {refusal}")],
                is_error=True)
        return await super()._handle_call_tool(ctx, params)

    def switch(self, toolset: str) -> ToolsetSwitch:
        before = {n for n in self.toolset_of if self.listed(n)}
        turning = set(TOOLSETS) if toolset == "all" else {toolset}  # "all", as --toolsets all
        was_on = turning <= self.on
        self.on |= turning
        added = [n for n in self.toolset_of if self.listed(n) and n not in before]
        withheld = [n for n, t in self.toolset_of.items()
                    if t in turning and self.read_only and n in self.writes]
        return ToolsetSwitch(toolset=toolset, was_on=was_on, added=added, withheld=withheld,
                             on=[t for t in TOOLSETS if t in self.on],
                             off=[t for t in TOOLSETS if t not in self.on])


class AnswerCheck:
    """Outermost middleware: an answer that cannot be encoded as UTF-8 is never sent (the SDK's
    writer would raise). A ``tools/call`` gets an ``isError`` result naming the field; any other
    request an internal error (-32603) naming it."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp.types import INTERNAL_ERROR

        from .errors import sendable_answer, shown_field, unencodable, unsendable_message

        try:
            result = await call_next(ctx)
        except MCPError as err:  # an error's own words must be sendable too
            where = unencodable({"message": err.error.message, "data": err.error.data})
            if where is None:
                raise
            raise MCPError(code=err.error.code, message=unsendable_message(
                f"error.{where}")) from None
        if ctx.request_id is None or result is None:
            return result
        if ctx.method == "tools/call":
            return sendable_answer((ctx.params or {}).get("name"), result)
        where = unencodable(result.model_dump(by_alias=True, exclude_none=True)
                            if isinstance(result, BaseModel) else result)
        if where is None:
            return result
        logging.getLogger("whileai.server").warning(
            "%s: answer not sent, field %s is not valid Unicode", ctx.method, shown_field(where))
        raise MCPError(code=INTERNAL_ERROR, message=unsendable_message(where))


def _switch_tool(server: WhileaiServer) -> Tool:
    """``enable_toolset``: turn a toolset on, and tell the client its tool list changed."""
    names = (*TOOLSETS, "all")

    class EnableToolsetInput(ToolInput):
        toolset: Annotated[Literal[names], Field(  # type: ignore[valid-type]
            description="The toolset to turn on: " + "; ".join(
                f"{n}: {what}" for n, what in TOOLSETS.items() if n != "core") + "; all: "
                "every toolset.")]

    async def call(ctx: Any = None, toolset: str = "core") -> CallToolResult:
        result = server.switch(toolset)
        if result.added and ctx is not None:
            await _tools_changed(ctx)
        return op_answer(result)

    from whileai_core.operations.surface import output_schema

    return WhileaiTool(
        fn=call, name=SWITCH, title="Turn on a toolset",
        description=("Turn on a toolset: its tools are listed from now on (the client is told "
                     "the tool list changed; list the tools again). Off by default to keep "
                     "the list short; every toolset is also reachable with whileai-mcp "
                     "--toolsets."),
        parameters=lean(EnableToolsetInput.model_json_schema(by_alias=True)),
        fn_metadata=FuncMetadata(arg_model=EnableToolsetInput,
                                 output_schema=lean(output_schema(ToolsetSwitch),
                                                    descriptions=False)),
        is_async=True, context_kwarg="ctx",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                    idempotent_hint=True, open_world_hint=False))


def _method_schema() -> str:
    from .method_schema import method_schema_text  # lazy: the method specs load on first read

    return method_schema_text()


async def _tools_changed(ctx: Any) -> None:
    """``notifications/tools/list_changed``: on the client's subscriptions/listen stream
    (protocol 2026-07-28), or on its session (earlier protocols)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    session = ctx.request_context.session
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()
    else:
        await session.send_tool_list_changed()


def build_server(root: str | os.PathLike = ".", *,
                 skills_dir: str | os.PathLike | None = None,
                 log_level: str = "WARNING", lazy: bool = True, limits: Limits | None = None,
                 pool: ToolPool | None = None, read_only: bool = False,
                 toolsets: str | Iterable[str] | None = "all") -> MCPServer:
    """The server for workspace ``root``. ``toolsets``: on at start (names, ``"all"``, or None:
    ``DEFAULT_TOOLSETS``). ``lazy``: list tools from ``server/tools.json``, each operation
    imported on its first call. ``read_only``: only the tools annotated read-only."""
    workspace = Workspace(root, limits=limits)
    catalog = SkillCatalog(skills_dir)
    env = Env(workspace=workspace, skills=catalog, pool=pool or ToolPool())
    built = mcp_tools(env, cache=CACHE if lazy else None)
    writes = {t.name for t, _ in built
              if t.annotations is None or not t.annotations.read_only_hint}
    server = WhileaiServer(
        toolset_of={t.name: s for t, s in built}, on=parse_toolsets(toolsets),
        read_only=read_only, writes=writes,
        name=NAME, title="whileai skill pack", version=__version__,
        instructions=INSTRUCTIONS + (READ_ONLY_NOTE if read_only else ""),
        log_level=log_level, tools=[t for t, _ in built],
        extensions=[SkillsExtension(catalog), TasksExtension(TaskStore(read_only=read_only))])
    server.middleware.insert(0, AnswerCheck())  # outermost: it sees every answer last
    server._tool_manager._tools[SWITCH] = _switch_tool(server)
    # earlier protocols learn of list changes only if the server says it sends them
    low = server._lowlevel_server
    make = low.create_initialization_options
    low.create_initialization_options = lambda notification_options=None, **kw: make(
        notification_options or NotificationOptions(tools_changed=True), **kw)
    register_skills(server, catalog)
    server.add_resource(FunctionResource(
        uri=METHOD_SCHEMA_URI, name="whileai-methods-schema",
        title="Every method's knobs (prime_rl_config's method)",
        description="The JSON schema of prime_rl_config's `method`: each name and each object "
                    "form with its knobs, defaults and ranges.",
        mime_type="application/json", fn=_method_schema))
    if not catalog.names():  # said once at start-up (stderr), and by list_skills when asked
        logging.getLogger("whileai.server").warning("%s", catalog.missing())
    return server
