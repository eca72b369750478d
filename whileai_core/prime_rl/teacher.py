"""Where an OPD teacher runs: beside the policy, on GPUs of its own, or already served.

prime-rl never starts the teacher (its configs/debug/algo/opd.toml starts it first, by hand); the
config's header says how. The start line is sized from the teacher's weights: parameters
(``params_b``, else read from the model id) times the bytes per parameter of its ``dtype``.

- Already served (``served=True``, or a URL that is not this machine): no start line.
- Small enough to share the policy's inference GPU: the weights fit in
  ``TEACHER_WEIGHT_SHARE`` of the ``OPD_COLOCATED_MEMORY`` share of one GPU, so the teacher and the
  policy's vLLM each take that share of GPU 0 (prime-rl puts the policy's inference on the first
  GPUs, the trainer after them), as prime-rl's own OPD example does.
- Otherwise GPUs of its own after the ones prime-rl uses, with tensor parallelism: the smallest
  power of two ``tp`` (vLLM splits attention heads evenly, and model head counts are powers of
  two times a small factor) with weights <= ``TEACHER_WEIGHT_SHARE`` x
  ``TEACHER_GPU_MEMORY_UTILIZATION`` x ``gpu_memory_gb`` x tp, leaving the rest for the KV cache.
- Size unknown (no ``params_b``, none in the id): the colocated line, with a warning to give it.
"""

from __future__ import annotations

import math
from typing import Literal
from urllib.parse import urlparse

from .. import defaults as D
from ..errors import ConfigError
from ..models import model_size_b
from ..result import Result

LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1")
DTYPE_BYTES = {"bfloat16": 2.0, "float16": 2.0, "float32": 4.0, "fp8": 1.0, "int8": 1.0,
               "int4": 0.5}
Dtype = Literal["bfloat16", "float16", "float32", "fp8", "int8", "int4"]
Layout = Literal["served", "colocated", "dedicated", "size_unknown"]


class TeacherPlan(Result):
    """How the OPD teacher is served: ``layout`` (``served``: no start line; ``colocated``:
    beside the policy's vLLM on GPU 0; ``dedicated``: ``gpus`` GPUs of its own with tensor
    parallelism ``tensor_parallel``; ``size_unknown``: the colocated line, unchecked), the
    weights it was sized from, and the ``start`` line (None when nothing is to be started)."""

    model: str
    url: str
    layout: Layout
    params_b: float | None
    params_from: Literal["given", "model id", "unknown"]
    dtype: Dtype
    weights_gb: float | None
    gpu_memory_gb: float
    gpus: int
    tensor_parallel: int
    gpu_memory_utilization: float | None
    devices: str | None
    start: str | None
    reason: str

    def render(self) -> str:
        return f"teacher {self.model} ({self.layout}): {self.reason}"


def is_local(url: str) -> bool:
    return (urlparse(url).hostname or "") in LOCAL_HOSTS


