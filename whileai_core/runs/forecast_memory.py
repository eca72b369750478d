"""The forecast's memory model: what each GPU of a launch holds, and whether the run can start.

Per GPU in prime-rl's layout (inference first, an OPD teacher beside the policy on GPU 0, the
FSDP trainer after) or a TRL recipe's one GPU: 2 bytes a bf16 parameter; 16 a parameter for
AdamW in mixed precision, 8 of them kept on the GPU by prime-rl [1]; activations under full
checkpointing [2, 3]; the KV cache vLLM needs to start; the datasheet's memory. A GPU whose
*derived* items alone exceed it makes the forecast refuse, with the fixes that would fit, each
re-checked by the same arithmetic; assumptions alone only warn.

[1] Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
    SC 2020, arXiv:1910.02054, sec. 3.1 (2 + 2 + 12 bytes a parameter with Adam).
[2] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", 2022,
    arXiv:2205.05198, eq. 1.
[3] Chen et al., "Training Deep Nets with Sublinear Memory Cost", 2016, arXiv:1604.06174.
"""

from __future__ import annotations

import dataclasses

from .. import defaults as D
from ..errors import ConfigError
from ..voice import arg
from .forecast_results import Figure, GpuLoad, Kind, _weakest
from .run_shape import RunShape
from ..prime_rl.teacher import plan_teacher

_GB = 1e9


def gpu_spec(kind: str) -> tuple[float, float, float]:
    """(memory GB, dense bf16 TFLOPS, bandwidth GB/s) of a Modal GPU type."""
    return D.GPU_SPECS[kind]


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
        if kind == "A100" or kind in D.NO_BF16_GPUS:
            continue  # the same card as A100-40GB; a card without bf16 is no fix for a bf16 run
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
        fixes.append(f"{arg('gpu', f'{kind}:{needed}', op='launch_run')}: the layout's "
                     f"{needed} GPUs")
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
