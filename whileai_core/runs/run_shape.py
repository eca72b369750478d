"""What a launch will do, read before it runs: the model, how it trains, how many steps of how
many rollouts of how many tokens, on how many GPUs in which roles.

A prime-rl config is read from its own keys, with prime-rl 559b447's defaults where a key is
absent; a TRL recipe (``grpo``, ``dpo``, ``sft``) from ``whileai_core.defaults``, and ``sft``
from its data folder. Every number keeps the words saying where it came from (``facts``).
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import defaults as D
from ..errors import ConfigError
from ..models import Architecture, architecture, model_size_b, nearest_architecture
from .targets import Target

# prime-rl 559b447's own defaults for the keys the forecast reads (the key tree's values)
_PRIME_RL_MODEL = "Qwen/Qwen3-0.6B"
_PRIME_RL_SEQ_LEN = 2048
_PRIME_RL_BATCH = 128
_PRIME_RL_VLLM_MEMORY = 0.9
_PRIME_RL_LM_HEAD_CHUNK = 8192
_PRIME_RL_AC_INFLIGHT = 5
_DTYPE_BYTES = {"float32": 4, "bfloat16": 2}
# sequences in one forward pass of the TRL recipes on an A10G (recipes/dpo/train.py
# MAX_PAIRS_PER_PASS, recipes/sft/train.py MAX_EXAMPLES_PER_PASS); sampling batch of
# recipes/holdout.py sample_replies
_TRL_PAIRS_PER_PASS = 4
_TRL_EXAMPLES_PER_PASS = 4
_TRL_SAMPLING_BATCH = 32


@dataclass(frozen=True)
class Sampling:
    """Generation outside the training steps (a TRL recipe's holdout before and after, DPO's
    pair sampling): ``completions`` replies of up to ``max_tokens``, ``batch`` at a time."""

    what: str
    completions: int
    batch: int
    max_tokens: int

    @property
    def decode_steps(self) -> int:
        return math.ceil(self.completions / self.batch) * self.max_tokens


@dataclass(frozen=True)
class RunShape:
    engine: str                    # "prime-rl" (vLLM + FSDP trainer) or "trl" (one GPU)
    recipe: str
    method: str                    # grpo, opd, opsd, ... (prime-rl algo), or dpo / sft
    model: str
    params_b: float | None
    params_from: str               # "model card", "model id" or "unknown"
    arch: Architecture | None
    arch_assumed: bool             # True: the shape of the nearest known size, not this model's
    training: str                  # "full" or "lora"
    lora_rank: int
    steps: int
    steps_from: str
    sequences_per_step: int        # rollouts (RL) or sequences (pairs x 2, examples) a step
    max_tokens: int                # completion cap
    prompt_tokens: int
    micro_batch_tokens: int        # tokens in one forward pass on a trainer GPU
    gen_batch: int                 # completions generated at once in a training step (0: none)
    train_gpus: int = 1
    infer_gpus: int = 0
    infer_tp: int = 1
    infer_util: float | None = None
    max_model_len: int | None = None
    param_bytes: float = 2.0       # bytes a trainer GPU keeps per parameter (weights)
    grad_bytes: float = 0.0        # ... per trainable parameter (gradients)
    optim_bytes: float = 0.0       # ... per trainable parameter (optimizer state on the GPU)
    optim_where: str = ""          # where the optimizer state lives, in words
    checkpointing: bool = True     # full activation checkpointing
    checkpoints_on_gpu: int | None = None   # layer inputs kept on the GPU (None: every layer)
    logits_tokens: int = 0
    broadcast: str = "none"        # prime-rl weight broadcast each step: filesystem / nccl
    reference_forward: bool = False  # an extra forward per token (TRL's KL or DPO reference)
    teacher: tuple[str, str] | None = None  # prime-rl OPD: the teacher's (model, base_url)
    teacher_params_b: float | None = None   # its size (model card or id), None when unknown
    checkpoint: bool = False       # prime-rl: [ckpt] set, so the trainer writes a final checkpoint
    sampling: tuple[Sampling, ...] = ()
    facts: tuple[str, ...] = field(default=())


def _model_facts(model: str) -> tuple[float | None, str, Architecture | None, bool]:
    arch = architecture(model)
    if arch is not None:
        return arch.params_b, "model card", arch, False
    size = model_size_b(model)
    if size is None:
        return None, "unknown", None, False
    return size, "model id", nearest_architecture(size), True


def _number(value: Any, key: str, where: str, *, low: float = 1, high: float | None = None,
            whole: bool = True) -> Any:
    """``value`` checked to be a number in [low, high] (an int when ``whole``): a config the
    forecast cannot read is one clear error naming the key, never a traceback."""
    ok = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool) and \
        low <= value and (high is None or value <= high)
    if not ok:
        span = f">= {low:g}" if high is None else f"in [{low:g}, {high:g}]"
        what = "an integer" if whole else "a number"
        raise ConfigError(f"{where}: `{key}` = {value!r} must be {what} {span}", fix="correct "
                          "it (prime_rl_config writes a config that holds)")
    return value


def _get(table: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(table, dict) or key not in table:
            return default
        table = table[key]
    return table


def prime_rl_shape(text: str, where: str = "the config") -> RunShape:
    """The shape of a prime-rl ``rl`` config (its TOML text, already checked to parse);
    ``where`` names it in errors."""
    cfg = tomllib.loads(text)
    facts: list[str] = []

    def num(value: Any, key: str, default: Any, **limits: Any) -> Any:
        return _number(default if value is None else value, key, where, **limits)

    model = _get(cfg, "model", "name") or _get(cfg, "trainer", "model", "name") or _PRIME_RL_MODEL
    params, params_from, arch, assumed = _model_facts(str(model))
    batch = _prime_rl_batch(cfg, num, facts)
    orch = cfg.get("orchestrator") or {}
    method = str(_get(orch, "algo", "type") or "grpo")
    deployment = cfg.get("deployment") or {}
    train_gpus = num(deployment.get("num_train_gpus"), "deployment.num_train_gpus", 1)
    infer_gpus = num(deployment.get("num_infer_gpus"), "deployment.num_infer_gpus", 1)
    trainer = _prime_rl_trainer(_get(cfg, "trainer", "model") or {}, num,
                                batch["micro_batch_tokens"], arch)
    inference = _prime_rl_inference(_get(cfg, "inference", "vllm") or {}, num)
    # the rule prime-rl's shared config applies (and whileai_core.prime_rl.schema checks): a
    # LoRA run, or one without [inference], broadcasts through the filesystem, else over nccl
    broadcast = (_get(cfg, "weight_broadcast", "type")
                 or ("filesystem" if trainer["training"] == "lora" or "inference" not in cfg
                     else "nccl"))
    teacher_at, teacher_params = _prime_rl_teacher(orch, method, facts)
    return RunShape(
        engine="prime-rl", recipe=D.PRIME_RL_RECIPE, method=method, model=str(model),
        params_b=params, params_from=params_from, arch=arch, arch_assumed=assumed,
        train_gpus=train_gpus, infer_gpus=infer_gpus, broadcast=str(broadcast),
        teacher=teacher_at, teacher_params_b=teacher_params,
        checkpoint=isinstance(cfg.get("ckpt"), dict) or isinstance(_get(cfg, "trainer", "ckpt"),
                                                                  dict),
        facts=tuple(facts), **batch, **trainer, **inference)


def _prime_rl_batch(cfg: dict, num: Callable[..., Any], facts: list[str]) -> dict[str, Any]:
    """Steps, and rollouts a step of how many tokens (``RunShape`` fields)."""
    steps = _get(cfg, "max_steps", default=_get(cfg, "trainer", "max_steps"))
    steps_from = "config max_steps"
    if steps is None:
        steps, steps_from = D.FORECAST_STEPS_IF_UNSET, "assumption: no max_steps in the config"
    steps = num(steps, "max_steps", None)
    seq_len = num(_get(cfg, "seq_len", default=_get(cfg, "trainer", "model", "seq_len")),
                  "seq_len", _PRIME_RL_SEQ_LEN)
    orch = cfg.get("orchestrator") or {}
    group = num(orch.get("group_size"), "orchestrator.group_size", 1)
    prompt = D.FORECAST_PROMPT_TOKENS
    max_tokens = _get(orch, "train", "sampling", "max_completion_tokens")
    sources = _get(orch, "train", "source")
    if not max_tokens and isinstance(sources, list) and sources and isinstance(sources[0], dict):
        max_tokens = _get(sources[0], "sampling", "max_completion_tokens")
    if max_tokens is None:
        max_tokens = max(1, seq_len - prompt)
        facts.append(f"no max_completion_tokens: replies run to seq_len {seq_len}")
    max_tokens = num(max_tokens, "orchestrator.train.sampling.max_completion_tokens", None)
    rollouts = orch.get("batch_size")
    if rollouts is None and orch.get("token_batch_size") is not None:
        budget = num(orch["token_batch_size"], "orchestrator.token_batch_size", None)
        rollouts = max(group, budget // (prompt + max_tokens))
        facts.append(f"token_batch_size {budget}: about {rollouts} rollouts a step at "
                     f"{prompt + max_tokens} tokens each (assumption)")
    rollouts = num(rollouts, "orchestrator.batch_size", _PRIME_RL_BATCH)
    return dict(steps=steps, steps_from=steps_from, sequences_per_step=rollouts,
                max_tokens=max_tokens, prompt_tokens=prompt, micro_batch_tokens=seq_len,
                gen_batch=rollouts)


def _prime_rl_trainer(tmodel: dict, num: Callable[..., Any], seq_len: int,
                      arch: Architecture | None) -> dict[str, Any]:
    """What a trainer GPU holds per parameter, and its activations (``RunShape`` fields)."""
    lora = tmodel.get("lora")
    training = "lora" if isinstance(lora, dict) else "full"
    rank = num(lora.get("rank"), "trainer.model.lora.rank", 16) if training == "lora" else 0
    # prime-rl 559b447 loads the model in optimization_dtype (src/prime_rl/trainer/model.py),
    # reduces gradients in reduce_dtype and, by default, keeps AdamW's two moments on the CPU
    # (trainer.model.optim_cpu_offload = true)
    param_bytes = _DTYPE_BYTES.get(str(tmodel.get("optimization_dtype", "float32")), 4)
    grad_bytes = _DTYPE_BYTES.get(str(tmodel.get("reduce_dtype", "float32")), 4)
    offload_all = bool(tmodel.get("fsdp_cpu_offload", False)) or bool(tmodel.get("full_offload"))
    optim_on_cpu = bool(tmodel.get("optim_cpu_offload", True)) or offload_all
    optim_where = ("CPU (fsdp_cpu_offload / full_offload)" if offload_all else
                   "CPU (optim_cpu_offload, prime-rl's default)" if optim_on_cpu else "GPU")
    if offload_all:
        param_bytes, grad_bytes = 0.0, 0.0
    ac = "ac" not in tmodel or tmodel.get("ac") not in (None, False)
    ac_offload = "ac_offloading" not in tmodel or tmodel.get("ac_offloading") not in (None, False)
    inflight = num(_get(tmodel, "ac_offloading", "max_inflight_activations"),
                   "trainer.model.ac_offloading.max_inflight_activations", _PRIME_RL_AC_INFLIGHT)
    chunk = tmodel.get("fused_lm_head_token_chunk_size", _PRIME_RL_LM_HEAD_CHUNK)
    chunk = seq_len if chunk == "disabled" else num(
        chunk, "trainer.model.fused_lm_head_token_chunk_size", None)
    return dict(training=training, lora_rank=rank, param_bytes=param_bytes,
                grad_bytes=grad_bytes, optim_bytes=0.0 if optim_on_cpu else 8.0,
                optim_where=optim_where, checkpointing=ac,
                checkpoints_on_gpu=min(inflight, arch.layers) if (ac and ac_offload and arch)
                else None, logits_tokens=min(seq_len, chunk))


def _prime_rl_inference(vllm: dict, num: Callable[..., Any]) -> dict[str, Any]:
    """The vLLM engine's settings (``RunShape`` fields)."""
    tp = num(vllm.get("tensor_parallel_size"), "inference.vllm.tensor_parallel_size", 1)
    util = num(vllm.get("gpu_memory_utilization"), "inference.vllm.gpu_memory_utilization",
               _PRIME_RL_VLLM_MEMORY, low=0.01, high=1.0, whole=False)
    max_len = vllm.get("max_model_len")
    if max_len is not None:
        max_len = num(max_len, "inference.vllm.max_model_len", None)
    return dict(infer_tp=tp, infer_util=float(util), max_model_len=max_len)


