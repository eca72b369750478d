"""Modal app of the GRPO recipe: Qwen2.5-1.5B-Instruct + LoRA, TRL GRPOTrainer, one A10G.

Imports without a Modal token. Launch it with ``python recipes/grpo/run.py [flags]``; the run
lands on the ``whileai-grpo-runs`` volume under ``<run-name>/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import modal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.defaults import GRPO_RUNS_VOLUME
from recipes.modal_image import (RUNS_PATH, TRAIN_TIMEOUT_S, claim_run_folder, load_policy,
                                 runs_volume, save_run, train_volumes, trl_image)
from whileai_core.defaults import GRPO_GPU

app = modal.App("whileai-grpo")
image = trl_image()
runs = runs_volume(GRPO_RUNS_VOLUME)


@app.function(gpu=GRPO_GPU, image=image, volumes=train_volumes(runs), timeout=TRAIN_TIMEOUT_S)
def train_grpo(settings: dict, prompts: list[dict]) -> dict:
    """Train one run from validated settings and a prompt set; returns ``results.json``'s data."""
    from recipes.grpo.train import GRPOSettings, run_grpo

    config = GRPOSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    claim_run_folder(out, GRPO_RUNS_VOLUME)
    model, tokenizer = load_policy(config.model)
    results, trainer = run_grpo(model, tokenizer, config, out / "trainer", records=prompts,
                                model_label=config.model)
    save_run(out, trainer, results, runs)
    return results


if __name__ == "__main__":  # `python modal_grpo.py ...` is the recipe's launcher, same flags
    from recipes.grpo.run import main

    sys.exit(main())
