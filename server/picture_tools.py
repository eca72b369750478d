"""Pictures: plot_judge_audit (route, compare and watch_run draw theirs with plot=true).

Each returns the numbers drawn as its structured result and the PNG as an image content next to
it, and writes the PNG to ``out`` (under the root) when asked. matplotlib must be installed
(``pip install 'whileai-skills[plot]'``); without it the tool says so.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from whileai_core.defaults import CONFIDENCE_LEVEL
from whileai_core.pictures import JudgePicture

from .tooling import WRITES_FILE, Env, ToolInput, ToolSpec, optional_path, source

OutArg = Annotated[str | None, Field(
    description="Also write the PNG here, relative to the workspace root. null: only return "
                "it as an image.", max_length=1000)]
OverwriteArg = Annotated[bool, Field(
    description="Replace `out` if it exists. Leave false unless the user asked.")]


def _png(args: Any, result: Any) -> bytes:
    return result.png()


class PlotJudgeAuditInput(ToolInput):
    items: Annotated[str | list[dict[str, Any]], Field(
        description="The audit_judge items: a JSONL path under the root or a small list of "
                    '{"id", "label": true/false, "grades": {"judge-a": true, ...}}.')]
    judges: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(
        description="Judges to draw; null: every judge in `grades`.", max_length=50)] = None
    level: Annotated[float, Field(gt=0, lt=1, description="Interval level.")] = CONFIDENCE_LEVEL
    out: OutArg = None
    overwrite: OverwriteArg = False


def plot_judge_audit(args: PlotJudgeAuditInput, env: Env) -> JudgePicture:
    from whileai_core.pictures import judge_picture

    return judge_picture(source(args.items, env.workspace, argument="items"), judges=args.judges,
                         level=args.level,
                         out=optional_path(args.out, env.workspace, argument="out"),
                         overwrite=args.overwrite)


TOOLS = [
    ToolSpec(
        name="plot_judge_audit", title="Picture: the judge audit",
        description=(
            "Agreement (Wilson interval) and Cohen's kappa (item-bootstrap interval) per judge "
            "against the floors. Returns the numbers and the PNG as an image; writes it to "
            "`out` when given."),
        input=PlotJudgeAuditInput, output=JudgePicture, run=plot_judge_audit,
        annotations=WRITES_FILE, doing="drawing the judge audit", image=_png,
        core=("judge_picture",)),
]
