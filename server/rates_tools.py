"""Tools for a run's other numbers: noise_floor, mean_reward, field_share, task_table.

``noise_floor`` reads re-runs of the same eval; ``mean_reward`` and ``field_share`` give a
per-task mean (of the reward, or of a boolean row field such as ``truncated``) with its interval
and n, and summarise the per-task values like ``pass_at`` (a page of the table with detail=true);
``task_table`` writes the whole per-task table to a file. Each is one call into
``whileai_core.stats`` / ``whileai_core.tables``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from whileai_core.defaults import BOOTSTRAP_SEED, CONFIDENCE_LEVEL, NOISE_FLOOR_MAX_RUNS
from whileai_core.stats import NoiseFloor, TaskRate
from whileai_core.tables import TableFile

from .tooling import (PAGE_DEFAULT, READ_ONLY, WRITES_FILE, DetailArg, Env, LevelArg, LimitArg,
                      OffsetArg, OverwriteArg, RowsArg, Score, SeedArg, ThresholdArg, ToolInput,
                      ToolSpec, read_rows, with_table)

MetricArg = Annotated[Literal["pass", "reward"], Field(
    description="'pass': the pass rate (reward >= threshold); 'reward': the mean reward (for "
                "scores such as an LCS ratio or partial credit).")]


# --- noise_floor ---------------------------------------------------------------------------

class NoiseFloorInput(ToolInput):
    runs: Annotated[list[str | Score], Field(
        min_length=2, max_length=NOISE_FLOOR_MAX_RUNS,
        description="Two or more re-runs of the same frozen eval (3+ recommended): each a rows "
                    "file under the workspace root, or that run's score as a number.",
        examples=[["evals/run0.jsonl", "evals/run1.jsonl", "evals/run2.jsonl"]])]
    metric: Annotated[Literal["auto", "pass", "reward"], Field(
        description="'pass': the pass rate; 'reward': the mean reward; 'auto': the mean reward "
                    "when the reward is continuous and no threshold is given.")] = "auto"
    level: LevelArg = CONFIDENCE_LEVEL
    threshold: ThresholdArg = None
    cluster: Annotated[str | None, Field(
        max_length=200,
        description="Optional: the row field naming each task's family; with 2+ runs given as "
                    "rows, the run-to-run sd is also rebuilt per family (noise shared within "
                    "a family shows as a gap).", examples=["family"])] = None


def noise_floor_tool(args: NoiseFloorInput, env: Env) -> NoiseFloor:
    from whileai_core.stats import noise_floor

    runs = [run if isinstance(run, float) else read_rows(run, env.workspace, argument="runs",
                                                           threshold=args.threshold)
            for run in args.runs]
    return noise_floor(*runs, metric=args.metric, level=args.level, threshold=args.threshold,
                       cluster=args.cluster)


# --- mean_reward, field_share ----------------------------------------------------------------

class MeanRewardInput(ToolInput):
    rows: RowsArg
    level: LevelArg = CONFIDENCE_LEVEL
    seed: SeedArg = BOOTSTRAP_SEED
    detail: DetailArg = False
    offset: OffsetArg = 0
    limit: LimitArg = PAGE_DEFAULT


def mean_reward_tool(args: MeanRewardInput, env: Env) -> TaskRate:
    from whileai_core.stats import mean_reward
    from whileai_core.tables import TaskTable

    rows = read_rows(args.rows, env.workspace, argument="rows")
    table = TaskTable.of(rows, "reward")
    result = TaskRate(rate=mean_reward(rows, level=args.level, seed=args.seed),
                      tasks=table.summary())
    return with_table(result, table, args, env)


class FieldShareInput(ToolInput):
    rows: RowsArg
    field: Annotated[str, Field(
        min_length=1, max_length=200,
        description="A boolean field of the rows: 'truncated', or any other (e.g. 'tool_call'); "
                    "a row counts when the field is truthy, a missing field counts as false.",
        examples=["truncated"])]
    level: LevelArg = CONFIDENCE_LEVEL
    seed: SeedArg = BOOTSTRAP_SEED
    detail: DetailArg = False
    offset: OffsetArg = 0
    limit: LimitArg = PAGE_DEFAULT


def field_share_tool(args: FieldShareInput, env: Env) -> TaskRate:
    from whileai_core.stats import field_share, field_shares
    from whileai_core.tables import TaskTable

    rows = read_rows(args.rows, env.workspace, argument="rows")
    table = TaskTable(rows.task_ids, field_shares(rows, args.field), rows.rollouts, "share")
    result = TaskRate(rate=field_share(rows, args.field, level=args.level, seed=args.seed),
                      tasks=table.summary())
    return with_table(result, table, args, env)


# --- task_table ----------------------------------------------------------------------------

class TaskTableInput(ToolInput):
    rows: RowsArg
    out: Annotated[str, Field(
        min_length=1, max_length=4096,
        description="Where to write the per-task table as JSONL (one {task_id, value, rollouts} "
                    "per task), relative to the workspace root.",
        examples=["evals/tasks.jsonl"])]
    metric: MetricArg = "pass"
    threshold: ThresholdArg = None
    overwrite: OverwriteArg = False


def task_table_tool(args: TaskTableInput, env: Env) -> TableFile:
    from whileai_core.tables import TaskTable

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return TaskTable.of(rows, args.metric).write(env.workspace.resolve(args.out, argument="out"),
                                                  overwrite=args.overwrite)


TOOLS = [
    ToolSpec(
        name="noise_floor", title="How much does the score move on a re-run?",
        description=(
            "From re-runs of the same frozen eval: each run's score, `run_std` (their standard "
            "deviation), `n_runs`, and the `band` a change must clear to count (t with n_runs - 1 "
            "degrees of freedom x sqrt(2) x run_std, at `level`), with the run_std the "
            "within-task variance predicts. Pass `run_std` and `n_runs` (as `noise_runs`) to "
            "compare_runs."),
        input=NoiseFloorInput, output=NoiseFloor, run=noise_floor_tool, annotations=READ_ONLY,
        doing="measuring a noise floor", core=("noise_floor",)),
    ToolSpec(
        name="mean_reward", title="Mean reward with its interval",
        description=(
            "The mean reward (each task's mean, averaged over tasks) with its interval (bootstrap "
            "over tasks) and n, for rewards that are scores rather than pass/fail; the per-task "
            "means summarised (detail=true pages them)."),
        input=MeanRewardInput, output=TaskRate, run=mean_reward_tool, annotations=READ_ONLY,
        doing="computing a mean reward", core=("mean_reward",)),
    ToolSpec(
        name="field_share", title="Share of rollouts with a flag (e.g. truncated)",
        description=(
            "The share of rollouts whose boolean `field` is true (truncated, a tool call...), as "
            "the mean over tasks of each task's share, with its interval and n; the per-task "
            "shares summarised (detail=true pages them)."),
        input=FieldShareInput, output=TaskRate, run=field_share_tool, annotations=READ_ONLY,
        doing="computing a field share", core=("field_share",)),
    ToolSpec(
        name="task_table", title="Write the per-task table to a file",
        description=(
            "Write every task's value (pass rate, or mean reward) and rollouts as JSONL under "
            "the workspace root, for a table too long to page through. Never replaces an "
            "existing file unless overwrite=true."),
        input=TaskTableInput, output=TableFile, run=task_table_tool, annotations=WRITES_FILE,
        doing="writing a per-task table", core=("TaskTable",)),
]