def _prime_rl_teacher(orch: dict, method: str, facts: list[str]
                      ) -> tuple[tuple[str, str] | None, float | None]:
    """An OPD run's teacher (model, base_url) and its size, when the config names one."""
    teacher = _get(orch, "algo", "teacher")
    if method != "opd" or not isinstance(teacher, dict) or not teacher.get("name"):
        return None, None
    teacher_at = (str(teacher["name"]), str(teacher.get("base_url", "")))
    teacher_params = _model_facts(teacher_at[0])[0]
    if teacher_params is None:
        facts.append(f"the teacher {teacher_at[0]}'s size is unknown: its memory and its "
                     "scoring time are not counted")
    return teacher_at, teacher_params


def _trl_common(model: str) -> dict:
    params, params_from, arch, assumed = _model_facts(model)
    # PEFT keeps the adapter in float32 (its autocast_adapter_dtype default): 4 bytes of weight,
    # 4 of gradient and 8 of AdamW moments per adapter parameter; the base stays in bf16
    return dict(engine="trl", model=model, params_b=params, params_from=params_from, arch=arch,
                arch_assumed=assumed, training="lora", lora_rank=D.GRPO_LORA_R,
                prompt_tokens=D.FORECAST_PROMPT_TOKENS, param_bytes=2.0, grad_bytes=4.0,
                optim_bytes=8.0, optim_where="GPU (AdamW on the LoRA adapter)",
                checkpointing=True)


