"""The launch forecast: tokens, memory per GPU, wall clock and dollars, before a run spends.

``forecast`` turns a target's run shape into a ``Forecast``, every number with its ``kind``
(``forecast_results``). Memory is ``forecast_memory``'s, time ``forecast_time``'s; here are the
tokens, the local smoke, and the dollars: Modal's dated per-second GPU prices, GPU time only.
The names other modules import from here are those modules', re-exported.
"""

from __future__ import annotations

import math

from .. import defaults as D
from .forecast_memory import _refusal, gpu_spec, prime_rl_memory, trl_memory
from .forecast_results import (Figure, Forecast, ForecastError, GpuLoad, Kind, _largest_kind,
                               fmt_quantity)
from .forecast_time import (_prime_rl_time, _trl_time, measured_shape, prime_rl_calibration,
                            prime_rl_fit, trl_calibration, trl_fit)
from .run_shape import RunShape, run_shape
from .targets import Target

__all__ = ["Figure", "Forecast", "ForecastError", "GpuLoad", "Kind", "config_forecast",
           "fmt_quantity", "forecast", "gpu_spec", "measured_shape", "prime_rl_fit",
           "prime_rl_memory", "trl_fit", "trl_memory"]


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
              f"({shape.prompt_tokens} prompt tokens (an assumed length) + {shape.max_tokens})"))
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
    return Forecast(model=None, training=None, steps=None, gpu=gpu, gpu_count=count,
                    gpus_needed=count, tokens=[], memory=[], time=[wall], wall_s=wall,
                    run_s=wall.value, **_priced(wall, gpu, count), fits=True, refusal=None,
                    fixes=[], notes=[why], calibration=None)


def _priced(wall: Figure, gpu: str | None, count: int) -> dict[str, Figure | None]:
    """The GPU hours and dollars of ``wall`` on ``count`` GPUs of type ``gpu``."""
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
    return {"gpu_hours": hours, "dollars": dollars}


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
    if kind in D.NO_BF16_GPUS:
        notes.append(f"{kind} has no bf16 (compute capability 7.5) and the run trains and serves "
                     "in bf16: expect it to fail or to run far slower than forecast; L4 or A10G "
                     "are the nearest cards with bf16")
    if shape.steps_from.startswith("assumption"):
        notes.append(f"{shape.steps_from}: forecast for {shape.steps} steps")
    if shape.engine == "prime-rl":
        memory, needed, kv = prime_rl_memory(shape, kind)
        time, run_s = _prime_rl_time(shape, kind, kv)
        calibration = prime_rl_calibration()
        setup = D.PRIME_RL_MEASURED_SETUP
        if shape.model != setup["model"] or kind != setup["gpu"]:
            notes.append(f"the time model's held-out check is on {setup['model']} and "
                         f"{setup['gpu']}s; this run ({shape.model} on {kind}) rests on the "
                         "derived and assumed parts, which no run here has checked")
    else:
        memory, needed = trl_memory(shape, kind), 1
        if gpu_count > 1:  # the TRL recipes train on one GPU (no accelerate launch there)
            notes.append(f"the {shape.method} recipe trains on 1 GPU: {gpu_count - 1} of the "
                         f"{gpu_count} asked for would sit idle and still be billed")
        time, run_s = _trl_time(shape, kind)
        calibration = trl_calibration()
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
    return Forecast(model=shape.model, training=shape.training, steps=shape.steps, gpu=gpu,
                    gpu_count=gpu_count, gpus_needed=needed, tokens=_tokens(shape), memory=memory,
                    time=time, wall_s=wall, run_s=run_s, **_priced(wall, gpu, gpu_count),
                    fits=refusal is None, refusal=refusal, fixes=fixes, notes=notes,
                    calibration=calibration)


def config_forecast(config_text: str, gpu: str) -> Forecast:
    """The Modal forecast of a prime-rl config's text on ``gpu`` (``TYPE:COUNT``): what a plan
    of it shows, for a recipe that has the config but no plan (the prime-rl recipe's collect)."""
    from pathlib import Path

    kind, _, count = gpu.partition(":")
    target = Target(kind="config", recipe=D.PRIME_RL_RECIPE, path=Path("config.toml"), sha256="",
                    data=config_text.encode("utf-8"))
    return forecast(target, "modal", gpu, int(count) if count.isdigit() else 1)
