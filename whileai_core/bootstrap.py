"""The task (cluster) bootstrap, vectorised, and the small interval helpers around it.

A resample draws C tasks with replacement from the C observed tasks and keeps each drawn task's
rollouts whole (Field & Welsh 2007 [1]); the statistic is the task-weighted mean of per-task
values. Two exact implementations of that one distribution:

* **counts**: when the per-task value rows take V distinct values with V small next to C, the
  number of times each distinct value is drawn is Multinomial(C, f/C) with f its frequency.
  Drawing those counts (B x V) *is* the task bootstrap, at a cost independent of C [2].
* **indices**: otherwise, draw task indices (B x C) in chunks that bound memory.

References
----------
[1] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3), 369-390.
[2] shared/reference/stats.md sec. 5.2 and sec. 10.2 (exact multinomial shortcut).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .errors import ArgumentError
from .progress import step as report_step

# Index draws are made in chunks of at most this many int64 cells (~160 MB).
_CHUNK_CELLS = 20_000_000


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ArgumentError(f"`level` must be a number strictly between 0 and 1, got {level!r}. "
                            "Fix: use e.g. level=0.95 (the default)")
    return float(level)


def check_seed(seed: int | None) -> int | None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ArgumentError(f"`seed` must be a non-negative integer, got {seed!r}. "
                            "Fix: use e.g. seed=0 (the default)")
    return seed


def check_resamples(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 100:
        raise ArgumentError(f"`n_resamples` must be an integer >= 100, got {n!r}. "
                            "Fix: use the default (10,000)")
    return n


def task_bootstrap(values: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Means of ``n_resamples`` task resamples of ``values`` (shape (C,) or (C, m)).

    Returns shape (B,) or (B, m): column j of a row is the mean of column j over the same
    resampled tasks, so paired arms share one resample.
    """
    vals = np.asarray(values, dtype=np.float64)
    flat = vals.ndim == 1
    if flat:
        vals = vals[:, None]
    n_tasks = vals.shape[0]
    rng = np.random.default_rng(seed)
    uniq, counts = _distinct_rows(vals)
    report_step(0, n_resamples, f"task bootstrap: {n_resamples} resamples of {n_tasks} tasks")
    if 2 * uniq.shape[0] <= n_tasks:
        draws = rng.multinomial(n_tasks, counts / n_tasks, size=n_resamples)  # (B, V)
        means = (draws @ uniq) / n_tasks
    else:
        means = np.empty((n_resamples, vals.shape[1]))
        step = max(1, _CHUNK_CELLS // n_tasks)
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            idx = rng.integers(0, n_tasks, size=(stop - start, n_tasks))
            means[start:stop] = vals[idx].mean(axis=1)
            report_step(stop, n_resamples, f"task bootstrap: {stop} of {n_resamples} resamples")
    report_step(n_resamples, n_resamples, "task bootstrap done")
    return means[:, 0] if flat else means


def _distinct_rows(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a (C, m) array and their counts, via per-column codes (a 1-D sort per
    column; np.unique(axis=0) sorts structured rows and is ~10x slower)."""
    code = np.zeros(vals.shape[0], dtype=np.int64)
    for j in range(vals.shape[1]):
        levels, inverse = np.unique(vals[:, j], return_inverse=True)
        code = code * levels.shape[0] + inverse.reshape(-1)
    _, first, counts = np.unique(code, return_index=True, return_counts=True)
    return vals[first], counts


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float] | np.ndarray:
    """Percentile interval of bootstrap draws (inverse-CDF definition: endpoints are draws).

    ``draws`` (B,) gives a (lo, hi) tuple; (B, m) gives an array of shape (2, m).
    """
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
