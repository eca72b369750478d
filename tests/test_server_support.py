"""Helpers shared by the tests/test_server*.py files (no tests here).

Rows used across the server tests are written out literally so every expected number can be
derived by hand next to the test that checks it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import CallToolResult

MODEL = "Qwen/Qwen3-8B"
TEACHER = "Qwen/Qwen3-32B"

# Four tasks x four rollouts by MODEL. Per-task pass rates: a 3/4, b 1/4, c 4/4, d 0/4.
# pass@1 = (0.75 + 0.25 + 1 + 0) / 4 = 0.5; band "mixed" (c always passes, d always fails,
# a and b split); no truncated row; on-policy -> the route reaches question 6: GRPO.
GRPO_OUTCOMES = {"a": [1, 1, 1, 0], "b": [1, 0, 0, 0], "c": [1, 1, 1, 1], "d": [0, 0, 0, 0]}
# After training, same tasks: a 4/4, b 3/4, c 4/4, d 2/4 -> mean 0.8125.
AFTER_OUTCOMES = {"a": [1, 1, 1, 1], "b": [1, 1, 1, 0], "c": [1, 1, 1, 1], "d": [1, 1, 0, 0]}
# The teacher passes everything: 1.0 on the same four tasks.
TEACHER_OUTCOMES = {t: [1, 1, 1, 1] for t in "abcd"}


def rows_of(outcomes: dict[str, list[int]], model: str = MODEL, **extra: Any) -> list[dict]:
    return [{"task_id": t, "reward": float(r), "model": model, **extra}
            for t, rewards in outcomes.items() for r in rewards]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_workspace(root: Path) -> Path:
    """A workspace with the hand-made row files the tests read."""
    write_jsonl(root / "evals" / "grpo.jsonl", rows_of(GRPO_OUTCOMES))
    write_jsonl(root / "evals" / "after.jsonl", rows_of(AFTER_OUTCOMES))
    write_jsonl(root / "evals" / "teacher.jsonl", rows_of(TEACHER_OUTCOMES, model=TEACHER))
    truncated = rows_of(GRPO_OUTCOMES)
    truncated[0]["truncated"] = True  # task a, reward 1.0: a cut-off reply that passes
    write_jsonl(root / "evals" / "truncated.jsonl", truncated)
    (root / "evals" / "bad_json.jsonl").write_text(
        '{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 0}\n{"task_id": "c", reward}\n')
    (root / "evals" / "bad_reward.jsonl").write_text(
        '{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": "yes"}\n')
    (root / "evals" / "empty.jsonl").write_text("")
    return root


async def _call(server: Any, name: str, arguments: dict) -> CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


def call(server: Any, name: str, arguments: dict) -> CallToolResult:
    """One tools/call through an in-process mcp.Client."""
    return anyio.run(_call, server, name, arguments)


def ok(result: CallToolResult) -> dict:
    """The structured content of a successful call (fails the test with the error text otherwise)."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    # the text block is a short human summary, not the JSON again (the facts are sent once)
    text = result.content[0].text
    assert text.strip() and text != json.dumps(result.structured_content)
    return result.structured_content


def error_text(result: CallToolResult, tool: str) -> str:
    """The message of a tool error (fails the test if the call succeeded)."""
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: "), text
    return text.removeprefix(f"Error executing tool {tool}: ")
