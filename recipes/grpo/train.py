"""GRPO + LoRA on the refund assistant: settings, trainer construction, the drift monitor, a run.

``build_grpo_trainer`` is the one place a ``GRPOTrainer`` is built (Modal, ``run.py --smoke``,
the CPU tests); ``run_grpo`` samples the holdout before and after and reads the paired delta.
The clip binds only with ``--num-iterations`` >= 2: on one update per generation batch TRL 1.16's
importance ratio is exactly 1, so ``--epsilon-high`` without it is refused. The loss variants
and what each run reports: ``recipes/grpo/README.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from recipes.defaults import (GRPO_DRIFT_LENGTH_RATIO, GRPO_LEARNING_RATE, GRPO_LORA_ALPHA,
                              GRPO_NUM_ITERATIONS, GRPO_PROMPT_SEED)
from recipes.flags import float_in, int_in
from recipes.grpo.reward import Case, refund_reward, score
from recipes.holdout import summarize
from recipes.trl_recipes import (add_lora_and_holdout_arguments, add_run_arguments,
                                 build_lora_config, prompt_counts, sample_before,
                                 settings_from_dict, settings_from_flags, train_and_holdout,
                                 train_and_sample_after)
from whileai_core.defaults import (GRPO_BETA, GRPO_EPSILON, GRPO_HOLDOUT_SAMPLES,
                                   GRPO_HOLDOUT_SHARE, GRPO_LORA_R, GRPO_LOSS_TYPE, GRPO_LOSS_TYPES,
                                   GRPO_MAX_COMPLETION_TOKENS, GRPO_MODEL, GRPO_NUM_GENERATIONS,
                                   GRPO_PROMPTS_PER_STEP, GRPO_STEPS)
from whileai_core.errors import ArgumentError


@dataclass(frozen=True)
class GRPOSettings:
    """Every knob of a run, validated by the flags (or ``check``) before any GPU starts."""

    model: str = GRPO_MODEL
    run_name: str = "grpo"
    steps: int = GRPO_STEPS
    seed: int = GRPO_PROMPT_SEED
    loss_type: str = GRPO_LOSS_TYPE
    epsilon_high: float | None = None
    num_iterations: int = GRPO_NUM_ITERATIONS
    mask_truncated: bool = False
    scale_rewards: bool = True
    beta: float = GRPO_BETA
    learning_rate: float = GRPO_LEARNING_RATE
    num_generations: int = GRPO_NUM_GENERATIONS
    prompts_per_step: int = GRPO_PROMPTS_PER_STEP
    max_completion_tokens: int = GRPO_MAX_COMPLETION_TOKENS
    lora_r: int = GRPO_LORA_R
    lora_alpha: int = GRPO_LORA_ALPHA
    holdout_share: float = GRPO_HOLDOUT_SHARE
    holdout_samples: int = GRPO_HOLDOUT_SAMPLES
    balance: float | None = None

    def check(self) -> GRPOSettings:
        """The cross-flag rules argparse cannot express; raises ``ArgumentError``."""
        if self.loss_type not in GRPO_LOSS_TYPES:
            raise ArgumentError(f"--loss-type must be one of {GRPO_LOSS_TYPES}, got "
                                f"{self.loss_type!r}", fix=f"e.g. --loss-type {GRPO_LOSS_TYPE}")
        if self.epsilon_high is not None and self.epsilon_high < GRPO_EPSILON:
            raise ArgumentError(f"--epsilon-high {self.epsilon_high} is below the lower clip "
                                f"epsilon {GRPO_EPSILON}: the upper bound must be >= it",
                                fix="omit "
                                "it (symmetric clip) or use DAPO's 0.28")
        if self.epsilon_high is not None and self.num_iterations < 2:
            raise ArgumentError(
                f"--epsilon-high {self.epsilon_high} never binds with --num-iterations "
                f"{self.num_iterations}: with one update per generation batch TRL 1.16's "
                "importance ratio is exactly 1, so nothing is clipped", fix="add "
                "--num-iterations 2 (each batch trains two steps, the second off-policy)")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GRPOSettings:
        return settings_from_dict(cls, data, recipe="GRPO").check()


def add_grpo_arguments(parser: argparse.ArgumentParser) -> None:
    d = GRPOSettings()
    add_run_arguments(
        parser, d, seed_help="fixes the prompt set, the holdout and the trainer (default %(default)s)")
    add = parser.add_argument
    add("--loss-type", choices=GRPO_LOSS_TYPES, default=d.loss_type,
        help="loss aggregation (default %(default)s)")
    add("--epsilon-high", type=float_in(GRPO_EPSILON, 10.0), default=None,
        help=f"upper clip bound, >= epsilon {GRPO_EPSILON} (DAPO: 0.28; default: symmetric)")
    add("--num-iterations", type=int_in(1, 16), default=d.num_iterations,
        help="optimizer steps per generation batch, the GRPO paper's mu (default %(default)s; "
             "the clip binds only from the second, so --epsilon-high needs >= 2)")
    add("--mask-truncated", action="store_true",
        help="leave replies cut at the token cap out of the loss (DAPO's overlong mask)")
    add("--no-scale-rewards", dest="scale_rewards", action="store_false",
        help="do not divide advantages by the group's reward std (Dr.GRPO)")
    add("--beta", type=float_in(0.0, 1.0), default=d.beta,
        help="KL coefficient to the adapter-off reference (default %(default)s)")
    add("--learning-rate", type=float_in(0.0, 1e-2, low_open=True), default=d.learning_rate,
        help="AdamW learning rate for the LoRA weights (default %(default)s)")
    add("--num-generations", type=int_in(2, 64), default=d.num_generations,
        help="samples per prompt, the group (default %(default)s; 1 gives zero advantage)")
    add("--prompts-per-step", type=int_in(1, 256), default=d.prompts_per_step,
        help="prompts per optimizer step (default %(default)s)")
    add("--max-completion-tokens", type=int_in(8, 8192), default=d.max_completion_tokens,
        help="token cap per reply, training and holdout (default %(default)s)")
    add_lora_and_holdout_arguments(parser, d)


def settings_from_args(args: argparse.Namespace) -> GRPOSettings:
    return settings_from_flags(GRPOSettings, args).check()


def build_grpo_config(settings: GRPOSettings, output_dir: str | Path, *, cpu: bool = False):
    """TRL ``GRPOConfig`` from the settings: a step is ``prompts_per_step`` groups of samples."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(output_dir), max_steps=settings.steps, seed=settings.seed,
        learning_rate=settings.learning_rate, beta=settings.beta, loss_type=settings.loss_type,
        epsilon=GRPO_EPSILON, epsilon_high=settings.epsilon_high,
        num_iterations=settings.num_iterations,
        mask_truncated_completions=settings.mask_truncated,
        scale_rewards="group" if settings.scale_rewards else "none",
        num_generations=settings.num_generations,
        per_device_train_batch_size=settings.num_generations,
        gradient_accumulation_steps=settings.prompts_per_step,
        max_completion_length=settings.max_completion_tokens, temperature=1.0,
        remove_unused_columns=False, logging_steps=1, report_to="none", save_strategy="no",
        bf16=not cpu, use_cpu=cpu, gradient_checkpointing=not cpu, disable_tqdm=cpu)


