"""The launch forecast: tokens, memory per GPU, wall clock and dollars, before a run spends.

Every number carries ``kind``, where it comes from:

- ``measured``: a run that happened (the seed's three prime-rl arms, the TRL GRPO recipe's
  "under fifteen minutes", this machine's smoke timings), or a constant fitted to one;
- ``derived``: arithmetic from the run's own config and stated rules (2 bytes a bf16 parameter;
  16 bytes a parameter for AdamW in mixed precision, of which prime-rl keeps 8 on the GPU
  [1]; activations under full checkpointing [2, 3]; the KV cache vLLM must hold to start; a
  datasheet's memory, bandwidth and peak);
- ``assumption``: a constant nobody measured here (``defaults.FORECAST_*``), or a figure resting
  on one. A total takes the kind of its largest part.

Memory is checked per GPU in prime-rl's layout (inference on the first GPUs, an OPD teacher
beside the policy on GPU 0, the FSDP trainer after them) or, for a TRL recipe, on its one GPU. A
GPU whose *derived* items alone exceed its memory makes the forecast refuse (``fits`` false)
with the numbers and the fixes that would fit (LoRA, a shorter ``max_model_len``, a bigger GPU,
tensor or FSDP parallelism), each re-checked by the same arithmetic; assumptions alone only warn.

Wall clock: prime-rl's start-up and its seconds per rollout are fitted to the two measured arms
that differ in rollouts a step (``defaults.PRIME_RL_FIT_ARMS``); what grows with the model
(weights loaded, tokens decoded at the memory-bandwidth roofline, training FLOPs [4] at
``FORECAST_MFU``, weights broadcast) is derived on top. The TRL recipes' seconds per generated
token step are fitted to the GRPO recipe's measured bound. Dollars: Modal's dated per-second
GPU prices (``defaults.MODAL_GPU_PRICE_PER_S``), GPU time only.

[1] Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
    SC 2020, arXiv:1910.02054, sec. 3.1 (2 + 2 + 12 bytes a parameter with Adam).
[2] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", 2022,
    arXiv:2205.05198, eq. 1.
[3] Chen et al., "Training Deep Nets with Sublinear Memory Cost", 2016, arXiv:1604.06174.
[4] Kaplan et al., "Scaling Laws for Neural Language Models", 2020, arXiv:2001.08361, sec. 2.1
    (6N FLOPs a trained token: 2N forward, 4N backward).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache
from typing import Literal

from .. import defaults as D
from ..errors import ConfigError
from ..result import Result
from .run_shape import RunShape, grpo_shape, prime_rl_shape, run_shape
from .targets import Target

Kind = Literal["measured", "derived", "assumption"]
_GB = 1e9
_WEAKER = {"measured": 0, "derived": 1, "assumption": 2}


class Figure(Result):
    """One forecast number: ``value`` in ``unit``, its ``kind`` and the ``basis`` it rests on."""

    name: str
    value: float
    unit: str
    kind: Kind
    basis: str

    def render(self) -> str:
        return f"{self.name} {fmt_quantity(self.value, self.unit)} ({self.kind}: {self.basis})"


class GpuLoad(Result):
    """What one GPU holds: ``items`` in GB against ``capacity_gb``. ``fits``: the derived items
    alone are within it (false: the run cannot start); ``tight``: everything, assumptions too,
    exceeds it (it may not fit)."""

    gpu: int
    role: str
    items: list[Figure]
    total_gb: float
    capacity_gb: float
    fits: bool
    tight: bool
    problem: str | None = None

    def render(self) -> str:
        parts = ", ".join(f"{i.name} {i.value:.1f}" for i in self.items)
        flag = "" if self.fits and not self.tight else (" DOES NOT FIT" if not self.fits
                                                         else " may not fit")
        return (f"GPU {self.gpu} {self.role}: {self.total_gb:.1f} of {self.capacity_gb:g} GB "
                f"({parts}){flag}")


class Forecast(Result):
    """What a launch will take. ``wall_s``: billed seconds (container start included);
    ``run_s``: the part a recipe's own clock measures. ``fits`` false: the plan refuses, with
    ``refusal`` (the numbers) and ``fixes``."""

    model: str | None
    training: str | None
    steps: int | None
    gpu: str | None
    gpu_count: int
    gpus_needed: int
    tokens: list[Figure]
    memory: list[GpuLoad]
    time: list[Figure]
    wall_s: Figure
    run_s: float
    gpu_hours: Figure
    dollars: Figure | None
    fits: bool
    refusal: str | None = None
    fixes: list[str] = []
    notes: list[str] = []

    def summary(self) -> str:
        """One line: wall clock, GPU hours and dollars with their kinds."""
        money = (f", ${self.dollars.value:.2f} ({self.dollars.kind})" if self.dollars else "")
        return (f"~{fmt_quantity(self.wall_s.value, 's')} wall clock ({self.wall_s.kind}), "
                f"{self.gpu_hours.value:.2f} GPU hours{money}")

    def render(self) -> str:
        lines = [f"forecast: {self.summary()}"]
        lines += [f"  tokens: {t.render()}" for t in self.tokens]
        lines += [f"  memory: {g.render()}" for g in self.memory]
        lines += [f"  time:   {t.render()}" for t in self.time]
        if self.dollars is not None:
            lines.append(f"  cost:   {self.dollars.render()}")
        if self.refusal:
            lines.append(f"  REFUSED: {self.refusal}")
        lines += [f"  fix:    {f}" for f in self.fixes]
        lines += [f"  note:   {n}" for n in self.notes]
        return "\n".join(lines)


class ForecastError(Result):
    """How the forecasts of past runs on one backend compared with what they took:
    ``ratios`` = forecast / measured wall clock, most recent first (``runs`` their ids)."""

    backend: str
    n: int
    low: float
    high: float
    ratios: list[float]
    runs: list[str]

    def render(self) -> str:
        each = ", ".join(f"{r}: {x:.2f}x" for r, x in zip(self.runs, self.ratios))
        span = (f"{self.low:.2f}x" if self.n == 1 else f"{self.low:.2f}-{self.high:.2f}x")
        return (f"last {self.n} forecast{'s' if self.n != 1 else ''} on {self.backend} "
                f"{'were' if self.n != 1 else 'was'} {span} of the measured time ({each})")


def fmt_quantity(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value / 3600:.2f} h" if value >= 5400 else (
            f"{value / 60:.1f} min" if value >= 120 else f"{value:.0f} s")
    if unit == "tokens":
        return f"{value / 1e6:.2f}M tokens" if value >= 1e5 else f"{value:,.0f} tokens"
    if unit == "$":
        return f"${value:.2f}"
    return f"{value:.3g} {unit}"


def _weakest(*kinds: str) -> Kind:
    return max(kinds, key=_WEAKER.__getitem__)  # type: ignore[return-value]


def _largest_kind(parts: list[Figure]) -> tuple[Kind, str]:
    """The kind of the part contributing the most, and each kind's share in words."""
    totals: dict[str, float] = {}
    for p in parts:
        totals[p.kind] = totals.get(p.kind, 0.0) + p.value
    whole = sum(totals.values()) or 1.0
    kind = max(totals, key=totals.__getitem__)
    shares = ", ".join(f"{k} {v / whole:.0%}" for k, v in sorted(totals.items(), key=lambda kv:
                                                                 -kv[1]))
    return kind, shares  # type: ignore[return-value]