def _holdout(prompts: int, max_tokens: int) -> Sampling:
    return Sampling("held-out replies before and after", 2 * prompts * D.GRPO_HOLDOUT_SAMPLES,
                    _TRL_SAMPLING_BATCH, max_tokens)


def _refund_split() -> tuple[int, int]:
    total = sum(D.GRPO_PROMPT_COUNTS)
    holdout = round(total * D.GRPO_HOLDOUT_SHARE)
    return total - holdout, holdout


def grpo_shape() -> RunShape:
    train, holdout = _refund_split()
    per_step = D.GRPO_PROMPTS_PER_STEP * D.GRPO_NUM_GENERATIONS
    c = D.GRPO_MAX_COMPLETION_TOKENS
    return RunShape(recipe="grpo", method="grpo", steps=D.GRPO_STEPS, steps_from="GRPO_STEPS",
                    sequences_per_step=per_step, max_tokens=c,
                    micro_batch_tokens=D.GRPO_NUM_GENERATIONS * (D.FORECAST_PROMPT_TOKENS + c),
                    gen_batch=per_step, logits_tokens=D.GRPO_NUM_GENERATIONS
                    * (D.FORECAST_PROMPT_TOKENS + c), reference_forward=D.GRPO_BETA > 0,
                    sampling=(_holdout(holdout, c),), **_trl_common(D.GRPO_MODEL))


