"""The container image of the TRL recipes: pinned trainers plus this repository's code.

Also their volumes and the two steps every training function takes in the container: load the
policy, save the finished run. Building the image description needs no network.
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
# datasets and accelerate at TRL 1.16's own floors (its METADATA: datasets>=4.7.0,
# accelerate>=1.10.1), so pip cannot pick an older one TRL was never run with.
TRAIN_PACKAGES = (
    "torch==2.13.0", "transformers>=4.56,<5.18", "trl==1.16.0", "peft>=0.17", "datasets>=4.7",
    "accelerate>=1.10.1", "numpy>=1.26", "scipy>=1.11", "pydantic>=2.6,<3", "tomli-w>=1.0",
)
_IGNORE = ["**/__pycache__", "**/*.pyc", "**/results", "**/configs"]


def trl_image() -> modal.Image:
    return (modal.Image.debian_slim(python_version="3.11")
            .pip_install(*TRAIN_PACKAGES)
            .env({"PYTHONPATH": REMOTE_ROOT, "HF_HOME": f"{HF_CACHE_PATH}/hf",
                  "TOKENIZERS_PARALLELISM": "false"})
            .add_local_dir(REPO / "whileai_core", f"{REMOTE_ROOT}/whileai_core", ignore=_IGNORE)
            .add_local_dir(REPO / "recipes", f"{REMOTE_ROOT}/recipes", ignore=_IGNORE))


def claim_run_folder(out: Path, volume: str) -> None:
    """Refuse a run name whose folder on the runs volume already holds a finished run: training
    again would overwrite its adapter. Called before the model is loaded."""
    from whileai_core.errors import ConfigError

    finished = [name for name in ("results.json", "adapter") if (out / name).exists()]
    if finished:
        raise ConfigError(
            f"run name {out.name!r} already holds a finished run on the {volume} volume "
            f"({' and '.join(finished)}); training again would overwrite its adapter, so nothing "
            "was trained", fix=f"pick a new --run-name (e.g. {out.name}-2), or remove the old one "
            f"first: modal volume rm -r {volume} {out.name}")


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
