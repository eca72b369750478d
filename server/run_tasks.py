"""Runs served as MCP tasks: launch, collect and watch of a run answered with a task handle the
client polls, where the client declared the Tasks extension; today's answer everywhere else.

The extension is ``io.modelcontextprotocol/tasks`` of MCP 2026-07-28 (SEP-2663,
``specification/2026-07-28/tasks.md`` of modelcontextprotocol/ext-tasks), served on 2026-07-28
connections only through the SDK's extension mechanism (mcp 2.3 has no Tasks of its own):

- a task is made only for a ``tools/call`` whose ``_meta`` client capabilities name the
  extension, once the spend gate's question is resolved; the task is in the store before its
  ``CreateTaskResult`` is returned;
- ``tasks/get``: ``working`` with the latest progress step as ``statusMessage`` (progress
  notifications are not sent on tasks), ``completed`` with the call's ``CallToolResult``
  (``isError`` included), or ``cancelled``; ``tasks/update`` only acknowledges (no task here
  needs input);
- ``tasks/cancel`` stops the task at its next step: a ``launch_run`` task cancels its run (not
  on a ``--read-only`` server), a ``collect_run`` or ``watch_run`` task stops waiting and the
  run goes on;
- an unknown task id is -32602, a client that did not declare the extension gets -32021; ids
  are 128 random bits, bound to the principal of the call that made them.

At most ``RUN_TASKS_AT_ONCE`` tasks run, each on a thread of its own; past that a call is
answered at once, as without tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, Request, RequestParams, TextContent
from pydantic import BaseModel, ConfigDict, Field

from whileai_core.defaults import RUN_TASK_POLL_S

from .task_store import RunTask, Stopped, TaskStore

EXTENSION_ID = "io.modelcontextprotocol/tasks"

# The tools that may be served as tasks, and the argument naming their run (launch_run's run
# id comes from its plan).
FOLLOWED: dict[str, str | None] = {"launch_run": None, "collect_run": "id", "watch_run": "source"}


@dataclass
class Offer:
    """Set for a ``tools/call`` whose client declared the extension: the tool may start a task
    here (``serve``), which the interceptor then answers with."""

    store: TaskStore
    principal: str | None
    task: RunTask | None = None


OFFER: ContextVar[Offer | None] = ContextVar("whileai_task_offer", default=None)


# --- the tool's side: serve a call as a task, or answer it now ---------------------------------

def run_of(op_name: str, values: dict[str, Any]) -> str | None:
    """The run id a call follows (None: not one to serve as a task)."""
    if op_name not in FOLLOWED:
        return None
    if op_name == "launch_run":
        return "" if values.get("confirm") else None  # known from the plan, in the task
    if op_name == "watch_run" and values.get("plot"):
        return None  # a picture is answered at once
    from whileai_core.operations.surface import _is_run_id

    value = values.get(FOLLOWED[op_name] or "")
    return value.strip() if _is_run_id(value) else None


async def serve(op: Any, values: dict[str, Any], ctx: Any, answer_now: Callable[[dict], Any],
                compute: Callable[..., tuple[Any, CallToolResult]]) -> Any:
    """The reply to a call of ``op`` when the spend gate or a task answers it; None when it is
    answered now. ``compute(values, listen)`` gives (result, reply) on the calling thread (a
    task's own); ``answer_now(values)`` the same on the tool pool (awaited)."""
    from whileai_core.operations import SPENDS

    from .spend_gate import gate, launch
    from .tooling import op_answer

    spends = op.effect is SPENDS and values.get("confirm")
    if spends:  # the question first; the call goes on bound to the plan it looked at
        verdict = await gate(values, ctx, answer_now, op_answer)
        if verdict.reply is not None:
            return verdict.reply
        values = verdict.values
    offer = OFFER.get()
    run = run_of(op.name, values)
    if offer is not None and run is not None:
        task = offer.store.start(op.name, offer.principal, _work(op, values, run, compute,
                                                                   offer.store),
                                 _cancel(offer.store))
        if task is not None:
            offer.task = task
            return CallToolResult(content=[TextContent(type="text", text=f"task {task.task_id}")])
    if spends:  # answered now: a plan changed after the answer is asked about again
        return await launch(values, ctx, answer_now, op_answer)
    return None  # answered now, as for any tool


def _work(op: Any, values: dict[str, Any], run: str, compute: Callable[..., tuple[Any, Any]],
          store: TaskStore) -> Callable[[RunTask], CallToolResult]:
    """What the task's thread does for ``op``."""

    def work(task: RunTask) -> CallToolResult:
        from whileai_core.progress import reporting
        from whileai_core.runs.follow import follow_run
        from whileai_core.voice import MCP, speaking

        from .errors import run_core
        from .tooling import op_answer

        def listen(done: float, total: float | None, message: str) -> None:
            if task.stop.is_set():
                raise Stopped
            store.progress(task, message)

        def pause(seconds: float) -> None:
            if task.stop.wait(seconds):
                raise Stopped

        def follow(until=None):
            with speaking(MCP), reporting(listen):
                return run_core(op.doing, lambda: follow_run(
                    task.run_id, every_s=RUN_TASK_POLL_S, until=until, pause=pause))

        if op.name == "launch_run":
            planned, _ = compute({**values, "confirm": False}, listen)
            task.run_id = planned.plan.run_id  # before anything starts: a cancel finds it
            launched, reply = compute(values, listen)
            if launched.run is None or launched.action == "planned":
                return reply
            return op_answer(launched.model_copy(update={"run": follow()}))
        task.run_id = run
        if op.name == "collect_run":
            follow()
            return compute(values, listen)[1]

        def stop_said(_record) -> bool:  # watch_run: a look at each poll
            try:
                watched, _ = compute(values, listen)
            except ToolError as err:  # e.g. no output written yet: look again next time
                store.progress(task, f"watching {task.run_id}: {err}")
                return False
            store.progress(task, f"watching {task.run_id}: {watched.summary()}")
            return watched.decision == "stop"

        follow(until=stop_said)
        return compute(values, listen)[1]

    return work


def _cancel(store: TaskStore) -> Callable[[RunTask], str]:
    def cancel(task: RunTask) -> str:
        if task.run_id is None:
            return "cancelled before the run was known; nothing was launched"
        if task.tool != "launch_run":  # the task waited on a run it did not start
            return f"stopped following {task.run_id}; the run goes on (cancel_run stops it)"
        if store.read_only:
            return (f"stopped following {task.run_id}; the run was left as it is (this server is "
                    "--read-only: it cancels nothing)")
        from whileai_core.errors import WhileaiError
        from whileai_core.runs import cancel_run
        from whileai_core.voice import MCP, speaking

        try:
            with speaking(MCP):
                return f"{task.run_id}: {cancel_run(task.run_id).stopped}"
        except WhileaiError as err:  # e.g. stopped before the launch recorded the run
            return f"{task.run_id}: nothing to cancel ({err})"
    return cancel


# --- the extension: capability, tasks/get, tasks/update, tasks/cancel, the interceptor ----------

class TaskParams(RequestParams):
    model_config = ConfigDict(populate_by_name=True)

    task_id: str = Field(alias="taskId")


class UpdateTaskParams(TaskParams):
    input_responses: dict[str, Any] = Field(default_factory=dict, alias="inputResponses")


def _principal(ctx: Any) -> str | None:
    from mcp.server.request_state import authenticated_principal

    return authenticated_principal(ctx)


def _declared(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    caps = ctx.session.client_capabilities
    return (ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and caps is not None
            and bool(caps.extensions) and EXTENSION_ID in caps.extensions)


class TasksExtension(Extension):
    """``tasks/get``, ``tasks/update``, ``tasks/cancel`` over one :class:`TaskStore`, and the
    ``tools/call`` interceptor that answers a call served as a task with its handle."""

    identifier = EXTENSION_ID

    def __init__(self, store: TaskStore) -> None:
        self.store = store

    def settings(self) -> dict[str, Any]:
        return {}  # "No extension-specific settings are currently defined"

    def methods(self):
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return (MethodBinding("tasks/get", TaskParams, self._get, modern),
                MethodBinding("tasks/update", UpdateTaskParams, self._update, modern),
                MethodBinding("tasks/cancel", TaskParams, self._cancel, modern))

    async def intercept_tool_call(self, params, ctx, call_next):
        if params.name not in FOLLOWED or not _declared(ctx):
            return await call_next(ctx)
        offer = Offer(self.store, _principal(ctx))
        token = OFFER.set(offer)
        try:
            result = await call_next(ctx)
        finally:
            OFFER.reset(token)
        if offer.task is None:
            return result
        return {"resultType": "task", **offer.task.wire()}

    def _task(self, ctx: Any, params: TaskParams) -> RunTask:
        from mcp.server.mcpserver.server import require_client_extension

        require_client_extension(ctx, EXTENSION_ID)  # -32021 for a client that did not declare it
        return self.store.get(params.task_id, _principal(ctx))

    async def _get(self, ctx, params: TaskParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        with self.store._lock:
            return task.wire()

    async def _update(self, ctx, params: UpdateTaskParams) -> dict[str, Any]:
        self._task(ctx, params)  # no task here waits for input: every response is ignored
        return {}

    async def _cancel(self, ctx, params: TaskParams) -> dict[str, Any]:
        self._task(ctx, params).stop.set()  # cooperative: the task stops at its next step
        return {}


# --- for clients (tests): the requests and the claimed result, typed ------------------------------

class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"  # the spec's Mcp-Name routing header


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class TaskResult(BaseModel):
    """A ``tasks/get`` answer (and, with ``resultType: "task"``, a ``CreateTaskResult``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(None, alias="statusMessage")
    created_at: str = Field(alias="createdAt")
    last_updated_at: str = Field(alias="lastUpdatedAt")
    ttl_ms: int | None = Field(alias="ttlMs")
    poll_interval_ms: int | None = Field(None, alias="pollIntervalMs")
    result: dict[str, Any] | None = None
