"""Operations on graded rows: describe and route them, rate them, compare runs, size a holdout.

Each is one call into the domain (``whileai_core.routing``, ``whileai_core.stats``); the domain
modules load on the call (the CLI builds its parser from every declaration, and numpy is not
needed for that).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HOLDOUT_ALPHA, HOLDOUT_K,
                        HOLDOUT_POWER, NOISE_FLOOR_MAX_RUNS, PROVE_EFFECT)
from ..errors import ArgumentError
from ..voice import arg
from . import READS, VERDICT, WRITES, operation
from .describe import named, values_of
from .args import (MAX_K, NAMED, OUT, RUNS, SOURCE, Arg, ArmRows, AutoMetric, Cluster,
                   AutoCluster, CompareEffect, EffectSize, Level, Metric, Model, NoiseRuns, OptionalRowField,
                   OptionalRows, Overwrite, Rows, RunStd, Score, Seed, Threshold)

TeacherRows = Annotated[OptionalRows, Field(description=(
    "Optional: a candidate teacher's rows on the same held-out tasks (the forms of `rows`): "
    "checked to clear the student before on-policy distillation is chosen."))]
PassK = Annotated[int | None, Field(ge=1, le=MAX_K, description=(
    "pass@k and pass^k (metric 'pass'), unbiased from n rollouts per task, k <= the smallest "
    "n. null: that smallest n (when >= 2)."))]


# --- describe and route -----------------------------------------------------------------------

@operation(
    toolset="stats", effect=READS, title="Ask the rows every routing question",
    description=(
        "Every question route asks, answered without stopping at the first that decides: "
        "truncated rows that pass, rollouts per task (k), the per-task band with pass@1 and its "
        "interval, the split share, and (given `model`) who wrote the rows. Use it to read one "
        "fact, or all of them, about a rows file."),
    result="whileai_core.routing:RowFacts", doing="inspecting graded rows",
    serves=("row_facts", "truncated_passes", "rollouts_per_task", "band", "split_share",
            "on_policy"))
def inspect_rows(rows: Rows, *,
                 model: Annotated[str | None, Field(max_length=500, description=(
                     "Optional: hub id of the model you will train; given, also says whether "
                     "that model wrote the rows (on_policy)."))] = None,
                 threshold: Threshold = None, level: Level = CONFIDENCE_LEVEL):
    from ..routing import row_facts  # lazy: numpy loads on the call, not with the CLI's parser

    return row_facts(rows, model=model, threshold=threshold, level=level)


def _band(args: dict[str, Any], result: Any, *, out: Any = None, overwrite: bool = False):
    from ..pictures import band_picture  # lazy: matplotlib, only when a picture is asked for

    return band_picture(args["rows"], threshold=args.get("threshold"), out=out,
                        overwrite=overwrite)


def _route_doc() -> str:
    from ..routing import Route  # lazy: the values named are the core's Literal

    return ("Start here. Reads graded rollouts of the model you will train and asks in order: "
            "who graded them (a judge is audited first)? can a cut-off reply pass or earn more? "
            "rollouts per task? does any task carry signal? does a teacher clear on the same "
            "budget? did this model write them? Returns the `route` "
            f"({named(values_of(Route, 'route'))}), the deciding question, each answer's "
            "evidence with its 95% interval and n, what it did with each field, and the next "
            "call (`next_step`). plot: the band.")


@operation(toolset="core", effect=READS, title="Route graded rows to a training method",
           description=_route_doc, result="whileai_core.routing:Route", doing="routing graded rows",
           picture=_band, serves=("route", "band_picture"), cli="route")
def route_rows(rows: Rows, *, model: Annotated[Model, Field(description=(
                   "Hub id of the model you will train, e.g. 'Qwen/Qwen3-8B'. The rows should be "
                   "this model's own rollouts; its size decides whether OPSD is possible."))],
               teacher_rows: TeacherRows = None,
               taskset: Annotated[str | None, Field(max_length=500, description=(
                   "Optional: the taskset you will train on; only fills the suggested "
                   "prime_rl_config call."))] = None,
               teacher_url: Annotated[str | None, Field(max_length=2000, description=(
                   "Optional: the OpenAI-compatible URL serving the teacher (vLLM); only fills the "
                   "suggested call."))] = None,
               threshold: Threshold = None, cluster: AutoCluster = "auto"):
    from ..rows import load_rows  # lazy: numpy loads on the call
    from ..routing import route as decide  # lazy: loads with the call

    if teacher_rows is not None:  # read now: bad teacher rows are refused even when the route
        teacher_rows = load_rows(teacher_rows, threshold=threshold)  # stops before question 4
    return decide(rows, model=model, teacher_rows=teacher_rows, taskset=taskset,
                  teacher_url=teacher_url, threshold=threshold, cluster=cluster)


route = route_rows  # the Python name the skills use (`whileai_core.route`); one function


# --- rates --------------------------------------------------------------------------------------

@operation(
    cli="pass-at", toolset="core", effect=READS,
    title="A rate with its interval: pass@k, mean reward, share",
    description=(
        "One rate of graded rows, each task counted once, with its interval (bootstrap over "
        "tasks, not rows) and n: the pass rate pass@1 (metric 'pass'; with k, also pass@k and "
        "pass^k), the mean reward (metric 'reward', for scores), or the share of rollouts whose "
        "boolean `field` is true (truncated, a tool call...). The per-task values are "
        "summarised; detail=true pages them, task_table writes them all."),
    result="whileai_core.stats.report:RateReport", doing="computing a rate", paged=True,
    serves=("pass_at", "mean_reward", "field_share", "load_rows"))
def rate(rows: Rows, *, metric: Metric = "pass",
         field: Annotated[OptionalRowField, Field(description=(
             "Instead of the metric: the share of rollouts whose boolean row field is true "
             "(e.g. 'truncated'; a missing field counts as false)."))] = None,
         k: PassK = None, level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
         threshold: Threshold = None, cluster: AutoCluster = "auto"):
    from ..rows import load_rows  # lazy: numpy loads on the call
    from ..stats import field_share, field_shares, mean_reward, pass_at  # lazy: loads with the call
    from ..stats.report import RateReport  # lazy: loads with the call
    from ..tables import TaskTable  # lazy: loads with the call

    if k is not None and (metric != "pass" or field is not None):
        raise ArgumentError(f"`{arg('k')}` (pass@k) is for pass rates. Fix: drop `{arg('k')}`, "
                            f"or use {arg('metric', 'pass')} without `{arg('field')}`")
    if field is not None and metric != "pass":
        raise ArgumentError(f"give `{arg('field')}` (a share of rollouts) or "
                            f"{arg('metric', 'reward')}, not both. Fix: drop one of them")
    if field is not None and cluster not in (None, "auto"):
        raise ArgumentError(f"`{arg('cluster')}` is for pass rates and mean rewards, not a "
                            f"field's share. Fix: drop `{arg('cluster')}`, or `{arg('field')}`")
    data = load_rows(rows, threshold=threshold)
    if field is not None:
        table = TaskTable(data.task_ids, field_shares(data, field), data.rollouts, "share")
        return RateReport.of(field_share(data, field, level=level, seed=seed), table,
                             field=field).read(data, None, seed)
    if metric == "reward":
        return RateReport.of(mean_reward(data, level=level, seed=seed, cluster=cluster),
                             TaskTable.of(data, "reward")).read(data, cluster, seed)
    return RateReport.of_pass(pass_at(data, k=k, level=level, seed=seed, cluster=cluster),
                              TaskTable.of(data)).read(data, cluster, seed)


@operation(
    toolset="stats", effect=WRITES, title="Write the per-task table to a file",
    description=(
        "Write every task's value (pass rate, or mean reward) and rollouts as JSONL, for a "
        "table too long to page through. Never replaces an existing file unless "
        "overwrite=true."),
    result="whileai_core.tables:TableFile", doing="writing a per-task table",
    serves=("TaskTable",))
def task_table(rows: Rows, *, out: Annotated[str, Field(
                   min_length=1, max_length=4096, description=(
                       "Where to write the table as JSONL (one {task_id, value, rollouts} per "
                       "task)."), examples=["evals/tasks.jsonl"]),
                       Arg(OUT, metavar="FILE", writes="jsonl")],
               metric: Metric = "pass", threshold: Threshold = None, overwrite: Overwrite = False):
    from ..rows import load_rows  # lazy: numpy loads on the call
    from ..tables import TaskTable  # lazy: loads with the call

    return TaskTable.of(load_rows(rows, threshold=threshold), metric).write(out,
                                                                           overwrite=overwrite)


# --- comparing runs ------------------------------------------------------------------------------

def _forest(args: dict[str, Any], result: Any, *, out: Any = None, overwrite: bool = False):
    from ..pictures import forest_picture  # lazy: matplotlib, only when a picture is asked for

    before, after = args["before"], args["after"]
    if any(isinstance(v, list) and v and not all(isinstance(x, dict) for x in v)
           for v in (before, after)):
        raise ArgumentError("plot draws one run per arm, not a list of seed runs. Fix: give one "
                            "rows file for `before` and for `after`, or leave plot off")
    return forest_picture(before, after, by=args.get("by"), run_std=args.get("run_std"),
                          metric=getattr(result, "metric", None) or args.get("metric", "pass"),
                          level=args.get("level",
                                                                            CONFIDENCE_LEVEL),
                          threshold=args.get("threshold"), out=out, overwrite=overwrite)


def _compare_doc() -> str:
    from ..stats import Comparison  # lazy: the verdicts named are the core's Literal

    return ("Paired comparison of two runs on the same tasks: mean before and after, the delta "
            "with its interval, p-value and the interval used (`ci_method`), and a `verdict`: "
            f"{named(values_of(Comparison, 'verdict'))} (flat: the interval lies inside "
            "+-effect). An arm may be several runs (training seeds). After training, on the "
            "held-out tasks; `run_std` and `noise_runs` from noise_floor keep a change inside "
            "re-run noise from being called a move. plot: the paired deltas (per `by`).")


@operation(toolset="core", effect=READS, title="Did the score move? (paired before/after)",
           description=_compare_doc, result="whileai_core.stats:Comparison", exit_code=VERDICT,
           doing="comparing two runs", picture=_forest, serves=("forest_picture",))
def compare(before: Annotated[ArmRows, Field(description=(
                "The baseline run: rows (the forms of route_rows's), or a list of files, one "
                "per training seed."))],
            after: Annotated[ArmRows, Field(description=(
                "The new run on the same tasks (paired by task_id): the same forms as "
                "`before`."))], *,
            level: Level = CONFIDENCE_LEVEL, run_std: RunStd = None, noise_runs: NoiseRuns = None,
            effect: CompareEffect = None, seed: Seed = BOOTSTRAP_SEED,
            threshold: Threshold = None, metric: AutoMetric = "auto",
            cluster: AutoCluster = "auto",
            selected_on: Annotated[str | list[str] | list[dict[str, Any]] | None, Field(
                description=(
                    "When `after` is a checkpoint chosen among several: the tasks it was "
                    "chosen on (a task or rows file, or task ids); `selection` says whether "
                    "it is scored on that set (an optimistic score) and the fix.")),
                Arg(SOURCE, metavar="FILE")] = None,
            by: Annotated[OptionalRowField, Field(description=(
                "With plot: a row of the picture per value of this row field."))] = None):
    from ..stats import compare as paired  # lazy: numpy loads on the call

    return paired(before, after, level=level, run_std=run_std, seed=seed, threshold=threshold,
                  metric=metric, effect=effect, noise_runs=noise_runs, cluster=cluster,
                  selected_on=selected_on)


@operation(
    toolset="stats", effect=READS, title="Which behaviours moved? (corrected for how many)",
    description=(
        "One paired comparison per category (a row field, `by`) or per checkpoint, with "
        "p-values adjusted by Benjamini-Hochberg (false discovery rate) and Holm (any false "
        "claim among them), and which behaviours survive each. Use for by-category tables and "
        "for picking a checkpoint. Behaviours come smallest p first; a long list is cut and "
        "says n of N."),
    result="whileai_core.stats:ManyComparisons", exit_code=VERDICT,
    doing="comparing many behaviours")
def compare_many(before: Annotated[ArmRows, Field(description=(
                     "The baseline run (a rows file, rows, or seed files)."))],
                 after: Annotated[ArmRows | None, Field(description=(
                     "The new run, split by the row field `by` (give `by`); or null when "
                     "`checkpoints` is given."))] = None, *,
                 by: Annotated[OptionalRowField, Field(description=(
                     "Row field to split both runs by, e.g. 'category': one paired comparison "
                     "per value."))] = None,
                 checkpoints: Annotated[dict[str, str] | None, Field(
                     max_length=500, description=(
                         "Instead of `after`/`by`: checkpoint name -> its rows file on the same "
                         "tasks; each is compared with `before` and the best surviving one "
                         "named.")), Arg(NAMED, metavar="NAME=FILE", rows=True)] = None,
                 level: Level = CONFIDENCE_LEVEL, effect: CompareEffect = None,
                 seed: Seed = BOOTSTRAP_SEED, threshold: Threshold = None,
                 metric: Metric = "pass"):
    from ..stats import compare_many as many  # lazy: numpy loads on the call

    options = dict(level=level, seed=seed, metric=metric, effect=effect, threshold=threshold)
    if checkpoints is not None:
        if after is not None or by is not None:
            raise ArgumentError(f"give {arg('checkpoints', op='compare_many')}, or "
                                f"{arg('after', op='compare_many')} with "
                                f"{arg('by', op='compare_many')}, not both. Fix: drop one of them")
        return many(before, checkpoints, **options)
    if after is None:
        raise ArgumentError(f"{arg('after', op='compare_many')} is missing. Fix: give "
                            f"{arg('after', op='compare_many')} and "
                            f"{arg('by', 'category', op='compare_many')}, or "
                            + arg("checkpoints", op="compare_many"))
    return many(before, after, by=by, **options)


@operation(
    toolset="stats", effect=READS, title="How much does the score move on a re-run?",
    description=(
        "From re-runs of the same frozen eval: each run's score, `run_std` (their standard "
        "deviation), `n_runs`, and the `band` a change must clear to count (t on n_runs - 1 "
        "degrees of freedom x sqrt(2) x run_std, at `level`), with the run_std the within-task "
        "variance predicts. Give both numbers to compare: a change inside the band is then not "
        "called a move."),
    result="whileai_core.stats:NoiseFloor", doing="measuring a noise floor")
def noise_floor(*runs: Annotated[list[str | Score], Field(
                    min_length=2, max_length=NOISE_FLOOR_MAX_RUNS, description=(
                        "Two or more re-runs of the same frozen eval (3+ recommended): each a "
                        "rows file, or that run's score as a number."),
                    examples=[["evals/run0.jsonl", "evals/run1.jsonl", "evals/run2.jsonl"]]),
                    Arg(RUNS, positional=True, metavar="RUN", rows=True)],
                metric: AutoMetric = "auto", level: Level = CONFIDENCE_LEVEL,
                threshold: Threshold = None,
                cluster: Annotated[Cluster, Field(description=(
                    "Optional: the row field naming each task's family; with 2+ runs given as "
                    "rows, the run-to-run sd is also rebuilt per family (noise shared within a "
                    "family shows as a gap)."))] = None):
    from ..stats import noise_floor as floor  # lazy: numpy loads on the call

    return floor(*runs, metric=metric, level=level, threshold=threshold, cluster=cluster)


@operation(
    toolset="core", effect=READS, title="How many held-out tasks?",
    description=(
        "Number of held-out tasks a paired eval needs to detect `effect` with the given power "
        "(Miller 2024, Eq. 9), plus a table over k. Without pilot rows it uses a planning "
        "model; with pilot rows, your data's variances."),
    result="whileai_core.stats:HoldoutSize", doing="sizing a holdout")
def holdout_size(effect: Annotated[EffectSize, Field(description=(
                     "Smallest change in pass@1 worth detecting, in (0, 1): 0.05 = 5 "
                     "points."))] = PROVE_EFFECT, *,
                 k: Annotated[int, Field(ge=1, le=MAX_K, description=(
                     "Rollouts per task in the held-out eval."))] = HOLDOUT_K,
                 before: Annotated[OptionalRows, Field(description=(
                     "Optional pilot rows of the baseline: with them the variances come from "
                     "your data instead of a planning model."))] = None,
                 after: Annotated[OptionalRows, Field(description=(
                     "Optional pilot rows after training, the same tasks as `before` (enables "
                     "the paired correlation)."))] = None,
                 power: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False, description=(
                     "Probability of detecting a true change of `effect`, in (0, 1)."))
                 ] = HOLDOUT_POWER,
                 alpha: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False, description=(
                     "Two-sided false-positive rate, in (0, 1)."))] = HOLDOUT_ALPHA,
                 threshold: Threshold = None, cluster: Cluster = None):
    from ..stats import holdout_size as size  # lazy: numpy loads on the call

    return size(effect, k=k, before=before, after=after, power=power, alpha=alpha,
                threshold=threshold, cluster=cluster)


@operation(
    toolset="core", effect=READS, title="Is the teacher good enough to distil?",
    description=(
        "The gate before on-policy distillation: does a candidate teacher beat the student by "
        "at least `effect`, the gap's interval above 0, paired by task on the shared held-out "
        "tasks, at the same token budget? A teacher given a larger token cap does not clear "
        "(its score at the student's cap is given). Returns both rates and the gap with "
        "intervals, n, p, the budget check and the reason."),
    result="whileai_core.routing:TeacherVerdict",
    exit_code=VERDICT, doing="checking whether the teacher clears")
def teacher_clears(teacher_rows: Annotated[Rows, Field(description=(
                       "The candidate teacher's graded rows on the held-out tasks."))],
                   student_rows: Annotated[Rows, Field(description=(
                       "The student's (the model you will train) graded rows on the same "
                       "tasks."))], *,
                   effect: Annotated[CompareEffect, Field(description=(
                       "The smallest gap worth distilling, in the metric's units (0.05 = 5 "
                       "points of pass@1). Left out: 0.05, or 0.05 of a reward's span on "
                       "another scale, said in the reason."))] = None,
                   level: Level = CONFIDENCE_LEVEL,
                   strict: Annotated[bool, Field(description=(
                       "The gap's interval must itself reach `effect`; by default it lies "
                       "above 0 and the gap reaches `effect`."))] = False,
                   threshold: Threshold = None, cluster: Cluster = None):
    from ..routing import teacher_clears as gate  # lazy: numpy loads on the call

    return gate(teacher_rows, student_rows, effect=effect, level=level, strict=strict,
                threshold=threshold, cluster=cluster)
