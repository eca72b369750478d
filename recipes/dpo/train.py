"""DPO + LoRA on the refund assistant: settings, pair sampling, trainer construction, a round.

A round: the GRPO recipe's split, the holdout sampled before, ``samples_per_prompt`` replies per
train prompt made into length-matched pairs (``pairs.build_pairs``), ``DPOTrainer`` with LoRA,
the holdout again after. The reference is the adapter-off model (no second copy of the weights);
with ``--from-run`` TRL keeps a frozen copy of the previous adapter as the reference, so round
two is regularised against round one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from recipes.defaults import (DPO_BETA, DPO_LEARNING_RATE, DPO_MAX_NEGATIVE_SHARE,
                              DPO_NEGATIVE_SHARE, GRPO_LORA_ALPHA, GRPO_PROMPT_SEED)
from recipes.dpo.pairs import PairSet, build_pairs
from recipes.flags import float_in, int_in
from recipes.grpo.prompts import category_counts
from recipes.holdout import sample_replies, summarize
from recipes.trl_recipes import (add_lora_and_holdout_arguments, add_run_arguments,
                                 build_lora_config, prompt_counts, sample_before,
                                 settings_from_dict, settings_from_flags, steps_for_epochs,
                                 train_and_holdout, train_and_sample_after)
from whileai_core.defaults import (DPO_EPOCHS, DPO_MAX_CHOSEN_LONGER, DPO_MIN_MARGIN,
                                   DPO_PAIRS_PER_STEP, DPO_SAMPLES_PER_PROMPT, GRPO_HOLDOUT_SAMPLES,
                                   GRPO_HOLDOUT_SHARE, GRPO_LORA_R, GRPO_MAX_COMPLETION_TOKENS,
                                   GRPO_MODEL)
from whileai_core.errors import ConfigError

MAX_PAIRS_PER_PASS = 4  # pairs in one forward pass on the A10G; the rest is gradient accumulation


@dataclass(frozen=True)
class DPOSettings:
    model: str = GRPO_MODEL
    run_name: str = "dpo"
    epochs: int = DPO_EPOCHS
    seed: int = GRPO_PROMPT_SEED
    beta: float = DPO_BETA
    learning_rate: float = DPO_LEARNING_RATE
    samples_per_prompt: int = DPO_SAMPLES_PER_PROMPT
    min_margin: float = DPO_MIN_MARGIN
    max_chosen_longer: float = DPO_MAX_CHOSEN_LONGER
    negative_share: float = DPO_NEGATIVE_SHARE
    pairs_per_step: int = DPO_PAIRS_PER_STEP
    max_completion_tokens: int = GRPO_MAX_COMPLETION_TOKENS
    lora_r: int = GRPO_LORA_R
    lora_alpha: int = GRPO_LORA_ALPHA
    holdout_share: float = GRPO_HOLDOUT_SHARE
    holdout_samples: int = GRPO_HOLDOUT_SAMPLES
    balance: float | None = None
    from_run: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> DPOSettings:
        return settings_from_dict(cls, data, recipe="DPO")


def add_dpo_arguments(parser: argparse.ArgumentParser) -> None:
    d = DPOSettings()
    add_run_arguments(
        parser, d, seed_help="prompt set, holdout, sampling and trainer seed (default %(default)s)")
    add = parser.add_argument
    add("--beta", type=float_in(0.0, 10.0, low_open=True), default=d.beta,
        help="DPO beta, strength of the pull to the reference (default %(default)s)")
    add("--learning-rate", type=float_in(0.0, 1e-2, low_open=True), default=d.learning_rate,
        help="AdamW learning rate for the LoRA weights (default %(default)s)")
    add("--samples-per-prompt", type=int_in(2, 64), default=d.samples_per_prompt,
        help="on-policy samples per train prompt for the pairs (default %(default)s)")
    add("--min-margin", type=float_in(0.0, 1.0, low_open=True), default=d.min_margin,
        help="chosen must beat rejected by this reward (default %(default)s)")
    add("--max-chosen-longer", type=float_in(0.0, 1.0, low_open=True), default=d.max_chosen_longer,
        help="chosen is longer in under this share of pairs (default %(default)s)")
    add("--negative-share", type=float_in(0.0, DPO_MAX_NEGATIVE_SHARE), default=d.negative_share,
        help="constructed-negative pairs, at most this share of all pairs "
             f"(default %(default)s, at most {DPO_MAX_NEGATIVE_SHARE})")
    add("--pairs-per-step", type=int_in(1, 256), default=d.pairs_per_step,
        help="pairs per optimizer step (default %(default)s)")
    add("--max-completion-tokens", type=int_in(8, 8192), default=d.max_completion_tokens,
        help="token cap per sampled reply (default %(default)s)")
    add_lora_and_holdout_arguments(parser, d)
    add("--from-run", default=None, metavar="RUN",
        help="start from a previous adapter: a run name on the DPO volume (Modal) or an "
             "adapter folder (--smoke)")
    add("--data", type=Path, default=None, metavar="DIR",
        help="your data folder: pairs.jsonl (dpo_pairs), the held-out asks (holdout*.jsonl), "
             "grader.py (grade(ask, reply)), optional settings.json; write it with "
             "write_dpo_data. Default: sample pairs from the refund prompt set")


def settings_from_args(args: argparse.Namespace) -> DPOSettings:
    return settings_from_flags(DPOSettings, args)


def build_dpo_config(settings: DPOSettings, output_dir: str | Path, *, cpu: bool = False):
    from trl import DPOConfig

    # pairs_per_step = per_device x accumulation exactly: the largest divisor <= MAX_PAIRS_PER_PASS
    per_device = max(d for d in range(1, MAX_PAIRS_PER_PASS + 1) if settings.pairs_per_step % d == 0)
    # epochs, not max_steps: the same number of passes whatever the pair count
    return DPOConfig(
        output_dir=str(output_dir), num_train_epochs=settings.epochs, seed=settings.seed,
        beta=settings.beta, learning_rate=settings.learning_rate,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=settings.pairs_per_step // per_device,
        logging_steps=1, report_to="none", save_strategy="no", bf16=not cpu, use_cpu=cpu,
        gradient_checkpointing=not cpu, disable_tqdm=cpu)


def pair_dataset(records: Sequence[dict], pair_set: PairSet):
    """Conversational DPO rows: the prompt's messages, one assistant turn chosen and rejected."""
    from datasets import Dataset

    prompt_of = {r["task_id"]: r["prompt"] for r in records}
    return Dataset.from_list([
        {"prompt": prompt_of[p.task_id],
         "chosen": [{"role": "assistant", "content": p.chosen}],
         "rejected": [{"role": "assistant", "content": p.rejected}]} for p in pair_set.pairs])


