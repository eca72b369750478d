"""SFT + LoRA on an export_sft file: settings, the template and leak checks, the trainer, a run.

``run_sft`` is what every path runs (Modal, ``run.py --smoke``, the CPU tests): check the chat
template against every example and the training prompts against the held-out asks, sample and
grade the held-out asks, train TRL's ``SFTTrainer`` with LoRA and the loss on the completions
only, sample and grade again, and read the paired delta with ``whileai_core.compare``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from recipes.defaults import GRPO_LORA_ALPHA, SFT_LEARNING_RATE
from recipes.flags import float_in, int_in
from recipes.holdout import delta_text, rate_text, read_arm, sample_replies
from recipes.trl_recipes import (add_lora_arguments, add_run_arguments, build_lora_config,
                                 settings_from_dict, settings_from_flags, steps_for_epochs,
                                 train_measured)
from whileai_core.defaults import (GRPO_HOLDOUT_SAMPLES, GRPO_LORA_R, GRPO_MAX_COMPLETION_TOKENS,
                                   HOLDOUT_SHARE, SFT_EPOCHS, SFT_EXAMPLES_PER_STEP, SFT_MAX_LENGTH,
                                   SFT_MODEL, SPLIT_SEED)
from whileai_core.errors import ArgumentError, ConfigError

MAX_EXAMPLES_PER_PASS = 4  # examples in one forward pass on the A10G; the rest is accumulation


@dataclass(frozen=True)
class SFTSettings:
    """Every knob of a run, validated by the flags before any GPU starts."""

    model: str = SFT_MODEL
    run_name: str = "sft"
    epochs: int = SFT_EPOCHS
    seed: int = SPLIT_SEED
    learning_rate: float = SFT_LEARNING_RATE
    examples_per_step: int = SFT_EXAMPLES_PER_STEP
    max_length: int = SFT_MAX_LENGTH
    max_completion_tokens: int = GRPO_MAX_COMPLETION_TOKENS
    lora_r: int = GRPO_LORA_R
    lora_alpha: int = GRPO_LORA_ALPHA
    holdout_samples: int = GRPO_HOLDOUT_SAMPLES
    holdout_share: float = HOLDOUT_SHARE

    def check(self) -> SFTSettings:
        """What a settings file can get wrong that the flags' types would have refused."""
        limits = {"epochs": (1, 100), "examples_per_step": (1, 512), "max_length": (32, 32768),
                  "max_completion_tokens": (8, 8192), "lora_r": (1, 512), "lora_alpha": (1, 1024),
                  "holdout_samples": (1, 64), "seed": (0, 2**31 - 1)}
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ArgumentError(f"SFT setting `{name}` must be an integer in [{low}, {high}], "
                                    f"got {value!r}")
        for name, low, high in (("learning_rate", 0.0, 1e-2), ("holdout_share", 0.0, 0.5)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not low < value <= high:
                raise ArgumentError(f"SFT setting `{name}` must be a number in ({low:g}, "
                                    f"{high:g}], got {value!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ArgumentError(f"SFT setting `model` must be a model id, got {self.model!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SFTSettings:
        return settings_from_dict(cls, data, recipe="SFT").check()


def add_sft_arguments(parser: argparse.ArgumentParser) -> None:
    d = SFTSettings()
    add_run_arguments(parser, d, seed_help="trainer and sampling seed; the demo's prompt set and "
                                           "task split (default %(default)s)")
    add = parser.add_argument
    add("--learning-rate", type=float_in(0.0, 1e-2, low_open=True), default=d.learning_rate,
        help="AdamW learning rate for the LoRA weights (default %(default)s)")
    add("--examples-per-step", type=int_in(1, 512), default=d.examples_per_step,
        help="prompt-completion examples per optimizer step (default %(default)s)")
    add("--max-length", type=int_in(32, 32768), default=d.max_length,
        help="tokens per example, prompt and reply; longer ones are cut (default %(default)s)")
    add("--max-completion-tokens", type=int_in(8, 8192), default=d.max_completion_tokens,
        help="token cap per sampled held-out reply (default %(default)s)")
    add_lora_arguments(parser, d)
    add("--holdout-samples", type=int_in(1, 64), default=d.holdout_samples,
        help="samples per held-out ask, before and after (default %(default)s)")
    add("--holdout-share", type=float_in(0.0, 0.5, low_open=True), default=d.holdout_share,
        help="the refund demo only: share of tasks split_by_task holds out (default %(default)s)")
    add("--data", type=Path, default=None, metavar="DIR",
        help="your data folder: train.jsonl (export_sft), holdout.jsonl (held-out traces), "
             "grader.py (grade(ask, reply)); default: the refund demo")


def settings_from_args(args: argparse.Namespace) -> SFTSettings:
    return settings_from_flags(SFTSettings, args)


def with_data_settings(settings: SFTSettings, data, *, given: set[str] = frozenset()) -> SFTSettings:
    """``settings`` with the data folder's ``settings.json`` applied; a field in ``given`` (a flag
    set on the command line) keeps its value."""
    chosen = {k: v for k, v in (data.settings or {}).items() if k not in given}
    return SFTSettings.from_dict({**settings.to_dict(), **chosen}) if chosen else settings


# --- checks before training --------------------------------------------------------------------

def check_no_leak(conversations: Sequence[dict], holdout: Sequence[dict]) -> dict:
    """Refuse a training prompt that is a held-out ask (verbatim, or by n-gram overlap): the
    recipe's own check that the skill decontaminated before export."""
    from whileai_core import decontaminate

    train = [{"task_id": f"train:{c['source']}", "messages": c["messages"]} for c in conversations]
    held = [{"task_id": h["task_id"], "messages": h["messages"]} for h in holdout]
    result = decontaminate(train, held)
    leaks = [d for d in result.dropped if d.reason != "held_out_task"]
    if leaks:
        first = leaks[0]
        raise ConfigError(
            f"{first.task_id.removeprefix('train:')}: its prompt matches held-out task "
            f"{first.matched_task!r} ({first.reason.replace('_', ' ')}, overlap "
            f"{first.overlap:.2f}); {len(leaks)} training conversation(s) leak the held-out test",
            fix="run decontaminate(train, holdout) before export_sft")
    return {"checked": result.n_in, "leaks": 0, "ngram": result.ngram,
            "max_overlap": result.max_overlap}


# --- the trainer -------------------------------------------------------------------------------

def build_sft_config(settings: SFTSettings, output_dir: str | Path, *, cpu: bool = False):
    from trl import SFTConfig

    per_device = max(d for d in range(1, MAX_EXAMPLES_PER_PASS + 1)
                     if settings.examples_per_step % d == 0)
    return SFTConfig(
        output_dir=str(output_dir), num_train_epochs=settings.epochs, seed=settings.seed,
        learning_rate=settings.learning_rate, per_device_train_batch_size=per_device,
        gradient_accumulation_steps=settings.examples_per_step // per_device,
        completion_only_loss=True, max_length=settings.max_length, logging_steps=1,
        report_to="none", save_strategy="no", bf16=not cpu, use_cpu=cpu,
        gradient_checkpointing=not cpu, disable_tqdm=cpu)


def build_sft_trainer(model, tokenizer, examples: Sequence[dict], settings: SFTSettings,
                      output_dir: str | Path, *, cpu: bool = False):
    """TRL's ``SFTTrainer`` with a fresh LoRA adapter on prompt-completion examples."""
    from datasets import Dataset
    from trl import SFTTrainer

    dataset = Dataset.from_list([{"prompt": e["prompt"], "completion": e["completion"]}
                                 for e in examples])
    return SFTTrainer(model=model, args=build_sft_config(settings, output_dir, cpu=cpu),
                      train_dataset=dataset, processing_class=tokenizer,
                      peft_config=build_lora_config(settings))


def mask_report(trainer, tokenizer, examples: Sequence[dict]) -> dict:
    """What the loss sees: the trainer's own ``labels`` (-100: no loss) against each prompt's
    length tokenized here, independently of TRL."""
    from whileai_core.sft import _ids

    rows = trainer.train_dataset
    if "labels" not in rows.column_names:
        raise ConfigError("the SFT trainer's data has no labels column: TRL computed no loss "
                          "mask", fix="completion_only_loss=True on prompt-completion data")
    masked = trained = 0
    wrong: list[str] = []
    for example, ids, labels in zip(examples, rows["input_ids"], rows["labels"]):
        n_prompt = len(_ids(tokenizer, example["prompt"], add_generation_prompt=True))
        prompt_ok = all(label == -100 for label in labels[:n_prompt])
        reply_ok = labels[n_prompt:] == ids[n_prompt:] and len(ids) > n_prompt
        if not (prompt_ok and reply_ok):
            wrong.append(example["source"])
        masked += sum(label == -100 for label in labels)
        trained += sum(label != -100 for label in labels)
    return {"examples": len(rows), "prompt_tokens_masked": masked,
            "completion_tokens_trained": trained, "wrong_mask": wrong[:10],
            "n_wrong_mask": len(wrong)}


# --- sampling and reading the held-out asks ----------------------------------------------------

SHARES = ("truncated",)  # the only 0/1 field sample_graded's rows carry


def sample_graded(model, tokenizer, holdout: Sequence[dict], grade, settings: SFTSettings, *,
                  label: str) -> list[dict]:
    """``holdout_samples`` replies per held-out ask, each graded: one graded row per reply."""
    replies = sample_replies(model, tokenizer, [h["messages"] for h in holdout],
                             samples=settings.holdout_samples,
                             max_new_tokens=settings.max_completion_tokens, seed=settings.seed)
    rows = []
    for ask, group in zip(holdout, replies):
        for text, truncated in group:
            row = {"task_id": ask["task_id"], "reward": grade(ask, text),
                   "truncated": bool(truncated), "model": label, "reply": text}
            if "category" in ask:
                row["category"] = ask["category"]
            rows.append(row)
    return rows


def summarize(before: Sequence[dict], after: Sequence[dict]) -> dict:
    """Overall, and by ``category`` when every held-out ask names one."""
    summary = {"overall": read_arm(before, after, fields=SHARES), "by_category": {}}
    if before and all("category" in r for r in before):
        for category in sorted({r["category"] for r in before}):
            b = [r for r in before if r["category"] == category]
            a = [r for r in after if r.get("category") == category]
            if b and a:
                summary["by_category"][category] = read_arm(b, a, fields=SHARES)
    return summary


def render_summary(summary: dict) -> str:
    lines = []
    for name, side in [("overall", summary["overall"]), *summary["by_category"].items()]:
        delta = side["delta"]
        lines += [f"{name}:", f"  pass@1 before {rate_text(side['pass_before'])}",
                  f"  pass@1 after  {rate_text(side['pass_after'])}",
                  f"  delta {delta_text(delta)}, verdict {delta['verdict']} "
                  f"(n={delta['n_paired']} paired tasks)",
                  f"  truncated     {rate_text(side['truncated_before'])} -> "
                  f"{rate_text(side['truncated_after'])}"]
    return "\n".join(lines)


# --- one run -----------------------------------------------------------------------------------

def run_sft(model, tokenizer, settings: SFTSettings, data, output_dir: str | Path, *,
            model_label: str, cpu: bool = False,
            max_examples: int | None = None) -> tuple[dict, object]:
    """Checks, held-out before, SFT, held-out after; returns (results, trainer). ``max_examples``
    trains on the first N examples only (the smoke); the checks still read them all."""
    from recipes.sft.data import load_grader
    from whileai_core import check_chat_template, sft_examples

    examples = sft_examples(data.conversations)
    template = check_chat_template(tokenizer, examples, model=model_label,
                                   prompts=[h["messages"] for h in data.holdout])
    leak = check_no_leak(data.conversations, data.holdout)
    grade = load_grader(data.grader_source, data.grader_origin)
    train = examples if max_examples is None else examples[:max_examples]
    before = sample_graded(model, tokenizer, data.holdout, grade, settings, label=model_label)
    trainer = build_sft_trainer(model, tokenizer, train, settings, output_dir, cpu=cpu)
    masks = mask_report(trainer, tokenizer, train)
    wall, updates = train_measured(trainer)
    after = sample_graded(trainer.model, tokenizer, data.holdout, grade, settings,
                          label=f"{model_label}+lora:{settings.run_name}")
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    results = {
        "recipe": "sft", "settings": settings.to_dict(),
        "data": {"origin": data.origin, "conversations": len(data.conversations),
                 "examples": len(examples), "trained_examples": len(train),
                 "holdout_tasks": len(data.holdout), "holdout_name": data.holdout_name,
                 "grader": data.grader_origin, "settings_file": data.settings,
                 "demo": data.demo},
        "template": template.to_dict(), "leak_check": leak, "loss_mask": masks,
        "train_steps": int(trainer.state.global_step),
        "planned_steps": steps_for_epochs(len(train), settings.examples_per_step,
                                          settings.epochs),
        "train_wall_clock_s": round(wall, 3), "updates": updates, "loss_history": losses,
        "summary": summarize(before, after), "before_rows": before, "after_rows": after,
    }
    return results, trainer
