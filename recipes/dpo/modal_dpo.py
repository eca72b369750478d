"""Modal app of the DPO recipe: Qwen2.5-1.5B-Instruct + LoRA, TRL DPOTrainer, one A10G.

Imports without a Modal token. Launch with ``python recipes/dpo/run.py [flags]``;
``train_dpo_data`` trains on a data folder's pairs (``--data``). Runs land on the
``whileai-dpo-runs`` volume under ``<run-name>/``; ``--from-run NAME`` starts from
``<NAME>/adapter`` there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import modal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.defaults import DPO_RUNS_VOLUME
from recipes.modal_image import (RUNS_PATH, TRAIN_TIMEOUT_S, claim_run_folder, load_policy,
                                 runs_volume, save_run, train_volumes, trl_image)
from whileai_core.defaults import GRPO_GPU

app = modal.App("whileai-dpo")
image = trl_image()
runs = runs_volume(DPO_RUNS_VOLUME)


@app.function(gpu=GRPO_GPU, image=image, volumes=train_volumes(runs), timeout=TRAIN_TIMEOUT_S)
def train_dpo(settings: dict, prompts: list[dict]) -> dict:
    """One DPO round from validated settings and a prompt set; returns ``results.json``'s data."""
    from peft import PeftModel

    from recipes.dpo.train import DPOSettings, run_dpo
    from whileai_core.errors import ConfigError

    config = DPOSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    claim_run_folder(out, DPO_RUNS_VOLUME)
    start = None
    if config.from_run:
        start = Path(RUNS_PATH) / config.from_run / "adapter"
        if not (start / "adapter_config.json").is_file():
            raise ConfigError(f"--from-run {config.from_run}: no adapter at {start} on volume "
                              f"{DPO_RUNS_VOLUME}", fix="name a finished DPO run")
    model, tokenizer = load_policy(config.model)
    label = config.model
    if start is not None:
        model = PeftModel.from_pretrained(model, str(start), is_trainable=True)
        label = f"{config.model}+lora:{config.from_run}"
    results, trainer = run_dpo(model, tokenizer, config, out / "trainer", records=prompts,
                               model_label=label)
    save_run(out, trainer, results, runs)
    return results


@app.function(gpu=GRPO_GPU, image=image, volumes=train_volumes(runs), timeout=TRAIN_TIMEOUT_S)
def train_dpo_data(settings: dict, data: dict) -> dict:
    """One DPO round on ``DPOData.payload``'s pairs, graded by its grader; returns the results."""
    from recipes.dpo.data import DPOData
    from recipes.dpo.from_data import run_dpo_data
    from recipes.dpo.train import DPOSettings

    config = DPOSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    claim_run_folder(out, DPO_RUNS_VOLUME)  # the default name `dpo` again: refuse, never overwrite
    model, tokenizer = load_policy(config.model)
    results, trainer = run_dpo_data(model, tokenizer, config, DPOData.from_payload(data),
                                    out / "trainer", model_label=config.model)
    save_run(out, trainer, results, runs)
    return results


if __name__ == "__main__":  # `python modal_dpo.py ...` is the recipe's launcher, same flags
    from recipes.dpo.run import main

    sys.exit(main())