def dpo_shape() -> RunShape:
    train, holdout = _refund_split()
    c = D.GRPO_MAX_COMPLETION_TOKENS
    pairs = max(1, round(train * D.DPO_PAIRS_PER_PROMPT))
    steps = D.DPO_EPOCHS * math.ceil(pairs / D.DPO_PAIRS_PER_STEP)
    per_pass = max(d for d in range(1, _TRL_PAIRS_PER_PASS + 1) if D.DPO_PAIRS_PER_STEP % d == 0)
    tokens = 2 * per_pass * (D.FORECAST_PROMPT_TOKENS + c)
    return RunShape(recipe="dpo", method="dpo", steps=steps,
                    steps_from=f"DPO_EPOCHS x ceil(~{pairs} pairs / {D.DPO_PAIRS_PER_STEP}) "
                               f"(pairs: assumption, DPO_PAIRS_PER_PROMPT x {train} prompts)",
                    sequences_per_step=2 * D.DPO_PAIRS_PER_STEP, max_tokens=c,
                    micro_batch_tokens=tokens, gen_batch=0, logits_tokens=tokens,
                    reference_forward=True,
                    sampling=(Sampling("pair sampling", train * D.DPO_SAMPLES_PER_PROMPT,
                                       _TRL_SAMPLING_BATCH, c), _holdout(holdout, c)),
                    **_trl_common(D.GRPO_MODEL))


