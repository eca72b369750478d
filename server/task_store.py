"""The tasks a server holds (``server/run_tasks.py`` serves them): each task's ``DetailedTask``
wire fields (the Tasks extension of MCP 2026-07-28), its thread, its stop switch, its lifetime.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent

from whileai_core.defaults import RUN_TASK_POLL_S

from .limits import RUN_TASK_TTL_MS, RUN_TASKS_AT_ONCE, RUN_TASKS_KEPT, TASK_ID_SHOWN_CHARS

TERMINAL = ("completed", "failed", "cancelled")


class Stopped(BaseException):
    """Raised in a task's thread at its next step once the task was cancelled. A
    BaseException, as a cancelled request's is: no ``except Exception`` in the core swallows it."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class RunTask:
    """One task: its wire fields, the run it follows, and the switch that stops it."""

    task_id: str
    tool: str
    principal: str | None
    run_id: str | None = None
    status: Literal["working", "completed", "failed", "cancelled"] = "working"
    status_message: str = "starting"
    created_at: str = field(default_factory=_now)
    last_updated_at: str = field(default_factory=_now)
    created: float = field(default_factory=time.monotonic)
    result: dict[str, Any] | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def wire(self) -> dict[str, Any]:
        """The ``DetailedTask`` (spec, "Tasks"): the final result only once completed."""
        task = {"taskId": self.task_id, "status": self.status,
                "statusMessage": self.status_message, "createdAt": self.created_at,
                "lastUpdatedAt": self.last_updated_at, "ttlMs": RUN_TASK_TTL_MS,
                "pollIntervalMs": int(RUN_TASK_POLL_S * 1000)}
        if self.status == "completed" and self.result is not None:
            task["result"] = self.result
        return task


class TaskStore:
    """The server's tasks, in memory (a task lives as long as the process, at most its TTL)."""

    def __init__(self, *, read_only: bool = False) -> None:
        self.read_only = read_only
        self._lock = threading.Lock()
        self._tasks: OrderedDict[str, RunTask] = OrderedDict()
        self._slots = threading.BoundedSemaphore(RUN_TASKS_AT_ONCE)

    def start(self, tool: str, principal: str | None, work: Callable[[RunTask], CallToolResult],
              cancel: Callable[[RunTask], str]) -> RunTask | None:
        """Run ``work(task)`` on a thread of its own; None when ``RUN_TASKS_AT_ONCE`` run
        already. ``cancel(task)`` says what stopping it did (the task is then ``cancelled``)."""
        if not self._slots.acquire(blocking=False):
            return None
        task = RunTask(task_id=secrets.token_urlsafe(16), tool=tool, principal=principal)
        with self._lock:
            self._forget_old()
            self._tasks[task.task_id] = task

        def body() -> None:
            from whileai_core.admission import call_scope

            try:
                with call_scope():  # a task's reads queue for memory as a tool call's do
                    done = work(task)
                self._finish(task, "completed", result=done)
            except Stopped:
                self._finish(task, "cancelled", message=cancel(task))
            except ToolError as err:  # the core's refusal: a completed call with isError
                self._finish(task, "completed", result=CallToolResult(
                    content=[TextContent(type="text", text=f"Error executing tool {tool}: {err}")],
                    is_error=True))
            finally:
                self._slots.release()

        threading.Thread(target=body, name=f"whileai-task-{tool}", daemon=True).start()
        return task

    def progress(self, task: RunTask, message: str) -> None:
        with self._lock:
            if task.status == "working":
                from .errors import escaped  # a status line is text any writer can send

                task.status_message, task.last_updated_at = escaped(message), _now()

    def _finish(self, task: RunTask, status: str, *, result: CallToolResult | None = None,
                message: str | None = None) -> None:
        with self._lock:
            task.status, task.last_updated_at = status, _now()  # type: ignore[assignment]
            if result is not None:
                from .errors import sendable_answer  # a field no writer can encode: named

                result = sendable_answer(task.tool, result)
                task.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                first = next((c.text for c in result.content if isinstance(c, TextContent)), "")
                task.status_message = first.splitlines()[0] if first else status
            if message is not None:
                task.status_message = message

    def get(self, task_id: str, principal: str | None) -> RunTask:
        """The task, or -32602 (spec, "Error Handling") for an id unknown, expired or bound to
        another principal (never said which: ids are bearer handles)."""
        with self._lock:
            self._forget_old()
            task = self._tasks.get(task_id)
        if task is None or task.principal != principal:
            from whileai_core.result import cut_text

            shown = cut_text(repr(task_id), TASK_ID_SHOWN_CHARS)  # an id of any length: capped
            raise MCPError(code=INVALID_PARAMS, message=(
                f"Failed to retrieve task: no task {shown} on this server (tasks are kept "
                f"{RUN_TASK_TTL_MS // 3_600_000} hours, and not across a restart). Fix: its run is "
                "still in the registry: list_runs, run_status and collect_run find it"))
        return task

    def _forget_old(self) -> None:  # under the lock
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            if now - task.created > RUN_TASK_TTL_MS / 1000 and task.status in TERMINAL:
                del self._tasks[task_id]
        finished = [t for t, task in self._tasks.items() if task.status in TERMINAL]
        for task_id in finished[:max(0, len(self._tasks) - RUN_TASKS_KEPT)]:
            del self._tasks[task_id]
