"""The forecast's time model: the seconds of each part of a run, fitted to the runs measured here.

prime-rl's start-up and seconds per rollout are fitted to the two measured arms that differ in
rollouts a step (``defaults.PRIME_RL_FIT_ARMS``); what grows with the model (weights loaded,
decode at the memory-bandwidth roofline, training FLOPs [1] at ``FORECAST_MFU``, the weight
broadcast) is derived on top. The third arm (opd) is held out: its residual is the one check
(``prime_rl_calibration``). An OPD teacher's start-up and the end-of-run copy are billed
outside ``rl`` and forecast too. The TRL recipes' seconds per token step are fitted to the
GRPO recipe's measured bound (``defaults.TRL_GRPO_MEASURED_S``), nothing held out.

[1] Kaplan et al., "Scaling Laws for Neural Language Models", 2020, arXiv:2001.08361, sec. 2.1
    (6N FLOPs a trained token: 2N forward, 4N backward).
"""

from __future__ import annotations

import math
from functools import lru_cache

from .. import defaults as D
from .forecast_memory import gpu_spec, prime_rl_memory
from .forecast_results import Calibration, CalibrationRun, Figure, Kind
from .run_shape import RunShape, grpo_shape, prime_rl_shape
from ..prime_rl.teacher import is_local

# the billed parts of a prime-rl launch outside rl's own clock (the recipe's record times each)
CONTAINER_START, TEACHER_START, CHECKPOINT_COPY = ("container start", "teacher start-up",
                                                   "checkpoint copy")
OUTSIDE_RL = (CONTAINER_START, TEACHER_START, CHECKPOINT_COPY)


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
    ``load`` once (the policy's and the trainer's weights; an OPD teacher's are in its start-up,
    ``teacher_load``), and per step ``inference`` (decode + teacher scoring) and ``trainer``
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
    load = 2.0 * 2.0 * p / D.FORECAST_LOAD_GBPS
    return {"load": (load, "assumption", f"bf16 weights read at {D.FORECAST_LOAD_GBPS:g} GB/s"),
            "teacher_load": (2.0 * loaded_teacher / D.FORECAST_LOAD_GBPS, "assumption",
                             f"the teacher's bf16 weights read at {D.FORECAST_LOAD_GBPS:g} GB/s"),
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
    """The shape of a ``PRIME_RL_MEASURED`` run, written as the config it ran (opd with its
    teacher served on localhost)."""
    s = D.PRIME_RL_MEASURED_SETUP
    teacher = (f'[orchestrator.algo.teacher]\nname = "{s["teacher"]}"\n'
               'base_url = "http://localhost:8001/v1"\n' if algo == "opd" else "")
    return prime_rl_shape(
        f'max_steps = {s["steps"]}\nseq_len = {s["seq_len"]}\n[model]\nname = "{s["model"]}"\n'
        f'[orchestrator]\nbatch_size = {rollouts}\n[orchestrator.algo]\ntype = "{algo}"\n'
        f'{teacher}[orchestrator.train.sampling]\nmax_completion_tokens = {s["max_tokens"]}\n'
        '[inference]\n')


@lru_cache(maxsize=1)
def prime_rl_calibration() -> Calibration:
    """Each measured prime-rl run against the model: the fitted arms (residual 0 by
    construction) and the held-out one, forecast as the config it ran on its GPU."""
    runs = []
    gpu = D.PRIME_RL_MEASURED_SETUP["gpu"]
    for arm, (wall, rollouts, algo) in D.PRIME_RL_MEASURED.items():
        shape = measured_shape(rollouts, algo)
        _, run_s = _prime_rl_time(shape, gpu, prime_rl_memory(shape, gpu)[2])
        runs.append(CalibrationRun(run=f"seed {arm}",
                                   role="fitted" if arm in D.PRIME_RL_FIT_ARMS else "held out",
                                   measured_s=wall, forecast_s=round(run_s, 2),
                                   residual_s=round(run_s - wall, 2)))
    setup = D.PRIME_RL_MEASURED_SETUP
    shapes = ", ".join(f"{arm} {r}" for arm, (_, r, _) in D.PRIME_RL_MEASURED.items())
    return Calibration(fitted="prime-rl's start-up and seconds per rollout", runs=runs,
                       note=f"The three seed arms share {setup['model']}, {setup['steps']} steps "
                            f"and 2 x {gpu} (rollouts a step: {shapes}): the held-out residual "
                            "checks the teacher's added cost, not another model or GPU")


@lru_cache(maxsize=1)
def trl_calibration() -> Calibration:
    shape = grpo_shape()
    _, run_s = _trl_time(shape, D.GRPO_GPU)
    return Calibration(fitted="the TRL recipes' seconds per generate() token step", runs=[
        CalibrationRun(run="the seed TRL GRPO run", role="fitted",
                       measured_s=D.TRL_GRPO_MEASURED_S, forecast_s=round(run_s, 2),
                       residual_s=round(run_s - D.TRL_GRPO_MEASURED_S, 2))],
        note=f"That run ({shape.model} + LoRA, {shape.steps} steps, 1 x {D.GRPO_GPU}) is an upper "
             "bound ('under fifteen minutes')")


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
            "decode": ((sampling + in_steps) * step, "fitted",
                       f"{sampling + in_steps:,} generate() token steps x {step * 1e3:.1f} ms "
                       f"(roofline + {overhead * 1e3:.1f} ms fitted to TRL_GRPO_MEASURED_S)"),
            "train": (shape.steps * train, "assumption", f"{shape.steps} steps x {why}")}


