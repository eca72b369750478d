"""Before vs after on the same tasks: the paired difference, its interval and a verdict.

Verdicts (``level`` 0.95 and ``effect`` 0.05 by default):

* ``moved`` / ``moved_the_wrong_way``: the interval of the difference excludes 0 and |delta| is
  past the noise band (when one is given);
* ``within_noise``: the interval excludes 0 but |delta| is inside the noise band (a tie, within
  ``NOISE_TIE_TOLERANCE``, counts as inside);
* ``flat``: an equivalence statement: the whole interval lies inside +-``effect``;
* ``no_detectable_change``: the interval contains 0 but reaches past +-``effect``: the eval cannot
  tell (what ``flat`` meant before 0.2);
* ``insufficient_data``: too few paired tasks for any test (:func:`paired.min_paired_tasks`).

Training seeds: ``before`` and ``after`` may each be a list of runs (one per training seed). The
arms are then the per-task means over their runs, and the interval adds the between-seed variance
of the run means to the task-level variance (Welch-Satterthwaite degrees of freedom, a t interval:
``ci_method`` ``seeds_welch_t``). An arm with one run borrows the other arm's seed variance (the
same training procedure assumed). With one run per arm the seed variance is unmeasured:
``seed_variance`` says so and a ``moved`` verdict carries that caveat in its note.
"""

from __future__ import annotations

import math
import os
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level, check_resamples, check_seed, z_value
from ..defaults import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HOLDOUT_POWER,
                        MIN_SEEDS_FOR_SEED_VARIANCE, NOISE_TIE_TOLERANCE, PROVE_EFFECT)
from ..errors import ArgumentError
from ..result import Result, fmt_rate
from ..rows import Rows, load_rows
from .fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from .intervals import Interval, t_value, task_intervals
from .noise import NoiseFloor, resolve_band
from .paired import degenerate_note, min_paired_tasks, mover_difference, paired_interval
from .rates import check_metric, task_values, trials_cap

Verdict = Literal["moved", "moved_the_wrong_way", "flat", "no_detectable_change",
                  "within_noise", "insufficient_data"]


class Comparison(Result):
    """Before vs after on the tasks both runs scored; see the module docstring for verdicts."""

    n_paired: int
    n_only_before: int
    n_only_after: int
    mean_before: float | None
    mean_before_ci: Interval | None
    mean_after: float | None
    mean_after_ci: Interval | None
    delta: float | None
    ci: Interval | None = Field(description="interval of delta at `level`")
    verdict: Verdict
    metric: Literal["pass", "reward"] = "pass"
    ci_method: str | None = Field(None, description=(
        "the difference's interval: t_sign_flip_exact / t_sign_flip_mc (the sign-flip test "
        "with the t interval, at any number of tasks), seeds_welch_t (several runs per arm), "
        "mover_unpaired (every task changed by the same amount: no paired test; the unpaired "
        "interval and its p-value)"))
    mean_before_ci_method: str | None = Field(None, description=METHOD_DOC)
    mean_after_ci_method: str | None = Field(None, description=METHOD_DOC)
    p_value: float | None = Field(None, description=(
        "two-sided p-value for delta = 0: the exact sign-flip test's, raised to the t test's when "
        "that does not reject, so p <= 1 - level exactly when the interval excludes 0; when "
        "every task changed alike (no paired spread), the unpaired MOVER interval's, and the "
        "note says so"))
    n_changed: int | None = Field(None, description="paired tasks whose value changed")
    effect: float = Field(PROVE_EFFECT, description="the equivalence margin behind `flat`")
    noise_band: float | None = None
    noise_runs: int | None = Field(None, description="re-runs the noise band rests on")
    n_runs_before: int = 1
    n_runs_after: int = 1
    seed_std: float | None = Field(None, description="between-seed sd of an arm's mean")
    seed_variance: Literal["measured", "unmeasured"] = "unmeasured"
    correlation: float | None = None
    mde: float | None = None
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    note: str | None = None

    ci95 = ci95_alias("ci")
    mean_before_ci95 = ci95_alias("mean_before_ci")
    mean_after_ci95 = ci95_alias("mean_after_ci")

    def render(self) -> str:
        if self.delta is None:
            return f"verdict: {self.verdict} (n={self.n_paired} paired tasks). {self.note or ''}".strip()
        runs = "" if self.n_runs_before == self.n_runs_after == 1 else (
            f" ({self.n_runs_before} runs before, {self.n_runs_after} after)")
        lines = [
            f"before  {fmt_rate(self.mean_before, self.mean_before_ci, self.n_paired)}",
            f"after   {fmt_rate(self.mean_after, self.mean_after_ci, self.n_paired)}",
            f"delta   {self.delta:+.3f}" + (f" [{self.ci[0]:+.3f}, {self.ci[1]:+.3f}]"
                                            if self.ci else " [no interval]")
            + f" (n={self.n_paired} paired tasks{runs})"
            + (f", p={self.p_value:.3g}, {self.ci_method}" if self.p_value is not None else ""),
            f"verdict: {self.verdict}",
        ]
        if self.noise_band is not None:
            lines.append(f"noise band: +/-{self.noise_band:.3f} ({self.noise_runs} re-runs)")
        if self.mde is not None:
            lines.append(f"smallest effect this holdout detects (80% power): {self.mde:.3f}")
        if self.n_only_before or self.n_only_after:
            lines.append(f"unpaired: {self.n_only_before} tasks only before, "
                         f"{self.n_only_after} only after (left out)")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


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
            isinstance(r, (str, os.PathLike, Rows, list, tuple)) for r in arm):
        return [load_rows(r, threshold=threshold) for r in arm]
    return [load_rows(arm, threshold=threshold)]


