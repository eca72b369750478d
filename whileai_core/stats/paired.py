"""The interval and test for a paired difference over tasks, and the unpaired fallback.

Paired rule (:func:`paired_interval`), on per-task differences d_i = after_i - before_i:

* fewer than :func:`min_paired_tasks` tasks (6 at 95%): no interval and no verdict, because no
  test on so few tasks can reach p < 1 - level (the smallest two-sided sign-flip p is 2 / 2^n);
* fewer than ``SIGN_FLIP_BELOW`` (30) tasks, or fewer than 30 tasks whose value changed: the
  **sign-flip test** [1] (under no change each d_i is as likely to be +d_i as -d_i). Its p-value is
  exact (every sign pattern enumerated up to ``SIGN_FLIP_EXACT_PATTERNS``; seeded random patterns
  above, with the (b + 1)/(B + 1) correction [3]); on 0/1 per-task values it *is* the exact McNemar
  test. Its interval is the set of shifts delta0 the test does not reject (test inversion [2]), so
  the interval excludes 0 exactly when p < 1 - level;
* otherwise the percentile task bootstrap of mean(d) (Miller 2024 sec. 1.4; the same as
  ``scipy.stats.bootstrap(paired=True)``), with p = 2 min(P*(mean <= 0), P*(mean >= 0)).

Unpaired (the two arms scored different tasks): :func:`mover_difference`, the difference of two
independent estimates with each arm's own interval recovered into the difference's (MOVER,
Zou & Donner 2008 [4]; Newcombe's hybrid score interval when the arms use binomial intervals).

References
----------
[1] Fisher (1935), The Design of Experiments, sec. 21 (the randomisation / sign-flip test).
[2] Lehmann & Romano (2005), Testing Statistical Hypotheses, sec. 3.5 (intervals by inverting a test).
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

# Sign-flip intervals are found by bisection on the shift to this precision.
_BISECT_STEPS = 50
# The interval's exact distribution has 2^m x (zeros + 1) atoms; above this, seeded patterns.
_EXACT_ATOMS = 2 ** 18


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


# --- the sign-flip test and its inversion -----------------------------------------------------

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
    """Sign-flip p-value for mean(d) = 0 and the interval of shifts it does not reject."""
    n = d.shape[0]
    nz = d[d != 0.0]
    m, zeros = nz.shape[0], n - nz.shape[0]
    alpha = 1.0 - level
    p0, exact_p = sign_flip_pvalue(d, seed=seed, n_resamples=n_resamples)
    rng = np.random.default_rng(seed)
    # Joint atoms of (A, S) = (sum of s_i d_i, sum of s_i over all n tasks) with their weights.
    exact = 2 ** m * (zeros + 1) <= _EXACT_ATOMS
    if exact:
        signs = _patterns(m, True, None, 0)
        a_nz, s_nz = signs @ nz, signs.sum(axis=1)
        k = np.arange(zeros + 1)
        log_w = (np.array([math.lgamma(zeros + 1) - math.lgamma(j + 1) - math.lgamma(zeros - j + 1)
                           for j in k]) - zeros * math.log(2.0) - m * math.log(2.0))
        a = np.repeat(a_nz, zeros + 1)
        s = (s_nz[:, None] + (2 * k - zeros)[None, :]).reshape(-1)
        w = np.tile(np.exp(log_w), 2 ** m)
    else:
        signs = _patterns(m, False, rng, n_resamples)
        a = signs @ nz
        s = signs.sum(axis=1) + 2.0 * rng.binomial(zeros, 0.5, size=n_resamples) - zeros
        w = np.full(n_resamples, 1.0 / (n_resamples + 1))
    total = float(d.sum())

    def p_at(delta: float) -> float:
        obs = abs(total - n * delta)
        hit = np.abs(a - delta * s) >= obs - 1e-9 * max(1.0, obs)
        p = float(w[hit].sum())
        return p if exact else p + 1.0 / (n_resamples + 1)

    centre = total / n

    def edge(outer: float) -> float:
        if p_at(outer) > alpha:  # the whole range is kept: report the range's end
            return outer
        inside, out = centre, outer
        for _ in range(_BISECT_STEPS):
            mid = (inside + out) / 2.0
            inside, out = (mid, out) if p_at(mid) > alpha else (inside, mid)
        return inside

    spread = max(float(d.max() - d.min()), 1e-12)
    # ties make p jump at a shift of exactly 0 (unchanged tasks stop being ties), so an end
    # often sits at 0: snap the bisection's last 1e-9 there
    lo, hi = (0.0 if abs(x) < 1e-9 else x for x in (edge(float(d.min()) - spread),
                                                    edge(float(d.max()) + spread)))
    method = "sign_flip_exact" if exact_p else "sign_flip_mc"
    note = None
    if mcnemar:
        note = (f"0/1 per-task values: the sign-flip test is the exact McNemar test "
                f"({int((d > 0).sum())} tasks better, {int((d < 0).sum())} worse)")
    if m < min_paired_tasks(level):
        extra = (f"only {m} tasks changed: no exact test can call a change at level "
                 f"{level:g} on so few")
        note = f"{note}; {extra}" if note else extra
    return PairedInterval((lo, hi), method, float(p0), m, note)


# --- unpaired --------------------------------------------------------------------------------

def mover_difference(a: float, ci_a: Interval, b: float, ci_b: Interval) -> Interval:
    """Interval for a - b from two independent estimates and their intervals (MOVER [4])."""
    lower = (a - b) - math.sqrt((a - ci_a[0]) ** 2 + (ci_b[1] - b) ** 2)
    upper = (a - b) + math.sqrt((ci_a[1] - a) ** 2 + (b - ci_b[0]) ** 2)
    return (lower, upper)
