"""The interval and test for a paired difference over tasks, and the unpaired fallback.

Paired rule (:func:`paired_interval`), on per-task differences d_i = after_i - before_i:

* fewer than :func:`min_paired_tasks` tasks (6 at 95%): no interval and no verdict, because no
  test on so few tasks can reach p < 1 - level (the smallest two-sided sign-flip p is 2 / 2^n);
* fewer than ``SIGN_FLIP_BELOW`` (30) tasks, or fewer than 30 tasks whose value changed: the
  **sign-flip test** [1] (under no change each d_i is as likely to be +d_i as -d_i) decides. Its
  p-value is exact (every sign pattern enumerated up to ``SIGN_FLIP_EXACT_PATTERNS``; seeded
  random patterns above, with the (b + 1)/(B + 1) correction [3]); on 0/1 per-task values it *is*
  the exact McNemar test. The interval is the t interval on d [2], widened to hold 0 whenever the
  exact test cannot reject 0, so it excludes 0 only when both do (``t_sign_flip_exact`` /
  ``t_sign_flip_mc``);
* otherwise the percentile task bootstrap of mean(d) (Miller 2024 sec. 1.4; the same as
  ``scipy.stats.bootstrap(paired=True)``), with p = 2 min(P*(mean <= 0), P*(mean >= 0)).

Unpaired (the two arms scored different tasks): :func:`mover_difference`, the difference of two
independent estimates with each arm's own interval recovered into the difference's (MOVER,
Zou & Donner 2008 [4]; Newcombe's hybrid score interval when the arms use binomial intervals).

References
----------
[1] Fisher (1935), The Design of Experiments, sec. 21 (the randomisation / sign-flip test).
[2] Student (1908); the paired t interval's coverage on these differences is in
    bench/stats_study.py (docs/statistics-study.md, table B2).
[3] Phipson & Smyth (2010), Permutation p-values should never be zero, SAGMB 9:39.
[4] Zou & Donner (2008), Construction of confidence limits about effect measures, Stat. Med. 27:1693;
    Newcombe (1998), Stat. Med. 17:873.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..bootstrap import percentile_interval
from ..defaults import SIGN_FLIP_BELOW, SIGN_FLIP_EXACT_PATTERNS
from .intervals import Interval

@dataclass(frozen=True)
class PairedInterval:
    """The paired difference's interval, the method behind it, and its two-sided p-value."""

    ci: Interval | None
    method: str | None
    p_value: float | None
    n_changed: int
    note: str | None = None


def min_paired_tasks(level: float) -> int:
    """Fewest paired tasks on which a two-sided exact test can reject at ``1 - level``:
    the smallest n with 2 / 2^n <= 1 - level (6 at 95%, 5 at 90%, 8 at 99%)."""
    return max(2, math.ceil(1.0 - math.log2(1.0 - level) - 1e-12))


def needs_sign_flip(d: np.ndarray) -> bool:
    n_changed = int(np.count_nonzero(d))
    return d.shape[0] < SIGN_FLIP_BELOW or n_changed < SIGN_FLIP_BELOW


