"""Long calls report progress (MCP progress notifications) and stop when the request is cancelled.

The core says how far a long call is (``whileai_core.progress.step``: loading a rows file, each
chunk of its bytes parsed, a launch, a collect); the server turns each step into a progress
notification for a client that gave a progress token, and a step is where a cancelled call
stops: its worker thread is freed at the next step instead of running to the end.
"""

from __future__ import annotations

import json
import random
import time

import anyio
import pytest
from mcp import Client

import whileai_core.records as records
import whileai_core.safepath as safepath
from server.app import build_server
from server.pool import ToolPool
from test_runs_support import make_recipes
from whileai_core.progress import reporting, step

N_TASKS = 40_000


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    # about 3.5 MB of rows: parsed in 64 KiB chunks (CHUNK below), some 50 of them, each a step
    root = tmp_path_factory.mktemp("progress")
    rng = random.Random(0)
    with (root / "scores.jsonl").open("w") as fh:
        for t in range(N_TASKS):
            for _ in range(2):
                fh.write(json.dumps({"task_id": f"t{t}", "reward": rng.random()}) + "\n")
    return root


CHUNK = 64 << 10


@pytest.fixture()
def small_chunks(monkeypatch):
    """Small chunks, and no rows kept from an earlier test (the process-wide rows cache would
    answer without parsing)."""
    from whileai_core.rows_cache import SHARED

    monkeypatch.setattr(records, "CHUNK", CHUNK)
    SHARED.clear()
    yield
    SHARED.clear()


def test_the_core_reports_nothing_unless_asked():
    step(1, 2, "nobody listens")                   # no listener: a no-op
    seen = []
    with reporting(lambda d, t, m: seen.append((d, t, m))):
        step(1, 2, "half")
    step(2, 2, "after the block")
    assert seen == [(1.0, 2.0, "half")]


def test_a_long_call_sends_increasing_progress(scores, small_chunks):
    server = build_server(scores, skills_dir=scores / "none")
    seen = []

    async def go():
        async with Client(server) as client:
            async def on_progress(progress, total, message):
                seen.append((progress, total, message))
            result = await client.call_tool("rate", {"rows": "scores.jsonl", "metric": "reward"},
                                            progress_callback=on_progress)
            assert not result.is_error
    anyio.run(go)
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values)) and len(values) >= 3       # strictly increasing
    messages = " | ".join(m for _, _, m in seen)
    assert "reading" in messages and "parsing:" in messages and "grouping" in messages
    assert seen[-1][0] == seen[-1][1] == 3                         # the last one: done


def test_a_cancelled_call_stops_at_its_next_step_and_the_server_serves_on(scores, small_chunks,
                                                                          monkeypatch):
    size = (scores / "scores.jsonl").stat().st_size
    chunks = []
    real = safepath.step

    def counting(done, total, message):
        if message.startswith("parsing:"):
            chunks.append(done)
            time.sleep(0.01)                      # a slow disk: the cancel lands mid-parse
        real(done, total, message)
    monkeypatch.setattr(safepath, "step", counting)
    pool = ToolPool()
    server = build_server(scores, skills_dir=scores / "none", pool=pool)
    state = {}

    async def go():
        async with Client(server) as client:
            started = anyio.Event()

            async def on_progress(progress, total, message):
                if message and message.startswith("parsing:"):
                    started.set()

            async def call():
                await client.call_tool("rate", {"rows": "scores.jsonl", "metric": "reward"},
                                       progress_callback=on_progress)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(120):           # a hang is a failure, not a stuck suite
                    await started.wait()
                tg.cancel_scope.cancel()                  # the client gives up on the call
            deadline = time.monotonic() + 60
            while pool.busy and time.monotonic() < deadline:
                await anyio.sleep(0.02)
            state["busy"] = pool.busy
            state["after"] = await client.call_tool("holdout_size", {})
    anyio.run(go)
    assert state["busy"] == 0
    # the thread stopped at a chunk boundary: it never parsed the last of the file's chunks
    # (each step is 1 + 0.99 x bytes read / size)
    assert size > 20 * CHUNK and chunks and max(chunks) < 1 + 0.99 * (size - CHUNK) / size, chunks
    assert not state["after"].is_error                    # the server still answers


def test_launch_and_collect_report_progress(tmp_path, monkeypatch):
    recipes = make_recipes(tmp_path)
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WHILEAI_RECIPES_DIR", str(recipes))
    ws = tmp_path / "ws"
    ws.mkdir()
    server = build_server(ws, skills_dir=ws / "none")
    seen: dict[str, list] = {"launch": [], "collect": []}

    async def go():
        async with Client(server) as client:
            async def on(kind):
                async def cb(progress, total, message):
                    seen[kind].append(message)
                return cb
            launched = await client.call_tool(
                "launch_run", {"config_or_recipe": "tiny", "backend": "local", "confirm": True},
                progress_callback=await on("launch"))
            run = launched.structured_content["run"]["id"]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                status = await client.call_tool("run_status", {"id": run})
                if status.structured_content["status"] not in ("launching", "running"):
                    break
                await anyio.sleep(0.05)
            collected = await client.call_tool("collect_run", {"id": run},
                                               progress_callback=await on("collect"))
            assert collected.structured_content["verdict"] == "moved"
    anyio.run(go)
    assert any("checking the local backend" in m for m in seen["launch"]), seen
    assert any("launched and recorded" in m for m in seen["launch"])
    assert any(m.startswith("comparing") for m in seen["collect"])
