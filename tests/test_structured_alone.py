"""Structured content stands alone: every fact a tool's text gives is in its structured content.

Claude Code and Copilot CLI forward only ``structuredContent`` to the model when a result has
both (anthropics/claude-code #79944), so a verdict, a note or a number said only in the text
block is lost there. For one call of every tool (``tests/tool_calls.py``) this reads the text
the way a model would and checks each fact against the structured content:

- every number (``0.521``, ``48``, ``95%``, ``+0.068``) is a value of the structured content at
  the text's precision (a share as a percentage, seconds as minutes or hours), or part of one of
  its strings;
- every line that says ``note:``, ``warning:`` or ``next:`` is in its strings (after the label);
- the structured content carries the summary sentence, and the verdict where the result has one.
"""

from __future__ import annotations

import json
import re

import anyio
import pytest
from mcp import Client

from server.app import build_server
from test_server_support import MODEL
from tool_calls import build, served

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
CALLS = served("mcp")  # one call of every tool (the shell's own init_project has no structure)
NUMBER = re.compile(r"(?<![\w.@^/-])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w.]*\w)")


def numbers_and_strings(data) -> tuple[list[float], list[str]]:
    nums, strings = [], []

    def walk(node):
        if isinstance(node, bool) or node is None:
            return
        if isinstance(node, (int, float)):
            nums.append(float(node))
        elif isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                strings.append(str(key))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(data)
    return nums, strings


def missing_facts(text: str, data: dict) -> list[str]:
    nums, strings = numbers_and_strings(data)
    blob = "\n".join(strings)
    missing = []
    for token in NUMBER.findall(text):
        if token in blob:
            continue
        value = float(token.rstrip("%"))
        decimals = len(token.rstrip("%").split(".")[1]) if "." in token else 0
        tolerance = 0.5 * 10 ** -decimals + 1e-9
        scale = (1, 100) if token.endswith("%") else (1, 1 / 60, 1 / 3600)
        if not any(abs(n * s - value) <= tolerance or abs(abs(n * s) - abs(value)) <= tolerance
                   for n in nums for s in scale):
            missing.append(token)
    for line in text.splitlines():
        said = re.match(r"\s*(note|warning|next):\s*(.+)", line)
        if said and said.group(2).strip() not in blob:
            missing.append(line.strip())
    return missing


# more answers whose text takes other turns: other routes, verdicts, metrics, plans
MORE = {
    "route truncated": ("route_rows", {"rows": "evals/truncated.jsonl", "model": MODEL}),
    "route other model": ("route_rows", {"rows": "evals/teacher12.jsonl", "model": MODEL}),
    "rate reward": ("rate", {"rows": "evals/grpo12.jsonl", "metric": "reward"}),
    "rate share": ("rate", {"rows": "evals/truncated.jsonl", "field": "truncated"}),
    "compare few tasks": ("compare", {"before": "evals/grpo.jsonl", "after": "evals/after.jsonl"}),
    "compare seeds": ("compare", {"before": ["evals/grpo12.jsonl", "evals/grpo12.jsonl"],
                                  "after": ["evals/after12.jsonl", "evals/teacher12.jsonl"]}),
    "holdout pilot": ("holdout_size", {"before": "evals/grpo12.jsonl",
                                       "after": "evals/after12.jsonl"}),
    "launch config": ("launch_run", {"config_or_recipe": "configs/rl.toml"}),
    "opd config": ("prime_rl_config", {"taskset": "reverse-text", "model": MODEL, "method": {
        "name": "opd", "teacher": "Qwen/Qwen3-32B@http://localhost:8001/v1"}}),
    "category alone": ("category_table", {"rows": "evals/grpo12.jsonl"}),
    "checkpoints": ("compare_many", {"before": "evals/grpo12.jsonl", "checkpoints": {
        "a": "evals/after12.jsonl", "b": "evals/teacher12.jsonl"}}),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    root = build(tmp_path_factory.mktemp("alone") / "ws")
    server = build_server(root, skills_dir=ROOT / "skills")
    calls = {**{n: (n, a) for n, a in CALLS.items()}, **MORE}

    async def go():
        out = {}
        async with Client(server) as client:
            for label, (name, arguments) in calls.items():
                out[label] = await client.call_tool(name, arguments)
        return out
    return anyio.run(go)


@pytest.mark.parametrize("name", sorted(CALLS) + sorted(MORE))
def test_every_fact_of_the_text_is_in_the_structured_content(answers, name):
    result = answers[name]
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    text = result.content[0].text
    if name == "get_skill":  # its text is the SKILL.md itself, sent once; its files are data
        assert data["summary"].startswith("the pick-a-method skill") and data["files"]
        return
    assert data["summary"] and data["summary"] in text          # the summary sentence
    missing = missing_facts(text, data)
    assert not missing, f"{name}: said in the text only: {missing}\n{text}\n{json.dumps(data)}"


def test_a_verdict_travels_in_the_structured_content(answers):
    with_verdict = {n: r.structured_content for n, r in answers.items()
                    if "verdict" in (r.structured_content or {})}
    assert {"compare", "order_reversal", "failure_capable", "hack_scan"} <= set(with_verdict)
    # a judge audit's verdicts are one per judge, with the judge to use
    judges = answers["audit_judge"].structured_content
    assert all(j["verdict"] for j in judges["judges"]) and "best" in judges
    for name, data in with_verdict.items():
        assert isinstance(data["verdict"], str) and data["verdict"], name


def test_the_checker_finds_a_fact_said_only_in_the_text():
    data = {"value": 0.5, "summary": "pass@1 0.500", "notes": ["small sample"]}
    assert missing_facts("pass@1 0.500 [0.25, 0.75]\nnote: small sample", data) == \
        ["0.25", "0.75"]
    assert missing_facts("note: the holdout is too small", data) == \
        ["note: the holdout is too small"]
    assert missing_facts("pass@1 0.500, 95% interval", {"level": 0.95, **data}) == []
