"""Modal app of the SFT recipe: Qwen2.5-1.5B-Instruct + LoRA, TRL SFTTrainer, one A10G.

Imports without a Modal token. Launch it with ``python recipes/sft/run.py [flags]`` or
``launch_run("sft", data=...)``; the run lands on the ``whileai-sft-runs`` volume under
``<run-name>/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import modal

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.defaults import SFT_RUNS_VOLUME
from recipes.modal_image import (RUNS_PATH, TRAIN_TIMEOUT_S, claim_run_folder, load_policy,
                                 runs_volume, save_run, train_volumes, trl_image)
from whileai_core.defaults import SFT_GPU

app = modal.App("whileai-sft")
image = trl_image()
runs = runs_volume(SFT_RUNS_VOLUME)


@app.function(gpu=SFT_GPU, image=image, volumes=train_volumes(runs), timeout=TRAIN_TIMEOUT_S)
def train_sft(settings: dict, data: dict) -> dict:
    """Train one run from validated settings and ``SFTData.payload``; returns the results."""
    from recipes.sft.data import SFTData
    from recipes.sft.train import SFTSettings, run_sft

    config = SFTSettings.from_dict(settings)
    out = Path(RUNS_PATH) / config.run_name
    claim_run_folder(out, SFT_RUNS_VOLUME)
    model, tokenizer = load_policy(config.model)
    results, trainer = run_sft(model, tokenizer, config, SFTData.from_payload(data),
                               out / "trainer", model_label=config.model)
    save_run(out, trainer, results, runs)
    return results


if __name__ == "__main__":  # `python modal_sft.py ...` is the recipe's launcher, same flags
    from recipes.sft.run import main

    sys.exit(main())
