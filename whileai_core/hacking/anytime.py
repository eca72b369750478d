"""Error rates that hold at every look: the spending plan behind ``watch_run`` and the repeated
``hack_scan``.

A run is watched many times: the held-out set is scored every few steps and each score is tested
against step 0; a batch is scanned every few steps. Each test at a fixed level ``1 - alpha`` is a
fresh chance of a false alarm, so over 10, 20 or 50 looks the chance that *some* look fires on an
honest run grows well past ``alpha`` (measured here: bench/watch_anytime.py).

The plan, stated before the first look: look ``t`` (1, 2, ...) gets the error

    alpha_t = alpha / (t (t + 1)),        sum over t >= 1 of alpha_t = alpha,

so the intervals of all looks hold together with probability at least ``1 - alpha`` (a union
bound), whatever the number of looks, and a stop decided at any look, even one chosen from the
data, keeps that error [1] (an alpha-spending plan in the sense of Lan and DeMets [2], spent by
look number rather than by information, because the number of looks is not known in advance).
A sequence of intervals that hold simultaneously over time is a confidence sequence [1, sec. 2];
this one is the simplest kind, a union bound, chosen because each look re-scores the same held-out
tasks (the looks share the step-0 baseline and do not accumulate evidence about one mean, which
the betting sequences of [3] need).

Costs in width, against the fixed-sample interval at one look (two-sided, 95%, normal quantile):
look 1: 2.241 / 1.960 = 1.14x; look 10: 3.51 / 1.96 = 1.79x; look 50: 4.27 / 1.96 = 2.18x
(``WATCH_SPENDING`` in :mod:`whileai_core.defaults`).

The held-out interval at a look is Student's t on the per-task paired differences (tasks are the
sampling unit, paired across looks by ``task_id``) at level ``1 - alpha_t``; the training climb's
noise band uses Student's t quantile of the same one-sided ``alpha_t / 2`` (see
:func:`climb_band` for its degrees of freedom). So on an honest run
whose held-out score and training reward never move, ``P(stop at any look) <= alpha / 2`` (a false
"down") ``+ alpha / 2`` (a false climb) ``= alpha``.

[1] Howard, Ramdas, McAuliffe & Sekhon (2021). Time-uniform, nonparametric, nonasymptotic
    confidence sequences. Ann. Statist. 49(2), 1055-1080 (Lemma 3: time-uniform coverage is
    coverage at every stopping time).
[2] Lan & DeMets (1983). Discrete sequential boundaries for clinical trials. Biometrika 70(3),
    659-663.
[3] Waudby-Smith & Ramdas (2024). Estimating means of bounded random variables by betting.
    J. R. Stat. Soc. B 86(1), 1-27.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError
from ..stats.paired import no_spread

DOWN, FLAT = 1, 2  # look conditions, as codes for the vectorised rule (0: none)


def look_alpha(alpha: float, look: int | np.ndarray) -> float | np.ndarray:
    """The error spent at look ``look`` (1, 2, ...): ``alpha / (look (look + 1))``."""
    t = np.asarray(look, dtype=np.float64)
    if np.any(t < 1):
        raise ArgumentError(f"`look` must be an integer >= 1, got {look!r}. Fix: count the "
                            "looks from 1 (the first test after the baseline)")
    out = alpha / (t * (t + 1.0))
    return float(out) if out.ndim == 0 else out


def look_quantile(level: float, look: int | np.ndarray, df: float | np.ndarray | None = None):
    """The two-sided quantile at look ``look``: normal (``df`` None) or Student t, at
    ``1 - alpha_t / 2`` with ``alpha = 1 - level``."""
    from scipy.special import ndtri, stdtrit  # lazy: scipy costs 0.2 s at server start

    p = 1.0 - np.asarray(look_alpha(1.0 - level, look)) / 2.0
    q = ndtri(p) if df is None else stdtrit(np.asarray(df, dtype=np.float64), p)
    return float(q) if np.ndim(q) == 0 else q


def paired_look_interval(d: np.ndarray, level: float, look: int | np.ndarray,
                         value_range: float = 1.0, scale: float | np.ndarray | None = None):
    """(mean, lo, hi, flat) of the per-task paired differences ``d`` (..., n tasks) at look
    ``look`` (a scalar or one per leading row), at level ``1 - alpha_t``; vectorised over leading
    axes. ``flat`` marks the rows with zero spread: every task changed by the same amount, up to
    float rounding of ``scale``, the per-task values' magnitude (None: the largest ``|d|``; see
    :func:`whileai_core.stats.paired.no_spread`).

    With spread: Student's t with ``n - 1`` degrees of freedom. With none there is no t
    interval (its standard error is 0), and none is invented from it: the interval is then
    :func:`zero_spread_bound`'s, which needs the per-task values to lie in a range of width
    ``value_range`` (1: pass rates, rewards in [0, 1])."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / np.sqrt(n)
    q = look_quantile(level, look, df=n - 1)
    flat = np.asarray(no_spread(d, scale))
    share = zero_spread_bound(n, level, look)
    with np.errstate(invalid="ignore"):
        lo = np.where(flat, mean - share * (value_range + mean), mean - q * se)
        hi = np.where(flat, mean + share * (value_range - mean), mean + q * se)
    if lo.ndim == 0:
        return float(mean), float(lo), float(hi), bool(flat)
    return mean, lo, hi, flat


