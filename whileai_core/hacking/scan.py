"""Within each task, does the reward pay for a feature of the reply rather than for the task?

For every feature (:mod:`.features`) the strength is the pooled within-task correlation of the
feature with the reward: both are centred on their task's mean, so a feature that only tracks
task difficulty (hard tasks have long replies and low rewards) contributes nothing; only
differences between replies to the same prompt count. That is the comparison GRPO itself makes
(its advantage is the reward centred in the group).

The floor is a permutation test within tasks [1]: the rewards are shuffled among each task's own
replies ``n_shuffles`` times, the strength recomputed for every feature, and the floor is the
``level`` quantile of the largest strength over all features in each shuffle (a max-statistic
floor, so the chance that any feature of a clean batch clears it is at most 1 - level [2]).
A feature is ``suspect`` when its strength clears the floor and is at least ``min_strength``
(a large batch makes a trivial association significant). The test is one-sided: the reward
rising with the feature is the hack; replies that fail when cut off are normal.

[1] Good (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, ch. 3 (restricted
    permutations within blocks).
[2] Westfall & Young (1993). Resampling-Based Multiple Testing (single-step maxT).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, MIN_TASKS_FOR_INTERVAL,
                        SCAN_EXAMPLE_CHARS, SCAN_MIN_STRENGTH, SCAN_SHUFFLES)
from ..errors import ArgumentError
from ..result import Result
from ..rows import load_rows
from .features import feature_matrix, reply_text

ScanVerdict = Literal["clean", "suspect", "not_enough_data"]
_CHUNK_CELLS = 4_000_000
_TIE = 1e-9  # strengths (correlations, in [-1, 1]) closer than this are the same value


class ScanExample(Result):
    """The task where the feature and the reward move together most, its two extreme replies."""

    task_id: str
    high_feature: float
    high_reward: float
    high_reply: str | None
    low_feature: float
    low_reward: float
    low_reply: str | None


class FeatureEvidence(Result):
    """One feature against the task-centred reward."""

    feature: str
    strength: float | None = None
    floor: float | None = None
    p_value: float | None = None
    n_rows: int
    n_tasks: int
    verdict: Literal["clean", "suspect", "no_variation", "not_tested"]
    example: ScanExample | None = None

    def render(self) -> str:
        if self.verdict == "not_tested":
            return f"{self.feature:<16} not_tested (too few tasks whose rewards differ)"
        if self.strength is None:
            return f"{self.feature:<16} no_variation (constant within every task)"
        return (f"{self.feature:<16} {self.verdict:<8} strength {self.strength:+.3f} "
                f"(floor {self.floor:.3f}, p={self.p_value:.3f}, n={self.n_rows} rows in "
                f"{self.n_tasks} tasks)")


class HackScan(Result):
    """Which reply features the reward pays for within tasks, each against the shuffle floor."""

    verdict: ScanVerdict
    suspects: list[str]
    features: list[FeatureEvidence]
    floor: float | None
    min_strength: float
    n_rows: int
    n_tasks: int
    n_informative_tasks: int
    n_shuffles: int
    level: float
    skipped: dict[str, str] = {}
    next_step: str
    note: str | None = None

    def render(self) -> str:
        lines = [f"hack scan: {self.verdict} ({self.n_rows} rows, {self.n_tasks} tasks, "
                 f"{self.n_informative_tasks} with reward spread; floor "
                 + ("n/a" if self.floor is None else f"{self.floor:.3f}")
                 + f" from {self.n_shuffles} within-task shuffles, min strength {self.min_strength})"]
        lines += [f.render() for f in self.features]
        for f in self.features:
            if f.example is not None:
                e = f.example
                lines.append(f"  {f.feature} e.g. task {e.task_id}: {f.feature}={e.high_feature:g} "
                             f"-> reward {e.high_reward:g} vs {f.feature}={e.low_feature:g} -> "
                             f"reward {e.low_reward:g}")
        lines += [f"skipped {k}: {v}" for k, v in self.skipped.items()]
        if self.note:
            lines.append(f"note: {self.note}")
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def _centre(values: np.ndarray, index: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each column minus its task's mean (values n x m)."""
    sums = np.stack([np.bincount(index, weights=values[:, j], minlength=counts.size)
                     for j in range(values.shape[1])], axis=1)
    return values - (sums / counts[:, None])[index]