def gpu_spec(kind: str) -> tuple[float, float, float]:
    """(memory GB, dense bf16 TFLOPS, bandwidth GB/s) of a Modal GPU type."""
    return D.GPU_SPECS[kind]


# --- memory ---------------------------------------------------------------------------------

def _shape_kind(shape: RunShape) -> Kind:
    """Figures that use the model's layers/hidden size: derived, or an assumption when the shape
    is the nearest known model's."""
    return "assumption" if shape.arch_assumed else "derived"


def _load(gpu: int, role: str, items: list[Figure], capacity: float,
          problem: str | None = None) -> GpuLoad:
    total = sum(i.value for i in items)
    certain = sum(i.value for i in items if i.kind != "assumption")
    fits = certain <= capacity and problem is None
    if certain > capacity and problem is None:
        problem = f"{certain:.1f} GB without the assumed items > {capacity:g} GB"
    return GpuLoad(gpu=gpu, role=role, items=items, total_gb=round(total, 3),
                   capacity_gb=capacity, fits=fits, tight=total > capacity, problem=problem)


def _kv_need_gb(shape: RunShape, tp: int, max_len: int | None = None) -> tuple[float, int]:
    """The KV cache vLLM needs to start: one sequence of ``max_model_len`` tokens."""
    arch = shape.arch
    length = max_len or shape.max_model_len or arch.max_positions
    return arch.kv_bytes_per_token() * length / tp / _GB, int(length)


def _vllm_items(label: str, params_b: float, share_gb: float, tp: int, shape: RunShape,
                max_len: int | None) -> tuple[list[Figure], str | None, float]:
    """A vLLM engine's share: its weights, and the KV cache the rest holds; the problem that
    stops it from starting, if any, and the KV tokens it holds."""
    weights = 2.0 * params_b / tp
    kv = share_gb - weights
    need, length = _kv_need_gb(shape, tp, max_len)
    items = [Figure(name=f"{label} weights", value=weights, unit="GB", kind="derived",
                    basis=f"2 B/param bf16 x {params_b:g}B / tensor parallel {tp}"),
             Figure(name=f"{label} KV cache", value=max(kv, 0.0), unit="GB", kind="derived",
                    basis=f"the rest of vLLM's {share_gb:.1f} GB share")]
    problem = None
    if kv < 0:
        problem = (f"{label} weights {weights:.1f} GB exceed vLLM's share "
                   f"{share_gb:.1f} GB")
    elif kv < need and not shape.arch_assumed:  # an assumed shape only warns (forecast notes)
        problem = (f"{label} KV cache {kv:.1f} GB < {need:.1f} GB vLLM needs to start "
                   f"(one sequence of max_model_len {length} tokens)")
    per_token = shape.arch.kv_bytes_per_token() / tp
    return items, problem, max(kv, 0.0) * _GB / per_token


