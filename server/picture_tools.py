"""Pictures: plot_band, plot_forest, plot_judge_audit (and watch_run's plot=true).

Each returns the numbers drawn as its structured result and the PNG as an image content next to
it, and writes the PNG to ``out`` (under the root) when asked. matplotlib must be installed
(``pip install 'whileai-skills[plot]'``); without it the tool says so.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from whileai_core.defaults import CONFIDENCE_LEVEL
from whileai_core.pictures import BandPicture, ForestPicture, JudgePicture

from .tooling import (WRITES_FILE, Env, RowsArg, ThresholdArg, ToolInput, ToolSpec,
                      optional_path, read_rows, source)

OutArg = Annotated[str | None, Field(
    description="Also write the PNG here, relative to the workspace root. null: only return "
                "it as an image.", max_length=1000)]
OverwriteArg = Annotated[bool, Field(
    description="Replace `out` if it exists. Leave false unless the user asked.")]


def _png(args: Any, result: Any) -> bytes:
    return result.png()


class PlotBandInput(ToolInput):
    rows: RowsArg
    threshold: ThresholdArg = None
    out: OutArg = None
    overwrite: OverwriteArg = False


def plot_band(args: PlotBandInput, env: Env) -> BandPicture:
    from whileai_core.pictures import band_picture

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return band_picture(rows, out=optional_path(args.out, env.workspace, argument="out"),
                        overwrite=args.overwrite)


class PlotForestInput(ToolInput):
    before: Annotated[RowsArg, Field(description="Rows of the baseline run.")]
    after: Annotated[RowsArg, Field(description="Rows of the new run on the same tasks.")]
    by: Annotated[str | None, Field(
        description="A row field (e.g. 'category'): one row of the forest per value, besides "
                    "the overall delta.", max_length=200)] = None
    run_std: Annotated[float | None, Field(
        ge=0, le=1, description="run_std from noise_floor: shades the noise band "
                                "(t x sqrt(2) x run_std, read as from 2 re-runs).")] = None
    metric: Annotated[Literal["pass", "reward"], Field(
        description="'pass' (pass rates) or 'reward' (mean rewards).")] = "pass"
    threshold: ThresholdArg = None
    level: Annotated[float, Field(gt=0, lt=1, description="Interval level.")] = CONFIDENCE_LEVEL
    out: OutArg = None
    overwrite: OverwriteArg = False


def plot_forest(args: PlotForestInput, env: Env) -> ForestPicture:
    from whileai_core.pictures import forest_picture

    before = read_rows(args.before, env.workspace, argument="before", threshold=args.threshold)
    after = read_rows(args.after, env.workspace, argument="after", threshold=args.threshold)
    return forest_picture(before, after, by=args.by, run_std=args.run_std, metric=args.metric,
                          level=args.level, out=optional_path(args.out, env.workspace,
                                                             argument="out"),
                          overwrite=args.overwrite)


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
        name="plot_band", title="Picture: the per-task band",
        description=(
            "Histogram of per-task pass rates, always-fail / split / always-pass, with pass@1, "
            "its interval and n in the title: the band behind route_rows' question 3. Returns "
            "the counts and the PNG as an image; writes it to `out` when given."),
        input=PlotBandInput, output=BandPicture, run=plot_band, annotations=WRITES_FILE,
        doing="drawing the per-task band", image=_png,
        core=("band_picture",)),
    ToolSpec(
        name="plot_forest", title="Picture: paired deltas by category",
        description=(
            "Forest plot of the paired before/after delta, overall and per value of `by`, each "
            "with its interval and n, and the noise band. Returns the deltas and the PNG as an "
            "image; writes it to `out` when given."),
        input=PlotForestInput, output=ForestPicture, run=plot_forest, annotations=WRITES_FILE,
        doing="drawing the forest plot", image=_png,
        core=("forest_picture",)),
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
