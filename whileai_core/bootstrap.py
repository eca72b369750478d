"""The task (cluster) bootstrap, vectorised, and the small interval helpers around it.

A resample draws C tasks with replacement from the C observed tasks and keeps each drawn task's
rollouts whole [1]; the statistic is the mean of per-task values. Two exact ways to draw it: when
a column takes V distinct values, V small next to C, the counts of each value are
Multinomial(C, f/C) [2] (a cost independent of C); otherwise task indices, drawn in chunks that
bound memory. Each column is resampled on its own from the same seed, so a rate's interval
depends only on its own per-task values: every tool gives the same rows the same interval.

[1] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3), 369-390.
[2] docs/statistics-study.md, Sources: few distinct values resample exactly as multinomial counts.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .errors import ArgumentError
from .progress import step as report_step

# index draws are made in chunks of this many cells (8 MB of uint32: the gather stays in cache)
_CHUNK_CELLS = 2_000_000


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ArgumentError(f"`level` must be a number strictly between 0 and 1, got {level!r}",
                            fix="use e.g. level=0.95 (the default)")
    return float(level)


def check_seed(seed: int | None) -> int | None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ArgumentError(f"`seed` must be a non-negative integer, got {seed!r}",
                            fix="use e.g. seed=0 (the default)")
    return seed


def check_resamples(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 100:
        raise ArgumentError(f"`n_resamples` must be an integer >= 100, got {n!r}",
                            fix="use the default (10,000)")
    return n


def task_bootstrap(values: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Means of ``n_resamples`` task resamples of ``values`` (shape (C,) or (C, m)): shape (B,)
    or (B, m), each column resampled as :func:`bootstrap_means` does it."""
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim == 1:
        return bootstrap_means([vals], n_resamples, seed)[0]
    return np.stack(bootstrap_means(list(vals.T), n_resamples, seed), axis=1)


def bootstrap_means(columns: list[np.ndarray], n_resamples: int, seed: int | None
                    ) -> list[np.ndarray]:
    """Task-bootstrap means of each column (all of length C), ``n_resamples`` each: a column
    with few distinct values (2V <= C) by the multinomial shortcut, the others by one shared
    stream of index draws, each from a fresh generator seeded with ``seed``."""
    if not columns:
        return []
    n_tasks = int(np.asarray(columns[0]).shape[0])
    report_step(0, n_resamples, f"task bootstrap: {n_resamples} resamples of {n_tasks} tasks")
    out: list[np.ndarray | None] = [None] * len(columns)
    by_index: list[int] = []
    for j, col in enumerate(columns):
        col = np.asarray(col, dtype=np.float64)
        uniq, counts = np.unique(col, return_counts=True)
        if 2 * uniq.shape[0] <= n_tasks:
            rng = np.random.default_rng(seed)
            draws = rng.multinomial(n_tasks, counts / n_tasks, size=n_resamples)  # (B, V)
            out[j] = (draws @ uniq) / n_tasks
        else:
            by_index.append(j)
    if by_index:
        cols = [np.ascontiguousarray(columns[j], dtype=np.float64) for j in by_index]
        means = np.empty((len(cols), n_resamples))
        rng = np.random.default_rng(seed)
        dtype = np.uint32 if n_tasks < 2 ** 32 else np.int64
        step = max(1, _CHUNK_CELLS // n_tasks)
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            idx = rng.integers(0, n_tasks, size=(stop - start, n_tasks), dtype=dtype)
            for i, col in enumerate(cols):
                means[i, start:stop] = np.take(col, idx).sum(axis=1) / n_tasks
            report_step(stop, n_resamples, f"task bootstrap: {stop} of {n_resamples} resamples")
        for i, j in enumerate(by_index):
            out[j] = means[i]
    report_step(n_resamples, n_resamples, "task bootstrap done")
    return out  # type: ignore[return-value]


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float] | np.ndarray:
    """Percentile interval of bootstrap draws (inverse-CDF: endpoints are draws): a (lo, hi)
    tuple for (B,) draws, an array of shape (2, m) for (B, m)."""
    tail = (1.0 - level) / 2.0
    q = np.quantile(draws, [tail, 1.0 - tail], axis=0, method="inverted_cdf")
    if q.ndim == 1:
        return (float(q[0]), float(q[1]))
    return q


def z_value(p: float) -> float:
    """Standard normal quantile (stdlib; avoids importing scipy on the hot path)."""
    return NormalDist().inv_cdf(p)


def wilson_interval(successes: int, n: int, level: float) -> tuple[float, float]:
    """Wilson score interval for ``successes`` of ``n`` independent trials (Brown et al. 2001)."""
    if n <= 0:
        raise ArgumentError("Wilson interval needs n >= 1 trials")
    z = z_value(0.5 + level / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
