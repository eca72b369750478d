"""What the server offers: the core's operations MCP serves (``server.tooling`` turns each into
a tool), the toolset switch (``server.app``), and the skills as resources and prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp.types import ToolAnnotations

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
    """One tool as the tests and docs read it: its name, input model, result type, the
    ``whileai_core`` names it serves (``core``), its toolset and annotations."""

    name: str
    title: str
    description: str
    input: type
    output: type
    core: tuple[str, ...]
    toolset: str
    annotations: ToolAnnotations


def served_operations() -> list:
    """Every operation MCP serves, in table-of-contents order (all toolsets)."""
    from whileai_core.operations import TOOLSETS, in_toolsets

    return in_toolsets(tuple(TOOLSETS))


def tool_specs() -> list[ToolView]:
    """Every tool of every toolset, in table-of-contents order."""
    from whileai_core.operations.surface import input_model

    from .tooling import ToolInput

    return [ToolView(op.name, op.title, op.description, input_model(op, "mcp", ToolInput),
                     op.result_type(), op.serves, op.toolset,
                     ToolAnnotations.model_validate(op.effect.hints()))
            for op in served_operations()]