def _arm_values(runs: list[Rows], shared: list[str], metric: str) -> tuple[np.ndarray, float | None]:
    """(runs x tasks) per-task values at the shared tasks, and the arm's trials cap."""
    rows, caps = [], 0.0
    for r in runs:
        pos = {t: i for i, t in enumerate(r.task_ids)}
        idx = np.fromiter((pos[t] for t in shared), dtype=np.int64, count=len(shared))
        rows.append(task_values(r, metric)[idx])
        cap = trials_cap(r, metric, idx)
        caps = None if cap is None or caps is None else caps + cap
    return np.stack(rows), caps


def _check(run_std: Any, effect: Any) -> None:
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect < 1:
        raise ArgumentError(f"`effect` must be a number strictly between 0 and 1, got {effect!r}. "
                            f"Fix: the smallest change worth detecting, e.g. {PROVE_EFFECT}")
    if isinstance(run_std, NoiseFloor) or run_std is None:
        return
    if isinstance(run_std, bool) or not isinstance(run_std, (int, float)) \
            or not math.isfinite(run_std) or run_std < 0:
        raise ArgumentError(f"`run_std` must be a finite number >= 0, got {run_std!r}. Fix: pass "
                            "noise_floor(run1, run2, run3).run_std, or omit it")


def compare(before: Any, after: Any, *, level: float = CONFIDENCE_LEVEL,
            run_std: float | NoiseFloor | None = None, seed: int | None = BOOTSTRAP_SEED,
            threshold: float | None = None, n_resamples: int = BOOTSTRAP_RESAMPLES,
            metric: Literal["pass", "reward"] = "pass", effect: float = PROVE_EFFECT,
            noise_runs: int | None = None) -> Comparison:
    """Paired before/after comparison by task (module docstring for the verdicts).

    ``before``/``after``: rows, or a list of runs per arm (training seeds).
    ``run_std``: the sd of the same eval re-run (:func:`noise_floor`, or its result, which also
    gives ``noise_runs``); the band is t_{R-1} x sqrt(2) x run_std at ``level``.
    ``effect``: the margin of the equivalence statement ``flat`` (default 0.05).
    ``metric``: per-task pass rates ("pass") or per-task mean rewards ("reward").
    """
    level, seed = check_level(level), check_seed(seed)
    check_resamples(n_resamples)
    check_metric(metric)
    _check(run_std, effect)
    band, band_runs, band_note = resolve_band(run_std, noise_runs, level)
    runs_b, runs_a = as_runs(before, threshold), as_runs(after, threshold)
    sets_b = [set(r.task_ids) for r in runs_b]
    sets_a = [set(r.task_ids) for r in runs_a]
    common = set.intersection(*sets_b, *sets_a)
    shared = [t for t in runs_a[0].task_ids if t in common]
    n = len(shared)
    seeds_b, seeds_a = len(runs_b), len(runs_a)
    base = dict(n_paired=n, n_only_before=len(set.union(*sets_b) - common),
                n_only_after=len(set.union(*sets_a) - common), noise_band=band,
                noise_runs=band_runs, level=level, metric=metric, effect=float(effect),
                n_runs_before=seeds_b, n_runs_after=seeds_a)
    if n == 0:
        return Comparison(mean_before=None, mean_before_ci=None, mean_after=None,
                          mean_after_ci=None, delta=None, ci=None, verdict="insufficient_data",
                          **base, note="the runs share no task_id: nothing to pair; score the "
                                       "same frozen held-out tasks before and after")
    vb, cap_b = _arm_values(runs_b, shared, metric)
    va, cap_a = _arm_values(runs_a, shared, metric)
    pb, pa = _mean0(vb), _mean0(va)
    d = _difference(pa, pb)
    delta = _mean(d)
    one_seed = seeds_b == 1 and seeds_a == 1
    (iv_b, iv_a), _ = task_intervals([pb, pa], [cap_b, cap_a], level, seed, n_resamples)
    arms = dict(mean_before=_mean(pb), mean_before_ci=iv_b.ci,
                mean_before_ci_method=iv_b.method, mean_after=_mean(pa),
                mean_after_ci=iv_a.ci, mean_after_ci_method=iv_a.method)
    notes = [band_note] if band_note else []
    if n < min_paired_tasks(level) or not math.isfinite(delta):
        notes.insert(0, f"fewer than {min_paired_tasks(level)} paired tasks: no test on {n} "
                        f"tasks can call a change at level {level:g}; score more shared tasks"
                     if n < min_paired_tasks(level) else
                     "the difference of the arms does not fit a float's range (rewards near "
                     "1e308 of opposite signs): rescale the rewards")
        return Comparison(**arms, delta=delta if math.isfinite(delta) else None, ci=None,
                          verdict="insufficient_data", **base,
                          n_changed=int(np.count_nonzero(d)), note="; ".join(notes))
    corr = _correlation(pb, pa)
    # a difference of two values in [0, 1] lies in [-1, 1]: no interval reaches past it
    bounds = (-1.0, 1.0) if _unit(pb) and _unit(pa) else None
    seed_fields: dict[str, Any] = {}
    if one_seed:
        binary = bool(np.all((pb == 0) | (pb == 1)) and np.all((pa == 0) | (pa == 1)))
        pi = paired_interval(d, level=level, seed=seed, n_resamples=n_resamples, mcnemar=binary)
        ci, method, p = pi.ci, pi.method, pi.p_value
        if pi.note:
            notes.append(pi.note)
    else:
        ci, method, p, seed_fields, seed_note = _with_seeds(d, vb, va, level)
        notes.append(seed_note)
        if ci is not None and ci[1] - ci[0] <= 0.0:
            ci = method = p = None
            notes.append(degenerate_note(d) or "the seeds and the tasks show no spread: no "
                         "interval or p-value")
    if ci is None and degenerate_note(d) is not None:
        if iv_b.ci is not None and iv_a.ci is not None:
            ci = mover_difference(arms["mean_after"], iv_a.ci, arms["mean_before"], iv_b.ci,
                                  bounds)
            method = "mover_unpaired" if all(map(math.isfinite, ci)) else None
            ci = ci if method else None
            if method:
                p = mover_pvalue(arms["mean_after"], pa, cap_a, arms["mean_before"], pb, cap_b,
                                 bounds)
            notes.append("the interval and p-value are the unpaired ones of the two arms' "
                         "intervals (MOVER), which ignore the pairing, and the verdict reads "
                         "them" if method else
                         "the arms' intervals do not fit a float's range: no interval")
        else:
            notes.append("an arm has no interval (every task has the same value): no spread to "
                         "build an interval of the change from; score tasks whose values differ")
    if ci is not None and bounds is not None:
        ci = (max(ci[0], bounds[0]), min(ci[1], bounds[1]))
    mde = None
    if ci is not None:  # the standard error the interval implies, so every method reads alike
        z = z_value(0.5 + level / 2.0)
        mde = (z + z_value(HOLDOUT_POWER)) * (ci[1] - ci[0]) / (2.0 * z)
    verdict = _verdict(delta, ci, band, effect, notes)
    if verdict == "no_detectable_change" and mde is not None and mde > effect:
        notes.append(f"underpowered: this holdout detects only effects >= {mde:.3f} "
                     f"(effect of interest {effect:g}); no detectable change is not no change")
    if one_seed and verdict in ("moved", "moved_the_wrong_way"):
        notes.append("one run per arm: training-seed variance is unmeasured, so this verdict "
                     "covers task sampling and rollout noise only; train 2+ seeds per arm and "
                     "pass them as lists of runs")
    return Comparison(**arms, delta=delta, ci=ci, ci_method=method, p_value=p,
                      n_changed=int(np.count_nonzero(d)), verdict=verdict, correlation=corr,
                      mde=mde, **base, **seed_fields, note="; ".join(notes) or None)


