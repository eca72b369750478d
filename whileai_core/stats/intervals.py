"""The one interval rule for a mean over tasks (pass@1, pass@k, pass^k, shares, mean reward).

Every rate the library reports goes through :func:`task_intervals`, so the same per-task values,
level and seed give the same interval in every tool. The rule (chosen by the coverage study in
``bench/stats_study.py``; thresholds in :mod:`whileai_core.defaults`):

======================================  ======================================================
per-task values                         interval (``ci_method``)
======================================  ======================================================
all 0 or 1, fewer than 10 tasks          ``mid_p``: mid-p binomial interval over tasks [3]
all 0 or 1, 10 tasks or more             ``agresti_coull``: Agresti-Coull over tasks [2]
in [0, 1], fewer than 30 tasks           ``effective_n``: Agresti-Coull on the effective number
                                         of trials m(1-m)/SE^2, df-adjusted (Korn & Graubard [4])
in [0, 1], 30 tasks or more              ``percentile_bootstrap`` over tasks [1]; ``effective_n``
                                         when the bootstrap has zero width (all tasks equal)
outside [0, 1] (rewards), < 30 tasks     ``t``: mean +- t_{C-1} sd / sqrt(C)
outside [0, 1], 30 tasks or more         ``percentile_bootstrap``
fewer than 3 tasks                       no interval
======================================  ======================================================

No finite sample gets a zero-width interval: the binomial intervals keep a width at 0/n and n/n,
and the effective n is capped by the number of independent trials behind the mean (rollouts for a
pass rate, where the binomial variance is a floor; Korn & Graubard's "design effect >= 1").

References
----------
[1] Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (percentile interval).
[2] Agresti & Coull (1998), Approximate is better than "exact", Am. Stat. 52:119.
[3] Brown, Cai & DasGupta (2001), Interval estimation for a binomial proportion, Stat. Sci. 16:101
    (sec. 4.3, mid-p); Lancaster (1961), JASA 56:223.
[4] Korn & Graubard (1998), Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data, Survey Methodology 24:193.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..bootstrap import bootstrap_means, percentile_interval, z_value
from ..defaults import BINARY_EXACT_BELOW, MIN_TASKS_FOR_INTERVAL, SMALL_SAMPLE_TASKS

Interval = tuple[float, float]

NO_INTERVAL = (f"fewer than {MIN_TASKS_FOR_INTERVAL} tasks: no interval (so few tasks say "
               "almost nothing about new ones); score more tasks")


def t_value(p: float | np.ndarray, df: float | np.ndarray) -> float | np.ndarray:
    """Student t quantile (scipy.special, imported here: only small samples need it)."""
    from scipy.special import stdtrit

    return stdtrit(df, p)


@dataclass(frozen=True)
class TaskInterval:
    """One interval over tasks: the bounds, the method that made them, and a note."""

    ci: Interval | None
    method: str | None
    note: str | None = None


# --- the intervals themselves (vectorised: the study calls them on arrays) --------------------

def agresti_coull(successes, n, level: float):
    """Agresti-Coull interval [2]: add z^2/2 successes and failures, then Wald; clipped to [0, 1].

    Arrays in, arrays out (bounds as a pair). Never zero width for n > 0.
    """
    z = z_value(0.5 + level / 2.0)
    x = np.asarray(successes, dtype=np.float64)
    nt = np.asarray(n, dtype=np.float64) + z * z
    pt = (x + z * z / 2.0) / nt
    half = z * np.sqrt(pt * (1.0 - pt) / nt)
    return np.clip(pt - half, 0.0, 1.0), np.clip(pt + half, 0.0, 1.0)


def mid_p(successes, n, level: float, *, steps: int = 60):
    """Mid-p binomial interval [3]: P(X > x) + P(X = x)/2 = tail at the lower bound, and
    P(X < x) + P(X = x)/2 = tail at the upper; solved by bisection (vectorised)."""
    from scipy.special import bdtr

    k = np.rint(np.asarray(successes, dtype=np.float64)).astype(np.int64)
    nk = np.broadcast_to(np.rint(np.asarray(n, dtype=np.float64)).astype(np.int64), k.shape)
    tail = (1.0 - level) / 2.0

    def below_mid(p):  # P(X < x) + P(X = x)/2: decreasing in p
        at_most = bdtr(k, nk, p)
        less = np.where(k > 0, bdtr(np.maximum(k - 1, 0), nk, p), 0.0)
        return less + 0.5 * (at_most - less)

    def solve(up_fn):
        lo, hi = np.zeros(k.shape), np.ones(k.shape)
        for _ in range(steps):
            mid = (lo + hi) / 2.0
            up = up_fn(mid)
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        return (lo + hi) / 2.0

    lower = np.where(k > 0, solve(lambda p: 1.0 - below_mid(p) < tail), 0.0)
    upper = np.where(k < nk, solve(lambda p: below_mid(p) > tail), 1.0)
    return lower, upper


def effective_n(mean, se, n_tasks, cap, level: float):
    """Agresti-Coull on the effective number of trials (Korn & Graubard [4]).

    n_eff = m(1-m)/SE^2, at most ``cap`` (the trials behind the mean when they give a variance
    floor), else at most ``n_tasks`` (no floor: pass@k, pass^k, continuous rewards; a mean of
    values in [0, 1] has variance at most m(1-m), so n_eff >= n_tasks and the cap makes this the
    binomial interval over tasks, the worst case, which over-covers smooth shapes), then scaled by
    (z / t_{C-1})^2 so the small-sample t quantile carries over. Arrays in, arrays out.
    """
    m = np.asarray(mean, dtype=np.float64)
    se2 = np.asarray(se, dtype=np.float64) ** 2
    cap_arr = np.broadcast_to(np.asarray(np.inf if cap is None else cap, dtype=np.float64), m.shape)
    fallback = np.where(np.isfinite(cap_arr), cap_arr, np.asarray(n_tasks, dtype=np.float64))
    raw = np.divide(m * (1.0 - m), se2, out=np.full(m.shape, np.inf), where=se2 > 0)
    n_eff = np.minimum(raw, fallback)
    z = z_value(0.5 + level / 2.0)
    scale = (z / t_value(0.5 + level / 2.0, np.asarray(n_tasks, dtype=np.float64) - 1.0)) ** 2
    n_adj = n_eff * scale
    return agresti_coull(m * n_adj, n_adj, level)


def t_interval(mean, sd, n_tasks, level: float):
    """mean +- t_{C-1} sd / sqrt(C). Arrays in, arrays out."""
    q = t_value(0.5 + level / 2.0, np.asarray(n_tasks, dtype=np.float64) - 1.0)
    half = q * np.asarray(sd, dtype=np.float64) / np.sqrt(n_tasks)
    return np.asarray(mean) - half, np.asarray(mean) + half


# --- the rule ----------------------------------------------------------------------------------

def _is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


def plan(values: np.ndarray) -> str | None:
    """Which interval the rule gives these per-task values (None: too few tasks)."""
    c = values.shape[0]
    if c < MIN_TASKS_FOR_INTERVAL:
        return None
    bounded = bool(np.all((values >= 0.0) & (values <= 1.0)))
    if bounded and _is_binary(values):
        return "mid_p" if c < BINARY_EXACT_BELOW else "agresti_coull"
    if c >= SMALL_SAMPLE_TASKS:
        return "percentile_bootstrap"
    return "effective_n" if bounded else "t"


def finish(values: np.ndarray, method: str | None, level: float, cap: float | None,
           draws: np.ndarray | None = None) -> TaskInterval:
    """The interval of ``values`` by ``method`` (``draws``: its bootstrap means, when needed)."""
    c = values.shape[0]
    if method is None:
        return TaskInterval(None, None, NO_INTERVAL)
    note = None
    if c < BINARY_EXACT_BELOW:
        note = (f"only {c} tasks: the interval is wide and its coverage approximate "
                f"(bench/stats_study.py); score {BINARY_EXACT_BELOW}+ tasks")
    m = float(values.mean())
    if method == "mid_p":
        lo, hi = mid_p(values.sum(), c, level)
    elif method == "agresti_coull":
        lo, hi = agresti_coull(values.sum(), c, level)
    elif method == "percentile_bootstrap":
        lo, hi = percentile_interval(draws, level)
        if hi - lo <= 0.0:
            if bool(np.all((values >= 0.0) & (values <= 1.0))):
                return finish(values, "effective_n", level, cap)
            return TaskInterval(None, None, "every task has the same mean reward: no spread to "
                                "build an interval from")
    else:
        sd = float(values.std(ddof=1))
        if method == "effective_n":
            lo, hi = effective_n(m, sd / math.sqrt(c), c, cap, level)
        else:  # t, for values outside [0, 1]
            if sd == 0.0:
                return TaskInterval(None, None, "every task has the same mean reward: no spread "
                                    "to build an interval from")
            lo, hi = t_interval(m, sd, c, level)
    return TaskInterval((float(lo), float(hi)), method, note)


def task_intervals(columns: Sequence[np.ndarray], caps: Sequence[float | None], level: float,
                   seed: int | None, n_resamples: int,
                   extra: Sequence[np.ndarray] = ()) -> tuple[list[TaskInterval], list[np.ndarray]]:
    """The rule on each column of per-task values; the bootstrap runs once for all columns that
    need it (each column's draws equal a lone call's with the same seed: one number per question).

    ``extra``: more columns whose bootstrap means are wanted (e.g. a paired difference); their
    draws are returned second.
    """
    methods = [plan(np.asarray(col, dtype=np.float64)) for col in columns]
    boot = [i for i, m in enumerate(methods) if m == "percentile_bootstrap"]
    wanted = [np.asarray(columns[i], dtype=np.float64) for i in boot] + [
        np.asarray(e, dtype=np.float64) for e in extra]
    draws = bootstrap_means(wanted, n_resamples, seed) if wanted else []
    by_col = dict(zip(boot, draws[:len(boot)]))
    out = [finish(np.asarray(col, dtype=np.float64), m, level, cap, by_col.get(i))
           for i, (col, m, cap) in enumerate(zip(columns, methods, caps))]
    return out, list(draws[len(boot):])


def task_interval(values: np.ndarray, *, level: float, seed: int | None, n_resamples: int,
                  cap: float | None = None) -> TaskInterval:
    """:func:`task_intervals` for one column."""
    return task_intervals([values], [cap], level, seed, n_resamples)[0][0]
