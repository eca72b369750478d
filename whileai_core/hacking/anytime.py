"""Error rates that hold at every look: the plan behind ``watch_run``'s stop rule (the repeated
``hack_scan`` keeps its own, :func:`look_alpha`).

Each look is a fresh chance of a false alarm, so ``alpha = 1 - level`` is spent by a plan stated
before the first look, in three parts (``PARTS``): ``climb`` (half: a training climb read as
beyond its noise), ``start`` (a quarter: the held-out score read as below step 0's) and ``peak``
(a quarter: read as below an earlier look's; every earlier look is compared, inside the plan).
A condition stops the run once it holds ``confirm`` looks in a row, and the boundaries are
solved for that event, so the error is spent on the stops the rule makes.

Planned looks: a group-sequential design [1], each part spending its error over its J looks by
a Lan-DeMets function [2], by default ``a (j / J)^2`` (rho = 2 of Kim-DeMets' power family [3]),
between Pocock's (spent early: a sustained drop) and O'Brien-Fleming's (spent late: a gradual
fall, as over-optimisation grows with the steps [6]). An open schedule spends
``A(j) = a j / (j + h)`` (``h = WATCH_OPEN_HALF``), never exhausted, valid at every stopping
look [4, Lemma 3]; not a betting sequence [5], whose running mean needs one mean, while the
held-out score moves with the policy.

The model: a task's per-look mean is its level plus noise of its own, so the change from
evaluation ``s`` to ``t`` in standard errors is ``(E_s - E_t) / sqrt(2)``, ``E_0, E_1, ...``
independent standard normal (equal noise at every evaluation). The runs not yet stopped are
carried on a grid from look to look (:class:`_Chain`) and each boundary is solved so that the
share stopped there is the error spent (the recursive computation [1, ch. 8]); a normal-scale
boundary ``c`` is read on each pair's Student t with ``n - 1`` degrees of freedom.

[1] Jennison & Turnbull (2000). Group Sequential Methods with Applications to Clinical Trials.
    Chapman & Hall/CRC (ch. 7: error spending; ch. 8: the recursive computation).
[2] Lan & DeMets (1983). Discrete sequential boundaries for clinical trials. Biometrika 70(3),
    659-663.
[3] Kim & DeMets (1987). Design and analysis of group sequential tests based on the type I
    error spending rate function. Biometrika 74(1), 149-154.
[4] Howard, Ramdas, McAuliffe & Sekhon (2021). Time-uniform, nonparametric, nonasymptotic
    confidence sequences. Ann. Statist. 49(2), 1055-1080.
[5] Waudby-Smith & Ramdas (2024). Estimating means of bounded random variables by betting.
    J. R. Stat. Soc. B 86(1), 1-27.
[6] Gao, Schulman & Hilton (2022). Scaling Laws for Reward Model Overoptimization.
    arXiv:2210.10760.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..defaults import (MIN_TASKS_FOR_INTERVAL, PAIRED_SPREAD_RTOL, WATCH_OPEN_HALF,
                        WATCH_POWER, WATCH_SPENDING_TYPE)
from ..errors import ArgumentError

# lazy: scipy is imported inside the functions that need it

DOWN, FLAT = 1, 2  # look conditions, as codes for the vectorised rule (0: none)
PARTS = {"climb": 0.5, "start": 0.25, "peak": 0.25}
SPENDING_TYPES = ("quadratic", "obrien_fleming", "pocock")
_GRID = np.linspace(-9.0, 9.0, 3601)          # the normal scale, step 0.005
_STEP = float(_GRID[1] - _GRID[0])
_TINY = 1e-12  # below this a look's error is read with the marginal (union-bound) boundary


def _ndtr(x):
    from scipy.special import ndtr

    return ndtr(x)


def _ndtri(p):
    from scipy.special import ndtri

    return ndtri(p)


@dataclass(frozen=True)
class Plan:
    """How ``alpha`` is spent over the looks: ``looks`` planned (None: an open schedule); a
    condition stops once it holds ``confirm`` looks in a row, and the boundaries are solved for
    that event, so the error is spent on stops, not on single crossings."""

    alpha: float
    looks: int | None = None
    spending: str = WATCH_SPENDING_TYPE
    half: int = WATCH_OPEN_HALF
    confirm: int = 1

    def __post_init__(self):
        if self.looks is not None and (isinstance(self.looks, bool)
                                       or not isinstance(self.looks, int) or self.looks < 1):
            raise ArgumentError(f"`looks` must be an integer >= 1, got {self.looks!r}", fix="the "
                                "number of held-out evaluations after step 0 the run will make, "
                                "or leave it out (an open schedule)")
        if self.spending not in SPENDING_TYPES:
            raise ArgumentError(f"`spending` must be one of {', '.join(SPENDING_TYPES)}, got "
                                f"{self.spending!r}")

    @property
    def schedule(self) -> str:
        return "open" if self.looks is None else "planned"

    def describe(self) -> str:
        rows = (f"; a condition stops at {self.confirm} looks in a row" if self.confirm > 1
                else "")
        if self.looks is None:
            return (f"open schedule: each part spends a j / (j + {self.half}) of its error by "
                    f"its j-th look that can stop (half by look {self.half}), over any number "
                    f"of looks{rows}")
        kind = {"quadratic": "a (j / J)^2 (Kim-DeMets, rho 2)",
                "obrien_fleming": "Lan-DeMets O'Brien-Fleming type",
                "pocock": "Lan-DeMets Pocock type"}[self.spending]
        return (f"{self.looks} planned looks: each part spends its error a by {kind} by its "
                f"j-th of J looks that can stop{rows}")

    def spent(self, part: str, j: np.ndarray, size: int | None,
              a: float | None = None) -> np.ndarray:
        """The error of ``a`` (default: the part's share) spent by its ``j``-th of ``size``
        looks."""
        a = self.alpha * PARTS[part] if a is None else a
        j = np.asarray(j, dtype=np.float64)
        if size is None:
            return a * j / (j + self.half)
        if size <= 0:
            return np.zeros_like(j)
        tau = np.clip(j / size, 0.0, 1.0)
        if self.spending == "quadratic":
            return a * tau ** 2
        if self.spending == "pocock":
            return a * np.log1p((math.e - 1.0) * tau)
        with np.errstate(divide="ignore"):
            return np.where(tau > 0, 2.0 - 2.0 * _ndtr(_ndtri(1.0 - a / 2.0) / np.sqrt(tau)), 0.0)

    def first(self, part: str) -> int:
        """The part's first look: ``peak`` starts at look 2 (the first with an earlier look to
        fall from); ``climb`` at look ``confirm`` (the first at which flat can stop a run)."""
        return {"start": 1, "peak": 2, "climb": self.confirm}[part]

    def increments(self, part: str, n: int, a: float | None = None) -> np.ndarray:
        """The error the spending function gives each of looks 1..n (the part's own looks
        count from :meth:`first`; 0 past the end)."""
        j = np.maximum(np.arange(1, n + 1) - self.first(part) + 1, 0)
        size = None if self.looks is None else self.looks - self.first(part) + 1
        return np.maximum(self.spent(part, j, size, a)
                          - self.spent(part, np.maximum(j - 1, 0), size, a), 0.0)

    def alphas(self, part: str, n: int) -> np.ndarray:
        """Each look's one-crossing error: for ``start`` and ``peak`` the increments of the
        part's calibrated error (:meth:`calibrated`); for ``climb`` its share's increments (a
        flat stop at a look needs a false climb there: a union bound)."""
        if part == "climb":
            out = self.increments(part, n)
            lead = self.first(part) - 1  # looks before the first that can stop: that look's band
            if n > lead:  # (a stop at t needs a false climb at t, so this costs nothing)
                out[:lead] = out[lead]
            return out
        return self.increments(part, n, self.calibrated(part))

    def calibrated(self, part: str) -> float:
        """The one-crossing error whose boundaries make the part's stop (``confirm`` crossings
        in a row) as likely as its share of ``alpha``, on the model."""
        share = self.alpha * PARTS[part]
        if self.confirm == 1:
            return share
        return _calibrate(part, self.spending, self.looks, self.half, share, self.confirm)

    def bounds(self, part: str, n: int) -> np.ndarray:
        """Normal-scale boundaries at looks 1..n for ``start`` or ``peak`` (inf: no error left;
        ``peak``'s look 1 has no earlier look to compare with)."""
        spent = tuple(float(x) for x in self.alphas(part, n))
        if part == "start":
            return np.array(_bounds("start", spent))
        return np.array((math.inf,) + _bounds("peak", spent[1:])) if n else np.zeros(0)

    def level_at(self, n: int) -> np.ndarray:
        """1 - the one-crossing errors of each of looks 1..n, its three parts together."""
        return 1.0 - sum(self.alphas(p, n) for p in PARTS)


_PHI = np.exp(-_GRID ** 2 / 2) / math.sqrt(2 * math.pi)


class _Chain:
    """The runs not yet stopped, on the model, by state (the baseline's noise ``E_0`` for
    ``start``; the running maximum ``R`` of the earlier looks' noise for ``peak``) and streak of
    crossings (0 .. confirm - 1). A look with boundary ``c`` crosses where its noise ``E_t`` lies
    below the state minus ``sqrt(2) c``; a crossing that completes a streak of ``confirm`` stops
    the run; a look that does not cross resets the streak (and for ``peak`` moves ``R`` to
    ``max(R, E_t)``)."""

    def __init__(self, part: str, confirm: int, shift: float = 0.0):
        self.part, self.shift = part, shift
        self.p = np.zeros((confirm, _GRID.size))
        self.p[0] = _PHI

    def crossing(self, c: float) -> np.ndarray:
        if not math.isfinite(c):
            return np.zeros(_GRID.size)
        return _ndtr(_GRID - math.sqrt(2) * (c - self.shift))

    def stop(self, c: float) -> float:
        """The share of runs this look would stop."""
        return float((self.p[-1] * self.crossing(c)).sum() * _STEP)

    def look(self, c: float) -> float:
        """Apply a look with boundary ``c``; the share it stopped."""
        q = self.crossing(c)
        stopped = float((self.p[-1] * q).sum() * _STEP)
        total = self.p.sum(axis=0)
        if self.part == "start":
            stay = total * (1.0 - q)
        else:  # not crossed: E_t above R - sqrt(2) c; it is the new maximum when above R
            stay = total * np.maximum(_ndtr(_GRID) - q, 0.0) + _PHI * np.cumsum(total) * _STEP
        self.p[1:] = self.p[:-1] * q
        self.p[0] = stay
        return stopped


def _solve(stops, a: float, marginal: float) -> float:
    """The boundary ``c`` at which ``stops(c)`` (decreasing) is ``a``, or ``marginal`` where
    ``a`` is below the grid's precision."""
    from scipy.optimize import brentq

    if a <= 0.0:
        return math.inf
    if a < _TINY:
        return marginal
    return float(brentq(lambda c: stops(c) - a, -6.0, 40.0, xtol=1e-9))


@lru_cache(maxsize=256)
def _bounds(part: str, alphas: tuple[float, ...]) -> tuple[float, ...]:
    """The boundaries of ``part``'s looks (``peak``: from look 2), each solved so that the
    share of runs first crossing there is its error; below the grid's precision, the marginal
    (union-bound) one: a fall from t - 1 earlier looks is below ``t - 1`` times its tail."""
    chain, out = _Chain(part, 1), []
    for i, a in enumerate(alphas):
        pairs = i + 1 if part == "peak" else 1
        c = _solve(chain.stop, a, -float(_ndtri(a / pairs)) if a > 0 else math.inf)
        chain.look(c)
        out.append(c)
    return tuple(out)


_OPEN_HORIZON = 100  # an open plan is calibrated over 100 looks; the rest counted one by one


@lru_cache(maxsize=64)
def _calibrate(part: str, spending: str, looks: int | None, half: int, share: float,
               confirm: int) -> float:
    """The one-crossing error ``a*`` whose boundaries stop (``confirm`` crossings in a row)
    with probability ``share``: over the planned looks, or for an open plan over its first
    ``_OPEN_HORIZON`` looks plus a union bound on every crossing after them."""
    from scipy.optimize import brentq

    plan = Plan(share / PARTS[part], looks, spending, half, confirm)
    n = looks if looks is not None else _OPEN_HORIZON

    def stops(a: float) -> float:
        spent = plan.increments(part, n, a)
        c = _bounds("start", tuple(spent)) if part == "start" else \
            (math.inf,) + _bounds("peak", tuple(spent[1:]))
        chain = _Chain(part, confirm)
        total = sum(chain.look(float(b)) for b in (c if part == "start" else c[1:]))
        if looks is None:
            total += a * half / (n - plan.first(part) + 1 + half)
        return total - share

    if stops(share) >= 0 or stops(0.9) <= 0:  # no room to spend, or too few looks to stop
        return share
    return float(brentq(stops, share, 0.9, xtol=1e-7 * share))


def detectable_drop(plan: Plan, horizon: int, power: float = WATCH_POWER) -> float:
    """The sustained held-out drop from look 1 on, in standard errors of one look's paired
    change, that the ``start`` part stops by look ``horizon`` with probability ``power``."""
    from scipy.optimize import brentq

    c = plan.bounds("start", horizon)
    if not np.isfinite(c).any():
        return math.inf

    def caught(x):
        chain = _Chain("start", plan.confirm, shift=x)
        return sum(chain.look(float(b)) for b in c)

    if caught(40.0) < power:  # too few looks to stop: no drop is caught
        return math.inf
    return float(brentq(lambda x: caught(x) - power, -5.0, 40.0, xtol=1e-8))


def zero_spread_share(n, alpha):
    """The share of tasks that may have moved unseen when all ``n`` paired tasks changed by the
    same amount ``c``: ``1 - alpha^(1/n)``, the exact (Clopper-Pearson [7]) upper bound for 0 of
    ``n`` tasks departing from ``c`` at one-sided ``alpha`` (1 where ``alpha`` is 0).

    Why it bounds the mean: a share ``s`` of the tasks departs from ``c``, each by at most the
    width ``R`` of the value range, so the mean change lies in ``[c - s (R + c), c + s (R - c)]``;
    all ``n`` tasks showing ``c`` has probability ``(1 - s)^n``, whatever the departures.

    [7] Clopper & Pearson (1934). Biometrika 26(4), 404-413.
    """
    n, alpha = np.asarray(n, dtype=np.float64), np.asarray(alpha, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(alpha > 0, -np.expm1(np.log(np.where(alpha > 0, alpha, 1.0)) / n), 1.0)
    return float(out) if out.ndim == 0 else out


def tasks_to_bound(x: float, alpha: float, value_range: float = 1.0) -> int | None:
    """The fewest tasks, none of them moving, whose :func:`zero_spread_share` times
    ``value_range`` lies under ``x`` at one-sided ``alpha`` (None: no number does)."""
    if not 0.0 < x < value_range or alpha <= 0.0:
        return None
    return int(math.floor(math.log(alpha) / math.log1p(-x / value_range))) + 1


def _t_quantile(c, df):
    """The Student t quantile with ``df`` degrees of freedom at the normal tail of ``c``."""
    from scipy.special import stdtrit

    c = np.asarray(c, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(c), -stdtrit(df, _ndtr(-np.where(np.isfinite(c), c, 0.0))),
                        np.inf)


def pair_intervals(d: np.ndarray, scale: np.ndarray, c, alpha, unit: np.ndarray):
    """(mean, lo, hi, n, flat) of per-task changes ``d`` (..., tasks; NaN: a task not in both
    evaluations) at normal-scale boundary ``c``: Student's t on the tasks; with no spread (up to
    ``PAIRED_SPREAD_RTOL`` of ``scale``, the per-task values' magnitude) the exact
    zero-spread bound at one-sided ``alpha``, where ``unit`` says the values lie in [0, 1]
    (else no interval); fewer than ``MIN_TASKS_FOR_INTERVAL`` tasks: no interval (NaN)."""
    ok = ~np.isnan(d)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, d, 0.0).sum(axis=-1) / n
        dev = np.where(ok, d - mean[..., None], 0.0)
        se = np.sqrt((dev ** 2).sum(axis=-1) / (n - 1) / n)
        top = np.where(ok, d, -np.inf).max(axis=-1)
        bottom = np.where(ok, d, np.inf).min(axis=-1)
        flat = (top - bottom) <= PAIRED_SPREAD_RTOL * np.maximum(
            np.maximum(np.abs(top), np.abs(bottom)), scale)
        q = _t_quantile(c, np.maximum(n - 1, 1))
        share = zero_spread_share(np.maximum(n, 1), alpha)
        lo = np.where(flat, np.where(unit, mean - share * (1.0 + mean), np.nan), mean - q * se)
        hi = np.where(flat, np.where(unit, mean + share * (1.0 - mean), np.nan), mean + q * se)
    few = n < MIN_TASKS_FOR_INTERVAL
    return mean, np.where(few, np.nan, lo), np.where(few, np.nan, hi), n, flat & ~few


def look_tails(c: np.ndarray) -> np.ndarray:
    """The one-sided error of one comparison at each boundary: ``Phi(-c)`` (0 where no error is
    left), the tail a zero-spread bound is taken at."""
    c = np.asarray(c, dtype=np.float64)
    return np.where(np.isfinite(c), _ndtr(-np.where(np.isfinite(c), c, 0.0)), 0.0)


def look_table(values: np.ndarray, unit: np.ndarray, plan: Plan) -> dict[str, np.ndarray]:
    """The held-out part of the rule at every look, vectorised over runs: ``values`` is
    (runs, evaluations, tasks), the per-task values of each evaluation (NaN: a task not scored
    there), evaluation 0 the baseline; ``unit`` (runs, evaluations): the values lie in [0, 1].

    Per look (runs, looks): ``delta``, ``lo``, ``hi``, ``n``, ``flat``, ``se`` (NaN without a t
    interval) against evaluation 0 at the ``start`` boundary; ``peak`` (the earlier evaluation
    whose comparison bounds the fall hardest, -1: none), ``peak_delta``, ``peak_lo``,
    ``peak_hi``, ``peak_n`` at the ``peak`` boundary; ``down``: either upper bound below 0."""
    runs, evals, _ = values.shape
    looks = evals - 1
    mag = np.where(np.isnan(values), 0.0, np.abs(values))
    c0, cp = plan.bounds("start", looks), plan.bounds("peak", looks)
    a0, ap = look_tails(c0), look_tails(cp)
    keys = ("delta", "lo", "hi", "n", "flat", "peak", "peak_delta", "peak_lo", "peak_hi",
            "peak_n")
    out = {k: np.full((runs, looks), np.nan) for k in keys + ("se",)}
    out["peak"][:] = -1
    for t in range(1, evals):
        scale = np.maximum(mag[:, 0].max(-1), mag[:, t].max(-1))
        m, lo, hi, n, flat = pair_intervals(values[:, t] - values[:, 0], scale, c0[t - 1],
                                            a0[t - 1], unit[:, 0] & unit[:, t])
        for k, v in zip(keys[:5], (m, lo, hi, n, flat)):
            out[k][:, t - 1] = v
        with np.errstate(invalid="ignore", divide="ignore"):
            out["se"][:, t - 1] = np.where(flat, np.nan, (hi - m) / _t_quantile(
                c0[t - 1], np.maximum(n - 1, 1)))
        if t < 2 or not math.isfinite(cp[t - 1]):
            continue
        d = values[:, t:t + 1] - values[:, 1:t]                       # (runs, t - 1, tasks)
        scale = np.maximum(mag[:, 1:t].max(-1), mag[:, t:t + 1].max(-1))
        m, lo, hi, n, _ = pair_intervals(d, scale, cp[t - 1], ap[t - 1] / (t - 1),
                                         unit[:, 1:t] & unit[:, t:t + 1])
        best = np.argmin(np.where(np.isnan(hi), np.inf, hi), axis=1)
        pick = lambda x: np.take_along_axis(x, best[:, None], 1)[:, 0]  # noqa: E731
        have = ~np.isnan(pick(hi))
        out["peak"][:, t - 1] = np.where(have, best + 1, -1)
        for k, v in zip(keys[6:], (m, lo, hi, n)):
            out[k][:, t - 1] = np.where(have, pick(np.asarray(v, dtype=np.float64)), np.nan)
    with np.errstate(invalid="ignore"):
        out["down"] = (out["hi"] < 0) | (out["peak_hi"] < 0)
    out["flat"] = out["flat"] == 1
    return out


def climbs(rewards: np.ndarray, counts: np.ndarray, window: int):
    """(climb, sigma, window used, steps) of each run's training rewards (runs, steps) read up
    to ``counts`` (looks,) steps: the mean of the last ``w`` minus the mean of the first ``w``
    (``w = min(window, steps // 2)``, at least 2), and sigma from the mean square successive
    difference; NaN where fewer than 4 steps."""
    runs = rewards.shape[0]
    out = [np.full((runs, len(counts)), np.nan) for _ in range(2)]
    used = np.zeros(len(counts), dtype=np.int64)
    for j, t in enumerate(counts):
        if t < 4:
            continue
        w = max(2, min(window, int(t) // 2))
        r = rewards[:, :t]
        out[0][:, j] = r[:, -w:].mean(1) - r[:, :w].mean(1)
        out[1][:, j] = np.sqrt((np.diff(r, axis=1) ** 2).sum(1) / (2 * (t - 1)))
        used[j] = w
    return out[0], out[1], used, np.asarray(counts)


def climb_band(sigma, window, steps, alpha):
    """The training climb's noise band: ``q sigma sqrt(2 / window)``, with ``q`` Student's t
    quantile at one-sided ``alpha`` (the ``climb`` part's error at the look). ``sigma`` comes from
    the mean square successive difference of ``steps`` rewards, whose variance is
    ``(3 T - 4) / (T - 1)^2`` times ``sigma^4`` [8], so it is read with ``2 (T - 1)^2 / (3 T - 4)``
    degrees of freedom (Satterthwaite's match of a chi-square's variance).

    [8] von Neumann, Kent, Bellinson & Hart (1941). The mean square successive difference. Ann.
        Math. Statist. 12(2), 153-162.
    """
    from scipy.special import stdtrit

    t = np.asarray(steps, dtype=np.float64)
    df = 2.0 * (t - 1.0) ** 2 / (3.0 * t - 4.0)
    alpha = np.asarray(alpha, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(alpha > 0, -stdtrit(df, np.where(alpha > 0, alpha, 0.5)), np.inf)
        band = q * np.asarray(sigma) * np.sqrt(2.0 / np.asarray(window, dtype=np.float64))
    return np.where(np.isinf(q), np.inf, band)  # no error left: no climb clears it


def climb_gap(table: dict[str, np.ndarray], climb, sigma, window, steps, c) -> np.ndarray:
    """The upper bound, at each look's boundary ``c`` (normal scale), of the held-out change
    since step 0 minus the training climb: what ``flat_while_climbing`` asks to lie below 0.

    Both are estimates: the held-out change has its standard error over the tasks, the climb
    ``sigma sqrt(2 / window)`` (:func:`climb_band`'s), so the difference is read on Welch's t,
    ``sqrt(se^2 + se_climb^2)`` with Welch-Satterthwaite's degrees of freedom from the tasks'
    ``n - 1`` and the climb's ``2 (T - 1)^2 / (3 T - 4)`` (the climb's noise alone would stop
    honest runs whose held-out set gains what training gains). A held-out change with no spread
    (its exact bound ``hi``) is set against the climb's own lower bound at the look's tail."""
    delta, se, hi, n, flat = (table[k] for k in ("delta", "se", "hi", "n", "flat"))
    climb = np.asarray(climb, dtype=np.float64)
    t = np.asarray(steps, dtype=np.float64)
    df_climb = 2.0 * (t - 1.0) ** 2 / (3.0 * t - 4.0)
    se_climb = np.asarray(sigma) * np.sqrt(2.0 / np.asarray(window, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = se ** 2 + se_climb ** 2
        df = var ** 2 / (se ** 4 / np.maximum(n - 1, 1) + se_climb ** 4 / df_climb)
        welch = delta - climb + _t_quantile(c, df) * np.sqrt(var)
        exact = hi - climb + _t_quantile(c, df_climb) * se_climb
    return np.where(flat, exact, welch)


def look_conditions(down, lo, gap, climb, band):
    """The condition at each look: ``DOWN`` (an upper bound lies below 0), ``FLAT`` (the
    interval against step 0 holds 0, ``gap`` (:func:`climb_gap`) is below 0 and the climb
    clears its band), else 0. NaN climbs (too few steps) never give ``FLAT``."""
    lo, gap, climb, band = (np.asarray(x, dtype=np.float64) for x in (lo, gap, climb, band))
    with np.errstate(invalid="ignore"):
        flat = ~np.asarray(down) & (lo <= 0) & (climb > band) & (gap < 0)
    return np.where(down, DOWN, np.where(flat, FLAT, 0))


def streaks(held: list[np.ndarray]) -> np.ndarray:
    """Per condition and look, the looks in a row it has held so far: (conditions, ..., looks)
    from each condition's (..., looks) booleans."""
    out = np.zeros((len(held),) + held[0].shape, dtype=np.int64)
    for i, cond in enumerate(held):
        run = np.zeros(cond.shape[:-1], dtype=np.int64)
        for j in range(cond.shape[-1]):
            run = np.where(cond[..., j], run + 1, 0)
            out[i, ..., j] = run
    return out


def first_stop(held: list[np.ndarray], confirm: int) -> np.ndarray:
    """Index of the first look that stops (-1: never), per run: the first at which one of the
    conditions ``held`` (each (..., looks) booleans) has held ``confirm`` looks in a row."""
    done = (streaks(held) >= confirm).any(axis=0)
    return np.where(done.any(axis=-1), done.argmax(axis=-1), -1)


def rule(values: np.ndarray, unit: np.ndarray, rewards: np.ndarray, counts: np.ndarray,
         plan: Plan, window: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The whole stop rule on arrays (what ``watch_records`` applies to one run and
    bench/watch_anytime.py to many): the look table with the climb, its band and the condition
    codes, and the first stopping look per run (``plan.confirm`` looks in a row)."""
    table = look_table(values, unit, plan)
    looks = values.shape[1] - 1
    climb, sigma, used, steps = climbs(rewards, counts, window)
    window, steps = np.maximum(used, 2), np.maximum(steps, 4)
    band = climb_band(sigma, window, steps, plan.alphas("climb", looks))
    gap = climb_gap(table, climb, sigma, window, steps, plan.bounds("start", looks))
    table.update(climb=climb, band=np.where(np.isnan(climb), np.nan, band), gap=gap)
    table["code"] = look_conditions(table["down"], table["lo"], gap, climb, table["band"])
    with np.errstate(invalid="ignore"):
        held = [table["hi"] < 0, table["peak_hi"] < 0, table["code"] == FLAT]
    runs = streaks(held)
    table["streak"] = runs.max(axis=0)
    done = runs >= plan.confirm           # the condition that stops: 1 start, 2 peak, 3 flat
    table["stop_by"] = np.where(done.any(axis=0), done.argmax(axis=0) + 1, 0)
    return table, first_stop(held, plan.confirm)


def look_alpha(alpha: float, look: int | np.ndarray) -> float | np.ndarray:
    """An open plan's error at look ``look`` (1, 2, ...) when half is spent on look 1:
    ``alpha / (look (look + 1))`` (the repeated hack_scan's plan)."""
    t = np.asarray(look, dtype=np.float64)
    if np.any(t < 1):
        raise ArgumentError(f"`look` must be an integer >= 1, got {look!r}", fix="count the "
                            "looks from 1 (the first test after the baseline)")
    out = alpha / (t * (t + 1.0))
    return float(out) if out.ndim == 0 else out
