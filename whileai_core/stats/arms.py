"""The two arms of a paired comparison: their runs, the tasks both scored, per-task values.

An arm is one run of rows, or a list of runs (one per training seed). Here: which tasks pair,
each task's value per run, which metric ``auto`` stands for, and the between-seed variance when an
arm has several runs (Welch-Satterthwaite; Satterthwaite 1946, Biometrics Bulletin 2(6):110-114).
Means and differences are taken on values scaled by their largest magnitude (rewards near 1e308).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..defaults import MIN_SEEDS_FOR_SEED_VARIANCE, PROVE_EFFECT
from ..errors import ArgumentError
from ..rows import Rows, load_rows
from ..safepath import is_path
from ..voice import arg
from .clustered import positions
from .intervals import t_value
from .rates import task_values, trials_cap


def pair_tasks(before: Rows, after: Rows) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into before, into after) of the tasks both scored, in after's order."""
    position = {t: i for i, t in enumerate(before.task_ids)}
    ib, ia = [], []
    for j, t in enumerate(after.task_ids):
        i = position.get(t)
        if i is not None:
            ib.append(i)
            ia.append(j)
    return np.asarray(ib, dtype=np.int64), np.asarray(ia, dtype=np.int64)


def as_runs(arm: Any, threshold: float | None) -> list[Rows]:
    """One arm as a list of runs: rows (one run), or a list of rows-likes (one per seed)."""
    if isinstance(arm, (list, tuple)) and arm and all(
            isinstance(r, (Rows, list, tuple)) or is_path(r) for r in arm):
        return [load_rows(r, threshold=threshold) for r in arm]
    return [load_rows(arm, threshold=threshold)]


def arm_values(runs: list[Rows], shared: list[str], metric: str) -> tuple[np.ndarray, float | None]:
    """(runs x tasks) per-task values at the shared tasks, and the arm's trials cap."""
    rows, caps = [], 0.0
    for r in runs:
        idx = positions(r.task_ids, shared)
        rows.append(task_values(r, metric)[idx])
        cap = trials_cap(r, metric, idx)
        caps = None if cap is None or caps is None else caps + cap
    return np.stack(rows), caps


def resolve_metric(metric: str, runs: list[Rows], threshold: float | None
                   ) -> tuple[str, str | None, list[str]]:
    """(the metric ``auto`` stands for, the reward's warning, notes): the mean reward when the
    reward is continuous or on another scale and no threshold was given, else the pass rate."""
    scales = [r.reward_scale for r in runs]
    warning = next((s.warning for s in scales if s.warning), None)
    notes: list[str] = []
    continuous = next((s for s in scales if s.continuous), None)
    if metric == "auto":
        metric = "reward" if continuous is not None and threshold is None else "pass"
        if continuous is not None and metric == "reward":
            notes.append(f"compared on the mean reward ({continuous.summary()}); "
                         f"{arg('metric', 'pass')} compares pass rates at threshold "
                         f"{runs[0].threshold:g}")
    elif metric == "pass" and continuous is not None and continuous.kind == "bounded":
        notes.append(f"the reward is continuous ({continuous.summary()}): this compares pass "
                     f"rates at threshold {runs[0].threshold:g}; {arg('metric', 'reward')} "
                     "compares the mean reward")
    return metric, warning, notes


def scaled_mean(x: np.ndarray) -> float:
    """The mean, computed on values scaled by their largest magnitude (no overflow near 1e308)."""
    scale = float(np.max(np.abs(x))) if x.size else 0.0
    if scale == 0.0:
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.mean(x / scale) * scale)


def scaled_task_mean(runs: np.ndarray) -> np.ndarray:
    """Per-task mean over an arm's runs (axis 0), scaled like :func:`scaled_mean`."""
    scale = float(np.max(np.abs(runs))) if runs.size else 0.0
    if scale == 0.0:
        return runs.mean(axis=0)
    return (runs / scale).mean(axis=0) * scale


