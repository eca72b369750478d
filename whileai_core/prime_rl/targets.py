"""What the writer knows about prime-rl 559b447 beyond its key tree: renderers and tasksets.

Facts read from prime-rl 559b447 (``orchestrator.renderer`` union) and from ``renderers``
0.1.11's ``MODEL_RENDERER_MAP`` (the version a prime-rl-configs 0.4.0 install resolves): a model
id missing from that map makes ``renderer.name = "auto"`` fail validation, so the writer names a
renderer for it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The tags of the [orchestrator.renderer] union at 559b447.
RENDERER_NAMES = frozenset({
    "auto", "custom", "default", "deepseek-r1", "deepseek-v3", "deepseek-v4", "gemma4", "glm-4.5",
    "glm-5", "glm-5.1", "glm-5.3", "gpt-oss", "hy3", "inkling", "kimi-k2", "kimi-k2.5",
    "laguna-m.1", "laguna-s-2.1", "laguna-xs-2.1", "laguna-xs.2", "llama-3", "minimax-m2",
    "nemotron-3", "nemotron-3-ultra", "nemotron-3.5", "prime-qwen3", "qwen3", "qwen3-vl",
    "qwen3.5", "qwen3.6", "qwen3.8",
})

# Model ids that "auto" resolves (exact match in renderers 0.1.11 MODEL_RENDERER_MAP).
AUTO_RENDERER_MODELS = frozenset({
    "MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.5", "PrimeIntellect/Qwen3-0.6B",
    "PrimeIntellect/Qwen3-1.7B", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-14B",
    "Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Instruct-2507",
    "Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen/Qwen3-32B", "Qwen/Qwen3-4B",
    "Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B-Thinking-2507", "Qwen/Qwen3-8B",
    "Qwen/Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3-VL-4B-Instruct", "Qwen/Qwen3-VL-8B-Instruct",
    "Qwen/Qwen3.5-0.8B", "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-2B", "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3.5-4B", "Qwen/Qwen3.5-9B", "Qwen/Qwen3.6-35B-A3B",
    "Qwen/Qwen3.8-27B", "Qwen/Qwen3.8-Flash-Next", "THUDM/GLM-4.5-Air", "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base",
    "deepseek-ai/DeepSeek-V4-Flash-0731", "google/gemma-4-26B-A4B-it", "google/gemma-4-31B-it",
    "google/gemma-4-E2B-it", "google/gemma-4-E4B-it", "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct", "moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2.5",
    "moonshotai/Kimi-K2.6", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", "openai/gpt-oss-120b",
    "openai/gpt-oss-20b", "poolside/Laguna-M.1", "poolside/Laguna-S-2.1", "poolside/Laguna-XS-2.1",
    "poolside/Laguna-XS.2", "tencent/Hy3", "tencent/Hy3-FP8", "thinkingmachines/Inkling",
    "thinkingmachines/Inkling-Small", "zai-org/GLM-4.5-Air", "zai-org/GLM-4.7-Flash",
    "zai-org/GLM-5", "zai-org/GLM-5-FP8", "zai-org/GLM-5.1",
})


def pick_renderer(model: str) -> tuple[str | None, str]:
    """The renderer to write for ``model`` and why: None when "auto" resolves it.

    PrimeIntellect's Qwen3 fine-tunes (e.g. the reverse-text SFT/RL checkpoints) keep Qwen3's
    template but miss the exact-match map, so they get ``prime-qwen3`` (prime-rl's own examples
    do the same). Anything else unknown gets ``default`` (the tokenizer's chat template).
    """
    if model in AUTO_RENDERER_MODELS:
        return None, f"{model} is in prime-rl's renderer map; 'auto' resolves it"
    org, _, name = model.partition("/")
    if org == "PrimeIntellect" and name.lower().startswith("qwen3-"):
        return "prime-qwen3", (f"{model} is a PrimeIntellect Qwen3 fine-tune missing from the "
                               "renderer map; prime-rl's examples name 'prime-qwen3' for it")
    return "default", (f"{model} is not in prime-rl's renderer map ('auto' would fail validation); "
                       "'default' renders with the tokenizer's chat template. Pass renderer= "
                       "(e.g. 'qwen3') when the model shares a mapped family's template")


@dataclass(frozen=True)
class Taskset:
    """How a verifiers taskset's env block is written: its agents and its dataset keys."""

    id: str
    agents: tuple[str, ...] = ("agent",)
    split_key: str | None = None  # the taskset's own key for a dataset split, if it has one
    demo_field: str | None = None  # where a demonstration lives, for OPSD's demo_key
    fields: tuple[str, ...] | None = None  # fields a task carries, when known


KNOWN_TASKSETS = {
    # reverse_text.ReverseTextConfig: dataset_name, dataset_split; the reversal is in `answer`.
    "reverse-text": Taskset("reverse-text", split_key="dataset_split", demo_field="answer",
                            fields=("answer",)),
    # kuhn_poker: two seats, an infinite stream of hands (no split).
    "kuhn-poker": Taskset("kuhn-poker", agents=("player0", "player1")),
}


def taskset_info(taskset: str) -> Taskset:
    """The known facts for a taskset id, or a single-agent default with no split key."""
    return KNOWN_TASKSETS.get(taskset, Taskset(taskset))
