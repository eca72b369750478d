"""Intervals when tasks come in families (several prompts from one repo, document or template).

Tasks of one family fail and pass together, so they are not independent draws and an interval
that resamples tasks is too narrow (Miller 2024 [1], sec. 2.2; inspect_ai's
``stderr(cluster=...)``). With ``cluster="<field>"`` every interval over tasks becomes:

1. a **two-level resample** [2]: draw C families with replacement from the C observed ones, each
   drawn family bringing its own tasks as they are (without replacement: redrawing them counts
   the within-family variance twice and over-covers; ``within_replace=True`` keeps that way for
   the study). The statistic is the mean over every drawn task (task-weighted: the same point
   estimate as without families);
2. one standard error SE: the sd of those resampled means times sqrt(C / (C - 1)) (inspect_ai's
   small-sample factor; with equal family sizes the CR1 error of the family means), and G units
   behind it, G - 1 the Bell-McCaffrey degrees of freedom of the CR2 error [6]: C - 1 for equal
   sizes (few clusters: Cameron, Gelbach & Miller 2008 [3]), fewer when the sizes differ (about
   the effective number of families [4] minus 0.4);
3. the interval on SE, chosen per statistic as the rule over tasks chooses
   (:mod:`whileai_core.stats.intervals`), with the family as the unit:

   * a share of 0/1 outcomes (pass@1, a field share; ``family_effective_n``): Agresti-Coull on
     the effective n m(1-m)/SE^2, at most the outcomes, scaled by (z / t_{G-1})^2
     (:func:`~whileai_core.stats.intervals.effective_n`; Korn & Graubard [5]), the bound of 0 of
     G families under the upper end only where fewer than 3 families carry the mean;
   * pass@k, pass^k and graded rewards (``family_hall_t``): Hall's skewness-corrected t
     (:func:`~whileai_core.stats.intervals.hall_interval`) with the skewness of the family means
     and G units; pass@k and pass^k are then held to what pass@1's clustered interval implies
     (:func:`~whileai_core.stats.intervals.pass_k_bounds`);
   * a paired difference (``compare``; ``family_bootstrap_t``): mean +- t_{G-1} x SE, and its
     two-sided p-value for 0 from the same t (at least 1e-12);

   each clipped to the statistic's range. When no resample moves the mean (every family has the
   same mean) the interval is the rule's over the families' means, each family one unit
   (:func:`intervals`). Values are scaled by their largest magnitude before resampling, so
   rewards near 1e308 give a finite interval or a refusal that says why.

Coverage by simulation: ``bench/family_study.py``, table F in docs/statistics-study.md; an
interval from fewer than ``CLUSTER_MIN_FAMILIES`` (effective) families says it is unreliable.

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
[5] Korn & Graubard (1998), Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data, Survey Methodology 24:193.
[6] Bell & McCaffrey (2002), Bias reduction in standard errors for linear regression with
    multi-stage samples, Survey Methodology 28:169; Pustejovsky & Tipton (2018), Small-sample
    methods for cluster-robust variance estimation, JBES 36:672 (the CR2 degrees of freedom).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..defaults import (CLUSTER_MIN_FAMILIES, CLUSTER_RESAMPLES,
                        FLOOR_BELOW_CARRIERS, MIN_TASKS_FOR_INTERVAL)
from ..describe import field_names, listing
from ..errors import ArgumentError, RowsError
from ..voice import arg
from .intervals import (Interval, PassK, TaskInterval, carriers, effective_n, hall_interval,
                        moments, t_value, task_interval, task_intervals)

METHOD = "family_bootstrap_t"
METHOD_HALL = "family_hall_t"
METHOD_SHARE = "family_effective_n"
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

    def means(self, values: np.ndarray) -> np.ndarray:
        """Each family's mean of the per-task ``values``."""
        c = self.n_families
        return np.bincount(self.codes, weights=values, minlength=c) / np.bincount(self.codes,
                                                                                  minlength=c)


@dataclass(frozen=True)
class ClusterInterval:
    """One family-clustered interval: bounds, method, SE, families, p-value for 0, a note."""

    ci: Interval | None
    method: str | None
    se: float | None
    n_families: int
    p_value: float | None = None
    note: str | None = None