def difference(after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """after - before per task; inf where it does not fit a float (values near +-1e308)."""
    with np.errstate(over="ignore"):
        return after - before


def in_unit(x: np.ndarray) -> bool:
    return bool(np.all((x >= 0.0) & (x <= 1.0)))


def correlation(pb: np.ndarray, pa: np.ndarray) -> float | None:
    if pb.size < 2 or bool(np.all(pb == pb[0])) or bool(np.all(pa == pa[0])):
        return None
    sb, sa = float(np.max(np.abs(pb))), float(np.max(np.abs(pa)))
    return float(np.corrcoef(pb / sb, pa / sa)[0, 1])


def with_seeds(d: np.ndarray, vb: np.ndarray, va: np.ndarray, level: float):
    """Task-level variance of mean(d) plus the between-seed variance of the arm means, with
    Welch-Satterthwaite degrees of freedom (Satterthwaite 1946)."""
    from scipy.special import stdtr  # lazy: scipy.special is slow to import

    n = d.shape[0]
    se_task2 = float(d.var(ddof=1)) / n
    var_b = float(vb.mean(axis=1).var(ddof=1)) if vb.shape[0] >= MIN_SEEDS_FOR_SEED_VARIANCE else None
    var_a = float(va.mean(axis=1).var(ddof=1)) if va.shape[0] >= MIN_SEEDS_FOR_SEED_VARIANCE else None
    sb, sa = vb.shape[0], va.shape[0]
    if var_b is not None and var_a is not None:
        seed_terms = [(var_b / sb, sb - 1), (var_a / sa, sa - 1)]
        pooled = ((sb - 1) * var_b + (sa - 1) * var_a) / (sb + sa - 2)
        note = f"seed variance from {sb} runs before and {sa} after"
    else:
        var, runs = (var_b, sb) if var_b is not None else (var_a, sa)
        seed_terms = [(var * (1.0 / sb + 1.0 / sa), runs - 1)]
        pooled = var
        note = (f"seed variance measured on the arm with {runs} runs and assumed for the arm "
                "with one (same training procedure)")
    total = se_task2 + sum(v for v, _ in seed_terms)
    denom = se_task2 ** 2 / (n - 1) + sum(v ** 2 / df for v, df in seed_terms)
    df = total ** 2 / denom if denom > 0 else float(n - 1)
    se = math.sqrt(total)
    delta = float(d.mean())
    if se == 0.0:
        return (delta, delta), "seeds_welch_t", 1.0, {}, note
    q = float(t_value(0.5 + level / 2.0, df))
    p = float(2.0 * stdtr(df, -abs(delta) / se))
    fields = dict(seed_std=math.sqrt(pooled), seed_variance="measured")
    return (delta - q * se, delta + q * se), "seeds_welch_t", p, fields, note


def resolve_effect(effect: float | None, metric: str, runs: list) -> tuple[float, str | None]:
    """(the effect in the compared metric's units, the note saying how it was read).

    Given, ``effect`` is in the compared metric's units (a share below 1 for pass rates and
    rewards in [0, 1], reward units otherwise). Left out, it is ``PROVE_EFFECT``, a share of the
    scale: on a reward on another scale, that share of the reward's span
    (:class:`whileai_core.rewards.RewardScale`), and a note says so."""
    spans = [r.reward_scale for r in runs if r.reward_scale.kind == "scale"]
    if metric != "reward" or not spans:
        if effect is not None and effect >= 1:
            raise ArgumentError(f"`effect` must be below 1 when pass rates (or rewards in [0, "
                                f"1]) are compared, got {effect!r}", fix="a share, e.g. "
                                f"{PROVE_EFFECT} for 5 points of pass@1")
        return (PROVE_EFFECT if effect is None else float(effect)), None
    if effect is not None:
        return float(effect), None
    scale = max(spans, key=lambda r: r.span)
    scaled = PROVE_EFFECT * scale.span
    named = f", a {scale.looks_like} scale" if scale.looks_like else ""
    return scaled, (f"effect: the default {PROVE_EFFECT:g} is in pass-rate units; this reward "
                    f"runs from {scale.low:.4g} to {scale.high:.4g}{named}, so it is read as "
                    f"{PROVE_EFFECT:g} of the span {scale.span:.4g}: {scaled:.4g} reward units "
                    f"(give {arg('effect', op='compare')} in reward units to choose another)")