def _teacher_plan(shape: RunShape, capacity: float):
    if shape.teacher is None:
        return None
    from ..prime_rl.teacher import plan_teacher

    name, url = shape.teacher
    try:
        return plan_teacher(name, url, first_free_gpu=shape.train_gpus + shape.infer_gpus,
                            gpu_memory_gb=capacity)
    except ConfigError:
        return "too big"


def prime_rl_memory(shape: RunShape, gpu_type: str) -> tuple[list[GpuLoad], int, float]:
    """Each GPU's load in prime-rl's single-node layout on ``gpu_type``; the GPUs the layout
    needs; the KV tokens the policy's engines hold (for the decode time)."""
    capacity = gpu_spec(gpu_type)[0]
    loads: list[GpuLoad] = []
    params = shape.params_b
    util = shape.infer_util or 0.9
    teacher = _teacher_plan(shape, capacity)
    kv_tokens = 0.0
    for gpu in range(shape.infer_gpus):
        items, problem, tokens = _vllm_items("policy", params, util * capacity, shape.infer_tp,
                                             shape, None)
        kv_tokens += tokens / shape.infer_tp
        shares = util
        if gpu == 0 and teacher is not None and teacher != "too big" and \
                teacher.layout in ("colocated", "size_unknown") and teacher.params_b:
            t_share = (teacher.gpu_memory_utilization or D.OPD_COLOCATED_MEMORY) * capacity
            t_items, t_problem, _ = _vllm_items("teacher", teacher.params_b, t_share, 1,
                                                shape, None)
            items += t_items
            problem = problem or t_problem
            shares += t_share / capacity
        if shares > 1.0:
            problem = problem or (f"vLLM shares add to {shares:.2f} of the GPU (more than all "
                                  "of it)")
        role = "inference (vLLM" + (", teacher beside it)" if len(items) > 2 else ")")
        loads.append(_load(gpu, role, items, capacity, problem))
    needed = shape.infer_gpus + shape.train_gpus
    if teacher == "too big":
        needed = D.MODAL_MAX_GPUS + 1
    elif teacher is not None and teacher.layout == "dedicated":
        for i in range(teacher.gpus):
            items, problem, _ = _vllm_items("teacher", teacher.params_b,
                                            D.TEACHER_GPU_MEMORY_UTILIZATION * capacity,
                                            teacher.tensor_parallel, shape, None)
            loads.append(_load(needed + i, "teacher (vLLM)", items, capacity, problem))
        needed += teacher.gpus
    for j in range(shape.train_gpus):
        loads.append(_load(shape.infer_gpus + j, "trainer (FSDP)",
                           _trainer_items(shape, shape.train_gpus), capacity))
    return loads, needed, kv_tokens


def _trainer_items(shape: RunShape, shards: int) -> list[Figure]:
    """A trainer GPU: its share of weights, gradients and optimizer state, activations under
    checkpointing, the logits of one micro-batch, and the process's own reserve."""
    arch, p = shape.arch, shape.params_b
    items: list[Figure] = []
    if shape.training == "full":
        per_param = shape.param_bytes + shape.grad_bytes + shape.optim_bytes
        items.append(Figure(
            name="weights+grads+optimizer", value=per_param * p / shards, unit="GB",
            kind="derived",
            basis=(f"{per_param:g} B/param x {p:g}B / {shards} FSDP shard(s): weights "
                   f"{shape.param_bytes:g} + grads {shape.grad_bytes:g} + AdamW "
                   f"{shape.optim_bytes:g} (its moments on {shape.optim_where}; 16 B/param in "
                   "all, ZeRO)")))
    else:
        adapter_b = arch.lora_params(shape.lora_rank) / 1e9
        # PEFT keeps a TRL adapter in float32; prime-rl keeps it in optimization_dtype
        adapter_param = 4.0 if shape.engine == "trl" else shape.param_bytes
        per_adapter = adapter_param + shape.grad_bytes + shape.optim_bytes
        items.append(Figure(name="frozen weights", value=shape.param_bytes * p / shards,
                            unit="GB", kind="derived",
                            basis=f"{shape.param_bytes:g} B/param x {p:g}B / {shards} shard(s)"))
        items.append(Figure(
            name="LoRA adapter+grads+optimizer", value=per_adapter * adapter_b / shards,
            unit="GB", kind=_shape_kind(shape),
            basis=f"{per_adapter:g} B x {adapter_b * 1e3:.1f}M adapter params (rank "
                  f"{shape.lora_rank}, all 7 projections)"))
    tokens = shape.micro_batch_tokens
    layer = D.FORECAST_ACTIVATION_BYTES * tokens * arch.hidden / _GB
    if shape.checkpointing:
        kept = shape.checkpoints_on_gpu or arch.layers
        where = ("" if shape.checkpoints_on_gpu is None else
                 f" ({kept} of {arch.layers} on the GPU, the rest offloaded)")
        act = kept * 2 * tokens * arch.hidden / _GB + layer
        basis = (f"checkpointed layer inputs 2 B x {tokens} tokens x {arch.hidden}{where} + one "
                 f"layer recomputed, {D.FORECAST_ACTIVATION_BYTES} B x tokens x hidden")
    else:
        act = arch.layers * layer
        basis = f"{arch.layers} layers x {D.FORECAST_ACTIVATION_BYTES} B x {tokens} tokens x hidden"
    items.append(Figure(name="activations", value=act, unit="GB", kind=_shape_kind(shape),
                        basis=basis))
    items.append(Figure(
        name="logits", value=D.FORECAST_LOGIT_BYTES * shape.logits_tokens * arch.vocab / _GB,
        unit="GB", kind="assumption",
        basis=f"{D.FORECAST_LOGIT_BYTES} B x {shape.logits_tokens} tokens x vocab {arch.vocab}"))
    items.append(_reserve())
    return items


