"""The one interval rule for a mean over tasks (pass@1, pass@k, pass^k, shares, mean reward).

Every rate goes through :func:`task_intervals`, so the same per-task values and level give the
same interval in every tool. The rule is one formula at every number of tasks C (no switch at any
C), chosen per statistic for the skew of its per-task values by the coverage study in
``bench/stats_study.py`` (figures in docs/statistics-study.md; constants in
:mod:`whileai_core.defaults`, section "intervals at every n"):

========================================  ====================================================
per-task values                           interval (``ci_method``)
========================================  ====================================================
one 0/1 value per task, under 10 tasks    ``mid_p``: mid-p binomial interval over tasks [3]
one 0/1 value per task, 10 or more        ``agresti_coull``: Agresti-Coull over tasks [2]
a share of several 0/1 outcomes per task  ``effective_n``: Agresti-Coull on the effective number
(pass@1, a field share, 0/1 rewards)      of trials m(1-m)/SE^2, at most the outcomes behind
                                          the mean, scaled by (z/t_{C-1})^2 [4]
pass@k, pass^k, graded rewards            ``hall_t``: Hall's skewness-corrected t [5]; for
                                          pass@k and pass^k held to what pass@1's interval
                                          implies (below)
pass@k, pass^k, graded rewards in [0, 1]  ``betting``: the betting interval [7], valid for
whose mean fewer than 5 tasks carry       every distribution on [0, 1] (below); a share
                                          carried by fewer than 3 keeps ``effective_n``
                                          with the 0-of-C-tasks bound under it
fewer than 3 tasks                        no interval
========================================  ====================================================

Why two shapes. A share of 0/1 outcomes is skewed as a binomial proportion is, and the score
interval on the effective n carries that skew. pass@k and pass^k (1 - (1-x)^k, x^k of each task's
pass rate x) pile up at one end with a long tail, where the t interval and the percentile
bootstrap under-cover; Hall's transformation of the t statistic removes the first-order skew.
Graded rewards take the same correction.

pass@k, pass^k and pass@1. By Jensen's inequality, for any mix of tasks pass^k >= (pass@1)^k and
pass@k <= 1 - (1 - pass@1)^k, with equality when the tasks are alike. So with [L, U] pass@1's
interval, pass^k's lower bound is at least L^k and its upper bound reaches at least U^k (at most
U); mirrored for pass@k. When every per-task value is the same the sample says nothing about the
spread between tasks: the interval is then the binomial one over the tasks, within those bounds.

No interval has zero width; each holds its estimate and stays in the statistic's range. Values
are scaled by their largest magnitude before any power is taken (rewards near 1e308: a finite
interval or a refusal that says why).

When few tasks carry the mean (pass^8 = 0 on all tasks but a few), the sample's skew says little
of the tail it did not draw: that is the betting and floor rows of the table (:func:`carriers`,
``BETTING_BELOW_CARRIERS``, ``FLOOR_BELOW_CARRIERS``; nearly no pass says as little as none). The
switch is not monotone in the passes, and no rule can be: one whose bounds only rise with the
passes holds the no-pass interval's upper end under every interval, far too wide at 1-3% rates.

What no interval here can promise: a group of tasks unlike the rest that the sample did not draw
(a tenth of easy tasks among hard ones, at 10-30 tasks). Below ``RARE_GROUP_TASKS`` the result
says so in its note.

References
----------
[2] Agresti & Coull (1998), Approximate is better than "exact", Am. Stat. 52:119.
[3] Brown, Cai & DasGupta (2001), Interval estimation for a binomial proportion, Stat. Sci. 16:101
    (sec. 4.3, mid-p); Lancaster (1961), JASA 56:223.
[4] Korn & Graubard (1998), Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data, Survey Methodology 24:193.
[5] Hall (1992), On the removal of skewness by transformation, JRSS-B 54:221 (the monotone cubic
    g(T) = T + aT^2 + a^2 T^3/3 + b, a = gamma/(3 sqrt C), b = gamma/(6 sqrt C)); Johnson (1978),
    Modified t tests and confidence intervals for asymmetrical populations, JASA 73:536.
[6] Joanes & Gill (1998), Comparing measures of sample skewness and kurtosis, JRSS-D 47:183
    (G1, the adjusted Fisher-Pearson skewness; scipy.stats.skew(bias=False)).
[7] Waudby-Smith & Ramdas (2023), Estimating means of bounded random variables by betting,
    JRSS-B 86:1 (the hedged capital process with predictable plug-in bets, sec. 3-4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..bootstrap import bootstrap_means, z_value
from ..defaults import (BETTING_BELOW_CARRIERS, BETTING_CAP, BINARY_EXACT_BELOW,
                        FLOOR_BELOW_CARRIERS, MIN_TASKS_FOR_INTERVAL, RARE_GROUP_TASKS)

# lazy: scipy.special is imported inside the functions that need it

Interval = tuple[float, float]

NO_INTERVAL = (f"fewer than {MIN_TASKS_FOR_INTERVAL} tasks: no interval (so few tasks say "
               "almost nothing about new ones); score more tasks")


def t_value(p: float | np.ndarray, df: float | np.ndarray) -> float | np.ndarray:
    """Student t quantile (scipy.special, imported here: only intervals need it)."""
    from scipy.special import stdtrit

    return stdtrit(df, p)


@dataclass(frozen=True)
class TaskInterval:
    """One interval over tasks: the bounds, the method that made them, a note, and ``n``, the
    number of tasks behind it."""

    ci: Interval | None
    method: str | None
    note: str | None = None
    n: int = 0


@dataclass(frozen=True)
class PassK:
    """What a pass@k or pass^k column needs besides its values: k, which of the two it is
    (``power``: pass^k), and pass@1's interval on the same tasks."""

    k: int
    power: bool
    pass1_ci: Interval

    def bounds(self, lo, hi, mean, flat):
        """:func:`pass_k_bounds` for this column."""
        return pass_k_bounds(lo, hi, mean, flat, *self.pass1_ci, self.k, self.power)


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


