"""One DPO round on a data folder's pairs (``--data``), judged by the folder's grader.

The pairs were built before the run (``whileai_core.dpo_pairs``); the recipe checks that no
pair's prompt is a held-out ask, grades the held-out asks before and after ``--epochs`` passes of
``DPOTrainer`` with LoRA, and reads the paired delta (``recipes.sft.train.summarize``). A second
round re-samples the trained policy, builds new pairs and launches again: that keeps it on-policy.
"""

from __future__ import annotations

from pathlib import Path

from recipes.dpo.train import DPOSettings, dpo_trainer
from recipes.trl_recipes import steps_for_epochs, trainable_snapshot, weight_updates
from whileai_core.errors import ArgumentError


def with_data_settings(settings: DPOSettings, data, *, given: set[str] = frozenset()) -> DPOSettings:
    """``settings`` with the folder's ``settings.json`` applied; a flag set on the command line
    (named in ``given``) keeps its value."""
    chosen = {k: v for k, v in (data.settings or {}).items() if k not in given}
    if "from_run" in chosen:
        raise ArgumentError("settings.json may not set from_run: a round two starts from new "
                            "pairs sampled from the trained policy, launched as a new run")
    return DPOSettings.from_dict({**settings.to_dict(), **chosen}) if chosen else settings


def run_dpo_data(model, tokenizer, settings: DPOSettings, data, output_dir: str | Path, *,
                 model_label: str, cpu: bool = False,
                 max_pairs: int | None = None) -> tuple[dict, object]:
    """Leak check, held-out before, DPO on the pairs, held-out after; returns (results, trainer).
    ``max_pairs`` trains on the first N pairs only (the smoke); the leak check reads them all."""
    import time

    from datasets import Dataset

    from recipes.sft.data import load_grader
    from recipes.sft.train import check_no_leak, sample_graded, summarize

    leak = check_no_leak([{"source": f"pairs.jsonl pair {i + 1}", "messages": p["prompt"]}
                          for i, p in enumerate(data.pairs)], data.holdout)
    grade = load_grader(data.grader_source, data.grader_origin)
    train = data.pairs if max_pairs is None else data.pairs[:max_pairs]
    before = sample_graded(model, tokenizer, data.holdout, grade, settings, label=model_label)
    dataset = Dataset.from_list([{k: p[k] for k in ("prompt", "chosen", "rejected")}
                                 for p in train])
    trainer = dpo_trainer(model, tokenizer, dataset, settings, output_dir, cpu=cpu)
    start = trainable_snapshot(trainer.model)
    started = time.monotonic()
    trainer.train()
    wall = time.monotonic() - started
    updates = weight_updates(trainer, start)
    after = sample_graded(trainer.model, tokenizer, data.holdout, grade, settings,
                          label=f"{model_label}+lora:{settings.run_name}")
    results = {
        "recipe": "dpo", "settings": settings.to_dict(),
        "data": {"origin": data.origin, **data.counts(), "trained_pairs": len(train),
                 "holdout_tasks": len(data.holdout), "holdout_name": data.holdout_name,
                 "grader": data.grader_origin, "settings_file": data.settings},
        "leak_check": leak, "train_steps": int(trainer.state.global_step),
        "planned_steps": steps_for_epochs(len(train), settings.pairs_per_step, settings.epochs),
        "train_wall_clock_s": round(wall, 3), "updates": updates,
        "loss_history": [h["loss"] for h in trainer.state.log_history if "loss" in h],
        "summary": summarize(before, after), "before_rows": before, "after_rows": after,
    }
    return results, trainer