def _reserve() -> Figure:
    return Figure(name="CUDA context+slack", value=D.FORECAST_GPU_RESERVED_GB, unit="GB",
                  kind="assumption", basis="FORECAST_GPU_RESERVED_GB")


def trl_memory(shape: RunShape, gpu_type: str) -> list[GpuLoad]:
    """The one GPU of a TRL recipe: the bf16 policy (its adapter off is the reference), the LoRA
    adapter and its optimizer, and the larger of training's activations and generation's KV."""
    capacity = gpu_spec(gpu_type)[0]
    arch, p = shape.arch, shape.params_b
    trainer = _trainer_items(dataclasses.replace(shape, param_bytes=2.0), 1)
    train_work = [i for i in trainer if i.name in ("activations", "logits")]
    batch = max([shape.gen_batch] + [s.batch for s in shape.sampling])
    kv = batch * (shape.prompt_tokens + shape.max_tokens) * arch.kv_bytes_per_token() / _GB
    train_gb = sum(i.value for i in train_work)
    working = Figure(
        name="working memory", value=max(kv, train_gb), unit="GB",
        kind=_weakest(*(i.kind for i in train_work)) if train_gb >= kv else _shape_kind(shape),
        basis=(f"the larger of training activations+logits {train_gb:.2f} GB and the KV cache "
               f"of {batch} replies generated at once {kv:.2f} GB"))
    items = [Figure(name="policy weights", value=2.0 * p, unit="GB", kind="derived",
                    basis=f"2 B/param bf16 x {p:g}B (the adapter-off policy is the reference)"),
             next(i for i in trainer if i.name.startswith("LoRA")), working, _reserve()]
    return [_load(0, "policy, trainer and sampler", items, capacity)]


# --- time -----------------------------------------------------------------------------------

def _flops_per_token(shape: RunShape) -> tuple[float, str]:
    """Training FLOPs per token in units of parameters, and why."""
    k, why = (6.0, "6N forward+backward") if shape.training == "full" else (
        4.0, "4N forward + backward through frozen weights (LoRA)")
    if shape.checkpointing:
        k, why = k + 2.0, why + " + 2N recompute"
    if shape.reference_forward:
        k, why = k + 2.0, why + " + 2N reference"
    return k, why


def _train_s(shape: RunShape, gpu_type: str, shards: int) -> tuple[float, str]:
    k, why = _flops_per_token(shape)
    tokens = shape.sequences_per_step * (shape.prompt_tokens + shape.max_tokens)
    peak = gpu_spec(gpu_type)[1] * 1e12 * D.FORECAST_MFU
    return (k * shape.params_b * 1e9 * tokens / (shards * peak),
            f"{why} x {tokens:,} tokens / ({shards} x {gpu_type} peak x MFU {D.FORECAST_MFU})")


def _decode_step_s(params_b: float, tp: int, gpu_type: str) -> float:
    """The memory-bandwidth roofline of one decode step: the bf16 weights read once."""
    return 2.0 * params_b * 1e9 / tp / (gpu_spec(gpu_type)[2] * 1e9)