def effective_n(mean, se, n_tasks, cap, level: float, floor=None):
    """Agresti-Coull on the effective number of trials (Korn & Graubard [4]).

    n_eff = m(1-m)/SE^2, at most ``cap``, the 0/1 outcomes behind the mean (their binomial
    variance is a floor: the design effect of equal-sized clusters is at least 1), then scaled by
    (z / t_{C-1})^2 so the small-sample t quantile carries over. With no spread and every outcome
    the same, how alike a task's rollouts are is unknown: n_eff is the C tasks, as if each task's
    rollouts were one outcome (a rate inside (0, 1) with no spread keeps the cap: its rows vary
    within tasks). ``floor`` (where True): fewer than ``FLOOR_BELOW_CARRIERS`` tasks carry the
    mean (:func:`carriers`), so the bound of 0 of C tasks holds the upper end (the lower, for a
    mean above 1/2; table L of docs/statistics-study.md). ``cap`` None: n_eff from the spread
    alone. Arrays in, arrays out.
    """
    m = np.asarray(mean, dtype=np.float64)
    se2 = np.asarray(se, dtype=np.float64) ** 2
    tasks = np.broadcast_to(np.asarray(n_tasks, dtype=np.float64), m.shape)
    # no spread: C tasks when every outcome is the same, else the cap (docstring)
    raw = np.divide(m * (1.0 - m), se2, out=np.where(m * (1.0 - m) > 0, np.inf, tasks),
                    where=se2 > 0)
    if cap is not None:
        raw = np.minimum(raw, np.asarray(cap, dtype=np.float64))
    raw = np.minimum(raw, 1e15)   # no spread and no cap: a finite stand-in for infinity
    z = z_value(0.5 + level / 2.0)
    scale = (z / t_value(0.5 + level / 2.0, np.asarray(n_tasks, dtype=np.float64) - 1.0)) ** 2
    n_adj = raw * scale
    lo, hi = agresti_coull(m * n_adj, n_adj, level)
    floor = np.zeros(m.shape, dtype=bool) if floor is None else np.asarray(floor, dtype=bool)
    _, none_hi = agresti_coull(np.zeros_like(tasks), tasks * scale, level)
    near_zero = m <= 0.5
    lo = np.where(floor & ~near_zero, np.minimum(lo, 1.0 - none_hi), lo)
    hi = np.where(floor & near_zero, np.maximum(hi, none_hi), hi)
    return lo, hi


