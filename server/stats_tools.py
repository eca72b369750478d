"""Tools that read graded rows: describe_rows, route_rows, pass_at, compare_runs, compare_many,
holdout_size, teacher_clears.

Each function reads its rows through the workspace (paths stay under the root) and makes one call
into ``whileai_core``; every number, default and message comes from there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from whileai_core import compare, compare_many, holdout_size, pass_at, route, teacher_clears
from whileai_core.defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HOLDOUT_ALPHA, HOLDOUT_K,
                                   HOLDOUT_POWER, MCP_INLINE_ROWS_MAX, PROVE_EFFECT)
from whileai_core.describe import RowsDescription
from whileai_core.routing import Route, RowFacts, TeacherVerdict, row_facts
from whileai_core.stats import Comparison, HoldoutSize, ManyComparisons, PassAt

from .tooling import (MAX_K, MAX_SCORE, PAGE_DEFAULT, READ_ONLY, DetailArg, Env, LevelArg,
                      LimitArg, OffsetArg, RowsArg, SeedArg, ThresholdArg, ToolInput, ToolSpec,
                      named, read_rows, source, values_of, with_table)

EffectArg = Annotated[float, Field(
    gt=0, lt=1, allow_inf_nan=False, description="Smallest change in pass@1 worth detecting, as a fraction in (0, 1): 0.05 = "
                "5 points.")]
ArmArg = Annotated[str | list[dict[str, Any]] | list[str], Field(description=(
    "Graded rollouts of one arm: a path to a JSONL/JSON file under the workspace root, a small "
    f"inline list of row objects (at most {MCP_INLINE_ROWS_MAX}), or a list of paths, one per "
    "training seed (the verdict then includes the between-seed variance)."),
    examples=["evals/after.jsonl", ["evals/after-seed0.jsonl", "evals/after-seed1.jsonl"]])]
RunStdArg = Annotated[float | None, Field(
    description="Optional: standard deviation of the score when the same eval is re-run (from "
                "noise_floor); a delta inside t_{runs-1} x sqrt(2) x run_std is not called a "
                "change.", ge=0, le=MAX_SCORE, allow_inf_nan=False)]
NoiseRunsArg = Annotated[int | None, Field(
    description="How many re-runs run_std was measured on (noise_floor's n_runs); null reads "
                "it as 3 and says so.", ge=2, le=1000)]
MetricArg = Annotated[Literal["pass", "reward"], Field(
    description="What to compare per task: 'pass' (pass rate, reward >= threshold) or "
                "'reward' (mean reward, for scores such as an LCS ratio or partial credit).")]
AutoMetricArg = Annotated[Literal["auto", "pass", "reward"], Field(
    description="What to compare per task: 'pass' (pass rate, reward >= threshold), 'reward' "
                "(mean reward, for scores such as an LCS ratio or partial credit), or 'auto': "
                "the mean reward when the reward is continuous and no threshold is given, else "
                "the pass rate.")]
ClusterArg = Annotated[str | None, Field(
    max_length=200,
    description="Optional: the row field naming each task's family (the repo, document or "
                "template it comes from). Intervals then resample families, then tasks within "
                "them; under 10 families the answer says the interval is unreliable.",
    examples=["family"])]


def read_arm(value: Any, env: Env, *, argument: str, threshold: float | None):
    """One arm: rows, or a list of runs when given a list of paths (one per training seed)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return [read_rows(v, env.workspace, argument=f"{argument}[{i}]", threshold=threshold)
                for i, v in enumerate(value)]
    return read_rows(value, env.workspace, argument=argument, threshold=threshold)


# --- describe_rows -------------------------------------------------------------------------

class DescribeRowsInput(ToolInput):
    rows: RowsArg
    fields: Annotated[list[Annotated[str, Field(max_length=500)]] | None, Field(
        max_length=200,
        description="Optional: describe only these fields, in this order (the answer shows 20 "
                    "fields at a time and says how many of how many).")] = None
    threshold: ThresholdArg = None


def describe_rows_tool(args: DescribeRowsInput, env: Env) -> RowsDescription:
    from whileai_core.describe import describe_rows

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return describe_rows(rows, fields=args.fields)


# --- route_rows ----------------------------------------------------------------------------

class RouteRowsInput(ToolInput):
    rows: RowsArg
    model: Annotated[str, Field(
        description="Hub id of the model you will train, e.g. 'Qwen/Qwen3-8B'. The rows should "
                    "be this model's own rollouts; its size decides whether OPSD is possible.")]
    teacher_rows: Annotated[str | list[dict] | None, Field(
        description="Optional: a candidate teacher graded on the same held-out tasks (same "
                    "forms as `rows`). Given, the route checks whether the teacher clears the "
                    "student before choosing on-policy distillation.")] = None
    taskset: Annotated[str | None, Field(
        description="Optional: the prime-rl environment/taskset id you will train on; it only "
                    "fills the arguments of the suggested prime_rl_config call.")] = None
    teacher_url: Annotated[str | None, Field(
        description="Optional: the OpenAI-compatible URL serving the teacher (vLLM); only "
                    "fills the suggested call.")] = None
    threshold: ThresholdArg = None
    cluster: ClusterArg = None


