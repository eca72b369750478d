"""Tools that prepare a DPO or GRPO run: dpo_pairs, write_dpo_data, grpo_plan (the dpo-pairs and
grpo-verifier skills). Each is one call into ``whileai_core``; paths resolve inside the root."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from whileai_core.defaults import (CATEGORY_FIELD, CONFIDENCE_LEVEL, DPO_MIN_MARGIN,
                                   GRPO_BALANCE_SHARE, GRPO_LOSS_TYPE, PAIRS_PER_TASK,
                                   PASS_THRESHOLD, SPLIT_SEED)
from whileai_core.methods.grpo_plan import GRPOPlan
from whileai_core.pairs import DPOData, PairSet

from .tooling import (MAX_SCORE, READ_ONLY, WRITES_FILE, Env, LevelArg, RowsArg, ThresholdArg,
                      ToolInput, ToolSpec, source, write_records)

RecordsArg = Annotated[str | list[dict[str, Any]], Field(
    description="A JSONL/JSON path under the workspace root (preferred) or a small inline list.")]


class DpoPairsInput(ToolInput):
    rollouts: Annotated[str | list[dict[str, Any]], Field(
        description="The policy's own graded rollouts on the training tasks (split first): each "
                    '{"task_id", "messages": the prompt then the reply (or "prompt" + '
                    '"completion"), "reward", "category", "model"}. A path under the root '
                    "(preferred) or a small list.",
        examples=["train_rollouts.jsonl"])]
    field: Annotated[str, Field(max_length=200, description="The rollout field naming a task's "
                                                            "category.")] = CATEGORY_FIELD
    threshold: Annotated[float, Field(ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False,
                                      description="A rollout passes when reward >= threshold.")
                         ] = PASS_THRESHOLD
    min_margin: Annotated[float, Field(gt=0, le=MAX_SCORE, allow_inf_nan=False, description=(
        "Chosen must beat rejected by at least this reward."))] = DPO_MIN_MARGIN
    per_task: Annotated[int, Field(ge=1, le=64, description=(
        "At most this many pairs per task, each reply used once."))] = PAIRS_PER_TASK
    constructed: Annotated[str | list[dict[str, Any]] | None, Field(
        description="Only when the user asked for constructed contrast: rejected replies made "
                    "from the failure a category without contrast is about, "
                    '[{"task_id", "rejected": text, "reward": its grade (optional)}]; each is '
                    "paired with the policy's best passing reply on that task and labelled "
                    "`constructed`, never on-policy.")] = None
    model: Annotated[str | None, Field(
        max_length=300, description="The policy's id: a rollout from another model is refused "
                                    "(its pairs would not be on-policy).")] = None
    out: Annotated[str | None, Field(
        description="Optional: write the pairs here (JSONL, TRL's conversational preference "
                    "rows) and leave them out of the reply.", examples=["pairs.jsonl"])] = None
    overwrite: Annotated[bool, Field(description="Replace `out` if it exists.")] = False
    level: LevelArg = CONFIDENCE_LEVEL


def dpo_pairs_tool(args: DpoPairsInput, env: Env) -> PairSet:
    from whileai_core.pairs import dpo_pairs

    found = dpo_pairs(source(args.rollouts, env.workspace, argument="rollouts"), field=args.field,
                      threshold=args.threshold, min_margin=args.min_margin,
                      per_task=args.per_task, model=args.model, level=args.level,
                      constructed=None if args.constructed is None else source(
                          args.constructed, env.workspace, argument="constructed"))
    if args.out is None:
        return found
    write_records(found.pairs, env.workspace.resolve(args.out, argument="out"),
                  overwrite=args.overwrite)
    return found.model_copy(update={"pairs": []})


class WriteDpoDataInput(ToolInput):
    pairs: Annotated[RecordsArg, Field(description="The pairs dpo_pairs wrote (its `out`).",
                                       examples=["pairs.jsonl"])]
    out_dir: Annotated[str, Field(description="The data folder to write, relative to the root.",
                                  examples=["dpo-data"])]
    holdout: Annotated[RecordsArg, Field(
        description="The held-out tasks' records (one or more per task, with `messages`): "
                    "frozen into the folder as holdout-<hash>.jsonl, one ask per task.",
        examples=["holdout.jsonl"])]
    grader: Annotated[str, Field(description="Your grader file (grade(ask, reply) -> float, 1.0 "
                                             "a pass), copied into the folder as grader.py.",
                                 examples=["grader.py"])]
    settings: Annotated[dict[str, Any] | None, Field(
        description='Optional DPO recipe settings for this data, e.g. {"model": '
                    '"Qwen/Qwen3-8B", "beta": 0.1}; written as settings.json.')] = None
    overwrite: Annotated[bool, Field(description="Replace the folder's files if they exist.")
                         ] = False


def write_dpo_data_tool(args: WriteDpoDataInput, env: Env) -> DPOData:
    from whileai_core.pairs import write_dpo_data

    return write_dpo_data(source(args.pairs, env.workspace, argument="pairs"), args.out_dir,
                          holdout=source(args.holdout, env.workspace, argument="holdout"),
                          grader=args.grader, settings=args.settings, overwrite=args.overwrite,
                          root=env.workspace.door)


class GrpoPlanInput(ToolInput):
    rows: RowsArg
    model: Annotated[str, Field(max_length=300, description="The base model to train.",
                                examples=["Qwen/Qwen2.5-1.5B-Instruct"])]
    loss: Annotated[Literal["grpo", "bnpo", "dr_grpo", "dapo"], Field(
        description="The loss variant (TRL 1.16's loss type): bnpo (the recipe's default), grpo, "
                    "dr_grpo (adds --no-scale-rewards), dapo (clip-higher 0.28, overlong mask, "
                    "num_iterations 2 so the clip binds).")] = GRPO_LOSS_TYPE
    num_iterations: Annotated[int | None, Field(ge=1, le=16, description=(
        "Optimizer steps per generation batch; null: 2 for dapo, else 1."))] = None
    balance: Annotated[float | None, Field(gt=0, le=0.5, description=(
        "Repeat the prompts of any category under this share of the tasks; null: never."))
                       ] = GRPO_BALANCE_SHARE
    field: Annotated[str, Field(max_length=200, description="The category field.")
                     ] = CATEGORY_FIELD
    tasks: Annotated[str | None, Field(description="Optional task file holding each task's "
                                                   "category (else the rows carry it).")] = None
    seed: Annotated[int, Field(ge=0, le=2**63 - 1, description="Seed of the random-selection "
                                                               "control.")] = SPLIT_SEED
    threshold: ThresholdArg = None


def grpo_plan_tool(args: GrpoPlanInput, env: Env) -> GRPOPlan:
    from whileai_core.methods.grpo_plan import grpo_plan

    return grpo_plan(source(args.rows, env.workspace, argument="rows"), model=args.model,
                     loss=args.loss, num_iterations=args.num_iterations, balance=args.balance,
                     field=args.field, seed=args.seed, threshold=args.threshold,
                     tasks=None if args.tasks is None else env.workspace.resolve(
                         args.tasks, argument="tasks"))


TOOLS = [
    ToolSpec(
        name="dpo_pairs", title="Preference pairs where a task has contrast",
        description=(
            "DPO pairs from the policy's own graded rollouts: only where a task has a pass and "
            "a fail (by min_margin), best pass against the fail closest in length. Counts tasks "
            "with contrast (a rate with its interval and n) and pairs, overall and per "
            "category; names each category with no contrast, why, and how to construct it. "
            "Constructed pairs are built only from the `constructed` replies given, labelled "
            "constructed. Names a category outvoted by the others' pairs."),
        input=DpoPairsInput, output=PairSet, run=dpo_pairs_tool, annotations=WRITES_FILE,
        doing="building preference pairs", core=("dpo_pairs",)),
    ToolSpec(
        name="write_dpo_data", title="Write the DPO recipe's data folder",
        description=(
            "The folder launch_run('dpo', data=...) trains on: pairs.jsonl, the held-out asks "
            "frozen as holdout-<hash>.jsonl (one per task), grader.py, optional settings.json. "
            "Refuses pairs whose task is held out."),
        input=WriteDpoDataInput, output=DPOData, run=write_dpo_data_tool,
        annotations=WRITES_FILE, doing="writing the DPO data folder", core=("write_dpo_data",)),
    ToolSpec(
        name="grpo_plan", title="Plan a GRPO run: loss, balance, control arms",
        description=(
            "From the base model's graded rows: the loss variant's TRL 1.16 fields and recipe "
            "flags (bnpo, grpo, dr_grpo, dapo), each category's share and split tasks, the "
            "--balance share when one is rare, and the arms: the method's tasks, a random "
            "selection of as many, and on a Qwen2.5/Qwen3 base a random-reward arm."),
        input=GrpoPlanInput, output=GRPOPlan, run=grpo_plan_tool, annotations=READ_ONLY,
        doing="planning a GRPO run", core=("grpo_plan",)),
]