def carriers(values):
    """How many tasks carry the mean's distance from the end it is nearer: (sum d)^2 / sum d^2
    with d = v (mean at most 1/2) or 1 - v (above). C when every task is as far out, 1 when one
    task holds it all (pass^8 = 0 on all tasks but one), 0 when none does (every value 0).
    Over the last axis (arrays in, arrays out)."""
    v = np.asarray(values, dtype=np.float64)
    d = np.where(v.mean(axis=-1, keepdims=True) <= 0.5, v, 1.0 - v)
    total, squares = d.sum(axis=-1), (d * d).sum(axis=-1)
    return np.divide(total * total, squares, out=np.zeros_like(total), where=squares > 0)


def takes_betting(values):
    """Where the rule takes :func:`betting`: values in [0, 1], not all the same, carried by
    fewer than ``BETTING_BELOW_CARRIERS`` tasks. Over the last axis."""
    v = np.asarray(values, dtype=np.float64)
    unit = np.all((v >= 0.0) & (v <= 1.0), axis=-1)
    spread = np.ptp(np.where(unit[..., None], v, 0.0), axis=-1) > 0
    return unit & spread & (carriers(np.where(unit[..., None], v, 0.0)) < BETTING_BELOW_CARRIERS)


def betting(values, level: float, *, cap: float = BETTING_CAP, grid: int = 17,
            steps: int = 40):
    """The betting interval for a mean of values in [0, 1] [7], valid for every distribution
    on [0, 1] at every number of tasks. The values are on the last axis (arrays in, arrays
    out: the study calls it on a replication a row).

    A gambler who bets that the mean is above m (stake lambda_t, at most ``cap``/m) and one who
    bets it is below (at most ``cap``/(1 - m)) each turn 1 into prod(1 + lambda_t (x_t - m)) or
    prod(1 - lambda_t (x_t - m)); at the true mean their average is a martingale from 1, so it
    reaches 1/alpha with probability at most alpha (Markov), and the interval is every m where
    it stays below. The stakes are the predictable plug-in sqrt(2 log(2/alpha) / (C s2_{t-1})),
    s2 the running variance from 1/4 [7, sec. 3]. The tasks are taken in a fixed order of the
    sorted values (a fixed permutation), so the interval depends on the values, not on the
    order the rows came in. Boundaries: a grid from each end towards the mean, then bisection
    to the last excluded point (never narrower than the set).
    """
    v = np.asarray(values, dtype=np.float64)
    shape = v.shape[:-1]
    n = v.shape[-1]
    x = np.sort(v.reshape(-1, n), axis=1)[:, np.random.default_rng(0).permutation(n)]
    alpha = 1.0 - level
    t = np.arange(1, n + 1, dtype=np.float64)
    mu_hat = (0.5 + np.cumsum(x, axis=1)) / (t + 1.0)
    var_hat = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=1)) / (t + 1.0)
    prior = np.concatenate((np.full((x.shape[0], 1), 0.25), var_hat[:, :-1]), axis=1)
    stake = np.sqrt(2.0 * math.log(2.0 / alpha) / (n * prior))[:, None, :]
    bar = math.log(1.0 / alpha) - math.log(0.5)
    xs = x[:, None, :]

    def outside(m):   # (rows, points) -> capital at least 1/alpha there: m is excluded
        m = np.clip(m, 1e-15, 1.0 - 1e-15)[:, :, None]
        up = np.log1p(np.minimum(stake, cap / m) * (xs - m)).sum(axis=2)
        down = np.log1p(-np.minimum(stake, cap / (1.0 - m)) * (xs - m)).sum(axis=2)
        return np.logaddexp(up, down) >= bar

    mean = x.mean(axis=1)
    rows = np.arange(x.shape[0])

    def edge(end: float) -> np.ndarray:   # from the range's ``end`` towards the mean
        pts = end + (mean - end)[:, None] * np.linspace(0.0, 1.0, grid)[None, :]
        inside = ~outside(pts)
        first = np.where(inside.any(axis=1), np.argmax(inside, axis=1), grid - 1)
        o = pts[rows, np.maximum(first - 1, 0)]
        i = pts[rows, first]
        for _ in range(steps):
            mid = (o + i) / 2.0
            out = outside(mid[:, None])[:, 0]
            o, i = np.where(out, mid, o), np.where(out, i, mid)
        return np.where(first == 0, end, o).reshape(shape)

    return edge(0.0), edge(1.0)


