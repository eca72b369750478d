"""Runs served as MCP tasks (the Tasks extension of revision 2026-07-28) through the SDK's
in-process client: a local launch is created as a task, polled (status and progress), cancelled
(its run cancelled as cancel_run does) or followed to its result; collect waits for the run; a
client without the extension gets today's answer (the run id).

The client declares the extension with a result claim for ``resultType: "task"`` (mcp 2.3.0's
``ClientExtension``) and drives ``tasks/get`` / ``tasks/cancel`` itself. Polling loops carry a
deadline only as a hang guard, never as a speed check.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import EmptyResult, Result
from pydantic import ConfigDict, Field

from server.app import build_server
from server.run_tasks import (EXTENSION_ID, CancelTaskRequest, GetTaskRequest, TaskParams,
                              TaskResult)
from test_runs_support import make_recipes
from test_server_support import ok


class CreatedTask(Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    result_type: Literal["task"] = Field("task", alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str


async def _never(result, context):  # the tests take the task handle themselves
    raise AssertionError("call_tool(..., allow_claimed=True) hands the handle back")


class Tasks(ClientExtension):
    identifier = EXTENSION_ID

    def claims(self):
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_never),)


@pytest.fixture
def server(tmp_path, monkeypatch):
    recipes = make_recipes(tmp_path)
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WHILEAI_RECIPES_DIR", str(recipes))
    monkeypatch.setattr("server.run_tasks.RUN_TASK_POLL_S", 0.05)  # look often: a quick test
    ws = tmp_path / "ws"
    ws.mkdir()
    return build_server(ws, skills_dir=ws / "none")


async def _get(client: Client, task_id: str) -> TaskResult:
    return await client.session.send_request(
        GetTaskRequest(params=TaskParams(task_id=task_id)), TaskResult)


async def _until(client: Client, task_id: str, done, limit_s: float = 120.0) -> TaskResult:
    deadline = time.monotonic() + limit_s
    while True:
        task = await _get(client, task_id)
        if done(task):
            return task
        assert time.monotonic() < deadline, task  # a hang guard
        await anyio.sleep(0.05)


def _run(server, body) -> Any:
    async def go():
        async with Client(server, extensions=[Tasks()]) as client:
            return await body(client)
    return anyio.run(go)


def test_a_local_launch_is_a_task_polled_then_cancelled_with_its_run(server):
    async def body(client):
        created = await client.session.call_tool(
            "launch_run", {"config_or_recipe": "slow", "backend": "local", "confirm": True},
            allow_claimed=True)
        assert isinstance(created, CreatedTask) and created.status == "working"
        following = await _until(client, created.task_id,
                                 lambda t: "following" in (t.status_message or ""))
        assert following.status == "working" and following.result is None
        run_id = following.status_message.split()[1].rstrip(":")
        running = ok(await client.call_tool("run_status", {"id": run_id}))
        assert running["status"] in ("launching", "running")
        await client.session.send_request(
            CancelTaskRequest(params=TaskParams(task_id=created.task_id)), EmptyResult)
        cancelled = await _until(client, created.task_id, lambda t: t.status != "working")
        return run_id, cancelled, ok(await client.call_tool("run_status", {"id": run_id}))

    run_id, cancelled, status = _run(server, body)
    assert cancelled.status == "cancelled" and run_id in cancelled.status_message
    assert status["status"] == "cancelled"  # the run itself, through the core's cancel_run


def test_cancelling_a_collect_task_stops_the_waiting_not_the_run(server):
    async def body(client):
        created = await client.session.call_tool(
            "launch_run", {"config_or_recipe": "slow", "backend": "local", "confirm": True},
            allow_claimed=True)
        following = await _until(client, created.task_id,
                                 lambda t: "following" in (t.status_message or ""))
        run_id = following.status_message.split()[1].rstrip(":")
        collecting = await client.session.call_tool("collect_run", {"id": run_id},
                                                     allow_claimed=True)
        await client.session.send_request(
            CancelTaskRequest(params=TaskParams(task_id=collecting.task_id)), EmptyResult)
        stopped = await _until(client, collecting.task_id, lambda t: t.status != "working")
        running = ok(await client.call_tool("run_status", {"id": run_id}))
        await client.session.send_request(  # tidy up: the launch task's cancel stops the run
            CancelTaskRequest(params=TaskParams(task_id=created.task_id)), EmptyResult)
        await _until(client, created.task_id, lambda t: t.status != "working")
        return run_id, stopped, running

    run_id, stopped, running = _run(server, body)
    assert stopped.status == "cancelled" and "the run goes on" in stopped.status_message
    assert running["status"] in ("launching", "running")  # the collect's cancel left it alone


def test_a_launch_task_ends_with_the_finished_run_and_collect_waits_for_it(server):
    async def body(client):
        created = await client.session.call_tool(
            "launch_run", {"config_or_recipe": "tiny", "backend": "local", "confirm": True},
            allow_claimed=True)
        done = await _until(client, created.task_id, lambda t: t.status != "working")
        run_id = done.result["structuredContent"]["run"]["id"]
        collecting = await client.session.call_tool("collect_run", {"id": run_id},
                                                     allow_claimed=True)
        collected = await _until(client, collecting.task_id, lambda t: t.status != "working")
        return done, collected

    done, collected = _run(server, body)
    assert done.status == "completed" and done.result["isError"] is False
    launch = done.result["structuredContent"]
    assert launch["action"] == "launched" and launch["run"]["status"] == "succeeded"
    assert collected.status == "completed"
    # test_runs_support: every task moves from i%2 to 2 + i%2 of 4 rollouts: delta +0.5 by hand
    assert collected.result["structuredContent"]["comparison"]["delta"] == pytest.approx(0.5)


def test_a_client_without_the_extension_gets_the_run_id_at_once(server):
    async def go():
        async with Client(server) as client:
            return ok(await client.call_tool(
                "launch_run", {"config_or_recipe": "tiny", "backend": "local", "confirm": True}))
    launched = anyio.run(go)
    assert launched["action"] == "launched" and launched["run"]["id"].startswith("run-")


def test_tasks_methods_refuse_unknown_ids_and_undeclared_clients(server):
    async def declared(client):
        with pytest.raises(MCPError) as caught:
            await _get(client, "no-such-task")
        return caught.value.error.code

    assert _run(server, declared) == -32602

    async def undeclared():
        async with Client(server) as client:
            with pytest.raises(MCPError) as caught:
                await _get(client, "no-such-task")
            return caught.value.error.code
    assert anyio.run(undeclared) == -32021


def test_a_refusal_inside_a_task_completes_it_with_is_error(server):
    async def body(client):
        created = await client.session.call_tool(
            "collect_run", {"id": "run-0123456789ab"}, allow_claimed=True)
        return await _until(client, created.task_id, lambda t: t.status != "working")

    done = _run(server, body)
    assert done.status == "completed" and done.result["isError"] is True
    assert "no run 'run-0123456789ab'" in done.result["content"][0]["text"]


def test_an_unknown_task_id_is_echoed_cut_to_a_bound(server):
    """tasks/get, tasks/cancel and tasks/update echoed a 3.9 MB task id whole.
    Now at most 40 characters of it come back, with its length."""
    from mcp_types import Request

    from server.run_tasks import UpdateTaskParams

    class UpdateTaskRequest(Request[UpdateTaskParams, Literal["tasks/update"]]):
        method: Literal["tasks/update"] = "tasks/update"
        params: UpdateTaskParams

    huge = "x" * 3_900_000

    async def body(client):
        messages = []
        for request in (GetTaskRequest(params=TaskParams(task_id=huge)),
                        CancelTaskRequest(params=TaskParams(task_id=huge)),
                        UpdateTaskRequest(params=UpdateTaskParams(task_id=huge))):
            with pytest.raises(MCPError) as caught:
                await client.session.send_request(request, EmptyResult)
            messages.append((caught.value.error.code, caught.value.error.message))
        return messages

    for code, message in _run(server, body):
        assert code == -32602 and len(message.encode()) < 600, len(message)
        # the repr of the id ('x' * 3.9M, quoted) cut to 40 characters, and its length said
        assert "'" + "x" * 39 + "...(40 of 3,900,002 characters)" in message