def route_rows(args: RouteRowsInput, env: Env) -> Route:
    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    teacher = None if args.teacher_rows is None else read_rows(
        args.teacher_rows, env.workspace, argument="teacher_rows", threshold=args.threshold)
    return route(rows, model=args.model, teacher_rows=teacher, taskset=args.taskset,
                 teacher_url=args.teacher_url, threshold=args.threshold, cluster=args.cluster)


# --- inspect_rows --------------------------------------------------------------------------

class InspectRowsInput(ToolInput):
    rows: RowsArg
    model: Annotated[str | None, Field(
        max_length=500,
        description="Optional: hub id of the model you will train; given, also says whether "
                    "that model wrote the rows (on_policy).")] = None
    threshold: ThresholdArg = None
    level: LevelArg = CONFIDENCE_LEVEL


def inspect_rows(args: InspectRowsInput, env: Env) -> RowFacts:
    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return row_facts(rows, model=args.model, level=args.level)


# --- pass_at -------------------------------------------------------------------------------

class PassAtInput(ToolInput):
    rows: RowsArg
    k: Annotated[int | None, Field(
        ge=1, le=MAX_K,
        description="Also report pass@k (at least one of k passes) and pass^k (all k pass), "
                    "unbiased from n rollouts per task; k may not exceed the smallest n. null: "
                    "k = the fewest rollouts any task has (when >= 2).")] = None
    level: LevelArg = CONFIDENCE_LEVEL
    seed: SeedArg = BOOTSTRAP_SEED
    threshold: ThresholdArg = None
    cluster: ClusterArg = None
    detail: DetailArg = False
    offset: OffsetArg = 0
    limit: LimitArg = PAGE_DEFAULT


def pass_at_tool(args: PassAtInput, env: Env) -> PassAt:
    from whileai_core.tables import TaskTable

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    result = pass_at(rows, k=args.k, level=args.level, seed=args.seed, cluster=args.cluster)
    return with_table(result, TaskTable.of(rows), args, env)


# --- compare_runs --------------------------------------------------------------------------

class CompareRunsInput(ToolInput):
    before: Annotated[ArmArg, Field(
        description="The baseline run: a path, small inline rows, or a list of paths (seeds).")]
    after: Annotated[ArmArg, Field(
        description="The new run on the same tasks (tasks are paired by task_id): a path, small "
                    "inline rows, or a list of paths, one per training seed.")]
    level: LevelArg = CONFIDENCE_LEVEL
    run_std: RunStdArg = None
    noise_runs: NoiseRunsArg = None
    effect: Annotated[float, Field(
        description="Equivalence margin: the verdict is 'flat' only when the whole interval of "
                    "the delta lies inside +-effect.", gt=0, lt=1,
        allow_inf_nan=False)] = PROVE_EFFECT
    seed: SeedArg = BOOTSTRAP_SEED
    threshold: ThresholdArg = None
    metric: AutoMetricArg = "auto"
    cluster: ClusterArg = None
    selected_on: Annotated[str | list[str] | list[dict[str, Any]] | None, Field(
        description="When `after` is a checkpoint chosen among several: the tasks it was chosen "
                    "on (a path to a task or rows file under the workspace root, e.g. a split "
                    "freeze_holdout wrote, or a list of task ids). The result's `selection` "
                    "says whether that is the set it is scored on (an optimistic score) and "
                    "the fix.")] = None


def compare_runs(args: CompareRunsInput, env: Env) -> Comparison:
    before = read_arm(args.before, env, argument="before", threshold=args.threshold)
    after = read_arm(args.after, env, argument="after", threshold=args.threshold)
    chosen = None if args.selected_on is None else source(args.selected_on, env.workspace,
                                                         argument="selected_on")
    return compare(before, after, level=args.level, run_std=args.run_std, seed=args.seed,
                   metric=args.metric, effect=args.effect, noise_runs=args.noise_runs,
                   threshold=args.threshold, cluster=args.cluster, selected_on=chosen)


# --- compare_many --------------------------------------------------------------------------