def paired_interval(d: np.ndarray, *, level: float, seed: int | None, n_resamples: int,
                    draws: np.ndarray | None = None, mcnemar: bool = False) -> PairedInterval:
    """Interval and p-value for mean(d) by the paired rule (module docstring).

    ``mcnemar``: both arms' per-task values are 0/1 (the note then names the exact McNemar test).
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[0]
    n_changed = int(np.count_nonzero(d))
    need = min_paired_tasks(level)
    if n < need:
        return PairedInterval(None, None, None, n_changed,
                              f"fewer than {need} paired tasks: no test on {n} tasks can call a "
                              f"change at level {level:g} (the smallest exact two-sided p is "
                              f"2/2^{n} = {2 / 2 ** n:.3f}); score more shared tasks")
    if needs_sign_flip(d):
        return sign_flip(d, level=level, seed=seed, n_resamples=n_resamples, mcnemar=mcnemar)
    lo, hi = percentile_interval(draws, level)
    p = min(1.0, 2.0 * min(float(np.mean(draws <= 0.0)), float(np.mean(draws >= 0.0))))
    return PairedInterval((lo, hi), "percentile_bootstrap", p, n_changed)


# --- the sign-flip test -----------------------------------------------------------------------

def _patterns(m: int, exact: bool, rng: np.random.Generator | None, n_resamples: int
              ) -> np.ndarray:
    if exact:
        codes = np.arange(2 ** m, dtype=np.int64)[:, None] >> np.arange(m, dtype=np.int64)
        return ((codes & 1) * 2 - 1).astype(np.float64)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, m))


def sign_flip_pvalue(d: np.ndarray, *, seed: int | None, n_resamples: int) -> tuple[float, bool]:
    """Two-sided sign-flip p-value for mean(d) = 0 (zeros carry no sign). Returns (p, exact).

    Vectorised over a leading axis: ``d`` of shape (R, n) gives R p-values (the study uses it).
    """
    d = np.asarray(d, dtype=np.float64)
    batch = d.ndim == 2
    rows = d if batch else d[None, :]
    out = np.empty(rows.shape[0])
    exact_all = True
    rng = np.random.default_rng(seed)
    for r, row in enumerate(rows):
        nz = row[row != 0.0]
        m = nz.shape[0]
        if m == 0:
            out[r] = 1.0
            continue
        exact = 2 ** m <= SIGN_FLIP_EXACT_PATTERNS
        exact_all &= exact
        stats = _patterns(m, exact, rng, n_resamples) @ nz
        obs = abs(float(nz.sum()))
        hits = int(np.count_nonzero(np.abs(stats) >= obs - 1e-9 * max(1.0, obs)))
        out[r] = hits / stats.shape[0] if exact else (hits + 1) / (stats.shape[0] + 1)
    return (out if batch else float(out[0])), exact_all


def sign_flip(d: np.ndarray, *, level: float, seed: int | None, n_resamples: int,
              mcnemar: bool = False) -> PairedInterval:
    """The exact sign-flip p-value for mean(d) = 0, and a t interval on d made to agree with it.

    The interval is mean(d) +- t_{n-1} sd(d)/sqrt(n), widened to hold 0 when the sign-flip test
    cannot reject 0 (p > 1 - level). So it excludes 0 only when both the exact test and the t
    interval do: a "moved" is never called on a p the exact test does not give. (Inverting the
    sign-flip test for the interval assumes every task shifts by the same amount, which unchanged
    tasks, common with pass rates from few rollouts, break: it returned near-empty intervals.)
    """
    from .intervals import t_value

    n = d.shape[0]
    m = int(np.count_nonzero(d))
    alpha = 1.0 - level
    p0, exact_p = sign_flip_pvalue(d, seed=seed, n_resamples=n_resamples)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(t_value(0.5 + level / 2.0, n - 1)) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    note = None
    if mcnemar:
        note = (f"0/1 per-task values: the sign-flip test is the exact McNemar test "
                f"({int((d > 0).sum())} tasks better, {int((d < 0).sum())} worse)")
    extra = None
    if p0 > alpha:
        if lo > 0 or hi < 0:
            extra = (f"the t interval alone excludes 0 but the exact test gives p = {p0:.3g}: "
                     "the interval is widened to 0")
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    elif lo <= 0 <= hi:
        extra = (f"the exact test gives p = {p0:.3g} but the t interval reaches 0: not called "
                 "a change")
    if m < min_paired_tasks(level):
        extra = (f"only {m} task{'' if m == 1 else 's'} changed: no exact test can call a "
                 f"change at level "
                 f"{level:g} on so few")
    if extra:
        note = f"{note}; {extra}" if note else extra
    method = "t_sign_flip_exact" if exact_p else "t_sign_flip_mc"
    return PairedInterval((lo, hi), method, float(p0), m, note)


# --- unpaired --------------------------------------------------------------------------------

def mover_difference(a: float, ci_a: Interval, b: float, ci_b: Interval) -> Interval:
    """Interval for a - b from two independent estimates and their intervals (MOVER [4])."""
    lower = (a - b) - math.sqrt((a - ci_a[0]) ** 2 + (ci_b[1] - b) ** 2)
    upper = (a - b) + math.sqrt((ci_a[1] - a) ** 2 + (b - ci_b[0]) ** 2)
    return (lower, upper)
