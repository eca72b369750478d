"""The interval and test for a paired difference over tasks, and the unpaired fallback.

Paired rule (:func:`paired_interval`), on per-task differences d_i = after_i - before_i, the same
at every number of tasks:

* fewer than :func:`min_paired_tasks` tasks (6 at 95%): no interval and no verdict, because no
  test on so few tasks can reach p < 1 - level (the smallest two-sided sign-flip p is 2 / 2^n);
* every task changed by the same amount (the paired spread is 0): no paired interval and no
  p-value, and the note says so (``compare`` falls back to the unpaired difference and its
  p-value, :func:`whileai_core.stats.compare.mover_pvalue`);
* otherwise the **sign-flip test** [1] (under no change each d_i is as likely to be +d_i as
  -d_i) with Hall's skewness-corrected t interval on d [2] (``intervals.hall_interval``: the
  plain t interval when d is not skewed, and on 0/1 tasks). The sign-flip p is exact (every sign
  pattern enumerated up to ``SIGN_FLIP_EXACT_PATTERNS``; seeded random patterns above, with the
  (b + 1)/(B + 1) correction [3], so never 0); on 0/1 per-task values it *is* the exact McNemar
  test. The interval is widened to hold 0 whenever the exact test cannot reject 0, and the
  p-value given is the exact test's, raised to the t test's when the t interval reaches 0: so
  p <= 1 - level exactly when the interval excludes 0, and a verdict is never stronger than its
  interval (``t_sign_flip_exact`` / ``t_sign_flip_mc``). The p-value is never below the exact
  test's, so Holm and Benjamini-Hochberg can correct it. Hall's correction keeps a skewed
  change (a tenth of the tasks gaining much, the rest losing a little) from being called a
  move the wrong way (bench/stats_skew.py, docs/statistics-study.md table G).

Unpaired (the two arms scored different tasks, or the paired spread is 0):
:func:`mover_difference`, the difference of two independent estimates with each arm's own
interval recovered into the difference's (MOVER, Zou & Donner 2008 [4]; Newcombe's hybrid score
interval when the arms use binomial intervals).

References
----------
[1] Fisher (1935), The Design of Experiments, sec. 21 (the randomisation / sign-flip test).
[2] Student (1908); Hall (1992), JRSS-B 54:221 and Johnson (1978), JASA 73:536 (the skewness
    correction); the coverage of this interval is table B2 of docs/statistics-study.md.
[3] Phipson & Smyth (2010), Permutation p-values should never be zero, SAGMB 9:39.
[4] Zou & Donner (2008), Construction of confidence limits about effect measures, Stat. Med. 27:1693;
    Newcombe (1998), Stat. Med. 17:873.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..defaults import PAIRED_SPREAD_RTOL, SIGN_FLIP_EXACT_PATTERNS
from .intervals import Interval, hall_interval, moments

# random sign patterns are drawn in chunks of this many cells (bounds memory at any n)
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class PairedInterval:
    """The paired difference's interval, the method behind it, its two-sided p-value, and ``n``,
    the paired tasks behind it."""

    ci: Interval | None
    method: str | None
    p_value: float | None
    n_changed: int
    note: str | None = None
    n: int = 0


def min_paired_tasks(level: float) -> int:
    """Fewest paired tasks on which a two-sided exact test can reject at ``1 - level``:
    the smallest n with 2 / 2^n <= 1 - level (6 at 95%, 5 at 90%, 8 at 99%)."""
    return max(2, math.ceil(1.0 - math.log2(1.0 - level) - 1e-12))


def needs_sign_flip(d: np.ndarray) -> bool:
    """Whether the sign-flip test decides this paired difference: always (kept for callers
    that ask before computing bootstrap draws)."""
    return True


def no_spread(d: np.ndarray, scale: float | np.ndarray | None = None) -> bool | np.ndarray:
    """Whether the per-task differences ``d`` (the last axis; leading axes are vectorised) have
    no spread: their range is at most ``PAIRED_SPREAD_RTOL`` of ``scale``, the magnitude of the
    per-task values they were taken from (None: the largest ``|d|``). A spread that small is
    float rounding, not a spread: 0.123 + 0.05 - 0.123 is not 0.05, 1 - 2/3 is not 2/3 - 1/3,
    and a mean of the same rewards summed in another order moves in its last bits."""
    d = np.asarray(d, dtype=np.float64)
    top = np.max(np.abs(d), axis=-1)
    if scale is not None:
        top = np.maximum(top, np.asarray(scale, dtype=np.float64))
    out = np.ptp(d, axis=-1) <= PAIRED_SPREAD_RTOL * top
    return bool(out) if out.ndim == 0 else out


def value_scale(*values: np.ndarray) -> float:
    """The largest magnitude among per-task values (the ``scale`` of :func:`no_spread`)."""
    return max((float(np.max(np.abs(v))) for v in values if np.size(v)), default=0.0)


def degenerate_note(d: np.ndarray, scale: float | None = None) -> str | None:
    """The note for a paired difference with no spread (None when it has one): see
    :func:`no_spread`, whose ``scale`` this takes."""
    if d.size == 0 or not bool(np.all(np.isfinite(d))) or not no_spread(d, scale):
        return None
    top = float(np.max(np.abs(d)))
    if top <= PAIRED_SPREAD_RTOL * (scale or 0.0) or top == 0.0:   # nothing moved but bits
        return ("no paired task changed: the paired spread is 0, so there is no paired test, "
                "interval or p-value")
    return (f"every paired task changed by the same amount ({float(np.mean(d)):+.4g}): the "
            "paired spread is 0, so there is no paired test, interval or p-value")


def paired_interval(d: np.ndarray, *, level: float, seed: int | None, n_resamples: int,
                    draws: np.ndarray | None = None, mcnemar: bool = False,
                    scale: float | None = None) -> PairedInterval:
    """Interval and p-value for mean(d) by the paired rule (module docstring).

    ``scale``: the magnitude of the per-task values ``d`` was taken from (:func:`no_spread`).
    ``mcnemar``: both arms' per-task values are 0/1 (the note then names the exact McNemar test).
    ``draws`` is unused.
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[0]
    n_changed = int(np.count_nonzero(d))
    need = min_paired_tasks(level)
    if n < need:
        return PairedInterval(None, None, None, n_changed,
                              f"fewer than {need} paired tasks: no test on {n} tasks can call a "
                              f"change at level {level:g} (the smallest exact two-sided p is "
                              f"2/2^{n} = {2 / 2 ** n:.3f}); score more shared tasks", n)
    if not bool(np.all(np.isfinite(d))):
        return PairedInterval(None, None, None, n_changed, "a per-task difference does not fit "
                              "a float's range (rewards near 1e308 of opposite signs): rescale "
                              "the rewards", n)
    note = degenerate_note(d, scale)
    if note is not None:
        return PairedInterval(None, None, None, n_changed, note, n)
    return sign_flip(d, level=level, seed=seed, n_resamples=n_resamples, mcnemar=mcnemar)


