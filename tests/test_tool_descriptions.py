"""Descriptions that cannot drift from the schemas they describe, and skills that name only what
exists.

Found by a cold agent: compare_runs' description named verdicts that do not exist ("improved / regressed / no
detectable change"; the real ones are the Literal ``stats.Verdict``) and pointed to a noise_floor
tool the server did not have. The rules, over every tool of ``tools/list``:

1. A value a description names in backticks is the tool's own: an argument, a field of its
   output, a value one of its schemas allows, or another tool.
2. A snake_case name in a tool's description or an argument's description is a tool, an argument
   or output field of this tool, or a value its schemas allow (or one of the few outside names in
   ``OUTSIDE``, each with the system it belongs to).
3. When a description names an output field whose values are fixed (a Literal: a verdict, a
   route, a status...), it names every one of those values, so they are read from the core
   (``whileai_core.operations.describe.values_of``), never retyped.

And over every skills/*/SKILL.md and skills/README.md: a backticked snake_case name is a tool, an
argument or field of some tool, a value a schema allows, or a name of the library; on a line that
speaks of verdicts, every backticked value is a verdict some tool can return.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from server.app import build_server

ROOT = Path(__file__).resolve().parents[1]

# Names from other systems that descriptions may use, each with the system it belongs to.
OUTSIDE = {
    "gpu_memory_utilization": "vLLM / prime-rl inference.vllm key",
    "max_steps": "prime-rl key",
    "batch_size": "prime-rl key",
    "assistant_only_loss": "TRL SFTConfig",
    "prompt_logprobs": "vLLM sampling parameter",
    "api_key_var": "prime-rl teacher client key",
    "base_url": "prime-rl client key",
    "rl": "prime-rl's `rl` command",
    "trainer_state": "TRL's trainer_state.json",
    "task_fields": "the keyword arguments a reward function receives",
}


def _rule_words() -> dict[str, str]:
    """The decision rule's grammar (``ship_if`` and each clause's ``kind``): the `rule`
    argument's description spells it out, and the tool list types a rule as an object (the
    core checks it: whileai_core.experiments.rule), so its words are in no listed schema."""
    import typing

    from whileai_core.experiments.rule import Clause, DecisionRule

    kinds = [typing.get_args(m.model_fields["kind"].annotation)[0]
             for m in typing.get_args(typing.get_args(Clause)[0])]
    return {word: "the decision rule's grammar" for word in [*DecisionRule.model_fields, *kinds]}


OUTSIDE.update(_rule_words())
# Fields of the records the tools read from files (graded rows, traces, judge items, pairwise
# picks, single-rollout batches, imported rows): data formats, described in README.md.
RECORD_FIELDS = {"task_id", "scenario_id", "reward", "truncated", "model", "messages", "prompt",
                 "label", "grades", "grade", "without", "forward", "reversed", "reply", "length",
                 "logprobs", "behavior_logprobs", "values", "action_mask", "policy_version",
                 "completion", "tool_call", "step", "id",
                 # token budgets a row may carry (whileai_core.budgets)
                 "max_tokens", "completion_tokens", "finish_reason", "turns"}
SNAKE = re.compile(r"(?<![\w.`/-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w(`/-])")
TICKED = re.compile(r"`([^`\s]+)`")


def _features() -> set[str]:
    from whileai_core.hacking.features import BUILT_IN
    return set(BUILT_IN)


FEATURES = _features()  # hack_scan's built-in reply features (whileai_core.hacking.features)


def tools_list(tmp_path) -> list[dict]:
    async def go():
        async with Client(build_server(tmp_path, skills_dir=tmp_path / "none")) as client:
            return (await client.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in anyio.run(go)]


def walk(schema: Any, defs: dict) -> tuple[set[str], set[str], list[dict]]:
    """(property names, enum/const values, property schemas) of a JSON schema, $refs followed."""
    names, values, props, seen = set(), set(), [], set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref not in seen:
                seen.add(ref)
                visit(defs.get(ref.rsplit("/", 1)[-1], {}))
            for key in ("enum",):
                for v in node.get(key, ()):
                    values.add(str(v))
            if "const" in node:
                values.add(str(node["const"]))
            for name, sub in (node.get("properties") or {}).items():
                names.add(name)
                props.append(sub)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
    return names, values, props


def literal_fields(output: dict) -> dict[str, set[str]]:
    """Top-level output fields whose values are fixed: field -> values."""
    defs = output.get("$defs", {})
    found = {}
    for name, sub in (output.get("properties") or {}).items():
        _, values, _ = walk({k: v for k, v in sub.items() if k != "description"}, defs)
        direct = set(map(str, sub.get("enum", ()))) or {
            str(v) for alt in sub.get("anyOf", ()) for v in alt.get("enum", ())}
        if direct:
            found[name] = direct
    return found


def descriptions(tool: dict) -> list[str]:
    texts = [tool.get("description", "")]
    for sub in (tool["inputSchema"].get("properties") or {}).values():
        texts.append(sub.get("description", ""))
    return texts


def problems(tools: list[dict]) -> list[str]:
    names = {t["name"] for t in tools}
    found = []
    for tool in tools:
        ins, outs = tool["inputSchema"], tool.get("outputSchema", {})
        in_names, in_values, _ = walk(ins, ins.get("$defs", {}))
        out_names, out_values, _ = walk(outs, outs.get("$defs", {}))
        own = names | in_names | out_names | in_values | out_values | RECORD_FIELDS | FEATURES
        for text in descriptions(tool):
            # another tool named in the text: its arguments and fields may be named too
            for other in tools:
                if other is not tool and re.search(rf"\b{other['name']}\b", text):
                    for schema in (other["inputSchema"], other.get("outputSchema", {})):
                        own = own | walk(schema, schema.get("$defs", {}))[0]
            for token in TICKED.findall(text):
                bare = token.strip("'\"")
                if re.fullmatch(r"[A-Za-z_][\w]*", bare) and \
                        bare not in own | set(OUTSIDE) | {"true", "false", "null"}:
                    found.append(f"{tool['name']}: names `{bare}`, which is not an argument, "
                                 "an output field, a value of its schemas or a tool")
            for word in SNAKE.findall(text.replace("`", " ")):
                if word not in own and word not in OUTSIDE:
                    found.append(f"{tool['name']}: names {word!r}, which is not a tool, an "
                                 "argument or field of it, or a value its schemas allow")
        main = tool.get("description", "")
        for field, values in literal_fields(outs).items():
            if re.search(rf"\b{re.escape(field)}\b", main):
                missing = sorted(v for v in values if f"`{v}`" not in main)
                if missing:
                    found.append(f"{tool['name']}: its description speaks of `{field}` but does "
                                 f"not name its values {missing} (read them with values_of)")
    return found


def test_no_tool_description_names_what_its_schemas_lack(tmp_path):
    found = problems(tools_list(tmp_path))
    assert not found, "\n".join(found)


def test_the_checker_catches_the_issue_11_description(tmp_path):
    # compare_runs as it was: made-up verdicts, and a tool that did not exist
    tools = [t for t in tools_list(tmp_path) if t["name"] == "compare"]
    old = dict(tools[0], description=(
        "Paired comparison of two runs on the same tasks: mean before and after, the delta with "
        "its interval, and a verdict (improved / regressed / no detectable change). Use after "
        "training, on the held-out tasks; run_std comes from noise_floor."))
    found = "\n".join(problems([old]))
    assert "speaks of `verdict` but does not name its values" in found
    assert "'noise_floor'" in found


def test_verdict_values_come_from_the_core():
    import typing

    from whileai_core.stats import Verdict

    from whileai_core.operations import get

    compare = get("compare")
    for value in typing.get_args(Verdict):
        assert f"`{value}`" in compare.description


# --- the skills ------------------------------------------------------------------------------

def library_names() -> set[str]:
    from test_skill_parity import library_names as names
    return names()


def skill_problems(tools: list[dict], files: list[Path]) -> list[str]:
    known = {t["name"] for t in tools}
    verdicts: set[str] = set()
    for tool in tools:
        for schema in (tool["inputSchema"], tool.get("outputSchema", {})):
            n, v, _ = walk(schema, schema.get("$defs", {}))
            known |= n | v
        outs = tool.get("outputSchema", {})
        defs = outs.get("$defs", {})
        for node in [outs, *defs.values()]:
            sub = (node.get("properties") or {}).get("verdict")
            if sub:
                verdicts |= {str(x) for x in sub.get("enum", ())}
                verdicts |= {str(x) for alt in sub.get("anyOf", ()) for x in alt.get("enum", ())}
    known |= library_names()
    from whileai_core import defaults
    known |= set(vars(defaults))
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        code_names = set(re.findall(r"\b([A-Za-z_]\w*)\s*=", text))  # names the blocks define
        in_fence = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for token in TICKED.findall(line):
                bare = token.rstrip("=(),.:")
                if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", bare) and \
                        bare not in known | code_names | set(OUTSIDE) | RECORD_FIELDS | FEATURES:
                    found.append(f"{path.relative_to(ROOT)}:{n}: names `{bare}`, which no tool, "
                                 "schema or library name has")
            if re.search(r"\bverdicts?\b", line):
                for token in TICKED.findall(line):
                    if re.fullmatch(r"[a-z_]+", token) and token not in verdicts | known:
                        found.append(f"{path.relative_to(ROOT)}:{n}: names verdict `{token}`, "
                                     "which no tool returns")
    return found


def test_skills_name_only_tools_fields_and_values_that_exist(tmp_path):
    files = sorted((ROOT / "skills").glob("*/SKILL.md")) + [ROOT / "skills" / "README.md"]
    found = skill_problems(tools_list(tmp_path), files)
    assert not found, "\n".join(found)


def test_the_skill_checker_catches_a_made_up_verdict_and_tool(tmp_path):
    bad = tmp_path / "skills" / "x" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("The verdict is `improved` or `flat`.\nThen call `noise_floors`.\n")
    monkey_root = ROOT
    try:
        globals()["ROOT"] = tmp_path
        found = "\n".join(skill_problems(tools_list(tmp_path), [bad]))
    finally:
        globals()["ROOT"] = monkey_root
    assert "names verdict `improved`" in found and "`flat`" not in found.split("improved")[1]
    assert "names `noise_floors`" in found
