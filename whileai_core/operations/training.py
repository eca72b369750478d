"""Operations that prepare a DPO or GRPO run (the dpo-pairs and grpo-verifier skills): dpo_pairs,
write_dpo_data, grpo_plan.

Each is one call into the domain (``whileai_core.pairs``, ``whileai_core.methods.grpo_plan``),
imported on the call. Every path is read and written through the door (under the server's root
over MCP).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import (CATEGORY_FIELD, CONFIDENCE_LEVEL, DPO_MIN_MARGIN, GRPO_BALANCE_SHARE,
                        GRPO_LOSS_TYPE, GRPO_LOSS_TYPES, PAIRS_PER_TASK, PASS_THRESHOLD,
                        SPLIT_SEED)
from . import READS, WRITES, operation
from .args import (MAX_SCORE, OUT, PATH, RECORDS_FORM, SOURCE, Arg, Level, Model, OptionalOut,
                   OptionalRecords, Overwrite, Records, RowField, Rows, Seed, Threshold)
from .surface import HERE, Context

CategoryField = Annotated[RowField, Field(description=(
    "The field naming a task's category (behaviour)."))]


@operation(
    toolset="training", effect=WRITES, title="Preference pairs where a task has contrast",
    description=(
        "DPO pairs from the policy's own graded rollouts: only where a task has a pass and a "
        "fail (by min_margin), best pass against the fail closest in length. Counts tasks with "
        "contrast (a rate with its interval and n) and pairs, overall and per category; names "
        "each category with no contrast, why, and how to construct it. Constructed pairs are "
        "built only from the `constructed` replies given, labelled constructed. Names a "
        "category outvoted by the others' pairs. `out` writes the pairs (TRL's conversational "
        "preference rows) and leaves them out of the answer."),
    result="whileai_core.pairs:PairSet", doing="building preference pairs")
def dpo_pairs(
        rollouts: Annotated[Records, Field(description=(
            "The policy's own graded rollouts on the training tasks (split first): each "
            "{\"task_id\", \"messages\": the prompt then the reply (or \"prompt\" + "
            "\"completion\"), \"reward\", \"category\", \"model\"}."),
            examples=["train_rollouts.jsonl"])], *,
        field: CategoryField = CATEGORY_FIELD,
        threshold: Threshold = None,
        min_margin: Annotated[float, Field(gt=0, le=MAX_SCORE, allow_inf_nan=False, description=(
            "Chosen must beat rejected by at least this reward."))] = DPO_MIN_MARGIN,
        per_task: Annotated[int, Field(ge=1, le=64, description=(
            "At most this many pairs per task, each reply used once."))] = PAIRS_PER_TASK,
        constructed: Annotated[OptionalRecords, Field(description=(
            "Only when the user asked for constructed contrast: rejected replies made from the "
            "failure a category without contrast is about, [{\"task_id\", \"rejected\": text, "
            "\"reward\": its grade (optional)}]; each is paired with the policy's best passing "
            "reply on that task and labelled `constructed`, never on-policy."))] = None,
        model: Annotated[str | None, Field(max_length=500, description=(
            "The policy's id: a rollout from another model is refused (its pairs would not be "
            "on-policy)."))] = None,
        out: Annotated[OptionalOut, Field(description=(
            "Optional: write the pairs here (JSONL, TRL's conversational preference rows) and "
            "leave them out of the answer."), examples=["pairs.jsonl"])] = None,
        overwrite: Overwrite = False, level: Level = CONFIDENCE_LEVEL, ctx: Context = HERE):
    from ..io import write_jsonl  # lazy: loads with the call
    from ..pairs import dpo_pairs as pairs  # lazy: loads with the call

    found = pairs(rollouts, field=field,
                  threshold=PASS_THRESHOLD if threshold is None else threshold,
                  min_margin=min_margin, per_task=per_task, constructed=constructed,
                  model=model, level=level)
    if out is None:
        return found
    write_jsonl(out, found.pairs, overwrite=overwrite)
    return found.model_copy(update={"pairs": [], "path": ctx.relative(out)})


@operation(
    cli="dpo-data", toolset="training", effect=WRITES, title="Write the DPO recipe's data folder",
    description=(
        "The folder the dpo recipe trains on (launch_run with it as its data): pairs.jsonl, the held-out asks "
        "frozen as holdout-<hash>.jsonl (one per task), grader.py, optional settings.json. "
        "Refuses pairs whose task is held out."),
    result="whileai_core.pairs:DPOData", doing="writing the DPO data folder")
def write_dpo_data(
        pairs: Annotated[Records, Field(description="The pairs dpo_pairs wrote (its `out`).",
                                        examples=["pairs.jsonl"])],
        out_dir: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "The data folder to write."), examples=["dpo-data"]),
            Arg(OUT, metavar="DIR", writes="folder")], *,
        holdout: Annotated[str | list[dict[str, Any]], Field(description=(
            "The held-out tasks' records (one or more per task, with `messages`): frozen into "
            "the folder as holdout-<hash>.jsonl, one ask per task. " + RECORDS_FORM + "."),
            examples=["holdout.jsonl"]), Arg(SOURCE, metavar="FILE")],
        grader: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "Your grader file (grade(ask, reply) -> float, 1.0 a pass), copied into the folder "
            "as grader.py."), examples=["grader.py"]), Arg(PATH, metavar="FILE")],
        settings: Annotated[dict[str, Any] | None, Field(max_length=100, description=(
            "Optional DPO recipe settings for this data, e.g. {\"model\": \"Qwen/Qwen3-8B\", "
            "\"beta\": 0.1}; written as settings.json (at the shell: --settings KEY=VALUE "
            "...)."))] = None,
        overwrite: Overwrite = False, ctx: Context = HERE):
    from ..pairs import write_dpo_data as write  # lazy: loads with the call

    return write(pairs, out_dir, holdout=holdout, grader=grader, settings=settings,
                 overwrite=overwrite, root=ctx.root)


@operation(
    toolset="training", effect=READS, title="Plan a GRPO run: loss, balance, control arms",
    description=(
        "From the base model's graded rows: the loss variant's TRL 1.16 fields and recipe flags "
        "(bnpo, grpo, dr_grpo, dapo), each category's share and split tasks, the --balance share "
        "when one is rare, and the arms: the method's tasks, a random selection of as many, and "
        "on a Qwen2.5/Qwen3 base a random-reward arm."),
    result="whileai_core.methods.grpo_plan:GRPOPlan", doing="planning a GRPO run")
def grpo_plan(
        rows: Rows, *,
        model: Annotated[Model, Field(description="The base model to train.",
                                      examples=["Qwen/Qwen2.5-1.5B-Instruct"])],
        loss: Annotated[Literal[GRPO_LOSS_TYPES], Field(description=(  # type: ignore[valid-type]
            "The loss variant (TRL 1.16's loss type): bnpo (the recipe's default), grpo, "
            "dr_grpo (adds --no-scale-rewards), dapo (clip-higher 0.28, overlong mask, "
            "num_iterations 2 so the clip binds)."))] = GRPO_LOSS_TYPE,
        num_iterations: Annotated[int | None, Field(ge=1, le=16, description=(
            "Optimizer steps per generation batch; null: 2 for dapo, else 1."))] = None,
        balance: Annotated[float | None, Field(gt=0, le=0.5, allow_inf_nan=False, description=(
            "Repeat the prompts of any category under this share of the tasks; null: never."))
        ] = GRPO_BALANCE_SHARE,
        field: CategoryField = CATEGORY_FIELD,
        tasks: Annotated[OptionalRecords, Field(description=(
            "Optional: the task file holding each task's category (else the rows carry it)."))
        ] = None,
        seed: Annotated[Seed, Field(description=(
            "Seed of the random-selection arm; null: a fresh seed (the plan reports it)."))
        ] = SPLIT_SEED,
        threshold: Threshold = None):
    from ..methods.grpo_plan import grpo_plan as plan  # lazy: numpy loads on the call

    return plan(rows, model=model, loss=loss, num_iterations=num_iterations, balance=balance,
                field=field, tasks=tasks, seed=seed, threshold=threshold)