def sft_shape(target: Target) -> RunShape:
    files = dict(target.data_files or ())
    model, facts = D.SFT_MODEL, []
    settings: dict = {}
    if "settings.json" in files:
        try:
            loaded = json.loads(files["settings.json"].decode("utf-8"))
            settings = loaded if isinstance(loaded, dict) else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            settings = {}  # the recipe's describe_data hook reports a bad file
    where = f"{target.data_label or target.data_dir}/settings.json"
    model = str(settings.get("model", model))
    epochs = _number(settings.get("epochs", D.SFT_EPOCHS), "epochs", where)
    per_step = _number(settings.get("examples_per_step", D.SFT_EXAMPLES_PER_STEP),
                       "examples_per_step", where)
    max_length = _number(settings.get("max_length", D.SFT_MAX_LENGTH), "max_length", where)
    c = _number(settings.get("max_completion_tokens", D.GRPO_MAX_COMPLETION_TOKENS),
                "max_completion_tokens", where)
    if "train.jsonl" in files:
        examples = sum(1 for line in files["train.jsonl"].splitlines() if line.strip())
        held = sum(1 for line in files.get("holdout.jsonl", b"").splitlines() if line.strip())
        source = f"{examples} rows of train.jsonl"
    else:
        examples, held = _refund_split()
        source = f"assumption: the refund demo, one example per train prompt ({examples})"
    per_pass = max(d for d in range(1, _TRL_EXAMPLES_PER_PASS + 1) if per_step % d == 0)
    length = min(max_length, D.FORECAST_PROMPT_TOKENS + c)
    facts.append(f"examples assumed {length} tokens long (prompt + completion cap, at most "
                 f"max_length {max_length})")
    return RunShape(recipe="sft", method="sft", steps=epochs * math.ceil(examples / per_step),
                    steps_from=f"{epochs} epochs x ceil({source} / {per_step})",
                    sequences_per_step=per_step, max_tokens=c, micro_batch_tokens=per_pass * length,
                    gen_batch=0, logits_tokens=per_pass * length,
                    sampling=(_holdout(held, c),) if held else (), facts=tuple(facts),
                    **{**_trl_common(model), "prompt_tokens": length - c if length > c else 0})


def run_shape(target: Target) -> RunShape | None:
    """The shape of what ``target`` runs, or None for a recipe this forecast does not know."""
    if target.kind == "config":
        return prime_rl_shape((target.data or b"").decode("utf-8"), str(target.path))
    if target.recipe == "grpo":
        return grpo_shape()
    if target.recipe == "dpo":
        return dpo_shape()
    if target.recipe == "sft":
        return sft_shape(target)
    return None