class CompareManyInput(ToolInput):
    before: Annotated[ArmArg, Field(description="The baseline run (path, rows or seed paths).")]
    after: Annotated[ArmArg | None, Field(
        description="The new run, split by the row field `by` (give `by`); or null when "
                    "`checkpoints` is given.")] = None
    by: Annotated[str | None, Field(
        description="Row field to split both runs by, e.g. 'category': one paired comparison "
                    "per value.")] = None
    checkpoints: Annotated[dict[str, str] | None, Field(
        description="Instead of `after`/`by`: checkpoint name -> path of its rows on the same "
                    "tasks; each is compared with `before` and the best surviving one named.")] = None
    level: LevelArg = CONFIDENCE_LEVEL
    effect: Annotated[float, Field(description="Equivalence margin behind 'flat'.",
                                   gt=0, lt=1, allow_inf_nan=False)] = PROVE_EFFECT
    seed: SeedArg = BOOTSTRAP_SEED
    threshold: ThresholdArg = None
    metric: MetricArg = "pass"


def compare_many_tool(args: CompareManyInput, env: Env) -> ManyComparisons:
    from whileai_core.errors import ArgumentError

    before = read_arm(args.before, env, argument="before", threshold=args.threshold)
    options = dict(level=args.level, seed=args.seed, metric=args.metric, effect=args.effect)
    if args.checkpoints is not None:
        if args.after is not None or args.by is not None:
            raise ArgumentError("give `checkpoints`, or `after` with `by`, not both. Fix: drop "
                                "one of them")
        after = {name: read_rows(path, env.workspace, argument=f"checkpoints.{name}",
                                 threshold=args.threshold)
                 for name, path in args.checkpoints.items()}
        return compare_many(before, after, **options)
    if args.after is None:
        raise ArgumentError("`after` is missing. Fix: give `after` and `by` (e.g. 'category'), "
                            "or `checkpoints`")
    after = read_arm(args.after, env, argument="after", threshold=args.threshold)
    return compare_many(before, after, by=args.by, **options)


# --- holdout_size --------------------------------------------------------------------------

class HoldoutSizeInput(ToolInput):
    effect: EffectArg = PROVE_EFFECT
    k: Annotated[int, Field(ge=1, le=MAX_K, description="Rollouts per task in the held-out "
                                                        "eval (>= 1).")] = HOLDOUT_K
    before: Annotated[str | list[dict] | None, Field(
        description="Optional pilot rows of the baseline (path or small list): with them the "
                    "variances come from your data instead of a planning model.")] = None
    after: Annotated[str | list[dict] | None, Field(
        description="Optional pilot rows after training, same tasks as `before` (enables the "
                    "paired correlation).")] = None
    power: Annotated[float, Field(
        gt=0, lt=1, allow_inf_nan=False, description="Probability of detecting a true change of `effect`, in (0, 1).")] = HOLDOUT_POWER
    alpha: Annotated[float, Field(
        gt=0, lt=1, allow_inf_nan=False, description="Two-sided false-positive rate, in (0, 1).")] = HOLDOUT_ALPHA
    threshold: ThresholdArg = None
    cluster: ClusterArg = None


def holdout_size_tool(args: HoldoutSizeInput, env: Env) -> HoldoutSize:
    before = None if args.before is None else read_rows(
        args.before, env.workspace, argument="before", threshold=args.threshold)
    after = None if args.after is None else read_rows(
        args.after, env.workspace, argument="after", threshold=args.threshold)
    return holdout_size(args.effect, k=args.k, before=before, after=after, power=args.power,
                        alpha=args.alpha, threshold=args.threshold, cluster=args.cluster)


# --- teacher_clears ------------------------------------------------------------------------

class TeacherClearsInput(ToolInput):
    teacher_rows: Annotated[RowsArg, Field(
        description="The candidate teacher's graded rows on the held-out tasks.")]
    student_rows: Annotated[RowsArg, Field(
        description="The student's (the model you will train) graded rows on the same tasks.")]
    effect: EffectArg = PROVE_EFFECT
    level: LevelArg = CONFIDENCE_LEVEL
    strict: Annotated[bool, Field(
        description="Ask the gap's interval itself to reach `effect` (its lower end >= effect); "
                    "by default the interval must lie above 0 and the gap reach `effect`.")] = False
    threshold: ThresholdArg = None
    cluster: ClusterArg = None


def teacher_clears_tool(args: TeacherClearsInput, env: Env) -> TeacherVerdict:
    teacher = read_rows(args.teacher_rows, env.workspace, argument="teacher_rows",
                        threshold=args.threshold)
    student = read_rows(args.student_rows, env.workspace, argument="student_rows",
                        threshold=args.threshold)
    return teacher_clears(teacher, student, effect=args.effect, level=args.level,
                          strict=args.strict, threshold=args.threshold, cluster=args.cluster)


