"""Parity: an agent that has only the MCP server can follow every step of every skill.

Every ```python block of every skills/*/SKILL.md is followed by its ```mcp form (check.steps
parses them; the convention is in check.py). For each block:

- every ``whileai_core`` name it calls (read from the code's syntax tree, imports carried over
  from earlier blocks of the same skill) is served by a tool (its ``ToolSpec.core`` lists the
  name) that the block's MCP form calls, or is one the agent does itself
  (``server.registry.AGENT_SIDE``, with the reason) and the MCP form says so in an
  ``{"agent": ...}`` line;
- every line of the MCP form is a tool that exists, called with arguments its input schema
  accepts (the tool's own pydantic input model validates them), or an agent step.

A skill added later is covered the moment it lands: the test reads whatever skills/ holds.
Found by a cold agent: sft-from-traces could not be followed through MCP (no noise_floor, no split tool), and
no skill showed the MCP form of a step (the OPD teacher object had to be guessed).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

import check
import whileai_core
from server.registry import AGENT_SIDE, tool_specs

ROOT = Path(__file__).resolve().parents[1]
SKILLS = sorted(p for p in (ROOT / "skills").glob("*/SKILL.md"))
SPECS = {spec.name: spec for spec in tool_specs()}


def serving_tools() -> dict[str, set[str]]:
    """whileai_core name -> the tools whose ``core`` lists it."""
    out: dict[str, set[str]] = {}
    for spec in SPECS.values():
        for name in spec.core:
            out.setdefault(name, set()).add(spec.name)
    return out


SERVED = serving_tools()


def library_calls(code: str, imported: set[str]) -> list[tuple[str, int]]:
    """(whileai_core name, line in the block) of every call of the library in ``code``;
    ``imported`` (names bound from whileai_core) grows with this block's imports."""
    tree = ast.parse(code)
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] == "whileai_core":
            imported.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names
                           if a.name.split(".")[0] == "whileai_core")
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in imported:
            calls.append((func.id, node.lineno))
            continue
        chain = []
        while isinstance(func, ast.Attribute):
            chain.append(func.attr)
            func = func.value
        if isinstance(func, ast.Name):
            if func.id in imported:                         # Class.method(...)
                calls.append((func.id, node.lineno))
            elif func.id in aliases and chain:               # whileai_core.name(...)
                calls.append((chain[-1], node.lineno))
    return calls


def problems(skill: Path) -> list[str]:
    rel = skill.relative_to(ROOT)
    found, imported = [], set()
    for step in check.steps(skill.read_text(encoding="utf-8")):
        where = f"{rel}:{step.python.line}"
        calls = library_calls(step.python.code, imported)
        if step.mcp_line is None:
            found.append(f"{where}: this python block has no ```mcp form right after it. Fix: "
                         "add the same step as MCP tool calls (see check.py, 'the MCP form')")
            continue
        if not step.mcp:
            found.append(f"{rel}:{step.mcp_line}: empty ```mcp block")
        tools_called, agent_steps = set(), 0
        for line in step.mcp:
            at = f"{rel}:{line.line}"
            if line.error:
                found.append(f"{at}: {line.error}")
                continue
            data = line.data
            if not isinstance(data, dict) or len(set(data) & {"tool", "agent"}) != 1:
                found.append(f"{at}: each line is {{\"tool\": ..., \"arguments\": {{...}}}} or "
                             f"{{\"agent\": \"...\"}}, got {data!r}")
                continue
            if "agent" in data:
                if set(data) != {"agent"} or not isinstance(data["agent"], str) \
                        or len(data["agent"]) < 10:
                    found.append(f"{at}: an agent line is {{\"agent\": \"<what the agent does "
                                 "itself>\"}}")
                agent_steps += 1
                continue
            name, arguments = data["tool"], data.get("arguments", {})
            if set(data) - {"tool", "arguments"}:
                found.append(f"{at}: unknown keys {sorted(set(data) - {'tool', 'arguments'})}")
            if name not in SPECS:
                found.append(f"{at}: no tool named {name!r}. Tools: {', '.join(sorted(SPECS))}")
                continue
            tools_called.add(name)
            if not isinstance(arguments, dict):
                found.append(f"{at}: `arguments` must be an object")
                continue
            try:
                SPECS[name].input.model_validate(arguments)
            except ValidationError as err:
                bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                for e in err.errors(include_url=False))
                found.append(f"{at}: {name} refuses these arguments ({bad})")
        for called, lineno in calls:
            line = step.python.line + lineno - 1
            if called in AGENT_SIDE:
                if not agent_steps:
                    found.append(f"{rel}:{line}: calls {called}, which the agent does itself "
                                 f"({AGENT_SIDE[called]}); its ```mcp form needs an "
                                 "{\"agent\": ...} line saying so")
            elif called not in SERVED:
                found.append(f"{rel}:{line}: calls whileai_core.{called}, which no MCP tool "
                             "serves. Fix: a tool whose ToolSpec lists it in `core`, or an "
                             "entry in server.registry.AGENT_SIDE with the reason")
            elif not SERVED[called] & tools_called:
                found.append(f"{rel}:{line}: calls {called}; its ```mcp form calls none of the "
                             f"tools that serve it ({', '.join(sorted(SERVED[called]))})")
    return found


