"""The pattern every tool follows: a pydantic input model, a plain function, a spec that wires them.

A domain module (``stats_tools``, ``config_tools``...) defines, per tool:

- an input model deriving from :class:`ToolInput`, one ``Field(description=...)`` per argument,
  written for the model that will call the tool;
- a plain function ``(args, env) -> Result`` that only turns arguments into one call of
  ``whileai_core`` (it knows nothing about MCP; ``env`` holds the server's settings: the
  workspace root and the skills folder);
- a :class:`ToolSpec` naming both, the core's Result class (its schema is the output schema), the
  annotations, what the call is doing (for the message of an unexpected failure), and ``core``:
  the ``whileai_core`` names the tool serves (a skill step that calls one of them has this tool
  as its MCP form; ``tests/test_skill_parity.py`` holds every skill to it).

:func:`to_mcp_tool` turns a spec into the SDK's ``Tool``: the input schema is the model's JSON
schema, the output schema the Result's. The answer carries the result once as structured content
and a short human summary (the Result's ``render()``) as text, never the JSON twice. Every
failure becomes an ``isError`` result (``server.errors``). While the core runs (in a worker
thread), each ``whileai_core.progress.step`` becomes a progress notification to a client that
asked for them, and is the point where a cancelled request stops. The registry
(``server.registry``) lists the domain modules.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import anyio.from_thread
from whileai_core.defaults import LIST_SHOWN_MAX, MCP_INLINE_ROWS_MAX, TASK_PAGE_DEFAULT, TASK_PAGE_MAX
from whileai_core.errors import RowsError
from whileai_core.progress import reporting
from whileai_core.result import plain
from whileai_core.voice import MCP, speaking

from .errors import bad_arguments, run_core
from .limits import MCP_PROGRESS_INTERVAL_S
from .paths import Workspace
from .pool import ToolPool

if TYPE_CHECKING:
    from .skills import SkillCatalog


class ToolInput(ArgModelBase):
    """Base of every tool's input model: unknown arguments are refused, never silently dropped.

    It derives from the SDK's ``ArgModelBase`` because :func:`to_mcp_tool` hands the model to
    the SDK as the tool's argument model directly. (``MCPServer.tool()`` would build that model
    from the function's parameters, so a pydantic input model would sit nested under one
    argument instead of being the flat schema the caller sees.)
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)


# --- annotations: every tool states all four hints -----------------------------------------

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
"""Reads files under the root and computes; changes nothing."""

WRITES_FILE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                              open_world_hint=False)
"""Writes one file under the root; replaces an existing one only when the caller sets
``overwrite`` (hence destructive); the same arguments write the same bytes (idempotent)."""


# --- values named in descriptions: read from the core's Literals, never retyped --------------

def values_of(model: type[BaseModel], field: str) -> tuple[str, ...]:
    """The values of the Literal field ``field`` of ``model`` (optional or not), in order."""
    import typing

    def literals(tp) -> list:
        if typing.get_origin(tp) is typing.Literal:
            return list(typing.get_args(tp))
        return [v for arg in typing.get_args(tp) for v in literals(arg)]

    found = literals(model.model_fields[field].annotation)
    if not found:
        raise TypeError(f"{model.__name__}.{field} is not a Literal field")
    return tuple(found)


