"""Intervals when tasks come in families (several prompts from one repo, document or template).

Tasks of one family fail and pass together, so the tasks are not independent draws and an
interval that resamples tasks is too narrow (clustered standard errors of 1.1x-3x the naive ones
on public evals: Miller 2024 [1], sec. 2.2; inspect_ai's ``stderr(cluster=...)``). With
``cluster="<field>"`` every interval over tasks becomes:

1. a **two-level resample** [2]: draw C families with replacement from the C observed ones, then
   the tasks within each drawn family. Davison & Hinkley give two ways to take the second stage:
   draw its tasks again with replacement, or keep them as they are (without replacement). The
   study below measured both: redrawing the tasks counts the within-family variance twice (the
   family means already carry it) and covered 98-100% where families do not matter, with
   intervals 1.2-1.4x wider than needed; keeping them covers 93-97% in every balanced shape. So
   the tasks of a drawn family are kept (``within_replace=False``; the study keeps the other as a
   column). The statistic is the mean over every drawn task (task-weighted: the same point
   estimate as without families);
2. the interval ``mean +- t_{C-1} x SE``, SE the standard deviation of those resampled means times
   sqrt(C / (C - 1)) (the small-sample factor inspect_ai's clustered stderr applies; with equal
   family sizes SE is then the CR1 standard error of the family means), with C - 1 degrees of
   freedom for C families (few clusters: Cameron, Gelbach & Miller 2008 [3]), or fewer when the
   families' sizes differ (the effective number of families, [4]), clipped to the statistic's
   range. Its two-sided p-value for 0 uses the same t.

Coverage by simulation (``bench/family_study.py``, table F in docs/statistics-study.md): 93-97%
from ``CLUSTER_MIN_FAMILIES`` families in every shape measured; an interval from fewer says it is
unreliable.

A family is a row field constant within each task; every row must carry it.

References
----------
[1] Miller (2024), Adding Error Bars to Evals, arXiv:2411.00640.
[2] Davison & Hinkley (1997), Bootstrap Methods and their Application, sec. 3.8 (multi-stage
    sampling: resample the first stage, then the second within it).
[3] Cameron, Gelbach & Miller (2008), Bootstrap-based improvements for inference with clustered
    errors, Rev. Econ. Stat. 90:414 (few clusters: t with G - 1 degrees of freedom).
[4] Carter, Schnepel & Steigerwald (2017), Asymptotic behavior of a t-test robust to cluster
    heterogeneity, Rev. Econ. Stat. 99:698 (the effective number of clusters G*).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ..defaults import CLUSTER_MIN_FAMILIES, CLUSTER_RESAMPLES, MIN_TASKS_FOR_INTERVAL
from ..errors import ArgumentError, RowsError
from .intervals import Interval, TaskInterval, t_value, task_intervals

METHOD = "family_bootstrap_t"
_CHUNK_PICKS = 2_000_000


@dataclass(frozen=True)
class Families:
    """Which family each task belongs to: ``codes`` (one int per task) and the family names."""

    field: str
    codes: np.ndarray
    names: list

    @property
    def n_families(self) -> int:
        return len(self.names)

    def take(self, idx: np.ndarray) -> Families:
        """The families of the tasks at ``idx`` (renumbered: only families still present)."""
        used, codes = np.unique(self.codes[idx], return_inverse=True)
        return Families(self.field, codes.reshape(-1), [self.names[i] for i in used.tolist()])


@dataclass(frozen=True)
class ClusterInterval:
    """One family-clustered interval: bounds, method, SE, families, p-value for 0, a note."""

    ci: Interval | None
    method: str | None
    se: float | None
    n_families: int
    p_value: float | None = None
    note: str | None = None


def check_cluster(cluster: object) -> str | None:
    if cluster is None:
        return None
    if not isinstance(cluster, str) or not cluster.strip():
        raise ArgumentError(f"`cluster` must be the name of a row field, got {cluster!r}. Fix: "
                            "e.g. cluster='family' (the repo, document or template a task "
                            "comes from), or leave it out")
    return cluster


def families_of(data, field: str) -> Families:
    """The family of each task of ``data`` (a :class:`~whileai_core.rows.Rows`) from row field
    ``field``; every row must carry it, and it must not change within a task."""
    n = data.n_rows
    values = list(map(dict.get, data.records, repeat(field, n)))
    if field == "task_id":
        raise ArgumentError("`cluster` is 'task_id': every interval already resamples tasks. "
                            "Fix: name the field a task's family is in (e.g. 'family', 'repo')")
    missing = values.count(None)
    if missing:
        from ..describe import field_names, listing

        i = values.index(None)
        raise RowsError(f"{missing} of {n} rows carry no `{field}` (the first is row "
                        f"{data.line_of(i)}); the rows' fields are "
                        f"{listing(field_names(data.records))}", source=data.source, field=field,
                        fix=f"give every row its family in `{field}`, or cluster on one of "
                            "those fields")
    try:
        uniq, codes = np.unique(np.array(values, dtype=object).astype(str), return_inverse=True)
    except (TypeError, ValueError):
        uniq, codes = np.unique(np.array([repr(v) for v in values]), return_inverse=True)
    codes = codes.reshape(-1)
    _, first_row = np.unique(data.task_index, return_index=True)  # tasks are 0..n_tasks-1
    first = codes[first_row]
    differs = codes != first[data.task_index]
    if differs.any():
        i = int(np.flatnonzero(differs)[0])
        task = data.task_ids[int(data.task_index[i])]
        raise RowsError(f"`{field}` changes within task {task!r} (line {data.line_of(i)}): a "
                        "family groups whole tasks", source=data.source, field=field,
                        fix=f"give all rollouts of a task the same `{field}`")
    used, task_codes = np.unique(first, return_inverse=True)
    return Families(field, task_codes.reshape(-1), [str(uniq[i]) for i in used.tolist()])


def two_level_means(values: np.ndarray, codes: np.ndarray, n_resamples: int,
                    seed: int | None, *, within_replace: bool = False) -> np.ndarray:
    """Means of ``n_resamples`` two-level resamples of the per-task ``values`` with family
    ``codes`` (0..C-1): families with replacement, then each drawn family's tasks, kept whole
    (``within_replace=False``) or drawn again with replacement. Vectorised in chunks."""
    vals = np.asarray(values, dtype=np.float64)
    if not within_replace:  # a drawn family brings its own tasks: its sum, drawn C times
        codes = np.asarray(codes)
        sums = np.bincount(codes, weights=vals)
        sizes = np.bincount(codes).astype(np.float64)
        rng = np.random.default_rng(seed)
        out = np.empty(n_resamples)
        n_fam = sizes.shape[0]
        per_rep = max(1, _CHUNK_PICKS // max(1, n_fam))
        for start in range(0, n_resamples, per_rep):
            stop = min(n_resamples, start + per_rep)
            fam = rng.integers(0, n_fam, size=(stop - start, n_fam))
            out[start:stop] = sums[fam].sum(axis=1) / sizes[fam].sum(axis=1)
        return out
    order = np.argsort(codes, kind="stable")
    sorted_vals = vals[order]
    sizes = np.bincount(codes).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    n_fam = sizes.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty(n_resamples)
    per_rep = max(1, _CHUNK_PICKS // max(1, vals.shape[0]))
    for start in range(0, n_resamples, per_rep):
        stop = min(n_resamples, start + per_rep)
        fam = rng.integers(0, n_fam, size=(stop - start, n_fam))
        drawn = sizes[fam]                                   # tasks each drawn family brings
        totals = drawn.sum(axis=1)
        which = np.repeat(fam.ravel(), drawn.ravel())        # the family of every pick
        picks = offsets[which] + np.floor(rng.random(which.shape[0]) * sizes[which]).astype(
            np.int64)
        bounds = np.concatenate(([0], np.cumsum(totals)[:-1]))
        out[start:stop] = np.add.reduceat(sorted_vals[picks], bounds) / totals
    return out


def cluster_interval(values: np.ndarray, families: Families, *, level: float, seed: int | None,
                     n_resamples: int = CLUSTER_RESAMPLES,
                     bounds: tuple[float, float] | None = (0.0, 1.0)) -> ClusterInterval:
    """The family-clustered interval of the mean of per-task ``values`` (module docstring).

    ``bounds``: the statistic's range, to clip to (None: unbounded, e.g. a paired difference of
    rewards on another scale; a difference of rates passes (-1, 1)).
    """
    vals = np.asarray(values, dtype=np.float64)
    c = families.n_families
    if vals.shape[0] < MIN_TASKS_FOR_INTERVAL or c < 2:
        return ClusterInterval(None, None, None, c, note=(
            f"{c} famil{'y' if c == 1 else 'ies'} in `{families.field}`: an interval clustered "
            "by family needs at least 2 families (and 10 or more to be trusted); score tasks "
            "from more families"))
    draws = two_level_means(vals, families.codes, n_resamples, seed)
    se = float(draws.std(ddof=1)) * (c / (c - 1)) ** 0.5
    m = float(vals.mean())
    g_eff = effective_families(families)
    q = float(t_value(0.5 + level / 2.0, max(1.0, min(c, g_eff) - 1.0)))
    lo, hi = m - q * se, m + q * se
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    p = None
    if se > 0:
        from scipy.special import stdtr  # lazy: scipy only where a p-value is asked for

        p = float(2.0 * stdtr(max(1.0, min(c, g_eff) - 1.0), -abs(m) / se))
    note = None
    if c < CLUSTER_MIN_FAMILIES:
        note = (f"only {c} families in `{families.field}`: an interval clustered on fewer than "
                f"{CLUSTER_MIN_FAMILIES} families is unreliable (docs/statistics-study.md, table "
                "F); score tasks from more families")
    elif g_eff < CLUSTER_MIN_FAMILIES:
        note = (f"{c} families in `{families.field}`, but their sizes differ so much that they "
                f"count as {g_eff:.1f} (sum of sizes squared over the sum of squared sizes): an "
                f"interval from fewer than {CLUSTER_MIN_FAMILIES} effective families is "
                "unreliable (docs/statistics-study.md, table F)")
    if se == 0.0:
        note = ((note + "; ") if note else "") + ("every resample gave the same mean: no spread "
                                                  "between or within families")
    return ClusterInterval((float(lo), float(hi)), METHOD, se, c, p, note)


def effective_families(families: Families) -> float:
    """(sum of family sizes)^2 / (sum of squared sizes): C for equal sizes, fewer when a few large
    families hold most tasks (the size part of Carter, Schnepel & Steigerwald's effective number
    of clusters [4]). The interval's t quantile uses min(C, this) - 1 degrees of freedom."""
    sizes = np.bincount(families.codes).astype(np.float64)
    return float(sizes.sum() ** 2 / (sizes ** 2).sum())


