"""Every tool is an operation of the core (``whileai_core.operations``), generated here once.

:func:`op_entry` is the tool as ``tools/list`` shows it (schemas from the operation's signature
and result type, kept lean; annotations from its effect). :func:`op_tool` is the SDK ``Tool``
that runs it in the server's context (every path under the workspace root) on the tool pool's
threads, in the MCP reader's voice: the result once as structured content (its summary
included: some hosts forward only it), the human text beside it, a picture with ``plot=true``.
Every failure becomes an ``isError`` result (``server.errors``); each ``progress.step`` is a
progress notification and the point where a cancelled request stops.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

import anyio.from_thread
from whileai_core.defaults import LIST_SHOWN_MAX
from whileai_core.operations import SPENDS
from whileai_core.progress import reporting
from whileai_core.result import plain
from whileai_core.voice import MCP, speaking

from .errors import bad_arguments, run_core
from .limits import MCP_PROGRESS_INTERVAL_S
from .paths import Workspace
from .pool import ToolPool
from .run_tasks import FOLLOWED, serve

if TYPE_CHECKING:
    from whileai_core.skills import SkillCatalog


class ToolInput(ArgModelBase):
    """Base of every tool's input model: unknown arguments are refused, never silently dropped
    (an ``ArgModelBase``: :func:`op_tool` hands it to the SDK as the tool's argument model)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)


@dataclass(frozen=True)
class Env:
    """What a tool call may use besides its arguments: the workspace, the skills, the threads."""

    workspace: Workspace
    skills: SkillCatalog
    pool: ToolPool = field(default_factory=ToolPool)


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


def progress_listener(ctx: Any):
    """A ``whileai_core.progress`` listener for the request of ``ctx`` (on the worker thread): it
    stops a cancelled call, and sends increasing progress, each new stage (the text before ':')
    at once, within a stage at most one per ``MCP_PROGRESS_INTERVAL_S`` but the last."""
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


def lean(schema: Any, *, descriptions: bool = True) -> Any:
    """``schema`` without pydantic's ``title`` on every object and property; an output schema
    (``descriptions=False``) also without descriptions, defaults, ``readOnly``, ``required``
    (every result field is always sent; :func:`op_entry` names ``summary``) and
    ``additionalProperties: false`` (a field added later breaks no client)."""
    drop = {"title"} if descriptions else {"title", "description", "default", "examples",
                                           "readOnly", "required"}

    def walk(node: Any, *, names: bool = False) -> Any:
        if isinstance(node, dict):
            if names:  # a "properties" or "$defs" mapping: its keys are names, not keywords
                return {k: walk(v) for k, v in node.items()}
            out = {k: walk(v, names=k in ("properties", "$defs", "patternProperties"))
                   for k, v in node.items() if k not in drop
                   and not (k == "additionalProperties" and v is False and not descriptions)}
            return _types_together(out)
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


_ANY_TYPE_KEYS = {"enum", "const", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then",
                  "else"}  # keywords that constrain every type, null too


def _types_together(node: dict[str, Any]) -> dict[str, Any]:
    """The same values allowed, in fewer characters: an ``anyOf`` of a type and null as a
    ``type`` list (the branch's other keywords apply to its own type, so null stays allowed),
    ``prefixItems`` of one schema as ``items``, and ``additionalProperties: true`` left out."""
    if node.get("additionalProperties") is True:
        node = {k: v for k, v in node.items() if k != "additionalProperties"}
    prefix = node.get("prefixItems")
    if (isinstance(prefix, list) and prefix and all(p == prefix[0] for p in prefix)
            and node.get("minItems") == node.get("maxItems") == len(prefix)
            and "items" not in node):
        node = {("items" if k == "prefixItems" else k): (prefix[0] if k == "prefixItems" else v)
                for k, v in node.items()}
    alts = node.get("anyOf")
    if not isinstance(alts, list) or not all(isinstance(a, dict) for a in alts):
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if all(set(a) == {"type"} and isinstance(a["type"], str) for a in alts):
        return {**rest, "type": [a["type"] for a in alts]}
    typed = [a for a in alts if a != {"type": "null"}]
    if (len(alts) == 2 and len(typed) == 1 and isinstance(typed[0].get("type"), str)
            and not set(typed[0]) & (_ANY_TYPE_KEYS | set(rest))):
        return {**rest, **typed[0], "type": [typed[0]["type"], "null"]}
    return node


def portable_inputs(schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments with a single ``type`` each, as function-calling hosts want (Gemini's
    OpenAPI subset; the MCP Inspector flags a ``type`` list): an argument whose default is null
    is just optional; one where null means more than absent (``seed``) keeps a null ``anyOf``
    branch. The operation's own model still takes null either way."""
    props = {}
    for name, prop in schema.get("properties", {}).items():
        kinds = prop.get("type")
        if isinstance(kinds, list) and "null" in kinds:
            typed = [k for k in kinds if k != "null"]
            if "default" in prop and prop["default"] is None and len(typed) == 1:
                prop = {k: v for k, v in prop.items() if k != "default"} | {"type": typed[0]}
            else:
                constraints = {k: v for k, v in prop.items()
                               if k not in ("type", "description", "default")}
                branches = [{"type": k, **constraints} for k in typed] + [{"type": "null"}]
                prop = {k: v for k, v in prop.items() if k in ("description", "default")} | {
                    "anyOf": branches}
        alts = prop.get("anyOf")
        if isinstance(alts, list) and {"type": "null"} in alts and prop.get("default", 0) is None:
            typed = [a for a in alts if a != {"type": "null"}]
            rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
            prop = rest | (typed[0] if len(typed) == 1 else {"anyOf": typed})
        props[name] = prop
    return {**schema, "properties": props} if "properties" in schema else schema


GUARD_NUMBER = 10**5  # a numeric bound this far from 0, or a string's maxLength of at least
GUARD_LENGTH = 200    # this: a guard no real value meets


def unguarded(node: Any) -> Any:
    """``node`` without the guards against absurd values (``MAX_SCORE``, a 64-bit seed, a
    path's 4096 characters): still checked, with the core's message, but no caller reads them."""
    if isinstance(node, list):
        return [unguarded(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: unguarded(v) for name, v in value.items()}
        elif key in ("maximum", "minimum") and isinstance(value, (int, float)) \
                and abs(value) >= GUARD_NUMBER:
            continue
        elif key == "maxLength" and isinstance(value, int) and value >= GUARD_LENGTH:
            continue
        else:
            out[key] = unguarded(value)
    return out


def outline(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema to two levels: the result's fields and those of each object they hold;
    an object further down is typed ``object`` (its fields arrive all the same)."""
    defs = schema.get("$defs", {})

    def refs(node: Any, found: set[str]) -> set[str]:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref.rsplit("/", 1)[-1])
            for value in node.values():
                refs(value, found)
        elif isinstance(node, list):
            for value in node:
                refs(value, found)
        return found

    kept = refs(schema.get("properties", {}), set())

    def cut(node: Any) -> Any:
        if isinstance(node, list):
            return [cut(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in kept:
            return {"type": "object"}
        return _types_together({k: cut(v) if k != "properties" else
                                {n: cut(p) for n, p in v.items()} for k, v in node.items()})

    out = {k: v for k, v in schema.items() if k != "$defs"}
    out = {k: (cut(v) if k != "properties" else v) for k, v in out.items()}
    if kept:
        out["$defs"] = {name: cut(defs[name]) for name in sorted(kept)}
    return shared(out)


SHARED_MIN = 50  # characters: a subschema this long met twice is written once, in $defs


def shared(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each subschema of ``SHARED_MIN`` characters or more met twice written
    once in ``$defs`` (named after the shortest field it types), the biggest saving first."""
    import json

    def count(node: Any, name: str, seen: dict[str, list[str]]) -> dict[str, list[str]]:
        if isinstance(node, dict):
            text = json.dumps(node, sort_keys=True)
            if len(text) >= SHARED_MIN and "$ref" not in text:
                seen.setdefault(text, []).append(name)
            for key, value in node.items():
                if key in ("properties", "$defs") and isinstance(value, dict):
                    for inner, prop in value.items():
                        count(prop, inner, seen)
                else:
                    count(value, name, seen)
        elif isinstance(node, list):
            for value in node:
                count(value, name, seen)
        return seen

    def swap(node: Any, body: Any, ref: dict[str, str]) -> Any:
        if node == body:
            return ref
        if isinstance(node, dict):
            return {k: swap(v, body, ref) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v, body, ref) for v in node]
        return node

    while True:
        repeated = [(text, names) for text, names in count(schema, "result", {}).items()
                    if len(names) > 1]
        if not repeated:
            return schema
        text, names = max(repeated, key=lambda tn: len(tn[0]) * (len(tn[1]) - 1))
        defs = schema.get("$defs", {})
        name = min(names, key=len)
        while name in defs:
            name += "_"
        body = json.loads(text)
        schema = swap(schema, body, {"$ref": f"#/$defs/{name}"})
        schema["$defs"] = {**schema.get("$defs", {}), name: body}


def op_entry(op) -> dict[str, Any]:
    """The operation's tool as tools/list shows it (camelCase keys, no empty fields)."""
    from whileai_core.operations.surface import input_model, output_schema

    return {"name": op.name, "title": op.title, "description": op.description,
            "inputSchema": portable_inputs(unguarded(lean(
                input_model(op, "mcp", ToolInput).model_json_schema(by_alias=True)))),
            "outputSchema": {**outline(lean(output_schema(op.result_type()),
                                            descriptions=False)), "required": ["summary"]},
            "annotations": op.effect.hints()}


def context_of(env: Env):
    """The core's context for a call on this server: every path under the workspace root."""
    from whileai_core.operations.surface import Context

    return Context(root=env.workspace.door, skills=env.skills)


def _bounded(result: Any) -> Any:
    """``result.bounded`` at ``LIST_SHOWN_MAX`` items, halved while the answer is still over its
    byte bound."""
    from whileai_core.result import _answer_bytes

    limit = LIST_SHOWN_MAX
    cut = result.bounded(limit)
    max_bytes = getattr(type(result), "answer_max_bytes", None)
    while max_bytes is not None and limit > 1 and _answer_bytes(cut) > max_bytes:
        limit //= 2
        cut = result.bounded(limit)
    return cut


def op_answer(result: BaseModel) -> CallToolResult:
    """A result as a tool answer: the data once (structured, standing alone: its summary
    sentence included) and the human text; every growing list cut to ``LIST_SHOWN_MAX``."""
    from whileai_core.failures import masked
    from whileai_core.operations.surface import structured

    result = masked(result)  # whole, before any cut: no secret, nor the start of one, is shown
    if hasattr(result, "bounded"):
        result = _bounded(result)
    # plain(): terminal controls in an id or a log line are shown, never acted on
    return CallToolResult(content=[TextContent(type="text", text=plain(str(result)))],
                          structured_content=structured(result))


def op_tool(op, env: Env, entry: dict[str, Any] | None = None) -> Tool:
    """The SDK ``Tool`` for the operation ``op``, bound to the server's ``env``."""
    from whileai_core.operations.surface import input_model, invoke, picture

    model = input_model(op, "mcp", ToolInput)
    entry = entry or op_entry(op)
    where = context_of(env)

    def compute(values: dict[str, Any], listen: Any) -> tuple[Any, CallToolResult]:
        # on a worker thread; messages built during the call name the tool's arguments
        with speaking(MCP), reporting(listen):
            def run():
                result = invoke(op, values, where)
                return result, op_answer(result)
            return run_core(op.doing, run)

    async def call(ctx: Any = None, **fields: Any) -> CallToolResult:
        # The SDK has validated ``fields`` against the input model: every argument is there.
        values = dict(model.model_construct(**fields))
        listen = progress_listener(ctx)

        async def now(values: dict[str, Any]) -> tuple[Any, CallToolResult]:
            # on the tool pool's threads, never the SDK's (its stdio transport reads with those)
            return await env.pool.run(op.name, lambda: compute(values, listen))

        if op.effect is SPENDS or op.name in FOLLOWED:  # the spend gate; runs as MCP tasks
            served = await serve(op, values, ctx, now, compute)
            if served is not None:
                return served
        result, reply = await now(values)
        if values.get("plot") and op.picture is not None:
            def png() -> bytes:
                with speaking(MCP):
                    return picture(op, values, result, where).png()
            data = await env.pool.run(op.name, lambda: run_core(op.doing, png))
            # the numbers stay in the structured result: a host without images loses nothing
            reply.content.append(ImageContent(type="image", mime_type="image/png",
                                              data=base64.b64encode(data).decode("ascii")))
        return reply

    return WhileaiTool(
        fn=call, name=op.name, title=op.title, description=entry["description"],
        parameters=entry["inputSchema"],
        # output_schema without output_model: advertised (and checked by clients), not
        # re-validated here; the Result model validated itself when the core built it.
        fn_metadata=FuncMetadata(arg_model=model, output_schema=entry["outputSchema"]),
        is_async=True, context_kwarg="ctx",
        annotations=ToolAnnotations.model_validate(entry["annotations"]))