def _prime_rl_parts(shape: RunShape, gpu_type: str, kv_tokens: float) -> dict[str, tuple[float,
                                                                                        Kind, str]]:
    """The derived seconds of one prime-rl run (before the fitted start-up and rollout costs):
    ``load`` once, and per step ``inference`` (decode + teacher scoring) and ``trainer``
    (training + weight broadcast), which prime-rl overlaps one step apart."""
    p, R, c = shape.params_b, shape.sequences_per_step, shape.max_tokens
    per_seq = shape.prompt_tokens + c
    concurrent = max(1, int(kv_tokens // per_seq))
    waves = math.ceil(R / concurrent)
    decode = waves * c * _decode_step_s(p, shape.infer_tp, gpu_type)
    peak = gpu_spec(gpu_type)[1] * 1e12 * D.FORECAST_MFU
    teacher_p, loaded_teacher = 0.0, 0.0
    if shape.method == "opd":  # a frozen model served beside the policy, loaded once
        teacher_p = loaded_teacher = shape.teacher_params_b or 0.0
    elif shape.method == "opsd":
        teacher_p = p  # the live policy scores its own rollouts with the answer in context
    scoring = 2.0 * teacher_p * 1e9 * R * per_seq / peak
    train, _ = _train_s(shape, gpu_type, shape.train_gpus)
    broadcast = 2.0 * p / D.FORECAST_BROADCAST_GBPS if shape.broadcast == "filesystem" else 0.0
    load = 2.0 * (2.0 * p + loaded_teacher) / D.FORECAST_LOAD_GBPS
    return {"load": (load, "assumption", f"bf16 weights read at {D.FORECAST_LOAD_GBPS:g} GB/s"),
            "decode": (decode, "derived",
                       f"{waves} wave(s) of {min(R, concurrent)} replies x {c} tokens at the "
                       f"bandwidth roofline"),
            "scoring": (scoring, "assumption", f"teacher prefill 2N x {R * per_seq:,} tokens"),
            "train": (train, "assumption", "training FLOPs at FORECAST_MFU"),
            "broadcast": (broadcast, "assumption", f"{shape.broadcast} weight broadcast")}


@lru_cache(maxsize=1)
def prime_rl_fit() -> tuple[float, float]:
    """(start-up s, s per rollout), fitted so the forecast of each ``PRIME_RL_FIT_ARMS`` run
    equals its measured wall clock (two runs, two unknowns: exact, not least squares)."""
    rows = []
    for arm in D.PRIME_RL_FIT_ARMS:
        wall, rollouts, algo = D.PRIME_RL_MEASURED[arm]
        shape = measured_shape(rollouts, algo)
        _, _, kv = prime_rl_memory(shape, D.PRIME_RL_MEASURED_SETUP["gpu"])
        parts = _prime_rl_parts(shape, D.PRIME_RL_MEASURED_SETUP["gpu"], kv)
        infer = parts["decode"][0] + parts["scoring"][0]
        train = parts["train"][0] + parts["broadcast"][0]
        rows.append((wall - parts["load"][0], shape.steps, rollouts, infer, train))
    (m1, s1, r1, i1, t1), (m2, s2, r2, i2, t2) = rows
    per_rollout = ((m1 - s1 * i1) - (m2 - s2 * i2)) / (s1 * r1 - s2 * r2)
    startup = m2 - s2 * (r2 * per_rollout + i2)
    if not all(r * per_rollout + i >= t for _, _, r, i, t in rows):  # a constants' bug
        raise RuntimeError("the prime-rl fit assumes inference set the pace of the fitted runs")
    return startup, per_rollout


def measured_shape(rollouts: int, algo: str) -> RunShape:
    """The shape of a ``PRIME_RL_MEASURED`` run, written as the config it ran."""
    s = D.PRIME_RL_MEASURED_SETUP
    return prime_rl_shape(
        f'max_steps = {s["steps"]}\nseq_len = {s["seq_len"]}\n[model]\nname = "{s["model"]}"\n'
        f'[orchestrator]\nbatch_size = {rollouts}\n[orchestrator.algo]\ntype = "{algo}"\n'
        f'[orchestrator.train.sampling]\nmax_completion_tokens = {s["max_tokens"]}\n[inference]\n')


@lru_cache(maxsize=1)
def trl_fit() -> float:
    """Seconds of one generate() token step beyond the bandwidth roofline (Python and kernel
    launches), fitted so the GRPO recipe's default run takes ``TRL_GRPO_MEASURED_S``."""
    shape = grpo_shape()
    parts = _trl_parts(shape, D.GRPO_GPU, overhead=0.0)
    decode_steps = sum(s.decode_steps for s in shape.sampling) + shape.steps * shape.max_tokens
    fixed = sum(v for k, (v, _, _) in parts.items() if k != "decode")
    return (D.TRL_GRPO_MEASURED_S - fixed - parts["decode"][0]) / decode_steps


def _trl_parts(shape: RunShape, gpu_type: str, overhead: float) -> dict[str, tuple[float, Kind,
                                                                                 str]]:
    step = _decode_step_s(shape.params_b, 1, gpu_type) + overhead
    sampling = sum(s.decode_steps for s in shape.sampling)
    in_steps = shape.steps * shape.max_tokens if shape.gen_batch else 0
    train, why = _train_s(shape, gpu_type, 1)
    return {"container": (D.MODAL_CONTAINER_START_S, "assumption", "MODAL_CONTAINER_START_S"),
            "load": (2.0 * shape.params_b / D.FORECAST_LOAD_GBPS, "assumption",
                     f"bf16 weights read at {D.FORECAST_LOAD_GBPS:g} GB/s"),
            "decode": ((sampling + in_steps) * step, "measured",
                       f"{sampling + in_steps:,} generate() token steps x {step * 1e3:.1f} ms "
                       f"(roofline + {overhead * 1e3:.1f} ms fitted to TRL_GRPO_MEASURED_S)"),
            "train": (shape.steps * train, "assumption", f"{shape.steps} steps x {why}")}


# --- the forecast ---------------------------------------------------------------------------

def _gpu_type(gpu: str | None) -> str | None:
    return None if gpu is None else gpu.split(":")[0]


def _tokens(shape: RunShape) -> list[Figure]:
    out = []
    rl = shape.engine == "prime-rl" or shape.method == "grpo"
    if rl:
        out.append(Figure(name="generated in training", value=float(
            shape.steps * shape.sequences_per_step * shape.max_tokens), unit="tokens",
            kind="derived", basis=f"{shape.steps} steps x {shape.sequences_per_step} rollouts x "
                                  f"{shape.max_tokens} max tokens (a bound)"))
    for s in shape.sampling:
        out.append(Figure(name=f"generated ({s.what})", value=float(s.completions * s.max_tokens),
                          unit="tokens", kind="derived",
                          basis=f"{s.completions} replies x {s.max_tokens} max tokens"))
    out.append(Figure(name="trained", value=float(
        shape.steps * shape.sequences_per_step * (shape.prompt_tokens + shape.max_tokens)),
        unit="tokens", kind="assumption",
        basis=f"{shape.steps} steps x {shape.sequences_per_step} sequences x "
              f"({shape.prompt_tokens} prompt (FORECAST_PROMPT_TOKENS) + {shape.max_tokens})"))
    return out


def _local(target: Target) -> Forecast:
    if target.recipe in D.LOCAL_SMOKE_S:
        low, high = D.LOCAL_SMOKE_S[target.recipe]
        wall = Figure(name="wall clock", value=math.sqrt(low * high), unit="s", kind="measured",
                      basis=f"geometric mean of the {target.recipe} smoke's {low:g}-{high:g} s on "
                            "2 CPUs (docs/launching.md, LOCAL_SMOKE_S)")
    else:
        wall = Figure(name="wall clock", value=D.LOCAL_SMOKE_ASSUMED_S, unit="s",
                      kind="assumption", basis="LOCAL_SMOKE_ASSUMED_S (this smoke was never timed)")
    return Forecast(model=None, training=None, steps=None, gpu=None, gpu_count=0, gpus_needed=0,
                    tokens=[], memory=[], time=[wall], wall_s=wall, run_s=wall.value,
                    gpu_hours=Figure(name="GPU hours", value=0.0, unit="h", kind="derived",
                                     basis="CPU only"),
                    dollars=None, fits=True,
                    notes=["the local backend runs the recipe's CPU smoke: no GPU, no dollars"])


def _unknown(target: Target, gpu: str | None, count: int, why: str) -> Forecast:
    wall = Figure(name="wall clock", value=D.FORECAST_UNKNOWN_RECIPE_H * 3600, unit="s",
                  kind="assumption", basis=f"FORECAST_UNKNOWN_RECIPE_H ({why})")
    return _priced(None, None, None, gpu, count, count, [], [], [wall], wall, wall.value, True,
                   None, [], [why])


def _priced(model, training, steps, gpu, count, needed, tokens, memory, time, wall, run_s, fits,
            refusal, fixes, notes) -> Forecast:
    kind = _gpu_type(gpu)
    hours = Figure(name="GPU hours", value=wall.value * count / 3600, unit="h", kind=wall.kind,
                   basis=f"wall clock x {count} GPU")
    dollars = None
    if kind is not None:
        price = D.MODAL_GPU_PRICE_PER_S[kind]
        dollars = Figure(name="dollars", value=wall.value * count * price, unit="$",
                         kind=wall.kind,
                         basis=f"{count} x ${price:g}/s ({kind}, Modal, read "
                               f"{D.MODAL_GPU_PRICES_READ}; GPU time only)")
    return Forecast(model=model, training=training, steps=steps, gpu=gpu, gpu_count=count,
                    gpus_needed=needed, tokens=tokens, memory=memory, time=time, wall_s=wall,
                    run_s=run_s, gpu_hours=hours, dollars=dollars, fits=fits, refusal=refusal,
                    fixes=fixes, notes=notes)


def forecast(target: Target, backend: str, gpu: str | None, gpu_count: int) -> Forecast:
    """The forecast of launching ``target`` on ``backend`` with ``gpu`` (``TYPE[:COUNT]``)."""
    if backend == "local":
        return _local(target)
    shape = run_shape(target)
    if shape is None:
        why = (f"the {target.recipe} recipe runs a prime-rl config: plan the config to forecast "
               "it" if target.recipe == D.PRIME_RL_RECIPE else
               f"no run shape is known for recipe {target.recipe!r}")
        return _unknown(target, gpu, gpu_count, why)
    if shape.params_b is None:
        return _unknown(target, gpu, gpu_count, f"the size of {shape.model} is unknown (no "
                                                "known architecture, none in its id)")
    kind = _gpu_type(gpu)
    notes = list(shape.facts)
    if shape.arch_assumed:
        notes.append(f"{shape.model}'s shape is not known here: layers, width and KV cache are "
                     f"those of {shape.arch.name} ({shape.params_from}: {shape.params_b:g}B "
                     "parameters)")
    if shape.steps_from.startswith("assumption"):
        notes.append(f"{shape.steps_from}: forecast for {shape.steps} steps")
    if shape.engine == "prime-rl":
        memory, needed, kv = prime_rl_memory(shape, kind)
        time, run_s = _prime_rl_time(shape, kind, kv)
    else:
        memory, needed = trl_memory(shape, kind), 1
        time, run_s = _trl_time(shape, kind)
    total = sum(t.value for t in time)
    wkind, shares = _largest_kind(time)
    wall = Figure(name="wall clock", value=total, unit="s", kind=wkind,
                  basis=f"sum of the parts below ({shares})")
    refusal, fixes = _refusal(shape, kind, gpu_count, memory, needed)
    if refusal:
        notes.append("the time and dollars above are for this layout as if it could start")
    for g in memory:
        if g.fits and g.tight:
            notes.append(f"GPU {g.gpu} ({g.role}) may not fit: {g.total_gb:.1f} of "
                         f"{g.capacity_gb:g} GB once the assumed items are counted")
    return _priced(shape.model, shape.training, shape.steps, gpu, gpu_count, needed,
                   _tokens(shape), memory, time, wall, run_s, refusal is None, refusal, fixes,
                   notes)


def _prime_rl_time(shape: RunShape, kind: str, kv_tokens: float) -> tuple[list[Figure], float]:
    startup, per_rollout = prime_rl_fit()
    parts = _prime_rl_parts(shape, kind, kv_tokens)
    n, R = shape.steps, shape.sequences_per_step
    infer = R * per_rollout + parts["decode"][0] + parts["scoring"][0]
    train = parts["train"][0] + parts["broadcast"][0]
    fit = (f"fitted to the seed's {' and '.join(D.PRIME_RL_FIT_ARMS)} runs "
           f"({', '.join(f'{D.PRIME_RL_MEASURED[a][0]:g} s' for a in D.PRIME_RL_FIT_ARMS)})")
    time = [Figure(name="container start", value=D.MODAL_CONTAINER_START_S, unit="s",
                   kind="assumption", basis="MODAL_CONTAINER_START_S"),
            Figure(name="start-up and evals", value=startup, unit="s", kind="measured", basis=fit),
            Figure(name="weights load", value=parts["load"][0], unit="s", kind="assumption",
                   basis=parts["load"][2]),
            Figure(name="rollouts", value=n * R * per_rollout, unit="s", kind="measured",
                   basis=f"{n} steps x {R} rollouts x {per_rollout:.3f} s, {fit}")]
    if infer >= train:
        time += [Figure(name="decode", value=n * parts["decode"][0], unit="s", kind="derived",
                        basis=f"{n} steps x {parts['decode'][2]}")]
        if parts["scoring"][0]:
            time.append(Figure(name="teacher scoring", value=n * parts["scoring"][0], unit="s",
                               kind="assumption", basis=f"{n} steps x {parts['scoring'][2]}"))
    else:
        time += [Figure(name="training", value=n * (train - R * per_rollout), unit="s",
                        kind="assumption",
                        basis=f"{n} steps x training and {parts['broadcast'][2]} beyond the "
                              "rollouts it overlaps (prime-rl is 1-step async; here training "
                              "sets the pace)")]
    return time, sum(t.value for t in time[1:])


def _trl_time(shape: RunShape, kind: str) -> tuple[list[Figure], float]:
    parts = _trl_parts(shape, kind, trl_fit())
    names = {"container": "container start", "load": "weights load", "decode": "generation",
             "train": "training"}
    time = [Figure(name=names[k], value=v, unit="s", kind=kd, basis=b)
            for k, (v, kd, b) in parts.items()]
    return time, sum(t.value for t in time)


# --- refusing, and what would fit --------------------------------------------------------------

def _refusal(shape: RunShape, kind: str, count: int, memory: list[GpuLoad],
             needed: int) -> tuple[str | None, list[str]]:
    problems = [f"GPU {g.gpu} ({g.role.split(' (')[0]}): {g.problem}" for g in memory
                if not g.fits]
    if needed > D.MODAL_MAX_GPUS:
        problems.append(f"the layout needs {needed} GPUs, more than one Modal container's "
                        f"{D.MODAL_MAX_GPUS}")
    elif needed > count:
        problems.append(f"the layout needs {needed} GPUs ({shape.infer_gpus} inference + "
                        f"{shape.train_gpus} trainer"
                        f"{' + teacher' if needed > shape.infer_gpus + shape.train_gpus else ''}"
                        f") and the launch gives {count}")
    if not problems:
        return None, []
    head = (f"{shape.model} ({shape.training} fine-tuning) does not fit {count} x {kind} "
            f"({gpu_spec(kind)[0]:g} GB each): ")
    return head + "; ".join(problems), _fixes(shape, kind, count, memory, needed)


def _fits(shape: RunShape, kind: str) -> tuple[bool, int, float]:
    """Whether ``shape`` fits on ``kind`` (its own layout), the GPUs it needs, the fullest GPU."""
    if shape.engine == "prime-rl":
        loads, needed, _ = prime_rl_memory(shape, kind)
    else:
        loads, needed = trl_memory(shape, kind), 1
    ok = needed <= D.MODAL_MAX_GPUS and all(g.fits and not g.tight for g in loads)
    return ok, needed, max(g.total_gb for g in loads)


def _cheapest(shape: RunShape, training: str) -> str | None:
    """The cheapest Modal layout (GPU type, tensor parallel, trainer GPUs, and for prime-rl a
    ``max_model_len`` of seq_len when none is set) where ``shape`` with ``training`` fits, as a
    sentence, or None."""
    best = None
    variant = dataclasses.replace(shape, training=training, lora_rank=shape.lora_rank or 16)
    replicas = max(shape.infer_gpus // shape.infer_tp, 1)
    lengths = [shape.max_model_len]
    if shape.engine == "prime-rl" and shape.max_model_len is None:
        lengths.append(shape.micro_batch_tokens)
    for kind, price in D.MODAL_GPU_PRICE_PER_S.items():
        if kind == "A100":
            continue  # the same card as A100-40GB
        layouts = [(1, 1, None)] if shape.engine == "trl" else [
            (tp, t, length) for length in lengths for tp in (1, 2, 4, 8)
            for t in range(1, D.MODAL_MAX_GPUS + 1) if tp * replicas + t <= D.MODAL_MAX_GPUS]
        for tp, t, length in layouts:
            candidate = variant if shape.engine == "trl" else dataclasses.replace(
                variant, infer_tp=tp, infer_gpus=tp * replicas, train_gpus=t,
                max_model_len=length)
            ok, needed, fullest = _fits(candidate, kind)
            if ok and (best is None or needed * price < best[0]):
                best = (needed * price, kind, needed, tp, t, length, fullest)
    if best is None:
        return None
    cost, kind, needed, tp, t, length, fullest = best
    where = "" if shape.engine == "trl" else (
        f": inference tensor_parallel_size {tp}, FSDP over {t} trainer GPU(s)" + (
            f", [inference.vllm] max_model_len = {length}" if length != shape.max_model_len
            else ""))
    return (f"{training} fine-tuning fits {needed} x {kind}{where} (fullest GPU "
            f"{fullest:.1f} of {gpu_spec(kind)[0]:g} GB; ${cost * 3600:.2f} an hour)")


def _fixes(shape: RunShape, kind: str, count: int, memory: list[GpuLoad],
           needed: int) -> list[str]:
    fixes: list[str] = []
    if shape.engine == "prime-rl" and any(g.problem and "KV cache" in g.problem for g in memory):
        shorter = dataclasses.replace(shape, max_model_len=shape.micro_batch_tokens)
        if _fits(shorter, kind)[0]:
            fixes.append(f"[inference.vllm] max_model_len = {shape.micro_batch_tokens} (the "
                         "config's seq_len): vLLM then needs the KV cache of one such sequence")
    if shape.training == "full":
        lora = dataclasses.replace(shape, training="lora", lora_rank=16)
        ok, n, fullest = _fits(lora, kind)
        if ok and n <= count:
            fixes.append(f"LoRA ([trainer.model.lora] rank = 16): the fullest GPU holds "
                         f"{fullest:.1f} of {gpu_spec(kind)[0]:g} GB")
    if needed > count and needed <= D.MODAL_MAX_GPUS and _fits(shape, kind)[0]:
        fixes.append(f"gpu='{kind}:{needed}': the layout's {needed} GPUs")
    for training in (["full", "lora"] if shape.training == "full" else [shape.training]):
        found = _cheapest(shape, training)
        if found:
            fixes.append(found)
    trainer_heavy = [g for g in memory if not g.fits and g.role.startswith("trainer")]
    if trainer_heavy and any(i.name in ("activations", "logits") and i.value >
                             0.25 * g.capacity_gb for g in trainer_heavy for i in g.items):
        fixes.append("shorter sequences (seq_len) or fewer rollouts per micro-batch: "
                     "activations and logits grow with the tokens of one forward pass")
    if not fixes:
        fixes.append(f"nothing on one Modal node fits: serve the model on a multi-node cluster "
                     f"or train a smaller model than {shape.model}")
    return fixes
