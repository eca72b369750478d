"""Tools for the eval itself (the strengthen-your-evals skill): eval_fingerprint, freeze_holdout,
failure_capable, category_table.

Task sets and rows come as paths under the workspace root (preferred) or small inline lists; each
function makes one call into ``whileai_core``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

from mcp.types import ToolAnnotations
from pydantic import Field

from whileai_core.categories import CategoryTable, category_table
from whileai_core.defaults import (BOOTSTRAP_SEED, CATEGORY_FIELD, CONFIDENCE_LEVEL,
                                   EVALSET_NAME, PROVE_EFFECT)
from whileai_core.evalset import (EvalFingerprint, FailureCapable, FrozenHoldout,
                                  eval_fingerprint, failure_capable, freeze_holdout)

from whileai_core.operations.args import NoiseRuns as NoiseRunsArg, RunStd as RunStdArg
from .tooling import (READ_ONLY, Env, LevelArg, RowsArg, SeedArg, ThresholdArg, ToolInput,
                      ToolSpec, named, read_rows, source, values_of)

WRITES_NEW_FILE = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                  idempotent_hint=True, open_world_hint=False)
"""Writes one new file under the root and never replaces one (the same call again finds it)."""

_FREEZE = inspect.signature(freeze_holdout).parameters

TasksArg = Annotated[str | list[dict[str, Any]], Field(
    description="The task set: a JSONL (or JSON-array) path relative to the workspace root, or a "
                'small list. One object per task: {"task_id": str, ...whatever defines it: '
                '"prompt", "answer", "category"}. Every field is part of the content hash.',
    examples=["evals/heldout_tasks.jsonl"])]
NameArg = Annotated[str, Field(
    description="Prefix of the set's name, <name>-<12 hex of sha256>: 1-64 letters, digits, "
                "'.', '_' or '-'.", min_length=1, max_length=64)]


class EvalFingerprintInput(ToolInput):
    tasks: TasksArg
    name: NameArg = EVALSET_NAME


def eval_fingerprint_tool(args: EvalFingerprintInput, env: Env) -> EvalFingerprint:
    return eval_fingerprint(source(args.tasks, env.workspace, argument="tasks"), name=args.name)


class FreezeHoldoutInput(ToolInput):
    tasks: TasksArg
    out_dir: Annotated[str, Field(
        description="Folder (relative to the workspace root) to write <name>-<hash>.jsonl in; "
                    "created if missing.")] = _FREEZE["out_dir"].default
    name: NameArg = EVALSET_NAME


def freeze_holdout_tool(args: FreezeHoldoutInput, env: Env) -> FrozenHoldout:
    out = env.workspace.resolve(args.out_dir, argument="out_dir")
    frozen = freeze_holdout(source(args.tasks, env.workspace, argument="tasks"), out,
                            name=args.name)
    return frozen.model_copy(update={"path": env.workspace.relative(Path(frozen.path))})


class FailureCapableInput(ToolInput):
    rows: RowsArg
    holdout: Annotated[str | list[dict[str, Any]] | None, Field(
        description="Optional: the frozen task set (the file freeze_holdout wrote). Given, the "
                    "run must have scored exactly its tasks.")] = None
    effect: Annotated[float, Field(
        description="Smallest gain in pass@1 worth detecting: 0.05 = 5 points.",
        gt=0, lt=1)] = PROVE_EFFECT
    level: LevelArg = CONFIDENCE_LEVEL
    seed: SeedArg = BOOTSTRAP_SEED
    threshold: ThresholdArg = None


def failure_capable_tool(args: FailureCapableInput, env: Env) -> FailureCapable:
    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    holdout = None if args.holdout is None else source(args.holdout, env.workspace,
                                                       argument="holdout")
    return failure_capable(rows, holdout=holdout, effect=args.effect, level=args.level,
                           seed=args.seed)


class CategoryTableInput(ToolInput):
    rows: RowsArg
    after: Annotated[str | list[dict[str, Any]] | None, Field(
        description="Optional: a second run on the same tasks (after training, or a re-run of "
                    "the same eval). Given, each category's paired change too, corrected for "
                    "the number of categories compared (Holm and Benjamini-Hochberg).")] = None
    tasks: Annotated[str | list[dict[str, Any]] | None, Field(
        description="Optional: the task set holding each task's category (the frozen file). "
                    "null: read the category from every row.")] = None
    field: Annotated[str, Field(
        description="The field that names a task's behaviour.", min_length=1,
        max_length=200)] = CATEGORY_FIELD
    level: LevelArg = CONFIDENCE_LEVEL
    seed: SeedArg = BOOTSTRAP_SEED
    threshold: ThresholdArg = None
    run_std: RunStdArg = None
    noise_runs: NoiseRunsArg = None


def category_table_tool(args: CategoryTableInput, env: Env) -> CategoryTable:
    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    after = None if args.after is None else read_rows(
        args.after, env.workspace, argument="after", threshold=args.threshold)
    tasks = None if args.tasks is None else source(args.tasks, env.workspace, argument="tasks")
    return category_table(rows, after, field=args.field, tasks=tasks, level=args.level,
                          seed=args.seed, run_std=args.run_std, noise_runs=args.noise_runs)


TOOLS = [
    ToolSpec(
        name="eval_fingerprint", title="Name a task set by its content",
        description=(
            "The content name of a task set, <name>-<12 hex of sha256> over every field of every "
            "task (keys sorted, tasks sorted by id): reordering keeps it, any edit changes it. "
            "Two scores compare only under the same name. On a file freeze_holdout wrote, "
            "file_matches says whether it was edited since."),
        input=EvalFingerprintInput, output=EvalFingerprint, run=eval_fingerprint_tool,
        annotations=READ_ONLY, doing="fingerprinting a task set",
        core=("eval_fingerprint",)),
    ToolSpec(
        name="freeze_holdout", title="Freeze the held-out set under its content name",
        description=(
            "Write the held-out tasks once as <out_dir>/<name>-<hash>.jsonl (canonical JSON "
            "lines). The same content again finds its file and writes nothing; a file of that "
            "name with other content is an error, never overwritten."),
        input=FreezeHoldoutInput, output=FrozenHoldout, run=freeze_holdout_tool,
        annotations=WRITES_NEW_FILE, doing="freezing a held-out set",
        core=("freeze_holdout",)),
    ToolSpec(
        name="failure_capable", title="Can this eval fail, and how much can it show?",
        description=(
            "Read a baseline run before training: pass@1 with its interval and n, the tasks that "
            "ever fail (the ceiling on any gain: headroom = 1 - pass@1), cut-off replies that "
            "pass, and (with holdout) whether the run scored exactly the frozen set. `verdict`: "
            f"{named(values_of(FailureCapable, 'verdict'))}."),
        input=FailureCapableInput, output=FailureCapable, run=failure_capable_tool,
        annotations=READ_ONLY, doing="reading what the eval can show",
        core=("failure_capable",)),
    ToolSpec(
        name="category_table", title="pass@1 per behaviour (category)",
        description=(
            "pass@1 of each category (behaviour) of one run, each with its interval and n, plus "
            "the whole run; the category comes from the task set (tasks) or from every row. With "
            "`after` (a second run on the same tasks), each category's paired delta with its "
            "interval, n and p-value, and which survive the correction for the number of "
            "categories compared (Holm, Benjamini-Hochberg): a category changed only if it "
            "survives."),
        input=CategoryTableInput, output=CategoryTable, run=category_table_tool,
        annotations=READ_ONLY, doing="tabulating pass@1 by category",
        core=("category_table",)),
]
