"""The public contract of the server: tools/list is a reviewed file, and every tool follows the rules.

``tests/snapshots/tools_list.json`` holds what tools/list answers (names, titles, descriptions,
input and output schemas, annotations), with sorted keys. A schema change fails here with a diff;
after reviewing it, regenerate with::

    UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_server_snapshot.py

A missing snapshot fails too (it is never written silently).
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client

from server.app import build_server
from server.registry import tool_specs

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"

EXPECTED_TOOLS = {"route_rows", "pass_at", "compare_runs", "holdout_size", "teacher_clears",
                  "list_skills", "get_skill"}
COMBINATORS = ("anyOf", "oneOf", "allOf", "not")


def listed_tools(tmp_path) -> list[dict]:
    async def go():
        async with Client(build_server(tmp_path, skills_dir=tmp_path)) as client:
            return (await client.list_tools()).tools
    tools = anyio.run(go)
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_tools_list_matches_the_snapshot(tmp_path):
    current = json.dumps(listed_tools(tmp_path), indent=2, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(current, encoding="utf-8")
    if not SNAPSHOT.exists():
        pytest.fail(f"{SNAPSHOT} is missing. Generate it with UPDATE_SNAPSHOTS=1 "
                    f".venv/bin/pytest {Path(__file__).name}, review it, and commit it")
    saved = SNAPSHOT.read_text(encoding="utf-8")
    if saved != current:
        diff = "".join(difflib.unified_diff(saved.splitlines(True), current.splitlines(True),
                                            "snapshot", "server now", n=2))
        pytest.fail("tools/list changed. If the change is intended, regenerate with "
                    f"UPDATE_SNAPSHOTS=1 .venv/bin/pytest {Path(__file__).name} and review:\n"
                    + diff[:20000])


def test_the_required_tools_are_served(tmp_path):
    names = [t["name"] for t in listed_tools(tmp_path)]
    assert EXPECTED_TOOLS <= set(names)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("tool", [s.name for s in tool_specs()])
def test_every_tool_follows_the_rules(tmp_path, tool):
    listed = {t["name"]: t for t in listed_tools(tmp_path)}[tool]
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