def _kept_gb(shape: RunShape) -> tuple[float, str]:
    """GB the prime-rl recipe copies to its volume at the end: the final weights (the last
    filesystem broadcast) and, with ``[ckpt]``, the trainer's checkpoint (weights in their
    optimization dtype and AdamW's two float32 moments a trainable parameter)."""
    p = shape.params_b
    trainable = (shape.arch.lora_params(shape.lora_rank) / 1e9 if shape.training == "lora"
                 and shape.arch else p)
    parts, words = 0.0, []
    if shape.broadcast == "filesystem":
        weights = 4.0 * trainable if shape.training == "lora" else 2.0 * p
        parts += weights
        words.append(f"final weights {weights:.1f} GB")
    if shape.checkpoint:
        ckpt = shape.param_bytes * p + 8.0 * trainable
        parts += ckpt
        words.append(f"trainer checkpoint {ckpt:.1f} GB ({shape.param_bytes:g} B a weight + 8 B "
                     "of AdamW moments a trained parameter)")
    return parts, " + ".join(words) or "nothing but logs and evals"


def _prime_rl_time(shape: RunShape, kind: str, kv_tokens: float) -> tuple[list[Figure], float]:
    startup, per_rollout = prime_rl_fit()
    parts = _prime_rl_parts(shape, kind, kv_tokens)
    n, R = shape.steps, shape.sequences_per_step
    infer = R * per_rollout + parts["decode"][0] + parts["scoring"][0]
    train = parts["train"][0] + parts["broadcast"][0]
    fit = (f"fitted to the seed's {' and '.join(D.PRIME_RL_FIT_ARMS)} runs "
           f"({', '.join(f'{D.PRIME_RL_MEASURED[a][0]:g} s' for a in D.PRIME_RL_FIT_ARMS)})")
    time = [Figure(name=CONTAINER_START, value=D.MODAL_CONTAINER_START_S, unit="s",
                   kind="assumption", basis="MODAL_CONTAINER_START_S")]
    if shape.method == "opd" and shape.teacher and is_local(shape.teacher[1]):
        load = parts["teacher_load"][0]
        time.append(Figure(name=TEACHER_START, value=D.FORECAST_VLLM_START_S + load, unit="s",
                           kind="assumption",
                           basis=f"the recipe starts the teacher's vLLM before rl: "
                                 f"FORECAST_VLLM_START_S + {parts['teacher_load'][2]} "
                                 f"({load:.1f} s)"))
    time += [Figure(name="start-up and evals", value=startup, unit="s", kind="fitted", basis=fit),
             Figure(name="weights load", value=parts["load"][0], unit="s", kind="assumption",
                    basis=parts["load"][2]),
             Figure(name="rollouts", value=n * R * per_rollout, unit="s", kind="fitted",
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
    kept, what = _kept_gb(shape)
    time.append(Figure(name=CHECKPOINT_COPY, value=kept / D.FORECAST_VOLUME_GBPS, unit="s",
                       kind="assumption",
                       basis=f"what the recipe keeps when rl ends, {what}, copied to its volume "
                             f"at FORECAST_VOLUME_GBPS {D.FORECAST_VOLUME_GBPS:g} GB/s"))
    return time, sum(t.value for t in time if t.name not in OUTSIDE_RL)


def _trl_time(shape: RunShape, kind: str) -> tuple[list[Figure], float]:
    parts = _trl_parts(shape, kind, trl_fit())
    names = {"container": "container start", "load": "weights load", "decode": "generation",
             "train": "training"}
    time = [Figure(name=names[k], value=v, unit="s", kind=kd, basis=b)
            for k, (v, kd, b) in parts.items()]
    return time, sum(t.value for t in time)