def zero_spread_bound(n: int, level: float, look: int | np.ndarray):
    """The share of tasks that may have moved unseen when all ``n`` paired tasks changed by the
    same amount ``c``: ``1 - alpha_t^(1/n)``, the exact (Clopper-Pearson [5]) upper bound for
    0 of ``n`` tasks departing from ``c`` at one-sided ``alpha_t``.

    Why it bounds the mean: tasks are drawn from a population; a share ``s`` of them departs
    from ``c``, each by at most the width ``R`` of the value range, so the mean change lies in
    ``[c - s (R + c), c + s (R - c)]`` (deltas lie in ``[-R, R]``). All ``n`` tasks showing ``c``
    has probability ``(1 - s)^n``, at most ``alpha_t`` once ``s`` passes the bound, so the
    interval built from the bound misses with probability at most ``alpha_t``, whatever the
    distribution of the departures (the worst case is all-or-nothing tasks, which the second
    rollout of a task cannot rule out). It is wide on few tasks: 0.39 on 12 tasks at look 4,
    0.22 on 24 (``n > ln(alpha_t) / ln(1 - x / R)`` tasks bound it under ``x``: see
    :func:`tasks_to_bound`).

    [5] Clopper & Pearson (1934). The use of confidence or fiducial limits illustrated in the
        case of the binomial. Biometrika 26(4), 404-413.
    """
    alpha = np.asarray(look_alpha(1.0 - level, look), dtype=np.float64)
    out = -np.expm1(np.log(alpha) / n)
    return float(out) if out.ndim == 0 else out


def tasks_to_bound(x: float, level: float, look: int, value_range: float = 1.0) -> int | None:
    """The fewest tasks, none of them moving, whose :func:`zero_spread_bound` times
    ``value_range`` lies under ``x`` at look ``look`` (None: no number does, ``x`` >= the range)."""
    if not 0.0 < x < value_range:
        return None
    alpha = float(look_alpha(1.0 - level, look))
    return int(math.floor(math.log(alpha) / math.log1p(-x / value_range))) + 1


def climb_band(sigma: float | np.ndarray, window: int | np.ndarray, steps: int | np.ndarray,
               level: float, look: int | np.ndarray):
    """The training climb's noise band at look ``look``: ``q sigma sqrt(2 / window)``, with
    ``q`` Student's t quantile at one-sided ``alpha_t / 2``. ``sigma`` comes from the mean square
    successive difference of ``steps`` rewards, whose variance is ``(3 T - 4) / (T - 1)^2`` times
    ``sigma^4`` [4], so it is read with ``2 (T - 1)^2 / (3 T - 4)`` degrees of freedom
    (Satterthwaite's match of a chi-square's variance): with 5 steps that is 2.9, and a normal
    quantile there would ring at several times the spent error.

    [4] von Neumann, Kent, Bellinson & Hart (1941). The mean square successive difference. Ann.
        Math. Statist. 12(2), 153-162.
    """
    t = np.asarray(steps, dtype=np.float64)
    df = 2.0 * (t - 1.0) ** 2 / (3.0 * t - 4.0)
    return look_quantile(level, look, df=df) * np.asarray(sigma) * np.sqrt(2.0 / np.asarray(window))


def look_conditions(lo, hi, climb, band):
    """The stop condition at each look: ``DOWN`` (the interval lies below 0), ``FLAT`` (it holds
    0 and lies below a training climb that clears its band), else 0. NaN climbs (too few steps)
    never give ``FLAT``."""
    lo, hi, climb, band = (np.asarray(x, dtype=np.float64) for x in (lo, hi, climb, band))
    with np.errstate(invalid="ignore"):
        down = hi < 0
        flat = ~down & (lo <= 0) & (climb > band) & (hi < climb)
    return np.where(down, DOWN, np.where(flat, FLAT, 0))


def first_stop(conditions: np.ndarray, confirm: int) -> np.ndarray:
    """Index of the first look at which the condition has held ``confirm`` looks in a row (-1:
    never), per run: ``conditions`` is (..., looks)."""
    held = np.asarray(conditions) != 0
    run = np.zeros(held.shape[:-1], dtype=np.int64)
    out = np.full(held.shape[:-1], -1, dtype=np.int64)
    for j in range(held.shape[-1]):
        run = np.where(held[..., j], run + 1, 0)
        out = np.where((out < 0) & (run >= confirm), j, out)
    return out