def _cubed(dev: np.ndarray) -> np.ndarray:
    """``dev ** 3``, computed once per distinct value where there are few (a per-task rate of k
    rollouts takes at most k + 1 values): the same floats (no -0.0 or NaN, which np.unique would
    fold)."""
    flat = dev.reshape(-1)
    if flat.shape[0] >= 4096 and np.unique(flat[:1024]).shape[0] <= 64 and \
            not np.isnan(flat).any() and not np.signbit(flat[flat == 0]).any():
        distinct, at = np.unique(flat, return_inverse=True)
        if distinct.shape[0] <= 1024:
            return (distinct ** 3)[at.reshape(-1)].reshape(dev.shape)
    return dev ** 3


def moments(values):
    """(mean, sd, skewness) over the last axis, computed on values scaled by their largest
    magnitude so no power overflows; sd has C - 1 degrees of freedom, the skewness is G1 [6]
    (0 when every value is the same). Returns (mean, sd, skew, scale) with mean and sd in the
    values' own units (inf when they do not fit a float)."""
    v = np.asarray(values, dtype=np.float64)
    scale = np.max(np.abs(v), axis=-1)
    scale = np.where(scale > 0, scale, 1.0)
    u = v / scale[..., None]
    c = v.shape[-1]
    m = u.mean(axis=-1)
    dev = u - m[..., None]
    sd = np.sqrt((dev ** 2).sum(axis=-1) / max(c - 1, 1))
    m3 = _cubed(dev).mean(axis=-1)
    m2 = (dev ** 2).mean(axis=-1)
    # the adjusted Fisher-Pearson skewness G1 = sqrt(C(C-1))/(C-2) m3/m2^1.5 [6]
    adjust = math.sqrt(c * (c - 1)) / (c - 2) if c > 2 else 1.0
    skew = np.divide(m3, m2 ** 1.5, out=np.zeros_like(m), where=m2 > 1e-24) * adjust
    with np.errstate(over="ignore"):
        return m * scale, sd * scale, skew, scale


def hall_interval(mean, sd, skew, n_tasks, level: float):
    """Hall's skewness-corrected t interval [5], arrays in, arrays out.

    With T = sqrt(C)(m - mu)/sd and gamma the sample skewness (G1 [6]), g(T) = T + aT^2 + a^2 T^3/3 + b
    (a = gamma/(3 sqrt C), b = gamma/(6 sqrt C)) is close to N(0, 1) and increasing, so
    {mu : |g(T)| <= q} is the interval, q the t_{C-1} quantile at (1 + level)/2. Right-skewed
    values (gamma > 0) give an interval that reaches further above the mean than below; gamma 0
    gives the t interval. The interval always holds the mean.
    """
    m = np.asarray(mean, dtype=np.float64)
    s = np.asarray(sd, dtype=np.float64)
    g = np.asarray(skew, dtype=np.float64)
    c = np.asarray(n_tasks, dtype=np.float64)
    q = t_value(0.5 + level / 2.0, c - 1.0)
    a = g / (3.0 * np.sqrt(c))
    b = g / (6.0 * np.sqrt(c))
    safe = np.where(np.abs(a) < 1e-12, 1.0, a)

    def g_inverse(y):
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (np.cbrt(1.0 + 3.0 * safe * (y - b)) - 1.0) / safe
        return np.where(np.abs(a) < 1e-12, y - b, r)

    se = s / np.sqrt(c)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = m - se * g_inverse(q)
        hi = m - se * g_inverse(-q)
    return np.minimum(lo, m), np.maximum(hi, m)


