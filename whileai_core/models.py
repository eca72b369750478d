"""What a model id says about the model: its size in billions of parameters, its base name, and
(for the models this project names) its shape from ``config.json``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# "Qwen3-0.6B", "Llama-3.1-8B-Instruct", "Mixtral-8x7B" (total 56B), "gemma-2-27b-it", "135M".
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")


def model_size_b(model_id: str) -> float | None:
    """Parameters in billions read from the model id (its last size token), or None when the id
    does not say. "8x7B" counts all experts (56.0); "A3B" (active parameters) is no size."""
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


# --- what a model's config.json says of its shape ----------------------------------------------

@dataclass(frozen=True)
class Architecture:
    """A dense decoder's shape, as its ``config.json`` on the Hugging Face hub gives it, and its
    parameter count as its model card gives it (billions, embeddings included)."""

    name: str
    params_b: float
    layers: int          # num_hidden_layers
    hidden: int          # hidden_size
    heads: int           # num_attention_heads
    kv_heads: int        # num_key_value_heads
    head_dim: int        # head_dim (hidden_size / heads where the config has none)
    intermediate: int    # intermediate_size (the SwiGLU MLP's width)
    vocab: int           # vocab_size
    max_positions: int   # max_position_embeddings: vLLM's max_model_len when none is set

    def kv_bytes_per_token(self, dtype_bytes: float = 2.0) -> float:
        """Bytes of K and V one token keeps in the cache: 2 x layers x kv_heads x head_dim x
        dtype bytes (grouped-query attention caches kv_heads, not heads)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * dtype_bytes

    def lora_params(self, rank: int) -> int:
        """Adapter parameters of rank ``rank`` on every linear projection (q, k, v, o, gate, up,
        down), each A (d_in x r) plus B (r x d_out): r x sum(d_in + d_out) per layer."""
        q_out, kv_out = self.heads * self.head_dim, self.kv_heads * self.head_dim
        per_layer = ((self.hidden + q_out) + 2 * (self.hidden + kv_out) + (q_out + self.hidden)
                     + 2 * (self.hidden + self.intermediate) + (self.intermediate + self.hidden))
        return rank * per_layer * self.layers


# Each row from the model's config.json (Qwen/<name>, meta-llama/<name> on the hub) and its
# model card's parameter count. Fine-tunes share their base's shape: a name is matched as a whole
# token inside the id ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT" is a Qwen3-0.6B).
ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture("Qwen3-0.6B", 0.6, 28, 1024, 16, 8, 128, 3072, 151936, 40960),
    Architecture("Qwen3-1.7B", 1.7, 28, 2048, 16, 8, 128, 6144, 151936, 40960),
    Architecture("Qwen3-4B", 4.0, 36, 2560, 32, 8, 128, 9728, 151936, 40960),
    Architecture("Qwen3-8B", 8.2, 36, 4096, 32, 8, 128, 12288, 151936, 40960),
    Architecture("Qwen3-14B", 14.8, 40, 5120, 40, 8, 128, 17408, 151936, 40960),
    Architecture("Qwen3-32B", 32.8, 64, 5120, 64, 8, 128, 25600, 151936, 40960),
    Architecture("Qwen2.5-1.5B", 1.54, 28, 1536, 12, 2, 128, 8960, 151936, 32768),
    Architecture("Qwen2.5-7B", 7.6, 28, 3584, 28, 4, 128, 18944, 152064, 32768),
    Architecture("Llama-3.1-8B", 8.0, 32, 4096, 32, 8, 128, 14336, 128256, 131072),
)


def architecture(model_id: str) -> Architecture | None:
    """The known shape of ``model_id`` (its base model's, for a fine-tune), or None."""
    name = base_model(model_id).lower()
    for arch in ARCHITECTURES:
        key = re.escape(arch.name.lower())
        if re.search(rf"(?:^|[^a-z0-9.]){key}(?:$|[^a-z0-9.])", name):
            return arch
    return None


def nearest_architecture(params_b: float) -> Architecture:
    """The known shape closest in size to ``params_b`` (on a log scale): a stand-in for a model
    whose shape is not known, which a forecast must label an assumption."""
    return min(ARCHITECTURES, key=lambda a: abs(math.log(a.params_b / params_b)))
