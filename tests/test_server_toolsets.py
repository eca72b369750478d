"""Toolsets: a small default surface, `--toolsets` to choose, and `enable_toolset` to widen the
surface mid-session, announced to the client (``notifications/tools/list_changed``).

The budget of the default surface is the contract agents' hosts set (Claude Code's ``/doctor``
warns past 25k tokens of tool definitions; selection degrades past 30-50 tools): at most 15
tools, 60,000 characters of ``tools/list``, 30,000 of them what a model reads, no tool above
12,000 (docs/mcp-server.md, "Toolsets"; bench/bench_tool_surface.py prints the sizes).
Everything goes through the SDK's own ``Client``: the 2026-07-28 protocol (the change arrives on
a ``subscriptions/listen`` stream) and the earlier one (on the session).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from server.app import SWITCH, build_server, parse_toolsets
from test_server_support import call, error_text, make_workspace, ok
from whileai_core.errors import ArgumentError
from whileai_core.operations import DEFAULT_TOOLSETS, TOOLSETS, operations

ROOT = Path(__file__).resolve().parents[1]
CORE = {"describe_rows", "route_rows", "rate", "compare", "teacher_clears", "holdout_size",
        "prime_rl_config", "validate_config", "launch_run", "run_status", "collect_run",
        "watch_run"}


def listed(server, **client) -> list[dict]:
    async def go():
        async with Client(server, **client) as c:
            return (await c.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in anyio.run(go)]


@pytest.fixture()
def default(tmp_path):
    return build_server(make_workspace(tmp_path / "ws"), skills_dir=ROOT / "skills",
                        toolsets=None)


def test_the_default_surface_is_the_journey_within_its_budget(default):
    tools = listed(default)
    names = {t["name"] for t in tools}
    assert CORE | {SWITCH} <= names and len(tools) <= 15
    sizes = {t["name"]: len(json.dumps(t)) for t in tools}
    model = sum(len(json.dumps({k: t[k] for k in ("name", "description", "inputSchema")}))
                for t in tools)
    assert sum(sizes.values()) <= 60_000 and model <= 30_000 and max(sizes.values()) <= 12_000
    # every tool listed is callable, and belongs to a default toolset
    every = operations()
    assert all(every[n].toolset in DEFAULT_TOOLSETS for n in names - {SWITCH})


def test_all_lists_every_operation_mcp_serves(tmp_path):
    server = build_server(tmp_path, skills_dir=ROOT / "skills", toolsets="all")
    names = {t["name"] for t in listed(server)}
    served = {n for n, op in operations().items() if "mcp" in op.surfaces}
    assert names == served | {SWITCH}
    # the capabilities of the tools this surface replaced, each still there
    assert {"rate", "compare", "route_rows", "audit_judge", "split_by_task", "import_rows",
            "cheat_probes", "list_skills", "get_skill", "shape_group", "noise_floor"} <= names


def test_toolsets_are_named_or_all():
    assert parse_toolsets(None) == DEFAULT_TOOLSETS
    assert parse_toolsets("all") == tuple(TOOLSETS)
    assert parse_toolsets("stats, judge") == ("stats", "judge")
    with pytest.raises(ArgumentError, match="unknown sorcery"):
        parse_toolsets("stats,sorcery")


def test_a_tool_of_a_toolset_that_is_off_names_the_switch(default):
    text = error_text(call(default, "noise_floor", {"runs": ["evals/grpo.jsonl",
                                                             "evals/after.jsonl"]}), "noise_floor")
    assert "in the toolset `stats`, which is off" in text
    assert 'enable_toolset(toolset="stats")' in text and "--toolsets stats" in text


def test_enable_toolset_announces_the_change_on_the_listen_stream(default):
    # protocol 2026-07-28: list changes travel on a subscriptions/listen stream
    async def go():
        async with Client(default) as client:
            before = {t.name for t in (await client.list_tools()).tools}
            async with client.listen(tools_list_changed=True) as sub:
                switched = await client.call_tool(SWITCH, {"toolset": "judge"})
                with anyio.fail_after(10):
                    event = await sub.__anext__()
            after = {t.name for t in (await client.list_tools()).tools}
            return client.protocol_version, before, switched, event, after

    version, before, switched, event, after = anyio.run(go)
    assert version == "2026-07-28" and type(event).__name__ == "ToolsListChanged"
    added = set(switched.structured_content["added"])
    assert added == {"audit_judge", "order_reversal", "failures_needed", "rubric_ablation"}
    assert not added & before and after == before | added
    assert "judge" in switched.structured_content["on"]


def test_enable_toolset_sends_list_changed_on_an_earlier_protocol(default):
    seen = []

    async def handler(message):
        if isinstance(message, types.ServerNotification) or hasattr(message, "method"):
            seen.append(getattr(message, "method", type(message).__name__))

    async def go():
        async with Client(default, mode="legacy", message_handler=handler) as client:
            caps = client.server_capabilities.tools
            before = {t.name for t in (await client.list_tools()).tools}
            await client.call_tool(SWITCH, {"toolset": "evals"})
            with anyio.fail_after(10):
                while "notifications/tools/list_changed" not in seen:
                    await anyio.sleep(0.01)
            after = {t.name for t in (await client.list_tools()).tools}
            again = await client.call_tool(SWITCH, {"toolset": "evals"})
            return caps, before, after, again

    caps, before, after, again = anyio.run(go)
    assert caps.list_changed is True                       # announced at the handshake
    assert after - before == {"eval_fingerprint", "freeze_holdout", "failure_capable",
                              "category_table"}
    assert ok(again)["added"] == [] and "already on" in again.content[0].text


def test_a_renamed_tool_names_its_new_name(default):
    text = error_text(call(default, "route", {"rows": "evals/grpo.jsonl", "model": "m"}), "route")
    assert text.startswith("`route` is now `route_rows`") and "not served" in text
    text = error_text(call(default, "mean_reward", {"rows": "evals/grpo.jsonl"}), "mean_reward")
    assert "`mean_reward` is now `rate` with metric='reward'" in text


def test_whileai_mcp_takes_toolsets(tmp_path):
    async def go(*flags):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "server.main", "--root", str(tmp_path), *flags],
            cwd=str(ROOT))
        async with Client(params) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert anyio.run(go) == CORE | {"list_runs", "cancel_run", SWITCH}
    assert anyio.run(go, "--toolsets", "core,stats") >= {"noise_floor", "holdout_size", "route_rows"}


def test_enable_toolset_under_read_only_says_what_it_left_out(tmp_path):
    # every tool of `sft` writes, so a read-only server lists none of them: the switch once
    # answered "toolset sft was already on", of a toolset that had been off
    server = build_server(make_workspace(tmp_path / "ws"), skills_dir=ROOT / "skills",
                          toolsets=None, read_only=True)
    sft = {n for n, op in operations().items() if op.toolset == "sft" and "mcp" in op.surfaces}
    first = call(server, SWITCH, {"toolset": "sft"})
    data, text = ok(first), first.content[0].text
    assert data["added"] == [] and data["was_on"] is False and set(data["withheld"]) == sft
    assert "already on" not in text and "--read-only" in text
    again = ok(call(server, SWITCH, {"toolset": "sft"}))
    assert again["was_on"] is True
    # a toolset with read-only tools: those added, the writing ones named as left out
    stats = ok(call(server, SWITCH, {"toolset": "stats"}))
    assert "noise_floor" in stats["added"] and stats["withheld"] == ["task_table"]


def test_enable_toolset_all_turns_every_toolset_on(default):
    # as --toolsets all does at start (found from outside: "all" was refused mid-session)
    async def go():
        async with Client(default) as client:
            switched = await client.call_tool(SWITCH, {"toolset": "all"})
            again = await client.call_tool(SWITCH, {"toolset": "all"})
            return switched, again, {t.name for t in (await client.list_tools()).tools}

    switched, again, after = anyio.run(go)
    mcp_ops = {op.name for op in operations().values() if "mcp" in op.surfaces}
    assert after == mcp_ops | {SWITCH}
    assert switched.structured_content["off"] == [] and not switched.structured_content["was_on"]
    assert again.structured_content["was_on"] and again.structured_content["added"] == []