def pass_k_bounds(lo, hi, mean, flat, pass1_lo, pass1_hi, k: int, power: bool):
    """Hold a pass@k (``power`` False) or pass^k (True) interval to what pass@1's interval
    [L, U] implies (module docstring; the bounds for any mix of tasks beside each branch, and
    the interval widened to the tasks-alike values unless ``flat``). Arrays in, arrays out.
    """
    pl = np.asarray(pass1_lo, dtype=np.float64)
    ph = np.asarray(pass1_hi, dtype=np.float64)
    spread = ~np.asarray(flat, dtype=bool)

    def g(x):
        return x ** k if power else 1.0 - (1.0 - x) ** k

    if power:   # any mix: L^k <= pass^k <= U; alike: up to U^k
        new_lo = np.maximum(lo, g(pl))
        new_hi = np.minimum(np.where(spread, np.maximum(hi, g(ph)), hi), ph)
    else:       # any mix: L <= pass@k <= 1 - (1-U)^k; alike: down to 1 - (1-L)^k
        new_lo = np.maximum(np.where(spread, np.minimum(lo, g(pl)), lo), pl)
        new_hi = np.minimum(hi, g(ph))
    m = np.asarray(mean, dtype=np.float64)
    return np.clip(np.minimum(new_lo, m), 0.0, 1.0), np.clip(np.maximum(new_hi, m), 0.0, 1.0)


def t_interval(mean, sd, n_tasks, level: float):
    """mean +- t_{C-1} sd / sqrt(C). Arrays in, arrays out."""
    q = t_value(0.5 + level / 2.0, np.asarray(n_tasks, dtype=np.float64) - 1.0)
    half = q * np.asarray(sd, dtype=np.float64) / np.sqrt(n_tasks)
    return np.asarray(mean) - half, np.asarray(mean) + half


# --- the rule ----------------------------------------------------------------------------------

def _is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


def plan(values: np.ndarray, cap: float | None = None, pass_k: PassK | None = None) -> str | None:
    """Which interval the rule gives these per-task values (None: too few tasks).

    ``cap``: the 0/1 outcomes behind a share (pass@1, a field share, 0/1 rewards). Per-task
    values that are all 0 or 1 with one outcome per task (``cap`` equal to the number of tasks,
    or no cap: pass@k and pass^k at k = the rollouts) are the binomial case over tasks (Hall's
    correction swings widely on 0/1 values).
    """
    c = values.shape[0]
    if c < MIN_TASKS_FOR_INTERVAL:
        return None
    if _is_binary(values) and (cap is None or cap <= c):
        return "mid_p" if c < BINARY_EXACT_BELOW else "agresti_coull"
    if pass_k is None and cap is not None:
        return "effective_n"
    if bool(takes_betting(values)):
        return "betting"
    return "hall_t"


def small_sample_note(c: int) -> str | None:
    """The caveat every interval over fewer than ``RARE_GROUP_TASKS`` tasks carries."""
    if c >= RARE_GROUP_TASKS:
        return None
    return (f"{c} tasks: the interval holds if no group of tasks unlike the rest went undrawn; "
            f"under {RARE_GROUP_TASKS} tasks a tenth of them (a few easy among hard ones) often "
            "is, and no interval can see it (docs/statistics-study.md)")