def build_grpo_trainer(model, tokenizer, train_records: Sequence[dict], settings: GRPOSettings,
                       output_dir: str | Path, *, cpu: bool = False, callbacks: Sequence = (),
                       reward_funcs=None, lora: bool = True):
    """The ``GRPOTrainer`` every path trains: the refund reward, LoRA, the recipe's config.

    The reference for ``beta`` is the adapter-off model, so no second copy of the weights is
    loaded. ``reward_funcs`` replaces the refund reward; ``lora=False`` trains every weight.
    """
    from datasets import Dataset
    from trl import GRPOTrainer

    dataset = Dataset.from_list([{"prompt": r["prompt"], "category": r["category"],
                                  "order_id": r["order_id"], "task_id": r["task_id"]}
                                 for r in train_records])
    return GRPOTrainer(model=model, reward_funcs=reward_funcs or refund_reward,
                       args=build_grpo_config(settings, output_dir, cpu=cpu),
                       train_dataset=dataset, processing_class=tokenizer,
                       peft_config=build_lora_config(settings) if lora else None,
                       callbacks=list(callbacks))


# the drift history's fields and the TRL 1.16 log keys they come from
_LOGGED = {"reward": "reward", "reward_std": "reward_std", "mean_length": "completions/mean_length",
           "clipped_ratio": "completions/clipped_ratio", "kl": "kl",
           "clip_ratio": "clip_ratio/region_mean", "grad_norm": "grad_norm"}


