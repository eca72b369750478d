"""Modal app of the GRPO recipe: Qwen2.5-1.5B-Instruct + LoRA, TRL GRPOTrainer, one A10G.

Imports without a Modal token (tests read ``train_grpo``'s GPU, image and volumes). Launch it
with ``python recipes/grpo/run.py [flags]``, which validates every flag and checks the token
before anything starts. The adapter, ``results.json`` and both holdout row files land on the
``whileai-grpo-runs`` volume under ``<run-name>/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import modal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.modal_image import HF_CACHE_PATH, hf_cache, trl_image
from whileai_core.defaults import GRPO_GPU, GRPO_RUNS_VOLUME

RUNS_PATH = "/runs"
app = modal.App("whileai-grpo")
image = trl_image()
runs = modal.Volume.from_name(GRPO_RUNS_VOLUME, create_if_missing=True)


@app.function(gpu=GRPO_GPU, image=image, volumes={RUNS_PATH: runs, HF_CACHE_PATH: hf_cache()},
              timeout=4 * 3600)
def train_grpo(settings: dict, prompts: list[dict]) -> dict:
    """Train one run from validated settings and a prompt set; returns ``results.json``'s data."""
    import json

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recipes.grpo.train import GRPOSettings, run_grpo
    from whileai_core.io import write_atomic

    config = GRPOSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(config.model, dtype=torch.bfloat16).to("cuda")
    results, trainer = run_grpo(model, tokenizer, config, out / "trainer", records=prompts,
                                model_label=config.model)
    trainer.save_model(str(out / "adapter"))
    for side in ("before", "after"):
        write_atomic(out / f"holdout_{side}.jsonl", "".join(
            json.dumps(r) + "\n" for r in results[f"{side}_rows"]), overwrite=True)
    write_atomic(out / "results.json", json.dumps(results, indent=2), overwrite=True)
    runs.commit()
    return results


if __name__ == "__main__":  # `python modal_grpo.py ...` is the recipe's launcher, same flags
    from recipes.grpo.run import main

    sys.exit(main())