def finish(values: np.ndarray, method: str | None, level: float, cap: float | None,
           draws: np.ndarray | None = None, pass_k: PassK | None = None) -> TaskInterval:
    """The interval of ``values`` by ``method`` (``draws`` is unused: the rule needs no
    bootstrap)."""
    c = values.shape[0]
    if method is None:
        return TaskInterval(None, None, NO_INTERVAL, c)
    note = small_sample_note(c)
    if method in ("mid_p", "agresti_coull"):
        lo, hi = (mid_p if method == "mid_p" else agresti_coull)(values.sum(), c, level)
        if pass_k is not None:
            flat = bool(np.all(values == values[0]))
            lo, hi = pass_k.bounds(lo, hi, float(values.mean()), flat)
    else:
        m, sd, skew, _ = moments(values)
        if not (math.isfinite(float(m)) and math.isfinite(float(sd))):
            return TaskInterval(None, None, "the per-task values do not fit a float's range "
                                "(magnitudes near 1e308): rescale the rewards", c)
        if method == "betting":
            lo, hi = betting(values, level)
            if pass_k is not None:
                lo, hi = pass_k.bounds(lo, hi, m, False)
        elif method == "effective_n":
            lo, hi = effective_n(m, sd / math.sqrt(c), c, cap, level,
                                 floor=carriers(values) < FLOOR_BELOW_CARRIERS)
        else:
            flat = bool(np.all(values == values[0]))
            if pass_k is not None:
                # no spread: the binomial interval over the tasks, the widest a mean of [0, 1]
                # values can need (Hall's would have zero width)
                lo, hi = agresti_coull(m * c, c, level) if flat else \
                    hall_interval(m, sd, skew, c, level)
                lo, hi = pass_k.bounds(lo, hi, m, flat)
            elif flat:
                return TaskInterval(None, None, "every task has the same mean reward: no spread "
                                    "to build an interval from", c)
            else:
                lo, hi = hall_interval(m, sd, skew, c, level)
                if bool(np.all((values >= 0.0) & (values <= 1.0))):
                    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return TaskInterval(None, None, "the interval's bounds do not fit a float's range "
                                "(rewards near 1e308): rescale the rewards", c)
    return TaskInterval((float(lo), float(hi)), method, note, c)


def task_intervals(columns: Sequence[np.ndarray], caps: Sequence[float | None], level: float,
                   seed: int | None = None, n_resamples: int = 0,
                   extra: Sequence[np.ndarray] = (), pass_k: Sequence[PassK | None] = ()
                   ) -> tuple[list[TaskInterval], list[np.ndarray]]:
    """The rule on each column of per-task values.

    ``caps``: per column, the 0/1 outcomes behind a share, or None. ``pass_k``: per column, a
    :class:`PassK` for a pass@k or pass^k column (else None; missing entries are None).
    ``extra``: more columns whose task-bootstrap means are wanted (``n_resamples`` of them from
    ``seed``); their draws are returned second. The intervals themselves need no bootstrap, so
    ``seed`` and ``n_resamples`` only reach ``extra``.
    """
    specs = list(pass_k) + [None] * (len(columns) - len(pass_k))
    out = []
    for col, cap, pk in zip(columns, caps, specs):
        values = np.asarray(col, dtype=np.float64)
        out.append(finish(values, plan(values, cap, pk), level, cap, pass_k=pk))
    draws = bootstrap_means([np.asarray(e, dtype=np.float64) for e in extra], n_resamples, seed) \
        if extra else []
    return out, list(draws)


def task_interval(values: np.ndarray, *, level: float, seed: int | None = None,
                  n_resamples: int = 0, cap: float | None = None,
                  pass_k: PassK | None = None) -> TaskInterval:
    """:func:`task_intervals` for one column."""
    return task_intervals([values], [cap], level, seed, n_resamples, pass_k=[pass_k])[0][0]