def mover_pvalue(mean_a: float, values_a: np.ndarray, cap_a: float | None, mean_b: float,
                 values_b: np.ndarray, cap_b: float | None, bounds) -> float:
    """The p-value of the unpaired (MOVER) interval: the smallest 1 - level at which it excludes
    0, found by bisection on the level (each arm's interval by the one rule at that level).
    1.0 when it never does; at least 1e-12 (a level of 1 - 1e-12 is the finest a float keeps)."""
    def excludes(p: float) -> bool:
        level = 1.0 - p
        (ib, ia), _ = task_intervals([values_b, values_a], [cap_b, cap_a], level)
        if ib.ci is None or ia.ci is None:
            return False
        lo, hi = mover_difference(mean_a, ia.ci, mean_b, ib.ci, bounds)
        return lo > 0 or hi < 0

    if not excludes(0.999999):
        return 1.0
    lo, hi = 1e-12, 0.999999           # excludes at p = hi; find the smallest such p
    if excludes(lo):
        return lo
    for _ in range(60):                # bisect on log p: p spans many decades
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if excludes(mid) else (mid, hi)
        if hi / lo < 1.0 + 1e-6:
            break
    return hi


def _mean(x: np.ndarray) -> float:
    """The mean, computed on values scaled by their largest magnitude (no overflow near 1e308)."""
    scale = float(np.max(np.abs(x))) if x.size else 0.0
    if scale == 0.0:
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.mean(x / scale) * scale)


