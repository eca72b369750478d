"""The public contract of the server: tools/list is a reviewed file, and every tool follows the rules.

``server/tools.json`` holds what tools/list answers (names, titles, descriptions, input and output
schemas, annotations, and each tool's toolset), the one copy on disk: the server lists tools from
it at start-up (server.schema_cache), and the diff of a change to it is what a review reads. A
schema change fails here with that diff; after reviewing it, regenerate with::

    python -m server.schema_cache
    UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_server_snapshot.py   # the same

A missing file fails too (it is never written silently), and a server listing from it lists
exactly what one building every tool now does.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import subprocess
import sys

import anyio
import pytest
from mcp import Client

from server import schema_cache
from server.app import build_server
from server.registry import tool_specs
from test_server_support import call, error_text

EXPECTED_TOOLS = {"route_rows", "rate", "inspect_rows", "compare", "compare_many", "holdout_size", "teacher_clears",
                  "prime_rl_config", "validate_config", "list_skills", "get_skill",
                  "audit_judge", "select_sft", "decontaminate", "export_sft",
                  "launch_run", "run_status", "list_runs", "collect_run", "cancel_run"}
COMBINATORS = ("anyOf", "oneOf", "allOf", "not")


def listed_tools(tmp_path, *, lazy: bool = False) -> list[dict]:
    """tools/list of a server that builds every tool now (lazy=False: the live schemas)."""
    async def go():
        async with Client(build_server(tmp_path, skills_dir=tmp_path, lazy=lazy)) as client:
            return (await client.list_tools()).tools
    tools = anyio.run(go)
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_the_required_tools_are_served(tmp_path):
    names = [t["name"] for t in listed_tools(tmp_path)]
    assert EXPECTED_TOOLS <= set(names)
    assert len(names) == len(set(names))


@pytest.fixture(scope="module")
def live_tools(tmp_path_factory) -> dict[str, dict]:
    """Every tool as tools/list shows it, from one server built for the whole module (a server
    per tool rebuilt every tool each time: about a minute for the rule checks alone)."""
    return {t["name"]: t for t in listed_tools(tmp_path_factory.mktemp("tools"))}


@pytest.mark.parametrize("tool", [s.name for s in tool_specs()])
def test_every_tool_follows_the_rules(live_tools, tool):
    listed = live_tools[tool]
    # metadata an agent host shows
    assert listed.get("title") and len(listed["description"]) >= 40
    # all four hints stated, never left to the client's defaults
    hints = listed["annotations"]
    for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
        assert isinstance(hints.get(hint), bool), (tool, hint)
    if hints["readOnlyHint"]:
        assert hints["destructiveHint"] is False
    # input: an object with no top-level combinator, unknown arguments refused,
    # every argument described for the calling model
    schema = listed["inputSchema"]
    assert schema["type"] == "object" and not any(c in schema for c in COMBINATORS)
    assert schema.get("additionalProperties") is False
    for name, prop in schema.get("properties", {}).items():
        assert prop.get("description"), f"{tool}.{name} has no description"
    # output: structured, an object schema
    assert listed["outputSchema"]["type"] == "object"


# --- the start-up cache (server/tools.json) ------------------------------------------------

def test_schema_cache_matches_the_live_tools():
    live = schema_cache.dumps(schema_cache.build_cache())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        schema_cache.CACHE.write_text(live, encoding="utf-8")
    assert schema_cache.CACHE.exists(), "server/tools.json is missing: python -m server.schema_cache"
    saved = schema_cache.CACHE.read_text(encoding="utf-8")
    if saved != live:
        diff = "".join(difflib.unified_diff(saved.splitlines(True), live.splitlines(True),
                                            "server/tools.json", "the declarations now", n=2))
        pytest.fail("tools/list changed. If the change is intended, regenerate with python -m "
                    "server.schema_cache (or UPDATE_SNAPSHOTS=1 .venv/bin/pytest "
                    f"{Path(__file__).name}) and review:\n" + diff[:20000])


def test_lazy_server_lists_exactly_what_the_eager_one_does(tmp_path):
    assert listed_tools(tmp_path, lazy=True) == listed_tools(tmp_path, lazy=False)


def test_startup_imports_no_numpy_and_no_core_module(tmp_path):
    # the property the cache exists for: spawn-to-tools/list pays for none of this
    code = ("import sys; from server.app import build_server; build_server(sys.argv[1]); "
            "heavy = ('numpy', 'scipy', 'torch', 'modal', 'whileai_core.stats', "
            "'whileai_core.routing', 'whileai_core.prime_rl', 'whileai_core.judge', "
            "'whileai_core.traces'); print(sorted(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_stale_cache_entry_is_a_tool_error(tmp_path, monkeypatch):
    entries = schema_cache.load_cache()
    ghost = {**entries[0], "name": "ghost_tool"}
    stale = tmp_path / "tools.json"
    stale.write_text(schema_cache.dumps(entries + [ghost]))
    monkeypatch.setattr("server.app.CACHE", stale)
    server = build_server(tmp_path, skills_dir=tmp_path)
    text = error_text(call(server, "ghost_tool", {}), "ghost_tool")
    assert "no operation of the core declares it" in text
    assert "python -m server.schema_cache" in text


def test_a_stale_schema_is_logged_on_first_call(tmp_path, monkeypatch, caplog):
    entries = schema_cache.load_cache()
    for entry in entries:
        if entry["name"] == "holdout_size":
            entry["description"] = "an old description"
    stale = tmp_path / "tools.json"
    stale.write_text(schema_cache.dumps(entries))
    monkeypatch.setattr("server.app.CACHE", stale)
    server = build_server(tmp_path, skills_dir=tmp_path)
    with caplog.at_level("WARNING", logger="whileai.server"):
        assert not call(server, "holdout_size", {}).is_error   # still answers
    assert any("stale for holdout_size (description differ)" in r.getMessage()
               for r in caplog.records)


def test_every_argument_schema_is_in_the_single_type_dialect():
    """Function-calling hosts map tool schemas onto a dialect with one `type` per schema (the
    MCP Inspector's portability check flags a `type` list): an argument whose default is null is
    simply optional, and one where null means something else (`seed`) keeps an `anyOf`."""
    from server.tooling import op_entry
    from whileai_core.operations import operations

    for op in operations().values():
        schema = op_entry(op)["inputSchema"]
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            assert not isinstance(prop.get("type"), list), (op.name, name, prop)
            assert prop.get("default", 0) is not None, (op.name, name, "a null default")
            assert name not in required or "default" not in prop, (op.name, name)
    seed = op_entry(operations()["rate"])["inputSchema"]["properties"]["seed"]
    assert seed["default"] == 0 and {"type": "null"} in seed["anyOf"]  # null: a fresh seed
