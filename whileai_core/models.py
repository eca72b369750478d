"""What a model id says about the model: its size in billions of parameters, its base name."""

from __future__ import annotations

import re

# "Qwen3-0.6B", "Llama-3.1-8B-Instruct", "Mixtral-8x7B" (total 56B), "gemma-2-27b-it", "135M".
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")


def model_size_b(model_id: str) -> float | None:
    """Parameters in billions read from the model id, or None when the id does not say.

    Takes the last size token in the name (org names rarely carry one). "8x7B" counts all
    experts (56.0). "A3B"-style active-parameter tokens are not sizes and are skipped.
    """
    name = model_id.split("@", 1)[0].rsplit("/", 1)[-1]
    found = None
    for m in _SIZE.finditer(name.replace("_", "-")):
        experts, number, unit = m.groups()
        start = m.start()
        if start > 0 and name[start - 1] in "Aa":  # "A3B": active parameters, not the size
            continue
        value = float(number) * (int(experts) if experts else 1)
        found = value / 1000.0 if unit in "Mm" else value
    return found


def base_model(model_id: str) -> str:
    """The model id without a revision: "org/name@step-40" -> "org/name"."""
    return model_id.split("@", 1)[0].strip()