def positions(ids, wanted) -> np.ndarray:
    """The index in ``ids`` of each task id of ``wanted`` (every one of them is in ``ids``)."""
    pos = {t: i for i, t in enumerate(ids)}
    return np.fromiter((pos[t] for t in wanted), dtype=np.int64, count=len(wanted))


def check_cluster(cluster: object) -> str | None:
    if cluster is None:
        return None
    if not isinstance(cluster, str) or not cluster.strip():
        raise ArgumentError(f"`cluster` must be the name of a row field, got {cluster!r}",
                            fix=f"e.g. {arg('cluster', 'family')} (the repo, document or template "
                            "a task comes from), or leave it out")
    return cluster


def families_of(data, field: str) -> Families:
    """The family of each task of ``data`` (a :class:`~whileai_core.rows.Rows`) from row field
    ``field``; every row must carry it, and it must not change within a task."""
    n = data.n_rows
    if field == "task_id":
        raise ArgumentError("`cluster` is 'task_id': every interval already resamples tasks",
                            fix="name the field a task's family is in (e.g. 'family', 'repo')")
    values = data.column(field)  # None where a row does not carry it, or carries null
    missing = values.count(None)
    if missing:
        i = values.index(None)
        raise RowsError(f"{missing} of {n} rows carry no `{field}` (the first is row "
                        f"{data.line_of(i)}); the rows' fields are "
                        f"{listing(field_names(data))}", source=data.source, field=field,
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
                     bounds: tuple[float, float] | None = (0.0, 1.0),
                     cap: float | None = None, skew: bool = False) -> ClusterInterval:
    """The family-clustered interval of the mean of per-task ``values`` (module docstring).

    ``bounds``: the statistic's range, to clip to (None: unbounded). ``cap``: the 0/1 outcomes
    behind a share (``family_effective_n``); ``skew`` (no ``cap``): ``family_hall_t``; neither:
    the t (``family_bootstrap_t``, a paired difference), the only one with a p-value for 0.
    """
    vals = np.asarray(values, dtype=np.float64)
    c = families.n_families
    if vals.shape[0] < MIN_TASKS_FOR_INTERVAL or c < 2:
        return ClusterInterval(None, None, None, c, note=(
            f"{c} famil{'y' if c == 1 else 'ies'} in `{families.field}`: an interval clustered "
            "by family needs at least 2 families (and 10 or more to be trusted); score tasks "
            "from more families"))
    scale = float(np.max(np.abs(vals)))
    scale = scale if scale > 0 else 1.0
    u = vals / scale                      # no sum or square of near-1e308 values overflows
    draws = two_level_means(u, families.codes, n_resamples, seed)
    se_u = float(draws.std(ddof=1)) * (c / (c - 1)) ** 0.5
    m_u = float(u.mean())
    g_eff = effective_families(families)
    n_eff = 1.0 + max(1.0, min(c - 1.0, bell_mccaffrey_df(families)))   # t with the BM df
    method = METHOD
    if cap is not None:  # a share: values in [0, 1], so scale <= 1 changes nothing; no spread
        # at all reads n_eff families (effective_n), never a zero-width interval
        lo_u, hi_u = effective_n(m_u * scale, se_u * scale, n_eff, cap, level,
                                 floor=carriers(families.means(vals)) < FLOOR_BELOW_CARRIERS)
        lo_u, hi_u, method = float(lo_u) / scale, float(hi_u) / scale, METHOD_SHARE
    elif skew and se_u > 0:
        _, _, gamma, _ = moments(families.means(u))
        lo_u, hi_u = hall_interval(m_u, se_u * math.sqrt(n_eff), gamma, n_eff, level)
        lo_u, hi_u, method = float(lo_u), float(hi_u), METHOD_HALL
    else:
        q = float(t_value(0.5 + level / 2.0, n_eff - 1.0))
        lo_u, hi_u = m_u - q * se_u, m_u + q * se_u
    with np.errstate(over="ignore"):
        m, se, lo, hi = m_u * scale, se_u * scale, lo_u * scale, hi_u * scale
    if not all(map(math.isfinite, (m, se, lo, hi))):
        return ClusterInterval(None, None, None, c, note=(
            "the clustered interval's bounds do not fit a float's range (rewards near 1e308): "
            "rescale the rewards"))
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    p = None
    if se > 0 and method == METHOD:
        from scipy.special import stdtr  # lazy: scipy.special is slow to import

        # never 0: at least 1e-12, the finest 1 - level a float keeps (as compare's MOVER p)
        p = max(float(2.0 * stdtr(n_eff - 1.0, -abs(m_u) / se_u)), 1e-12)
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
                                                  "between the families' means")
    return ClusterInterval((float(lo), float(hi)), method, se, c, p, note)


