"""The container image of the TRL recipes (GRPO and DPO): pinned trainers plus this repository's code.

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