@pytest.mark.parametrize("skill", SKILLS, ids=[p.parent.name for p in SKILLS])
def test_every_step_of_every_skill_has_its_mcp_form(skill):
    found = problems(skill)
    assert not found, "\n".join(found)


def library_names() -> set[str]:
    """Every public name defined in a module of whileai_core."""
    import importlib
    import pkgutil

    names = set(whileai_core.__all__)
    for info in pkgutil.walk_packages(whileai_core.__path__, "whileai_core."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        names.update(n for n in vars(module) if not n.startswith("_"))
    return names


def test_every_name_a_tool_claims_is_the_library_s():
    # a `core` entry that names nothing would make the parity check pass vacuously
    known = library_names()
    claimed = {(spec.name, name) for spec in SPECS.values() for name in spec.core}
    assert {pair for pair in claimed if pair[1] not in known} == set()


def test_agent_side_calls_are_few_and_say_why():
    assert len(AGENT_SIDE) <= 3
    assert all(len(why) > 40 for why in AGENT_SIDE.values())
    assert not set(AGENT_SIDE) & set(SERVED)


# --- the checker itself: a step without its form, an unknown tool, bad arguments --------------

BROKEN = '''---
name: broken
description: A skill with every mistake.
---
```python
from whileai_core import pass_at, compare, noise_floor

print(pass_at("rows.jsonl"))
```

Some prose.

```python
compare("a.jsonl", "b.jsonl")
```

```mcp
{"tool": "compare", "arguments": {"before": "a.jsonl", "after": "b.jsonl", "bogus": 1}}
{"tool": "no_such_tool", "arguments": {}}
```

```python
floor = noise_floor("r1.jsonl", "r2.jsonl")
```

```mcp
{"tool": "rate", "arguments": {"rows": "r1.jsonl"}}
```

```python
from whileai_core import rejection_sample

rejection_sample([], None, None)
```

```mcp
{"tool": "select_sft", "arguments": {"attempts": "graded.jsonl"}}
```
'''


def test_the_checker_names_each_mistake(tmp_path, monkeypatch):
    skill = tmp_path / "skills" / "broken" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(BROKEN, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = "\n".join(problems(skill))
    assert "SKILL.md:6: this python block has no ```mcp form" in found
    assert "compare refuses these arguments (bogus: Extra inputs are not permitted)" in found
    assert "no tool named 'no_such_tool'" in found
    assert "calls noise_floor; its ```mcp form calls none of the tools that serve it " \
           "(noise_floor)" in found
    assert "calls rejection_sample, which the agent does itself" in found


def test_a_library_call_no_tool_serves_is_named(tmp_path, monkeypatch):
    skill = tmp_path / "skills" / "orphan" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("```python\nfrom whileai_core import cohen_kappa\n\ncohen_kappa([1], [1])\n"
                     "```\n\n```mcp\n{\"agent\": \"compute kappa by hand somewhere\"}\n```\n",
                     encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert any("calls whileai_core.cohen_kappa, which no MCP tool serves" in p
               for p in problems(skill))