def drift_monitor(length_ratio: float = GRPO_DRIFT_LENGTH_RATIO):
    """A ``TrainerCallback`` that logs reward and reply length per step and flags length drift:
    the refund reward prices length only off topic, so a policy can drift long (or short) while
    the reward climbs. It names each step whose mean length left [first / ratio, first * ratio].
    """
    from transformers import TrainerCallback

    class DriftMonitor(TrainerCallback):
        def __init__(self) -> None:
            self.history: list[dict] = []
            self.alarms: list[str] = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            # every optimizer step logs its loss; only a step that generated logs the rewards
            # and lengths (with --num-iterations N, one step in N): None in the others
            if not logs or "loss" not in logs:
                return
            point = {"step": int(state.global_step)}
            point.update({name: (float(logs[key]) if key in logs else None)
                          for name, key in _LOGGED.items()})
            self.history.append(point)
            first = self.history[0]["mean_length"]
            now = point["mean_length"]
            if first and now is not None and not (first / length_ratio <= now <= first * length_ratio):
                self.alarms.append(f"step {point['step']}: mean reply length {now:.1f} tokens "
                                   f"vs {first:.1f} at step {self.history[0]['step']} "
                                   f"(outside x{length_ratio:g})")

        def report(self) -> dict:
            return {"length_ratio": length_ratio, "history": self.history, "alarms": self.alarms}

    return DriftMonitor()


def clip_report(history: Sequence[dict], num_iterations: int) -> dict:
    """How often the PPO clip bound: TRL 1.16's ``clip_ratio/region_mean``, the share of
    completion tokens whose ratio left [1 - epsilon, 1 + epsilon_high] on the side that stops the
    gradient. At ``num_iterations`` 1 it is 0 by construction."""
    ratios = [p["clip_ratio"] for p in history if p["clip_ratio"] is not None]
    return {"num_iterations": num_iterations, "clip_ratio": ratios,
            "steps_clipped": sum(r > 0 for r in ratios), "clip_ratio_max": max(ratios, default=0.0),
            "can_bind": num_iterations >= 2}


def _refund_grade(reply: str, record: dict) -> float:
    return score(reply, Case(record["category"], record["order_id"] or None))


def run_grpo(model, tokenizer, settings: GRPOSettings, output_dir: str | Path, *,
             records: Sequence[dict], model_label: str, cpu: bool = False,
             train_categories: Sequence[str] | None = None) -> tuple[dict, object]:
    """Holdout before, train, holdout after; returns (results, trainer). Saving is the caller's.
    ``train_categories`` keeps only those categories in the train split, never the holdout."""
    train, holdout = train_and_holdout(records, settings)
    if train_categories is not None:
        train = [r for r in train if r["category"] in train_categories]
    from whileai_core.hacking.watch import WATCH_FILE

    from recipes.watch import watch_callback

    before = sample_before(model, tokenizer, holdout, settings, model_label=model_label)
    monitor = drift_monitor()
    # watch.jsonl in the run's folder, for watch_run(run_id); it samples nothing of its own here
    watch = watch_callback(tokenizer, holdout, _refund_grade, out=Path(output_dir) / WATCH_FILE,
                           start_rows=before, sample_at_end=False)
    trainer = build_grpo_trainer(model, tokenizer, train, settings, output_dir, cpu=cpu,
                                 callbacks=[monitor, watch], reward_funcs=watch.tap(refund_reward))
    after, wall, updates = train_and_sample_after(trainer, tokenizer, holdout, settings,
                                                  model_label=model_label)
    watch.finish(after, int(trainer.state.global_step))
    updates["clip"] = clip_report(monitor.history, settings.num_iterations)
    results = {
        "recipe": "grpo", "settings": settings.to_dict(),
        "prompts": prompt_counts(records, train, holdout),
        "train_steps": int(trainer.state.global_step), "train_wall_clock_s": round(wall, 3),
        "updates": updates, "drift": monitor.report(), "summary": summarize(before, after),
        "before_rows": before, "after_rows": after,
    }
    return results, trainer
