"""Operations on the eval itself (the strengthen-your-evals skill): eval_fingerprint,
freeze_holdout, failure_capable, category_table."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..defaults import (BOOTSTRAP_SEED, CATEGORY_FIELD, CONFIDENCE_LEVEL, EVALSET_NAME,
                        PROVE_EFFECT)
from . import READS, VERDICT, WRITES_NEW, operation
from .describe import named, values_of
from .args import (OUT, Arg, EffectSize, Level, NoiseRuns, OptionalRecords, OptionalRows,
                   Records, RowField, Rows, RunStd, Seed, Threshold)

Tasks = Annotated[Records, Field(
    description="The task set, one object per task: {\"task_id\": str, ...whatever defines "
                "it: \"prompt\", \"answer\", \"category\"}. Every field is part of the content "
                "hash.", examples=["evals/heldout_tasks.jsonl"])]
SetName = Annotated[str, Field(
    min_length=1, max_length=64, description="Prefix of the set's name, "
                                             "<name>-<12 hex of sha256>: 1-64 letters, digits, "
                                             "'.', '_' or '-'.")]


@operation(
    cli="fingerprint", toolset="evals", effect=READS, title="Name a task set by its content",
    description=(
        "The content name of a task set, <name>-<12 hex of sha256> over every field of every "
        "task (keys sorted, tasks sorted by id): reordering keeps it, any edit changes it. Two "
        "scores compare only under the same name. On a file freeze_holdout wrote, file_matches "
        "says whether it was edited since."),
    result="whileai_core.evalset:EvalFingerprint",
    exit_code=VERDICT, doing="fingerprinting a task set")
def eval_fingerprint(tasks: Tasks, *, name: SetName = EVALSET_NAME):
    from ..evalset import eval_fingerprint as fingerprint  # lazy: loads on the call

    return fingerprint(tasks, name=name)


@operation(
    cli="freeze", toolset="evals", effect=WRITES_NEW,
    title="Freeze the held-out set under its content name",
    description=(
        "Write the held-out tasks once as <out_dir>/<name>-<hash>.jsonl (canonical JSON lines). "
        "The same content again finds its file and writes nothing; a file of that name with "
        "other content is an error, never overwritten."),
    result="whileai_core.evalset:FrozenHoldout", doing="freezing a held-out set")
def freeze_holdout(tasks: Tasks,
                   out_dir: Annotated[str, Field(min_length=1, max_length=4096, description=(
                       "Folder to write <name>-<hash>.jsonl in; created if missing.")),
                       Arg(OUT, metavar="DIR", writes="folder")] = ".", *,
                   name: SetName = EVALSET_NAME):
    from ..evalset import freeze_holdout as freeze  # lazy: loads on the call

    return freeze(tasks, out_dir, name=name)


def _capable_doc() -> str:
    from ..evalset import FailureCapable  # lazy: the verdicts named are the core's Literal

    return ("Read a baseline run before training: pass@1 with its interval and n, the tasks "
            "that ever fail (the ceiling on any gain: headroom = 1 - pass@1), cut-off replies "
            "that pass, and (with `holdout`) whether the run scored exactly the frozen set. "
            f"`verdict`: {named(values_of(FailureCapable, 'verdict'))}.")


@operation(toolset="evals", effect=READS, title="Can this eval fail, and how much can it show?",
           description=_capable_doc, result="whileai_core.evalset:FailureCapable",
           exit_code=VERDICT,
           doing="reading what the eval can show")
def failure_capable(rows: Rows, *,
                    holdout: Annotated[OptionalRecords, Field(description=(
                        "Optional: the frozen task set (the file freeze_holdout wrote). Given, "
                        "the run must have scored exactly its tasks."))] = None,
                    effect: Annotated[EffectSize, Field(description=(
                        "Smallest gain in pass@1 worth detecting: 0.05 = 5 points."))
                    ] = PROVE_EFFECT,
                    level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
                    threshold: Threshold = None):
    from ..evalset import failure_capable as capable  # lazy: numpy loads on the call

    return capable(rows, holdout=holdout, effect=effect, level=level, seed=seed,
                   threshold=threshold)


@operation(
    cli="by-category", toolset="evals", effect=READS, title="pass@1 per behaviour (category)",
    description=(
        "pass@1 of each category (behaviour) of one run, each with its interval and n, plus "
        "the whole run; the category comes from the task set (`tasks`) or from every row. With "
        "`after` (a second run on the same tasks), each category's paired delta with its "
        "interval, n and p-value, and which survive the correction for the number of "
        "categories compared (Holm, Benjamini-Hochberg): a category changed only if it "
        "survives."),
    result="whileai_core.categories:CategoryTable", exit_code=VERDICT,
    doing="tabulating pass@1 by category")
def category_table(rows: Rows,
                   after: Annotated[OptionalRows, Field(description=(
                       "Optional: a second run on the same tasks (after training, or a re-run "
                       "of the same eval). Given, each category's paired change too, corrected "
                       "for the number of categories compared (Holm and "
                       "Benjamini-Hochberg)."))] = None, *,
                   tasks: Annotated[OptionalRecords, Field(description=(
                       "Optional: the task set holding each task's category (the frozen file). "
                       "null: read the category from every row."))] = None,
                   field: Annotated[RowField, Field(description=(
                       "The field that names a task's behaviour."))] = CATEGORY_FIELD,
                   level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
                   threshold: Threshold = None, run_std: RunStd = None,
                   noise_runs: NoiseRuns = None):
    from ..categories import category_table as table  # lazy: numpy loads on the call

    return table(rows, after, field=field, tasks=tasks, level=level, seed=seed,
                 threshold=threshold, run_std=run_std, noise_runs=noise_runs)