def _mean0(runs: np.ndarray) -> np.ndarray:
    """Per-task mean over an arm's runs (axis 0), scaled like :func:`_mean`."""
    scale = float(np.max(np.abs(runs))) if runs.size else 0.0
    if scale == 0.0:
        return runs.mean(axis=0)
    return (runs / scale).mean(axis=0) * scale


def _difference(after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """after - before per task; inf where it does not fit a float (values near +-1e308)."""
    with np.errstate(over="ignore"):
        return after - before


def _unit(x: np.ndarray) -> bool:
    return bool(np.all((x >= 0.0) & (x <= 1.0)))


def _correlation(pb: np.ndarray, pa: np.ndarray) -> float | None:
    if pb.size < 2 or bool(np.all(pb == pb[0])) or bool(np.all(pa == pa[0])):
        return None
    sb, sa = float(np.max(np.abs(pb))), float(np.max(np.abs(pa)))
    return float(np.corrcoef(pb / sb, pa / sa)[0, 1])


def _verdict(delta: float, ci: Interval | None, band: float | None, effect: float,
             notes: list[str]) -> Verdict:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0 or ci[1] < 0:
        if band is not None and abs(delta) <= band + NOISE_TIE_TOLERANCE:
            notes.append(f"the interval excludes 0 but |delta| {abs(delta):.3f} is inside the "
                         f"noise band {band:.3f}")
            return "within_noise"
        return "moved" if delta > 0 else "moved_the_wrong_way"
    if -effect <= ci[0] and ci[1] <= effect:
        return "flat"
    return "no_detectable_change"


def _with_seeds(d: np.ndarray, vb: np.ndarray, va: np.ndarray, level: float):
    """Task-level variance of mean(d) plus the between-seed variance of the arm means, with
    Welch-Satterthwaite degrees of freedom (Satterthwaite 1946)."""
    from scipy.special import stdtr

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