def named(values) -> str:
    """Values as a description names them: "`a`, `b` or `c`"."""
    quoted = [f"`{v}`" for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" or {quoted[-1]}"


# --- arguments shared by several tools -----------------------------------------------------

RowsArg = Annotated[
    str | list[dict[str, Any]],
    Field(description=(
        "Graded rollouts. Preferred: a path to a JSONL (one JSON object per line) or JSON-array "
        "file, relative to the workspace root; the server reads it, so never paste a large file "
        f"here. For small inputs (at most {MCP_INLINE_ROWS_MAX} rows) a list of row objects is "
        'accepted. Each row: {"task_id": str, "reward": number, "truncated": bool (optional), '
        '"model": str (optional)}; a row passes when reward >= threshold.'),
        examples=["evals/graded.jsonl"]),
]

# Every numeric argument has a finite range in its schema (NaN, 1e100 and integers past
# 64 bits must be input errors, not "a bug in whileai"). The core checks its own ranges too.
MAX_SCORE = 1e15        # a reward, threshold or run_std: any scale a grader uses
MAX_SEED = 2**63 - 1
MAX_K = 100_000         # rollouts per task
MAX_COUNT = 10**9       # steps, batch, group size, eval examples
MAX_TOKENS = 10**8      # max_tokens, seq_len
MAX_GPUS_PER_NODE = 1024
MAX_NODES = 100_000
MAX_VOCAB = 10**8
Score = Annotated[float, Field(ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False)]
"""A reward, score or rate given as a number: finite, within +-MAX_SCORE."""

LevelArg = Annotated[float, Field(
    gt=0.0, lt=1.0, allow_inf_nan=False,
    description="Confidence level of every interval, strictly between 0 and 1 (0.95 = 95%).")]
SeedArg = Annotated[int | None, Field(
    ge=0, le=MAX_SEED,
    description="Seed of the task bootstrap: the same rows and seed give the same interval. "
                "null draws a fresh one.")]

ThresholdArg = Annotated[
    float | None,
    Field(ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False, description="A row passes when reward >= threshold. Leave null for the library "
                      "default (1.0: a program grader's pass)."),
]



DetailArg = Annotated[bool, Field(
    description="false (default): a summary of the per-task values (counts, band histogram, the "
                "lowest and highest tasks). true: also one page of the per-task table "
                "(`offset`, `limit`); task_table writes the whole table to a file.")]
OffsetArg = Annotated[int, Field(
    ge=0, le=10**9, description="With detail=true: the first task of the page (0-based, in the "
                                "rows' first-appearance order); the answer gives the next one.")]
LimitArg = Annotated[int, Field(
    ge=1, le=TASK_PAGE_MAX, description=f"With detail=true: tasks per page (1-{TASK_PAGE_MAX}).")]
OverwriteArg = Annotated[bool, Field(
    description="Replace `out` if it exists. Leave false unless the user asked to replace that "
                "file.")]


PAGE_DEFAULT = TASK_PAGE_DEFAULT


def with_table(result, table, args, env: Env):
    """``result`` with the page of ``table`` (a ``whileai_core.tables.TaskTable``) when ``args``
    asked for one. A tool with a per-task table ends its input model with ``detail: DetailArg =
    False``, ``offset: OffsetArg = 0`` and ``limit: LimitArg = PAGE_DEFAULT``; the whole table
    goes to a file through the ``task_table`` tool (so these tools stay read-only)."""
    if not args.detail:
        return result
    return result.model_copy(update={"page": table.page(args.offset, args.limit)})


def source(value: str | list[dict[str, Any]], workspace: Workspace, *,
           argument: str) -> Path | list[dict[str, Any]]:
    """What the core reads: a path (resolved inside the root) or a small inline list."""
    if isinstance(value, str):
        return workspace.resolve(value, argument=argument)
    if len(value) > MCP_INLINE_ROWS_MAX:
        raise RowsError(f"`{argument}` has {len(value)} inline records, more than the "
                        f"{MCP_INLINE_ROWS_MAX} accepted inline",
                        fix="write them to a .jsonl file under the workspace root and pass its path")
    return value


def read_rows(value: str | list[dict[str, Any]], workspace: Workspace, *, argument: str,
              threshold: float | None = None):
    """Rows from a path under the root (loaded once per version of the file: the core's
    ``whileai_core.rows_cache``) or from an inline list."""
    from whileai_core.rows_cache import load_rows_cached  # lazy: numpy loads with the first call

    return load_rows_cached(source(value, workspace, argument=argument), threshold=threshold)


def write_records(records: list[dict[str, Any]], path: Path, *, overwrite: bool) -> Path:
    """Records as JSONL (one object per line), written atomically; refuses to replace a file
    unless ``overwrite`` (``whileai_core.io.write_atomic``)."""
    from whileai_core.io import write_jsonl

    return write_jsonl(path, records, overwrite=overwrite)


def optional_path(value: str | None, workspace: Workspace, *, argument: str) -> Path | None:
    return None if value is None else workspace.resolve(value, argument=argument)


# --- the spec and its wiring ---------------------------------------------------------------

@dataclass(frozen=True)
class Env:
    """What a tool function may use besides its arguments: the server's settings, and the pool
    of threads tool calls run on (``server.pool``)."""

    workspace: Workspace
    skills: SkillCatalog
    pool: ToolPool = field(default_factory=ToolPool)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, its input model, the plain function, the core's result type.

    ``core``: the public ``whileai_core`` names (functions, classes) this tool serves; a skill
    step that calls one of them shows this tool as its MCP form.
    """

    name: str
    title: str
    description: str
    input: type[ToolInput]
    output: type[BaseModel]
    run: Callable[[Any, Env], BaseModel]
    annotations: ToolAnnotations
    doing: str
    image: Callable[[Any, Any], bytes | None] | None = None
    """Optional ``(args, result) -> PNG bytes or None``: an image content sent next to the
    structured result (which keeps the numbers, so a host that shows no images loses nothing)."""
    core: tuple[str, ...] = field(default=())


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of what the tool sends back (serialization mode: the wire form)."""
    return model.model_json_schema(mode="serialization")


class WhileaiTool(Tool):
    """The SDK's ``Tool``, with argument errors rewritten in the library's voice."""

    async def run(self, arguments, context, convert_result=False):
        try:
            return await super().run(arguments, context, convert_result=convert_result)
        except ToolError as err:
            if isinstance(err.__cause__, ValidationError):
                model = self.fn_metadata.arg_model
                raise ToolError(f"Error executing tool {self.name}: "
                                f"{bad_arguments(err.__cause__, model)}") from err.__cause__
            raise


def describe(spec: ToolSpec) -> dict[str, Any]:
    """The tool as tools/list shows it (camelCase keys, no empty fields)."""
    return {"name": spec.name, "title": spec.title, "description": spec.description,
            "inputSchema": spec.input.model_json_schema(by_alias=True),
            "outputSchema": output_schema(spec.output),
            "annotations": spec.annotations.model_dump(by_alias=True, exclude_none=True)}


def answer(result: BaseModel) -> CallToolResult:
    """A result as a tool answer: the data once (structured) and a short summary (text); every
    list that grows with the input cut to ``LIST_SHOWN_MAX`` items, saying "n of N shown"."""
    if hasattr(result, "bounded"):
        result = result.bounded(LIST_SHOWN_MAX)
    data = result.model_dump(mode="json")
    # the human text: terminal controls in an id or a log line shown, never acted on
    text = plain(result.render() if hasattr(result, "render") else str(result))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _answered(result: BaseModel) -> tuple[BaseModel, CallToolResult]:
    return result, answer(result)


def progress_listener(ctx: Any):
    """A ``whileai_core.progress`` listener for the request of ``ctx``, called in the worker
    thread that runs the core: it stops the call if the request was cancelled, and sends a
    progress notification when the client gave a progress token: increasing values only, each
    new stage (the message's text before ':') at once, and within a stage at most one per
    ``MCP_PROGRESS_INTERVAL_S`` except the last."""
    last: dict[str, Any] = {"done": -1.0, "at": 0.0, "stage": None}

    def listen(done: float, total: float | None, message: str) -> None:
        anyio.from_thread.check_cancelled()  # raises the request's cancellation: the call stops
        if ctx is None or done <= last["done"]:
            return
        now = time.monotonic()
        stage = message.split(":", 1)[0]
        final = total is not None and done >= total
        if not final and stage == last["stage"] and now - last["at"] < MCP_PROGRESS_INTERVAL_S:
            return
        last.update(done=done, at=now, stage=stage)
        try:
            anyio.from_thread.run(ctx.report_progress, done, total, message)
        except Exception:  # noqa: BLE001 - a lost notification must not fail the call
            pass

    return listen


def to_mcp_tool(spec: ToolSpec, env: Env) -> Tool:
    """The SDK ``Tool`` for ``spec``, bound to the server's ``env``."""

    async def call(ctx: Any = None, **fields: Any) -> CallToolResult:
        # The SDK has validated ``fields`` against ``spec.input``: rebuild the model unchecked.
        args = spec.input.model_construct(**fields)
        listen = progress_listener(ctx)

        def work() -> tuple[Any, CallToolResult]:  # on a tool pool thread
            # messages built during the call name the tool's arguments
            with speaking(MCP), reporting(listen):
                return run_core(spec.doing, lambda: _answered(spec.run(args, env)))

        # on the tool pool's threads, never the SDK's (its stdio transport reads with those)
        result, reply = await env.pool.run(spec.name, work)
        png = None
        if spec.image is not None:
            png = run_core(spec.doing, lambda: spec.image(args, result))
        if png:  # the numbers stay in the structured result: a host without images loses nothing
            reply.content.append(ImageContent(type="image", mime_type="image/png",
                                              data=base64.b64encode(png).decode("ascii")))
        return reply

    return WhileaiTool(
        fn=call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=spec.input.model_json_schema(by_alias=True),
        # output_schema without output_model: advertised (and checked by clients), not re-validated
        # here; the Result model validated itself when the core built it.
        fn_metadata=FuncMetadata(arg_model=spec.input, output_schema=output_schema(spec.output)),
        is_async=True,
        context_kwarg="ctx",
        annotations=spec.annotations,
    )
