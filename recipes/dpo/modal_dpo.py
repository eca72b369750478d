"""Modal app of the DPO recipe: Qwen2.5-1.5B-Instruct + LoRA, TRL DPOTrainer, one A10G.

Imports without a Modal token (tests read ``train_dpo``'s GPU, image and volumes). Launch with
``python recipes/dpo/run.py [flags]``. Adapters, ``results.json``, the pairs and both holdout row
files land on the ``whileai-dpo-runs`` volume under ``<run-name>/``; ``--from-run NAME`` starts
from ``<NAME>/adapter`` on the same volume.
"""

from __future__ import annotations

import sys
from pathlib import Path

import modal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.modal_image import HF_CACHE_PATH, hf_cache, trl_image
from whileai_core.defaults import DPO_RUNS_VOLUME, GRPO_GPU

RUNS_PATH = "/runs"
app = modal.App("whileai-dpo")
image = trl_image()
runs = modal.Volume.from_name(DPO_RUNS_VOLUME, create_if_missing=True)


@app.function(gpu=GRPO_GPU, image=image, volumes={RUNS_PATH: runs, HF_CACHE_PATH: hf_cache()},
              timeout=4 * 3600)
def train_dpo(settings: dict, prompts: list[dict]) -> dict:
    """One DPO round from validated settings and a prompt set; returns ``results.json``'s data."""
    import json

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recipes.dpo.train import DPOSettings, run_dpo
    from whileai_core.errors import ConfigError
    from whileai_core.io import write_atomic

    config = DPOSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    start = None
    if config.from_run:
        start = Path(RUNS_PATH) / config.from_run / "adapter"
        if not (start / "adapter_config.json").is_file():
            raise ConfigError(f"--from-run {config.from_run}: no adapter at {start} on volume "
                              f"{DPO_RUNS_VOLUME}. Fix: name a finished DPO run")
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(config.model, dtype=torch.bfloat16).to("cuda")
    label = config.model
    if start is not None:
        model = PeftModel.from_pretrained(model, str(start), is_trainable=True)
        label = f"{config.model}+lora:{config.from_run}"
    results, trainer = run_dpo(model, tokenizer, config, out / "trainer", records=prompts,
                               model_label=label)
    trainer.save_model(str(out / "adapter"))
    for side in ("before", "after"):
        write_atomic(out / f"holdout_{side}.jsonl", "".join(
            json.dumps(r) + "\n" for r in results[f"{side}_rows"]), overwrite=True)
    write_atomic(out / "results.json", json.dumps(results, indent=2), overwrite=True)
    runs.commit()
    return results


if __name__ == "__main__":  # `python modal_dpo.py ...` is the recipe's launcher, same flags
    from recipes.dpo.run import main

    sys.exit(main())