# --- the sign-flip test -----------------------------------------------------------------------

def _exact_stats(x: np.ndarray) -> np.ndarray:
    """Sum of s_i x_i over every sign pattern s (x: up to 16 values)."""
    m = x.shape[0]
    codes = np.arange(2 ** m, dtype=np.int64)[:, None] >> np.arange(m, dtype=np.int64)
    return ((codes & 1) * 2 - 1).astype(np.float64) @ x


def _random_stats(x: np.ndarray, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    """Sum of s_i x_i over ``n_resamples`` random sign patterns. When x takes few distinct
    magnitudes (pass-rate differences), the number of + signs among the n_v values of magnitude
    v is Binomial(n_v, 1/2): drawing those counts is the same test at a cost independent of n."""
    mags, counts = np.unique(np.abs(x), return_counts=True)
    if 2 * mags.shape[0] <= x.shape[0]:
        plus = rng.binomial(counts, 0.5, size=(n_resamples, mags.shape[0]))
        return (2 * plus - counts) @ mags
    out = np.empty(n_resamples)
    step = max(1, _CHUNK_CELLS // x.shape[0])
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        signs = rng.integers(0, 2, size=(stop - start, x.shape[0]), dtype=np.int8) * 2 - 1
        out[start:stop] = signs @ x
    return out


def sign_flip_pvalue(d: np.ndarray, *, seed: int | None, n_resamples: int) -> tuple[float, bool]:
    """Two-sided sign-flip p-value for mean(d) = 0 (zeros carry no sign). Returns (p, exact).

    Vectorised over a leading axis: ``d`` of shape (R, n) gives R p-values (the study uses it;
    the rows share one stream of random patterns, each row's p is still a valid test).
    """
    d = np.asarray(d, dtype=np.float64)
    batch = d.ndim == 2
    rows = d if batch else d[None, :]
    scale = np.max(np.abs(rows), axis=1, keepdims=True)
    rows = rows / np.where(scale > 0, scale, 1.0)
    changed = np.count_nonzero(rows, axis=1)
    exact_rows = changed <= math.log2(SIGN_FLIP_EXACT_PATTERNS)
    out = np.ones(rows.shape[0])
    obs = np.abs(rows.sum(axis=1))
    tol = 1e-9 * np.maximum(1.0, obs)
    rng = np.random.default_rng(seed)
    for r in np.flatnonzero(exact_rows & (changed > 0)):
        stats = _exact_stats(rows[r][rows[r] != 0.0])
        out[r] = np.count_nonzero(np.abs(stats) >= obs[r] - tol[r]) / stats.shape[0]
    mc = np.flatnonzero(~exact_rows)
    if mc.size == 1:
        stats = _random_stats(rows[mc[0]], rng, n_resamples)
        out[mc[0]] = (np.count_nonzero(np.abs(stats) >= obs[mc[0]] - tol[mc[0]]) + 1) / \
            (n_resamples + 1)
    elif mc.size > 1:
        sub = rows[mc]
        hits = np.zeros(mc.size)
        step = max(1, _CHUNK_CELLS // sub.shape[1])
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            signs = rng.integers(0, 2, size=(stop - start, sub.shape[1]), dtype=np.int8) * 2 - 1
            stats = signs.astype(np.float64) @ sub.T                 # (chunk, rows)
            hits += np.count_nonzero(np.abs(stats) >= (obs[mc] - tol[mc])[None, :], axis=0)
        out[mc] = (hits + 1) / (n_resamples + 1)
    exact_all = bool(np.all(exact_rows))
    return (out if batch else float(out[0])), exact_all


def t_pvalue(d: np.ndarray, *, skewed: bool = True) -> float:
    """Two-sided p-value of Hall's skewness-corrected t test for mean(d) = 0 (d scaled first;
    1.0 with no spread): 0 lies in :func:`hall_interval` at a level exactly when the p-value is
    at least 1 - level (the interval is {mu : |g(T(mu))| <= q}; this is the tail of |g(T(0))|).
    With no skew (or ``skewed`` False) it is the paired t test's."""
    from scipy.special import stdtr  # lazy: scipy.special is slow to import

    scale = float(np.max(np.abs(d)))
    if scale == 0.0:
        return 1.0
    mean, sd, skew, _ = moments(d / scale)
    if float(sd) == 0.0:   # only when the spread is below float resolution: no evidence
        return 1.0
    n = d.shape[0]
    t = float(mean) / (float(sd) / math.sqrt(n))
    gamma = float(skew) if skewed else 0.0
    a, b = gamma / (3.0 * math.sqrt(n)), gamma / (6.0 * math.sqrt(n))
    g = t + a * t * t + a * a * t ** 3 / 3.0 + b
    return float(2.0 * stdtr(n - 1, -abs(g)))


def sign_flip(d: np.ndarray, *, level: float, seed: int | None, n_resamples: int,
              mcnemar: bool = False) -> PairedInterval:
    """The exact sign-flip p-value for mean(d) = 0, and a t interval on d made to agree with it
    (module docstring; no skew correction with ``mcnemar``). The interval is not the sign-flip
    test inverted: that would assume every task shifts by the same amount, which unchanged tasks
    break.
    """
    n = d.shape[0]
    m = int(np.count_nonzero(d))
    alpha = 1.0 - level
    p_flip, exact_p = sign_flip_pvalue(d, seed=seed, n_resamples=n_resamples)
    scale = float(np.max(np.abs(d)))
    mean, sd, skew, _ = moments(d / scale)
    if mcnemar:  # 0/1 tasks: the exact McNemar test needs no symmetry; Hall's correction swings
        skew = np.zeros_like(skew)  # widely on values in {-1, 0, 1} (8 tasks: past 9 SE)
    p_t = t_pvalue(d, skewed=not mcnemar)
    lo, hi = (float(v) * scale for v in hall_interval(mean, sd, skew, n, level))
    note = None
    if mcnemar:
        note = (f"0/1 per-task values: the sign-flip test is the exact McNemar test "
                f"({int((d > 0).sum())} tasks better, {int((d < 0).sum())} worse)")
    extra = None
    if p_flip > alpha:
        if lo > 0 or hi < 0:
            extra = (f"the t interval alone excludes 0 but the exact test gives p = "
                     f"{p_flip:.3g}: the interval is widened to 0")
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    elif lo <= 0 <= hi:
        extra = (f"the exact test gives p = {p_flip:.3g} but the t interval reaches 0 "
                 f"(skew-corrected t test p = {p_t:.3g}): not called a change")
    if m < min_paired_tasks(level):
        extra = (f"only {m} task{'' if m == 1 else 's'} changed: no exact test can call a "
                 f"change at level {level:g} on so few")
    if extra:
        note = f"{note}; {extra}" if note else extra
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return PairedInterval(None, None, None, m, "the interval of the difference does not fit "
                              "a float's range (rewards near 1e308): rescale the rewards", n)
    method = "t_sign_flip_exact" if exact_p else "t_sign_flip_mc"
    p = float(p_flip) if p_t <= alpha else max(float(p_flip), p_t)
    return PairedInterval((lo, hi), method, p, m, note, n)


# --- unpaired --------------------------------------------------------------------------------

def mover_difference(a: float, ci_a: Interval, b: float, ci_b: Interval,
                     bounds: Interval | None = None) -> Interval:
    """Interval for a - b from two independent estimates and their intervals (MOVER [4]),
    clipped to ``bounds`` (e.g. (-1, 1) for a difference of two rates)."""
    lower = (a - b) - math.sqrt((a - ci_a[0]) ** 2 + (ci_b[1] - b) ** 2)
    upper = (a - b) + math.sqrt((ci_a[1] - a) ** 2 + (b - ci_b[0]) ** 2)
    if bounds is not None:
        lower, upper = max(lower, bounds[0]), min(upper, bounds[1])
    return (lower, upper)
