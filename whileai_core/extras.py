"""Which optional part of the install (a pyproject "extra") brings which module, and the command
that installs it: a missing module is reported as the extra to install, never as ``No module
named 'tokenizers'``. A test keeps :data:`MODULES` in step with ``pyproject.toml``.
"""

from __future__ import annotations

import importlib.util

from .bundled import CHECKOUT

DISTRIBUTION = "whileai-skills"

# import name -> the extra that installs it ("" = the core install)
MODULES: dict[str, str] = {
    "numpy": "", "scipy": "", "pydantic": "", "tomli_w": "", "mcp": "", "msgspec": "",
    "torch": "train", "transformers": "train", "trl": "train", "peft": "train",
    "datasets": "train", "tokenizers": "train", "accelerate": "train", "safetensors": "train",
    "modal": "launch",
    "vllm": "gpu",
    "matplotlib": "plot",
    "inspect_ai": "test",
    "pytest": "test", "hypothesis": "test", "skills_ref": "test", "yaml": "test",
    "xdist": "test",
    "uv": "test", "pipx": "test",
}

# what the modules of an extra must include before a run that needs it is called ready
NEEDED: dict[str, tuple[str, ...]] = {
    "train": ("torch", "transformers", "tokenizers", "trl", "peft", "datasets"),
    "launch": ("modal",),
}

CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH = "torch==2.13.0"  # the `train` extra's pin (a test keeps them equal)


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` (see :data:`NEEDED`) this interpreter cannot import."""
    absent = []
    for module in NEEDED[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                absent.append(module)
        except (ImportError, ValueError):  # a broken or half-removed install
            absent.append(module)
    return absent


def from_checkout() -> bool:
    """Whether the package runs from a source checkout (an editable install)."""
    return (CHECKOUT / "pyproject.toml").is_file()


def install_command(extra: str) -> str:
    """The pip command that installs ``extra`` into this installation."""
    if from_checkout():
        target = f"-e '.[{extra}]'" if extra else "-e ."
        return f"pip install {target} (in the checkout {CHECKOUT})"
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"


def install_fix(extra: str) -> str:
    """The sentence that says how to install ``extra``, with the CPU-torch hint for ``train``."""
    text = f"install the `{extra}` extra: {install_command(extra)}"
    if extra == "train":
        text += (f"; on a machine without an NVIDIA GPU run `pip install {TORCH} --index-url "
                 f"{CPU_TORCH_INDEX}` first, for the CPU build of torch (the default is the "
                 "CUDA build, about 3 GB)")
    return text