def plan_teacher(model: str, url: str, *, params_b: float | None = None,
                 dtype: str | None = None, served: bool = False, first_free_gpu: int = 2,
                 nodes: int = 1, gpu_memory_gb: float = D.TEACHER_GPU_MEMORY_GB) -> TeacherPlan:
    """Size the teacher and write its start line (see the module docstring).

    ``first_free_gpu``: the first GPU prime-rl does not use on the node (its ``gpus``);
    a dedicated teacher starts there. Raises ConfigError when the teacher needs more GPUs than
    one node has (``MODAL_MAX_GPUS``), with the fix.
    """
    kind: Dtype = dtype if dtype is not None else "bfloat16"  # type: ignore[assignment]
    if kind not in DTYPE_BYTES:
        raise ConfigError(f"teacher dtype {dtype!r} is not one of {', '.join(DTYPE_BYTES)}",
                          fix="the dtype its weights are served in (bfloat16 for most checkpoints)")
    if params_b is not None:
        size, source = float(params_b), "given"
    else:
        size = model_size_b(model)
        source = "model id" if size is not None else "unknown"
    weights = None if size is None else size * DTYPE_BYTES[kind]
    port = urlparse(url).port or 8000
    common = dict(model=model, url=url, params_b=size, params_from=source, dtype=kind,
                  weights_gb=weights, gpu_memory_gb=float(gpu_memory_gb))
    if served or not is_local(url):
        why = ("already served at this URL (teacher_served=true): nothing to start" if served else
               f"served at {url}, not on this machine: start it there, reachable from the run")
        return TeacherPlan(layout="served", gpus=0, tensor_parallel=1, gpu_memory_utilization=None,
                           devices=None, start=None, reason=why, **common)
    flags = _dtype_flags(kind)
    colocated_budget = D.TEACHER_WEIGHT_SHARE * D.OPD_COLOCATED_MEMORY * gpu_memory_gb
    if weights is None or weights <= colocated_budget:
        mem = f" --vllm.gpu-memory-utilization {D.OPD_COLOCATED_MEMORY}" if nodes == 1 else ""
        start = (f"CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model {model} "
                 f"--server.port {port}{mem}{flags}")
        if weights is None:
            why = (f"size unknown (no params_b, none in the id {model!r}): started beside the "
                   f"policy on GPU 0 at {D.OPD_COLOCATED_MEMORY} of its memory, unchecked; give "
                   "the teacher's params_b to size it")
            layout: Layout = "size_unknown"
        else:
            why = (f"~{weights:.1f} GB of {kind} weights fit beside the policy's vLLM on GPU 0 "
                   f"(each takes {D.OPD_COLOCATED_MEMORY} of its {gpu_memory_gb:g} GB)")
            layout = "colocated"
        return TeacherPlan(layout=layout, gpus=0, tensor_parallel=1,
                           gpu_memory_utilization=D.OPD_COLOCATED_MEMORY if nodes == 1 else None,
                           devices="0", start=start, reason=why, **common)
    per_gpu = D.TEACHER_WEIGHT_SHARE * D.TEACHER_GPU_MEMORY_UTILIZATION * gpu_memory_gb
    tp = 1 << max(0, math.ceil(math.log2(weights / per_gpu)))
    if tp > D.MODAL_MAX_GPUS:
        raise ConfigError(f"the teacher {model} (~{weights:.0f} GB of {kind} weights) needs {tp} "
                          f"GPUs of {gpu_memory_gb:g} GB with tensor parallelism, more than one "
                          f"node's {D.MODAL_MAX_GPUS}", fix="serve it on its own cluster and pass "
                          "teacher_served=true with its URL, or a smaller dtype (fp8, int4)")
    devices = ",".join(str(i) for i in range(first_free_gpu, first_free_gpu + tp))
    tp_flag = f" --vllm.tensor-parallel-size {tp}" if tp > 1 else ""
    start = (f"CUDA_VISIBLE_DEVICES={devices} uv run inference --vllm.model {model} "
             f"--server.port {port}{tp_flag} --vllm.gpu-memory-utilization "
             f"{D.TEACHER_GPU_MEMORY_UTILIZATION}{flags}")
    why = (f"~{weights:.0f} GB of {kind} weights need {tp} GPU(s) of {gpu_memory_gb:g} GB of its "
           f"own (tensor parallel {tp}; weights at most {D.TEACHER_WEIGHT_SHARE:.0%} of each "
           f"GPU's vLLM memory, the rest for the KV cache): GPUs {devices}, after the "
           f"{first_free_gpu} prime-rl uses, so the node needs {first_free_gpu + tp} GPUs")
    return TeacherPlan(layout="dedicated", gpus=tp, tensor_parallel=tp,
                       gpu_memory_utilization=D.TEACHER_GPU_MEMORY_UTILIZATION, devices=devices,
                       start=start, reason=why, **common)


def _dtype_flags(kind: str) -> str:
    if kind == "bfloat16":
        return ""  # vLLM's 'auto' serves a bfloat16 checkpoint in bfloat16
    if kind in ("float16", "float32"):
        return f" --vllm.dtype {kind}"
    if kind == "fp8":
        return " --vllm.quantization fp8"
    return ""  # int8/int4: a quantized checkpoint (AWQ, GPTQ) carries its own quantization