def effective_families(families: Families) -> float:
    """(sum of family sizes)^2 / (sum of squared sizes): C for equal sizes, fewer when a few large
    families hold most tasks (the size part of Carter, Schnepel & Steigerwald's effective number
    of clusters [4]). The interval's t quantile uses min(C, this) - 1 degrees of freedom."""
    sizes = np.bincount(families.codes).astype(np.float64)
    return float(sizes.sum() ** 2 / (sizes ** 2).sum())


def bell_mccaffrey_df(families: Families) -> float:
    """Bell & McCaffrey's degrees of freedom for the CR2 standard error of a mean over families
    [6]: (tr B)^2 / tr(B^2), B = M A M with M the centring matrix and A the CR2 weights
    1 / (1 - n_g/N) on each family's block. For a mean both traces reduce to sums over the sizes
    n_g: tr B = N and tr(B^2) = sum n_g^2 + ((sum a_g n_g^2)^2 - sum a_g^2 n_g^4) / N^2. C - 1
    for equal sizes."""
    n = np.bincount(families.codes).astype(np.float64)
    total = float(n.sum())
    if n.shape[0] < 2:
        return 1.0
    a = 1.0 / (1.0 - n / total)
    cross = (float((a * n ** 2).sum()) ** 2 - float((a ** 2 * n ** 4).sum())) / total ** 2
    return total ** 2 / (float((n ** 2).sum()) + cross)


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
              bounds: tuple[float, float] | None = (0.0, 1.0),
              pass_k: Sequence[PassK | None] = (),
              n_resamples_clustered: int = CLUSTER_RESAMPLES) -> list[TaskInterval]:
    """The interval of each column of per-task values: by the one rule over tasks
    (:func:`whileai_core.stats.intervals.task_intervals`) without families, else clustered (a
    ``caps`` entry: a share; none: Hall's correction; a ``pass_k`` entry: held to pass@1's
    interval). ``n_resamples`` reaches the rule over tasks, ``n_resamples_clustered`` the
    two-level resample."""
    if families is None:
        return task_intervals(columns, caps, level, seed, n_resamples, pass_k=pass_k)[0]
    specs = list(pass_k) + [None] * (len(columns) - len(pass_k))
    out = []
    for col, cap, pk in zip(columns, caps, specs):
        vals = np.asarray(col, dtype=np.float64)
        ci = cluster_interval(vals, families, level=level, seed=seed,
                              n_resamples=n_resamples_clustered, bounds=bounds, cap=cap,
                              skew=cap is None)
        if ci.ci is not None and ci.se == 0.0:
            # no resample moved the mean, so every family has the same mean: the rule over the
            # families' means (the family is the unit) keeps a width where the resample has none
            iv = task_interval(families.means(vals), level=level, cap=cap, pass_k=pk)
            why = (f"the rule over the {families.n_families} families' means"
                   if iv.ci is not None else
                   f"fewer than {MIN_TASKS_FOR_INTERVAL} families: no interval"
                   if families.n_families < MIN_TASKS_FOR_INTERVAL else
                   "every family has the same mean: no spread between families to build an "
                   "interval from")
            note = "; ".join(filter(None, [ci.note, why]))
            out.append(TaskInterval(iv.ci, iv.method, note, vals.shape[0]))
            continue
        lo_hi = ci.ci
        if lo_hi is not None and pk is not None:
            flat = bool(np.all(vals == vals[0]))
            lo, hi = pk.bounds(lo_hi[0], lo_hi[1], float(vals.mean()), flat)
            lo_hi = (float(lo), float(hi))
        out.append(TaskInterval(lo_hi, ci.method, ci.note, vals.shape[0]))
    return out
