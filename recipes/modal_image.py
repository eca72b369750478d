"""The container image of the TRL recipes (GRPO and DPO): pinned trainers plus this repository's code.

Also their volumes (the recipe's runs volume at ``/runs``, the shared hub cache) and the two steps
every training function takes in the container: load the policy, save the finished run.

Imported only by the Modal app modules (which import ``modal`` at the top so tests can read the
functions' GPU, image and volumes without a token). Building the image description needs no
network; Modal builds it on the first run.
"""

from __future__ import annotations

from pathlib import Path

import modal

REPO = Path(__file__).resolve().parents[1]
REMOTE_ROOT = "/root/whileai"
HF_CACHE_VOLUME = "whileai-hf-cache"
HF_CACHE_PATH = "/cache"
RUNS_PATH = "/runs"
TRAIN_TIMEOUT_S = 4 * 3600

# TRL 1.16 with the transformers it supports (< 5.18); torch from PyPI is the CUDA build there.
TRAIN_PACKAGES = (
    "torch==2.13.0", "transformers>=4.56,<5.18", "trl==1.16.0", "peft>=0.17", "datasets>=3.0",
    "accelerate>=1.4", "numpy>=1.26", "scipy>=1.11", "pydantic>=2.6,<3", "tomli-w>=1.0",
)
_IGNORE = ["**/__pycache__", "**/*.pyc", "**/results", "**/configs"]


def trl_image() -> modal.Image:
    return (modal.Image.debian_slim(python_version="3.11")
            .pip_install(*TRAIN_PACKAGES)
            .env({"PYTHONPATH": REMOTE_ROOT, "HF_HOME": f"{HF_CACHE_PATH}/hf",
                  "TOKENIZERS_PARALLELISM": "false"})
            .add_local_dir(REPO / "whileai_core", f"{REMOTE_ROOT}/whileai_core", ignore=_IGNORE)
            .add_local_dir(REPO / "recipes", f"{REMOTE_ROOT}/recipes", ignore=_IGNORE))


def hf_cache() -> modal.Volume:
    return modal.Volume.from_name(HF_CACHE_VOLUME, create_if_missing=True)


def runs_volume(name: str) -> modal.Volume:
    return modal.Volume.from_name(name, create_if_missing=True)


def train_volumes(runs: modal.Volume) -> dict[str, modal.Volume]:
    """A training function's mounts: the recipe's runs volume and the shared hub cache."""
    return {RUNS_PATH: runs, HF_CACHE_PATH: hf_cache()}


def load_policy(model_name: str):
    """(model, tokenizer) from the hub: bf16 weights on the GPU, left padding for sampling."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_name)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(model_name, dtype=torch.bfloat16).to("cuda")
    return model, tokenizer


def save_run(out: Path, trainer, results: dict, runs: modal.Volume) -> None:
    """Save the adapter, both holdout row files and ``results.json`` under ``out``; commit ``runs``."""
    import json

    from whileai_core.io import write_atomic

    trainer.save_model(str(out / "adapter"))
    for side in ("before", "after"):
        write_atomic(out / f"holdout_{side}.jsonl", "".join(
            json.dumps(r) + "\n" for r in results[f"{side}_rows"]), overwrite=True)
    write_atomic(out / "results.json", json.dumps(results, indent=2), overwrite=True)
    runs.commit()
