"""Table of contents: what the server offers.

The tools are the core's operations (``whileai_core.operations``: each declared once there, in
its toolset) that MCP serves; ``LEGACY_MODULES`` lists the modules whose hand-written
``ToolSpec``s are still served while the last ones move into the core. The skills are served as
resources and prompts (``server.skills``) whatever the toolsets.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from mcp.types import ToolAnnotations

from .tooling import ToolSpec

LEGACY_MODULES = (
    "server.judge_tools",   # audit_judge, order_reversal, failures_needed, rubric_ablation
    "server.traces_tools",  # split_by_task, failed_asks, select_sft, decontaminate, export_sft
    "server.methods_tools",  # rollout_update, shape_group
    "server.evalset_tools",  # eval_fingerprint, freeze_holdout, failure_capable, category_table
    "server.runs_tools",    # launch_run, run_status, list_runs, collect_run, cancel_run
    "server.import_tools",  # import_rows
    "server.hacking_tools",  # cheat_probes, hack_scan, watch_run
    "server.picture_tools",  # plot_judge_audit
    "server.skills",        # list_skills, get_skill (+ skill:// resources and prompts)
)
TOOL_MODULES = LEGACY_MODULES

# Library calls a skill step makes that no tool serves, and why: the agent does these itself,
# with its own model, grader or judge (the server cannot call them), or they are not calls.
# A skill step that calls one of these shows an {"agent": ...} line in its ```mcp block.
AGENT_SIDE = {
    "rejection_sample": "it calls your sampler and your grader for every attempt; sample and "
                        "grade with your own model, write the graded attempts as JSONL",
    "defaults": "constants, not a call: every tool's input schema states its defaults",
}


@dataclass(frozen=True)
class ToolView:
    """One tool as the tests and docs read it: its name, input model, result type, and the
    ``whileai_core`` names it serves (``core``)."""

    name: str
    title: str
    description: str
    input: type
    output: type
    core: tuple[str, ...]
    toolset: str | None
    annotations: ToolAnnotations


def legacy_specs() -> list[ToolSpec]:
    """Every hand-written tool spec, in table-of-contents order."""
    specs: list[ToolSpec] = []
    for module in LEGACY_MODULES:
        specs.extend(importlib.import_module(module).TOOLS)
    return specs


def tool_specs() -> list[ToolView]:
    """Every tool of every toolset, in table-of-contents order."""
    from whileai_core.operations.surface import input_model

    from .tooling import ToolInput

    views = [ToolView(op.name, op.title, op.description, input_model(op, "mcp", ToolInput),
                      op.result_type(), op.serves, op.toolset,
                      ToolAnnotations.model_validate(op.effect.hints()))
             for op in served_operations()]
    views += [ToolView(s.name, s.title, s.description, s.input, s.output, s.core, None,
                       s.annotations) for s in legacy_specs()]
    names = [v.name for v in views]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuntimeError(f"tool names registered twice: {dupes}")
    return views


def served_operations() -> list:
    """Every operation MCP serves, in table-of-contents order (all toolsets)."""
    from whileai_core.operations import TOOLSETS, in_toolsets

    return in_toolsets(tuple(TOOLSETS))


def tool_names() -> dict[str, str | None]:
    """Every tool name -> its toolset (None: a hand-written tool, always served)."""
    names: dict[str, str | None] = {op.name: op.toolset for op in served_operations()}
    for spec in legacy_specs():
        if spec.name in names:
            raise RuntimeError(f"tool name registered twice: {spec.name}")
        names[spec.name] = None
    return names