def clustered_ses(values: np.ndarray, families: Families) -> tuple[float, float]:
    """(clustered, independent) variance of the mean of ``values`` in Miller 2024's compact form
    [1]: sum over families of (sum of deviations)^2 / n^2, against sum of squared deviations /
    n^2. Their ratio is the design effect holdout sizing inflates n by."""
    vals = np.asarray(values, dtype=np.float64)
    dev = vals - vals.mean()
    n = vals.shape[0]
    by_family = np.bincount(families.codes, weights=dev, minlength=families.n_families)
    return float((by_family ** 2).sum()) / n ** 2, float((dev ** 2).sum()) / n ** 2


def design_effect(values: np.ndarray, families: Families) -> float:
    """How much wider clustering makes the variance of the mean (>= its floor of 1 is not
    forced: a negative within-family correlation gives less than 1, reported as found)."""
    clustered, independent = clustered_ses(values, families)
    return clustered / independent if independent > 0 else 1.0


def mean_family_size(families: Families) -> float:
    return float(np.bincount(families.codes).mean())


def intervals(columns: list[np.ndarray], caps: list[float | None], level: float,
              seed: int | None, n_resamples: int, families: Families | None,
              bounds: tuple[float, float] | None = (0.0, 1.0)) -> list[TaskInterval]:
    """The interval of each column of per-task values: by the one rule over tasks
    (:func:`whileai_core.stats.intervals.task_intervals`) without families, else clustered."""
    if families is None:
        return task_intervals(columns, caps, level, seed, n_resamples)[0]
    out = []
    for col in columns:
        ci = cluster_interval(col, families, level=level, seed=seed, bounds=bounds)
        out.append(TaskInterval(ci.ci, ci.method, ci.note))
    return out