def _snip(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= SCAN_EXAMPLE_CHARS else text[:SCAN_EXAMPLE_CHARS] + "..."


def hack_scan(rows: Any, *, features: Any = None, n_shuffles: int = SCAN_SHUFFLES,
              min_strength: float = SCAN_MIN_STRENGTH, level: float = CONFIDENCE_LEVEL,
              seed: int | None = BOOTSTRAP_SEED, threshold: float | None = None) -> HackScan:
    """Scan graded rows (with their reply text) for reply features the reward pays for.

    Parameters
    ----------
    rows : graded rows (path or list) with several rollouts per task and, for the text
        features, the reply in ``completion`` (or reply/response/output/text).
    features : extra features: a list of row field names (numbers or bools), or in the library
        a dict name -> field name or function(record) -> number.
    n_shuffles : within-task shuffles for the floor (>= 100).
    min_strength : smallest within-task correlation called suspect (default 0.2).
    level : the floor is this quantile of the shuffled maximum (default 0.95).
    """
    level, seed = check_level(level), check_seed(seed)
    if isinstance(n_shuffles, bool) or not isinstance(n_shuffles, int) or not 100 <= n_shuffles <= 100_000:
        raise ArgumentError(f"`n_shuffles` must be an integer in [100, 100000], got {n_shuffles!r}. "
                            f"Fix: use the default {SCAN_SHUFFLES}")
    if isinstance(min_strength, bool) or not isinstance(min_strength, (int, float)) or not (
            0 <= min_strength < 1):
        raise ArgumentError(f"`min_strength` must be a number in [0, 1), got {min_strength!r}. "
                            f"Fix: use the default {SCAN_MIN_STRENGTH}")
    data = load_rows(rows, threshold=threshold)
    names, matrix, skipped = feature_matrix(data.records, data.truncated, features)
    counts = data.rollouts.astype(np.float64)
    reward = data.reward[:, None]
    rc = _centre(reward, data.task_index, counts)[:, 0]
    fc = _centre(matrix, data.task_index, counts) if names else matrix
    rc[np.abs(rc) < 1e-12] = 0.0
    fc[np.abs(fc) < 1e-12] = 0.0
    spread = np.bincount(data.task_index, weights=rc * rc, minlength=data.n_tasks) > 0
    informative = int((spread & (data.rollouts >= 2)).sum())
    keep = spread[data.task_index]
    n_rows = int(keep.sum())
    common = dict(min_strength=float(min_strength), n_rows=data.n_rows, n_tasks=data.n_tasks,
                  n_informative_tasks=informative, n_shuffles=n_shuffles, level=level,
                  skipped=skipped)
    if informative < MIN_TASKS_FOR_INTERVAL or not names:
        evidence = [FeatureEvidence(feature=n, n_rows=n_rows, n_tasks=informative,
                                    verdict="not_tested") for n in names]
        return HackScan(verdict="not_enough_data", suspects=[], features=evidence, floor=None,
                        next_step="score several rollouts per task (4+) with different rewards "
                                  "within tasks; only then can a feature be tied to the reward",
                        note=f"{informative} tasks have rollouts whose rewards differ (need "
                             f">= {MIN_TASKS_FOR_INTERVAL})", **common)
    fk, rk, tk = fc[keep], rc[keep], data.task_index[keep]
    f_norm = np.sqrt((fk * fk).sum(axis=0))
    r_norm = float(np.sqrt((rk * rk).sum()))
    varies = f_norm > 0
    denom = np.where(varies, f_norm * r_norm, 1.0)
    observed = np.where(varies, (fk.T @ rk) / denom, np.nan)
    # within-task shuffles of the centred reward: sort by task, then a random key inside each task
    order = np.argsort(tk, kind="stable")
    tks, rks, fks = tk[order], rk[order], fk[order][:, varies]
    rng = np.random.default_rng(seed)
    maxima = np.empty(n_shuffles)
    step = max(1, _CHUNK_CELLS // max(1, tks.size))
    for start in range(0, n_shuffles, step):
        b = min(step, n_shuffles - start)
        perm = np.argsort(tks[None, :] + rng.random((b, tks.size)), axis=1)
        shuffled = rks[perm]  # (b, n)
        strengths = (shuffled @ fks) / denom[varies] if fks.shape[1] else np.zeros((b, 1))
        maxima[start:start + b] = strengths.max(axis=1)
    floor = float(np.quantile(maxima, level, method="inverted_cdf"))
    evidence, suspects = [], []
    for j, name in enumerate(names):
        if not varies[j]:
            evidence.append(FeatureEvidence(feature=name, n_rows=n_rows, n_tasks=informative,
                                            verdict="no_variation"))
            continue
        s = float(observed[j])
        # a shuffle that only swaps tied rows gives the observed strength itself; the two are
        # summed in different orders, so equal values may differ in the last bits: ties count
        # as ties (against the feature), or the test rejects more often than 1 - level
        p = float((1 + (maxima >= s - _TIE).sum()) / (n_shuffles + 1))
        hit = s > floor + _TIE and s >= min_strength
        example = _example(data, matrix[:, j], keep, name) if hit else None
        if hit:
            suspects.append(name)
        evidence.append(FeatureEvidence(feature=name, strength=s, floor=floor, p_value=p,
                                        n_rows=n_rows, n_tasks=informative,
                                        verdict="suspect" if hit else "clean", example=example))
    if suspects:
        step = (f"the reward pays for {', '.join(suspects)} within tasks: read the examples; if "
                "the task does not ask for it, change the reward (cap or penalise it) before "
                "training further")
    else:
        step = "no reply feature tracks the reward within tasks beyond the shuffle floor"
    return HackScan(verdict="suspect" if suspects else "clean", suspects=suspects,
                    features=evidence, floor=floor, next_step=step, **common)


def _example(data, feature: np.ndarray, keep: np.ndarray, name: str) -> ScanExample:
    """The task whose within-task covariance of feature and reward is largest."""
    idx = data.task_index
    counts = data.rollouts.astype(np.float64)
    f_mean = np.bincount(idx, weights=feature, minlength=data.n_tasks) / counts
    r_mean = data.reward_sum / counts
    cov = np.bincount(idx, weights=(feature - f_mean[idx]) * (data.reward - r_mean[idx]),
                      minlength=data.n_tasks)
    cov[~np.bincount(idx, weights=keep, minlength=data.n_tasks).astype(bool)] = -np.inf
    task = int(np.argmax(cov))
    rows = np.flatnonzero(idx == task)
    hi = rows[np.lexsort((-data.reward[rows], -feature[rows]))[0]]
    lo = rows[np.lexsort((data.reward[rows], feature[rows]))[0]]
    return ScanExample(task_id=data.task_ids[task], high_feature=float(feature[hi]),
                       high_reward=float(data.reward[hi]),
                       high_reply=_snip(reply_text(data.records[hi])),
                       low_feature=float(feature[lo]), low_reward=float(data.reward[lo]),
                       low_reply=_snip(reply_text(data.records[lo])))