def build_dpo_trainer(model, tokenizer, records: Sequence[dict], pair_set: PairSet,
                      settings: DPOSettings, output_dir: str | Path, *, cpu: bool = False,
                      callbacks: Sequence = ()):
    """The ``DPOTrainer`` every path trains on the sampled pairs (see :func:`dpo_trainer`)."""
    if not pair_set.pairs:
        raise ConfigError(
            f"no preference pairs: none of {pair_set.prompts} train prompts had samples whose "
            f"rewards differ by >= {settings.min_margin}", fix="more --samples-per-prompt, a lower "
            "--min-margin, or --negative-share for constructed negatives")
    return dpo_trainer(model, tokenizer, pair_dataset(records, pair_set), settings, output_dir,
                       cpu=cpu, callbacks=callbacks)


def dpo_trainer(model, tokenizer, dataset, settings: DPOSettings, output_dir: str | Path, *,
                cpu: bool = False, callbacks: Sequence = ()):
    """TRL's ``DPOTrainer`` on conversational preference rows (``prompt``, ``chosen``,
    ``rejected``): a fresh LoRA adapter, unless ``model`` already has one (``--from-run``)."""
    from peft import PeftModel
    from trl import DPOTrainer

    peft_config = None if isinstance(model, PeftModel) else build_lora_config(settings)
    return DPOTrainer(model=model, ref_model=None, args=build_dpo_config(settings, output_dir, cpu=cpu),
                      train_dataset=dataset, processing_class=tokenizer,
                      peft_config=peft_config, callbacks=list(callbacks))


def sample_pairs(model, tokenizer, train: Sequence[dict], settings: DPOSettings) -> PairSet:
    replies = sample_replies(model, tokenizer, [r["prompt"] for r in train],
                             samples=settings.samples_per_prompt,
                             max_new_tokens=settings.max_completion_tokens, seed=settings.seed + 1)
    return build_pairs(train, [[text for text, _ in group] for group in replies],
                       min_margin=settings.min_margin, max_chosen_longer=settings.max_chosen_longer,
                       negative_share=settings.negative_share, seed=settings.seed)


def run_dpo(model, tokenizer, settings: DPOSettings, output_dir: str | Path, *,
            records: Sequence[dict], model_label: str, cpu: bool = False) -> tuple[dict, object]:
    """One round: holdout before, pairs, DPO, holdout after; returns (results, trainer)."""
    train, holdout = train_and_holdout(records, settings)
    before = sample_before(model, tokenizer, holdout, settings, model_label=model_label)
    pair_set = sample_pairs(model, tokenizer, train, settings)
    trainer = build_dpo_trainer(model, tokenizer, train, pair_set, settings, output_dir, cpu=cpu)
    after, wall, updates = train_and_sample_after(trainer, tokenizer, holdout, settings,
                                                  model_label=model_label)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    results = {
        "recipe": "dpo", "settings": settings.to_dict(),
        "prompts": prompt_counts(records, train, holdout),
        "pairs": pair_set.stats(),
        "pairs_by_category": category_counts([{"category": p.category} for p in pair_set.pairs]),
        "train_steps": int(trainer.state.global_step),
        "planned_steps": steps_for_epochs(len(pair_set.pairs), settings.pairs_per_step,
                                          settings.epochs),
        "train_wall_clock_s": round(wall, 3), "updates": updates,
        "loss_history": losses, "summary": summarize(before, after),
        "before_rows": before, "after_rows": after,
    }
    return results, trainer
