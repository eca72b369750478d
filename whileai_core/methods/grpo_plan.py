"""A GRPO run planned from the base model's graded rows: the loss variant, the categories that
need ``--balance``, and the control arms, before any GPU.

The loss variants are TRL 1.16's ``GRPOConfig`` fields (``loss_type`` default ``"dapo"``,
``scale_rewards`` ``"group"``, ``epsilon`` 0.2, ``epsilon_high`` None, i.e. ``epsilon``,
``num_iterations`` 1, ``mask_truncated_completions`` False), as ``recipes/grpo`` exposes them:

- ``bnpo`` (the recipe's default): token-level loss normalised by the local batch's active tokens;
- ``grpo``: the original per-sequence mean [1], which favours short replies;
- ``dr_grpo`` with ``scale_rewards="none"``: Dr.GRPO [2], neither the length nor the group's
  reward std scales the advantage, so a near-unanimous hard group is not amplified; its steps
  are smaller at a fixed learning rate: a knob to tune, not a free upgrade;
- ``dapo`` with ``epsilon_high`` 0.28, ``mask_truncated_completions`` and ``num_iterations`` 2:
  DAPO's clip-higher and overlong mask [3]. The clip acts on the ratio to the sampling policy,
  exactly 1 on a batch's first update in TRL 1.16: without a second update it never binds.

``--balance SHARE`` repeats the training prompts of any category under ``SHARE`` of the split: a
group-relative update learns from a prompt only when it samples it, so a rare category is learned
last. Two control arms make the gain mean something: as many tasks chosen at random (the method
must beat its own selection chosen blind), and on a Qwen2.5/Qwen3 base a random reward, since
those bases gain under random rewards when the eval leaks into pretraining [4].

[1] Shao et al. (2024). DeepSeekMath. arXiv:2402.03300.
[2] Liu et al. (2025). Understanding R1-Zero-Like Training: A Critical Perspective.
    arXiv:2503.20783.
[3] Yu et al. (2025). DAPO. arXiv:2503.14476.
[4] Shao et al. (2025). Spurious Rewards: Rethinking Training Signals in RLVR. arXiv:2506.10947.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from ..categories import task_categories
from ..defaults import (BOOTSTRAP_SEED, CATEGORY_FIELD, CONFIDENCE_LEVEL, GRPO_BALANCE_SHARE,
                        GRPO_DAPO_EPSILON_HIGH, GRPO_EPSILON, GRPO_LOSS_TYPE, GRPO_LOSS_TYPES,
                        SPLIT_SEED)
from ..errors import ArgumentError
from ..operations import READS, operation
from ..operations.args import Arg, CategoryField, Model, OptionalRecords, Rows, Seed, Threshold
from ..result import Result, fmt_rate
from ..stats import Rate
from ..rows import load_rows
from ..stats import pass_rate

LossType = Literal["grpo", "bnpo", "dr_grpo", "dapo"]
RANDOM_REWARD_BASES = ("qwen2.5", "qwen3")
PURPOSE = {
    "bnpo": "token-level, normalised over the local batch: the recipe's default and the seed's "
            "measured runs",
    "grpo": "the original per-sequence mean; favours short replies",
    "dr_grpo": "Dr.GRPO: no length or std scaling, so hard near-unanimous groups are not "
               "amplified; smaller steps at the same learning rate (raise it)",
    "dapo": "DAPO: clip-higher (epsilon_high 0.28) with a second update per batch so the clip "
            "binds, and the overlong mask",
}


class LossVariant(Result):
    name: LossType
    config: dict[str, Any] = Field(description="the TRL 1.16 GRPOConfig fields it sets")
    flags: list[str] = Field(description="the GRPO recipe's flags for it")
    purpose: str


class CategoryShare(Result):
    category: str
    n_tasks: int
    share: float
    n_split: int = Field(description="tasks the base both passes and fails: GRPO's gradient")
    pass_rate: Rate
    rare: bool


class Arm(Result):
    name: Literal["method", "random_selection", "random_reward"]
    what: str
    n_tasks: int
    tasks: list[str]


class GRPOPlan(Result):
    model: str
    loss: LossVariant
    variants: list[LossVariant]
    categories: list[CategoryShare]
    balance: float | None = Field(description="the --balance share to use (None: no rare "
                                              "category)")
    arms: list[Arm]
    seed: int = Field(description="the seed of the random-selection arm")
    flags: list[str]
    command: str
    notes: list[str] = []
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("categories",)

    def bounded(self, limit: int) -> GRPOPlan:
        arms = [a.model_copy(update={"tasks": a.tasks[:limit]}) for a in self.arms]
        return Result.bounded(self.model_copy(update={"arms": arms}), limit)

    def render(self) -> str:
        lines = [f"GRPO for {self.model}: loss {self.loss.name} ({self.loss.purpose})",
                 f"command: {self.command}", "by category (share of the tasks; split tasks):"]
        lines += [f"  {c.category:16} {c.n_tasks:4d} ({c.share:.0%}); {c.n_split} split; pass@1 "
                  f"{fmt_rate(c.pass_rate.value, c.pass_rate.ci, c.pass_rate.n_tasks)}"
                  + ("  <- rare" if c.rare else "") for c in self.categories]
        lines.append("arms: " + "; ".join(f"{a.name} ({a.n_tasks} tasks): {a.what}"
                                          for a in self.arms) + f" (seed {self.seed})")
        lines.append("variants: " + "; ".join(f"{v.name} {' '.join(v.flags) or '(default)'}"
                                              for v in self.variants))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def loss_variant(name: str, num_iterations: int | None = None) -> LossVariant:
    """The TRL fields and recipe flags of one loss variant (module docstring)."""
    if name not in GRPO_LOSS_TYPES:
        raise ArgumentError(f"`loss` must be one of {', '.join(GRPO_LOSS_TYPES)}, got {name!r}",
                            fix=f"e.g. {GRPO_LOSS_TYPE!r}")
    if num_iterations is not None and (isinstance(num_iterations, bool)
                                       or not isinstance(num_iterations, int)
                                       or not 1 <= num_iterations <= 16):
        raise ArgumentError(f"`num_iterations` must be an integer in [1, 16], got "
                            f"{num_iterations!r}")
    config: dict[str, Any] = {"loss_type": name, "epsilon": GRPO_EPSILON}
    flags = [] if name == GRPO_LOSS_TYPE else ["--loss-type", name]
    if name == "dr_grpo":
        config["scale_rewards"] = "none"
        flags.append("--no-scale-rewards")
    iterations = num_iterations or (2 if name == "dapo" else 1)
    if name == "dapo":
        if iterations < 2:
            raise ArgumentError(f"dapo's clip-higher never binds with num_iterations "
                                f"{iterations}: TRL 1.16's ratio is exactly 1 on a batch's first "
                                "update", fix="num_iterations=2 (or omit it)")
        config.update(epsilon_high=GRPO_DAPO_EPSILON_HIGH, mask_truncated_completions=True)
        flags += ["--epsilon-high", f"{GRPO_DAPO_EPSILON_HIGH:g}", "--mask-truncated"]
    config["num_iterations"] = iterations
    if iterations != 1:
        flags += ["--num-iterations", str(iterations)]
    return LossVariant(name=name, config=config, flags=flags, purpose=PURPOSE[name])


def _pick(tasks: list[str], n: int, seed: int) -> list[str]:
    ranked = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}\x00control\x00{t}".encode())
                    .hexdigest())
    return sorted(ranked[:n])


@operation(
    toolset="training", effect=READS, title="Plan a GRPO run: loss, balance, control arms",
    description=(
        "From the base model's graded rows: the loss variant's TRL 1.16 fields and recipe flags "
        "(bnpo, grpo, dr_grpo, dapo), each category's share and split tasks, the --balance share "
        "when one is rare, and the arms: the method's tasks, a random selection of as many, and "
        "on a Qwen2.5/Qwen3 base a random-reward arm."),
    doing="planning a GRPO run")
def grpo_plan(
        rows: Rows, *,
        model: Annotated[Model, Field(description="The base model to train.",
                                      examples=["Qwen/Qwen2.5-1.5B-Instruct"])],
        loss: Annotated[LossType, Field(description=(
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
        threshold: Threshold = None,
        level: Annotated[float, Arg(cli=False, mcp=False)] = CONFIDENCE_LEVEL) -> GRPOPlan:
    """Plan a GRPO run from the base model's graded rows on the training tasks (module
    docstring); a None ``seed`` draws a fresh one, reported."""
    if not isinstance(model, str) or not model.strip():
        raise ArgumentError(f"`model` must be the base model's id, got {model!r}")
    variant = loss_variant(loss, num_iterations)
    if seed is None:  # a fresh draw, reported so the same arm can be drawn again
        import secrets

        seed = secrets.randbelow(2**63)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ArgumentError(f"`seed` must be a non-negative integer, got {seed!r}", fix="e.g. "
                            f"seed={SPLIT_SEED}")
    if balance is not None and (isinstance(balance, bool) or not isinstance(balance, (int, float))
                                or not 0 < balance <= 0.5):
        raise ArgumentError(f"`balance` must be a share in (0, 0.5] or null, got {balance!r}",
                            fix=f"e.g. {GRPO_BALANCE_SHARE}")
    data = load_rows(rows, threshold=threshold)
    rates = data.per_task()
    split = [t for t in data.task_ids if 0.0 < rates[t] < 1.0]
    lines = _category_shares(data, rates, task_categories(data, field=field, tasks=tasks),
                             balance, level)
    rare = [c.category for c in lines if c.rare]
    qwen = any(base in model.lower() for base in RANDOM_REWARD_BASES)
    flags = list(variant.flags) + (["--balance", f"{balance:g}"] if rare else [])
    notes = []
    if rare:
        notes.append(f"{', '.join(rare)} under {balance:.0%} of the tasks: --balance {balance:g} "
                     "repeats their prompts in training (each at most 6 times; the held-out set "
                     "is untouched); read the category table after the run for the trade")
    if not split:
        notes.append("no task is split (every task always passes or always fails): GRPO has "
                     "no gradient here; see pick-a-method (floor or saturated)")
    if not qwen:
        notes.append("not a Qwen2.5/Qwen3 base: no random-reward arm (its contamination "
                     "signal was measured on those bases)")
    return GRPOPlan(model=model, loss=variant, variants=[loss_variant(v) for v in GRPO_LOSS_TYPES],
                    categories=lines, balance=balance if rare else None,
                    arms=_arms(list(data.task_ids), split, seed, qwen), seed=seed, flags=flags,
                    command=" ".join(["python recipes/grpo/run.py", *flags]), notes=notes)


def _category_shares(data: Any, rates: dict, categories: list[str], balance: float | None,
                     level: float) -> list[CategoryShare]:
    cats = np.asarray(categories, dtype=object)
    row_cat = cats[data.task_index]
    lines = []
    for name in sorted(set(cats.tolist())):
        ids = [t for t, c in zip(data.task_ids, cats.tolist()) if c == name]
        share = len(ids) / data.n_tasks
        lines.append(CategoryShare(category=name, n_tasks=len(ids), share=share,
                                   n_split=sum(0.0 < rates[t] < 1.0 for t in ids),
                                   pass_rate=pass_rate(data.where(row_cat == name), level,
                                                       BOOTSTRAP_SEED),
                                   rare=balance is not None and share < balance))
    return lines


def _arms(task_ids: list[str], split: list[str], seed: int, qwen: bool) -> list[Arm]:
    """The method's tasks, as many chosen blind, and on a Qwen base a random reward."""
    arms = [Arm(name="method", what="the tasks the base both passes and fails (GRPO's gradient)",
                n_tasks=len(split), tasks=split),
            Arm(name="random_selection", what="as many tasks chosen blind (seeded): the method "
                "must beat its own selection chosen at random", n_tasks=len(split),
                tasks=_pick(task_ids, len(split), seed))]
    if qwen:
        arms.append(Arm(name="random_reward", what="the method's tasks with a coin-flip reward: a "
                        "gain here is the base's pretraining, not the reward", n_tasks=len(split),
                        tasks=split))
    return arms