TOOLS = [
    ToolSpec(
        name="describe_rows", title="What fields do the rows carry?",
        description=(
            "Every field of graded rows: its JSON type, the share of rows carrying it, its "
            "distinct values or numeric range, and whether it is constant within a task or "
            "varies; the reward's kind (binary, continuous in [0, 1], another scale, with a "
            "warning and the fix when pass rates at the threshold would mislead), and which "
            "fields change route_rows' answer (tokens, turns, category, family). Call it "
            "before route_rows on rows you have not seen."),
        input=DescribeRowsInput, output=RowsDescription, run=describe_rows_tool,
        annotations=READ_ONLY, doing="describing rows", core=("describe_rows",)),
    ToolSpec(
        name="route_rows", title="Route graded rows to a training method",
        description=(
            "Start here. Reads graded rollouts of the model you will train and asks six "
            "questions in order (can a truncated reply pass? rollouts per task? does any task "
            "carry signal, read on the reward's spread within each task? does a teacher clear, "
            "on the same token budget? did this model write the rows? what is left?). Returns "
            f"the `route` ({named(values_of(Route, 'route'))}), the question that decided it, "
            "the evidence behind every answer (counts, band, pass@1 or the mean reward with its "
            "95% interval and n), the reward's kind with any warning, the fields that changed "
            "the answer, and the next call to make (`next_step`)."),
        input=RouteRowsInput, output=Route, run=route_rows, annotations=READ_ONLY,
        doing="routing graded rows", core=("route",)),
    ToolSpec(
        name="inspect_rows", title="Ask the rows every routing question",
        description=(
            "Every question route_rows asks, answered without stopping at the first that "
            "decides: truncated rows that pass, rollouts per task (k), the per-task band with "
            "pass@1 and its interval, the split share, and (given `model`) who wrote the rows. "
            "Use it to read one fact, or all of them, about a rows file."),
        input=InspectRowsInput, output=RowFacts, run=inspect_rows, annotations=READ_ONLY,
        doing="inspecting graded rows",
        core=("row_facts", "truncated_passes", "rollouts_per_task", "band", "split_share",
              "on_policy")),
    ToolSpec(
        name="pass_at", title="pass@1 / pass@k with intervals",
        description=(
            "pass@1 of graded rows with its interval (bootstrap over tasks, not rows) and n; "
            "with k, also pass@k and pass^k. Per-task pass rates included."),
        input=PassAtInput, output=PassAt, run=pass_at_tool, annotations=READ_ONLY,
        doing="computing pass@k", core=("pass_at", "load_rows")),
    ToolSpec(
        name="compare_runs", title="Did the score move? (paired before/after)",
        description=(
            "Paired comparison of two runs on the same tasks: mean before and after, the delta "
            f"with its interval, p-value and the interval used (`ci_method`), and a `verdict`: "
            f"{named(values_of(Comparison, 'verdict'))} (flat: the interval lies inside "
            "+-effect). Each arm may be several runs (training seeds). Use after training, on "
            "the held-out tasks; pass `run_std` and `noise_runs` from noise_floor so a change "
            "inside the re-run noise is not called a move."),
        input=CompareRunsInput, output=Comparison, run=compare_runs, annotations=READ_ONLY,
        doing="comparing two runs", core=("compare",)),
    ToolSpec(
        name="compare_many", title="Which behaviours moved? (corrected for how many)",
        description=(
            "One paired comparison per category (a row field, `by`) or per checkpoint, with "
            "p-values adjusted by Benjamini-Hochberg (false discovery rate) and Holm (any "
            "false claim among them), and which behaviours survive each. Use for by-category tables and "
            "for picking a checkpoint. Behaviours come smallest p first; a long list is cut and "
            "says n of N."),
        input=CompareManyInput, output=ManyComparisons, run=compare_many_tool,
        annotations=READ_ONLY, doing="comparing many behaviours", core=("compare_many",)),
    ToolSpec(
        name="holdout_size", title="How many held-out tasks?",
        description=(
            "Number of held-out tasks a paired eval needs to detect `effect` with the given "
            "power (Miller 2024, Eq. 9), plus a table over k. Without pilot rows it uses a "
            "planning model; with pilot rows, your data's variances."),
        input=HoldoutSizeInput, output=HoldoutSize, run=holdout_size_tool, annotations=READ_ONLY,
        doing="sizing a holdout", core=("holdout_size",)),
    ToolSpec(
        name="teacher_clears", title="Is the teacher good enough to distil?",
        description=(
            "Whether a candidate teacher beats the student by at least `effect` with the gap's "
            "own interval above 0 (strict: its lower end at `effect`), paired by task on the "
            "shared held-out tasks, on the same token budget (the gate before on-policy "
            "distillation). A teacher scored with a larger token cap than the student's does not "
            "clear; the answer gives its score at the student's cap. Returns both rates with "
            "intervals, the gap with its interval, n and p, the budget check and the reason."),
        input=TeacherClearsInput, output=TeacherVerdict, run=teacher_clears_tool,
        annotations=READ_ONLY, doing="checking whether the teacher clears the student",
        core=("teacher_clears",)),
]
