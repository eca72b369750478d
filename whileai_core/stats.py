"""Pass rates with intervals clustered by task, paired comparisons, noise floors, holdout sizing.

The unit of analysis is the task: rollouts are reduced to per-task values first (the pass rate
c_i/n_i, the unbiased pass@k of Chen et al. [1], pass^k of tau-bench [2]), then every interval
resamples tasks (:mod:`whileai_core.bootstrap`). Small-sample policy: fewer than
``MIN_TASKS_FOR_INTERVAL`` (3) tasks give no interval, and the result's ``note`` says so.

References
----------
[1] Chen et al. (2021). Evaluating Large Language Models Trained on Code. arXiv:2107.03374.
[2] Yao et al. (2024). tau-bench. arXiv:2406.12045 (pass^k = C(c,k)/C(n,k)).
[3] Miller (2024). Adding Error Bars to Evals. arXiv:2411.00640 (Eqs. 6-7 paired; Eq. 9 power).
[4] Field & Welsh (2007). Bootstrapping clustered data. JRSS-B 69(3).
"""

from __future__ import annotations

import math
from itertools import repeat
from typing import Any, Literal

import numpy as np

from .bootstrap import (check_level, check_resamples, check_seed, percentile_interval,
                        task_bootstrap, z_value)
from .defaults import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HOLDOUT_ALPHA,
                       HOLDOUT_K, HOLDOUT_POWER, HOLDOUT_TABLE_KS, MIN_TASKS_FOR_INTERVAL,
                       NOISE_BAND_RUN_STDS, PLANNING_RHO, PLANNING_SIGMA2, PLANNING_VAR_X,
                       PROVE_EFFECT)
from .errors import ArgumentError
from .result import Result, fmt_rate
from .rows import Rows, load_rows
from .tables import TaskPage, TaskSummary, TaskTable

Interval = tuple[float, float]
Verdict = Literal["moved", "moved_the_wrong_way", "flat", "within_noise", "insufficient_data"]

_NO_INTERVAL = (f"fewer than {MIN_TASKS_FOR_INTERVAL} tasks: no interval (a bootstrap over so few "
                "tasks has almost no distinct resamples); score more tasks")


# --- per-task estimators ----------------------------------------------------------------------

def pass_at_k_per_task(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per task, 1 - C(n-c, k)/C(n, k) [1], in the stable product form.

    Computed once per distinct (n, c) pair, so the cost does not grow with the number of tasks.
    """
    return _per_pair(n, c, lambda ni, ci: 1.0 if ni - ci < k else
                     1.0 - float(np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1))))


def pass_pow_k_per_task(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """pass^k per task, C(c, k)/C(n, k) [2]: the chance that k draws without replacement all pass."""
    return _per_pair(n, c, lambda ni, ci: 0.0 if ci < k else
                     float(np.prod((ci - np.arange(k)) / (ni - np.arange(k)))))


def _per_pair(n: np.ndarray, c: np.ndarray, fn) -> np.ndarray:
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    values = np.array([fn(int(ni), int(ci)) for ni, ci in pairs])
    return values[inverse.reshape(-1)]


def check_metric(metric: Any) -> str:
    if metric not in ("pass", "reward"):
        raise ArgumentError(f"`metric` must be 'pass' or 'reward', got {metric!r}. Fix: "
                            "metric='pass' compares pass rates, metric='reward' mean rewards")
    return metric


# --- one rate with its interval ---------------------------------------------------------------

class Rate(Result):
    """A per-task mean (pass rate, or mean reward) with its 95% task-bootstrap interval and n."""

    value: float
    ci95: Interval | None
    n_tasks: int
    n_rows: int
    metric: Literal["pass", "reward", "share"] = "pass"

    def render(self) -> str:
        return f"{fmt_rate(self.value, self.ci95, self.n_tasks)}, {self.n_rows} rows"


def pass_rate(rows: Rows, level: float = CONFIDENCE_LEVEL, seed: int | None = BOOTSTRAP_SEED,
              metric: str = "pass") -> Rate:
    """Task-weighted mean of the per-task ``metric`` with its percentile task-bootstrap interval."""
    values = rows.task_values(metric)
    ci = None
    if rows.n_tasks >= MIN_TASKS_FOR_INTERVAL:
        ci = percentile_interval(task_bootstrap(values, BOOTSTRAP_RESAMPLES, seed), level)
    return Rate(value=float(values.mean()), ci95=ci, n_tasks=rows.n_tasks, n_rows=rows.n_rows,
                metric=metric)


def mean_reward(rows: Any, *, level: float = CONFIDENCE_LEVEL,
                seed: int | None = BOOTSTRAP_SEED) -> Rate:
    """Mean reward (each task's mean, averaged over tasks) with its task-bootstrap interval.

    For graded rows whose reward is a score (an LCS ratio, a partial credit), not pass/fail.
    """
    level, seed = check_level(level), check_seed(seed)
    return pass_rate(load_rows(rows), level, seed, metric="reward")


def field_shares(data: Rows, field: str) -> np.ndarray:
    """Per task, the share of its rollouts whose ``field`` is truthy (one value per task)."""
    if not isinstance(field, str) or not field:
        raise ArgumentError(f"`field` must be the name of a row field, got {field!r}. Fix: e.g. "
                            "field='truncated' or field='tool_call'")
    if field == "truncated":
        flags = data.truncated
    else:
        flags = np.fromiter(map(bool, map(dict.get, data.records, repeat(field, data.n_rows))),
                            dtype=bool, count=data.n_rows)
    return np.bincount(data.task_index, weights=flags, minlength=data.n_tasks) / data.rollouts


class TaskRate(Result):
    """A per-task mean with its interval and n (``rate``), and the per-task values summarised
    (``tasks``; ``page`` when a page of the table was asked for)."""

    rate: Rate
    tasks: TaskSummary
    page: TaskPage | None = None

    def render(self) -> str:
        lines = [f"{self.rate.metric} {self.rate.render()}", self.tasks.render()]
        return "\n".join(lines + ([self.page.render()] if self.page is not None else []))


def field_share(rows: Any, field: str, *, level: float = CONFIDENCE_LEVEL,
                seed: int | None = BOOTSTRAP_SEED) -> Rate:
    """Share of rollouts whose ``field`` is truthy (e.g. "truncated", "tool_call"), as the mean
    over tasks of each task's share, with its task-bootstrap interval."""
    level, seed = check_level(level), check_seed(seed)
    data = load_rows(rows)
    per_task = field_shares(data, field)
    ci = None
    if data.n_tasks >= MIN_TASKS_FOR_INTERVAL:
        ci = percentile_interval(task_bootstrap(per_task, BOOTSTRAP_RESAMPLES, seed), level)
    return Rate(value=float(per_task.mean()), ci95=ci, n_tasks=data.n_tasks, n_rows=data.n_rows,
                metric="share")


# --- pass@k -----------------------------------------------------------------------------------

class PassAt(Result):
    """Pass rates of one run, each with its percentile task-bootstrap interval.

    ``pass_at_1`` is the task-weighted mean of per-task pass rates (every task counts once).
    ``pass_at_k``/``pass_pow_k`` are given only when every task has >= k rollouts.
    ``tasks`` summarises the per-task pass rates (histogram, lowest and highest tasks); the whole
    table is a :class:`~whileai_core.tables.TaskTable` (``TaskTable.of(rows)``), one page of
    which ``page`` carries when a caller asked for it.
    """

    pass_at_1: float
    ci95: Interval | None
    n_tasks: int
    n_rows: int
    k: int | None
    pass_at_k: float | None = None
    pass_at_k_ci95: Interval | None = None
    pass_pow_k: float | None = None
    pass_pow_k_ci95: Interval | None = None
    level: float = CONFIDENCE_LEVEL
    tasks: TaskSummary
    page: TaskPage | None = None
    note: str | None = None

    def render(self) -> str:
        lines = [f"pass@1  {fmt_rate(self.pass_at_1, self.ci95, self.n_tasks)}, {self.n_rows} rows"]
        if self.pass_at_k is not None:
            lines.append(f"pass@{self.k}  {fmt_rate(self.pass_at_k, self.pass_at_k_ci95, self.n_tasks)}")
            lines.append(f"pass^{self.k}  {fmt_rate(self.pass_pow_k, self.pass_pow_k_ci95, self.n_tasks)}")
        lines.append(self.tasks.render())
        if self.page is not None:
            lines.append(self.page.render())
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def pass_at(rows: Any, *, k: int | None = None, level: float = CONFIDENCE_LEVEL,
            seed: int | None = BOOTSTRAP_SEED, threshold: float | None = None,
            n_resamples: int = BOOTSTRAP_RESAMPLES) -> PassAt:
    """pass@1, and pass@k / pass^k, with percentile intervals from a bootstrap over tasks.

    Parameters
    ----------
    rows : path, list of dicts or :class:`Rows`
    k : int, optional
        Rollouts for pass@k and pass^k. Default: the smallest number of rollouts any task has,
        when that is at least 2.
    level : float, default 0.95
    seed : int, default 0. The same rows and seed give the same interval.
    threshold : float, optional. A pass is ``reward >= threshold`` (default 1.0).
    n_resamples : int, default 10,000
    """
    level, seed = check_level(level), check_seed(seed)
    check_resamples(n_resamples)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ArgumentError(f"`k` must be a positive integer, got {k!r}. Fix: e.g. k=4, or omit k")
    data = load_rows(rows, threshold=threshold)
    n, c = data.rollouts, data.passes
    rate = c / n
    notes: list[str] = []
    min_n = int(n.min())
    if k is None and min_n >= 2:
        k = min_n
    columns = [rate]
    if k is not None:
        if min_n >= k:
            columns += [pass_at_k_per_task(n, c, k), pass_pow_k_per_task(n, c, k)]
        else:
            short = int((n < k).sum())
            notes.append(f"no pass@{k}/pass^{k}: {short} of {data.n_tasks} tasks have fewer than "
                         f"{k} rollouts (min {min_n}); re-run them at k >= {k}")
    elif min_n < 2:
        notes.append("no pass@k: some task has a single rollout; pass@k needs k >= 2 on every task")
    values = np.stack(columns, axis=1)
    points = values.mean(axis=0)
    cis: list[Interval | None] = [None] * len(columns)
    if data.n_tasks >= MIN_TASKS_FOR_INTERVAL:
        q = percentile_interval(task_bootstrap(values, n_resamples, seed), level)
        cis = [(float(q[0, j]), float(q[1, j])) for j in range(len(columns))]
    else:
        notes.append(_NO_INTERVAL)
    extra: dict[str, Any] = {}
    if len(columns) == 3:
        extra = dict(pass_at_k=float(points[1]), pass_at_k_ci95=cis[1],
                     pass_pow_k=float(points[2]), pass_pow_k_ci95=cis[2])
    return PassAt(tasks=TaskTable.of(data).summary(), pass_at_1=float(points[0]), ci95=cis[0],
                  n_tasks=data.n_tasks, n_rows=data.n_rows, k=k, level=level,
                  note="; ".join(notes) or None, **extra)


# --- paired comparison --------------------------------------------------------------------------

class Comparison(Result):
    """Before vs after on the tasks both runs scored, resampling tasks once for both arms.

    ``delta`` = mean_after - mean_before over paired tasks (per-task pass rates).
    ``verdict``: ``moved`` / ``moved_the_wrong_way`` when the interval excludes 0 and |delta|
    clears the noise band; ``within_noise`` when it excludes 0 but |delta| <= the band;
    ``flat`` when it contains 0; ``insufficient_data`` under 3 paired tasks.
    """

    n_paired: int
    n_only_before: int
    n_only_after: int
    mean_before: float | None
    mean_before_ci95: Interval | None
    mean_after: float | None
    mean_after_ci95: Interval | None
    delta: float | None
    ci95: Interval | None
    verdict: Verdict
    metric: Literal["pass", "reward"] = "pass"
    noise_band: float | None = None
    correlation: float | None = None
    mde: float | None = None
    level: float = CONFIDENCE_LEVEL
    note: str | None = None

    def render(self) -> str:
        if self.delta is None:
            return f"verdict: {self.verdict} (n={self.n_paired} paired tasks). {self.note or ''}".strip()
        lines = [
            f"before  {fmt_rate(self.mean_before, self.mean_before_ci95, self.n_paired)}",
            f"after   {fmt_rate(self.mean_after, self.mean_after_ci95, self.n_paired)}",
            f"delta   {self.delta:+.3f}" + (f" [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]"
                                            if self.ci95 else " [no interval]")
            + f" (n={self.n_paired} paired tasks)",
            f"verdict: {self.verdict}",
        ]
        if self.noise_band is not None:
            lines.append(f"noise band: +/-{self.noise_band:.3f}")
        if self.mde is not None:
            lines.append(f"smallest effect this holdout detects (80% power): {self.mde:.3f}")
        if self.n_only_before or self.n_only_after:
            lines.append(f"unpaired: {self.n_only_before} tasks only before, "
                         f"{self.n_only_after} only after (left out)")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _pair(before: Rows, after: Rows) -> tuple[np.ndarray, np.ndarray]:
    position = {t: i for i, t in enumerate(before.task_ids)}
    ia, ib = [], []
    for j, t in enumerate(after.task_ids):
        i = position.get(t)
        if i is not None:
            ib.append(i)
            ia.append(j)
    return np.asarray(ib, dtype=np.int64), np.asarray(ia, dtype=np.int64)


def compare(before: Any, after: Any, *, level: float = CONFIDENCE_LEVEL,
            run_std: float | None = None, seed: int | None = BOOTSTRAP_SEED,
            threshold: float | None = None, n_resamples: int = BOOTSTRAP_RESAMPLES,
            metric: Literal["pass", "reward"] = "pass") -> Comparison:
    """Paired before/after comparison by task with a percentile task-bootstrap interval [3, 4].

    ``run_std``: the standard deviation of the same eval re-run (:func:`noise_floor`); a delta
    must exceed ``NOISE_BAND_RUN_STDS`` (2) x run_std to count as moved.
    ``metric``: compare per-task pass rates ("pass", default) or per-task mean rewards
    ("reward", for scores such as an LCS ratio).
    """
    level, seed = check_level(level), check_seed(seed)
    check_resamples(n_resamples)
    check_metric(metric)
    if run_std is not None and (isinstance(run_std, bool) or not isinstance(run_std, (int, float))
                                or not math.isfinite(run_std) or run_std < 0):
        raise ArgumentError(f"`run_std` must be a finite number >= 0, got {run_std!r}. Fix: pass "
                            "noise_floor(run1, run2, run3).run_std, or omit it")
    b, a = load_rows(before, threshold=threshold), load_rows(after, threshold=threshold)
    vb, va = b.task_values(metric), a.task_values(metric)
    ib, ia = _pair(b, a)
    n = int(ib.shape[0])
    band = None if run_std is None else NOISE_BAND_RUN_STDS * float(run_std)
    common = dict(n_paired=n, n_only_before=b.n_tasks - n, n_only_after=a.n_tasks - n,
                  noise_band=band, level=level, metric=metric)
    if n == 0:
        return Comparison(mean_before=None, mean_before_ci95=None, mean_after=None,
                          mean_after_ci95=None, delta=None, ci95=None,
                          verdict="insufficient_data", **common,
                          note="the two runs share no task_id: nothing to pair; score the same "
                               "frozen held-out tasks before and after")
    pb, pa = vb[ib], va[ia]
    d = pa - pb
    mb, ma, delta = float(pb.mean()), float(pa.mean()), float(d.mean())
    if n < MIN_TASKS_FOR_INTERVAL:
        return Comparison(mean_before=mb, mean_before_ci95=None, mean_after=ma,
                          mean_after_ci95=None, delta=delta, ci95=None,
                          verdict="insufficient_data", **common, note=_NO_INTERVAL)
    draws = task_bootstrap(np.stack([pb, pa], axis=1), n_resamples, seed)
    q = percentile_interval(np.column_stack([draws, draws[:, 1] - draws[:, 0]]), level)
    ci_b, ci_a, ci_d = ((float(q[0, j]), float(q[1, j])) for j in range(3))
    sd = float(d.std(ddof=1))
    mde = (z_value(1 - HOLDOUT_ALPHA / 2) + z_value(HOLDOUT_POWER)) * sd / math.sqrt(n)
    corr = None
    if pb.std() > 0 and pa.std() > 0:
        corr = float(np.corrcoef(pb, pa)[0, 1])
    notes = []
    if ci_d[0] > 0 or ci_d[1] < 0:
        if band is not None and abs(delta) <= band:
            verdict: Verdict = "within_noise"
            notes.append(f"the interval excludes 0 but |delta| {abs(delta):.3f} is inside the "
                         f"noise band {band:.3f} (2 x run_std)")
        else:
            verdict = "moved" if delta > 0 else "moved_the_wrong_way"
    else:
        verdict = "flat"
        if mde > PROVE_EFFECT:
            notes.append(f"underpowered: this holdout detects only effects >= {mde:.3f} "
                         f"(target {PROVE_EFFECT}); flat does not mean no effect")
    return Comparison(mean_before=mb, mean_before_ci95=ci_b, mean_after=ma, mean_after_ci95=ci_a,
                      delta=delta, ci95=ci_d, verdict=verdict, correlation=corr, mde=mde,
                      **common, note="; ".join(notes) or None)


# --- noise floor --------------------------------------------------------------------------------

class NoiseFloor(Result):
    """How much the same eval moves when re-run: run_std, and the band a delta must clear.

    ``predicted_run_std`` is what the rows' own within-task variance predicts,
    sqrt(sum_i s_i^2/n_i)/C with s_i^2 = n_i/(n_i-1) p_i(1-p_i) (stats.md sec. 6). A measured
    run_std well above it means the runs are not independent re-samples (infrastructure, judge).
    """

    run_scores: list[float]
    n_runs: int
    run_std: float
    band: float
    predicted_run_std: float | None = None
    n_tasks: list[int] | None = None
    note: str | None = None

    def render(self) -> str:
        scores = ", ".join(f"{s:.3f}" for s in self.run_scores)
        lines = [f"runs: {self.n_runs} ({scores})",
                 f"run_std {self.run_std:.4f}; a delta must clear +/-{self.band:.4f}"]
        if self.predicted_run_std is not None:
            lines.append(f"predicted run_std from within-task variance: {self.predicted_run_std:.4f}")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def noise_floor(*runs: Any, threshold: float | None = None,
                metric: Literal["pass", "reward"] = "pass") -> NoiseFloor:
    """run_std of the same eval re-run (each run: rows, or its pass@1 as a number).

    Needs at least 2 runs (3 or more recommended: with R runs the relative SE of run_std is
    about 1/sqrt(2(R-1)), 71% at R = 2, 50% at R = 3).
    """
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and runs[0] and all(
            isinstance(r, (int, float, str, Rows)) or hasattr(r, "__fspath__") for r in runs[0]):
        runs = tuple(runs[0])
    check_metric(metric)
    if len(runs) < 2:
        raise ArgumentError(f"noise_floor needs at least 2 runs of the same eval, got {len(runs)}. "
                            "Fix: re-run the same frozen eval (3 or more runs recommended)")
    scores, predicted, sizes = [], [], []
    for run in runs:
        if isinstance(run, (int, float)) and not isinstance(run, bool):
            if not math.isfinite(run):
                raise ArgumentError(f"a run score must be finite, got {run!r}")
            scores.append(float(run))
            continue
        data = load_rows(run, threshold=threshold)
        rate = data.task_values(metric)
        scores.append(float(rate.mean()))
        sizes.append(data.n_tasks)
        n = data.rollouts
        ok = n >= 2
        if ok.any() and metric == "pass":
            s2 = n[ok] / (n[ok] - 1) * rate[ok] * (1 - rate[ok])
            predicted.append(math.sqrt(float((s2 / n[ok]).sum())) / data.n_tasks)
    run_std = float(np.std(scores, ddof=1))
    notes = []
    if len(runs) < 3:
        notes.append("run_std from 2 runs is itself very noisy (relative SE ~71%); use 3+ runs")
    if sizes and len(set(sizes)) > 1:
        notes.append(f"runs scored different numbers of tasks {sizes}: re-run the same frozen set")
    pred = float(np.mean(predicted)) if predicted else None
    if pred is not None and pred > 0 and run_std > 3 * pred:
        notes.append(f"measured run_std is {run_std / pred:.1f}x the within-task prediction: the "
                     "runs may not be independent re-samples (a drifting judge or infrastructure)")
    return NoiseFloor(run_scores=scores, n_runs=len(scores), run_std=run_std,
                      band=NOISE_BAND_RUN_STDS * run_std, predicted_run_std=pred,
                      n_tasks=sizes or None, note="; ".join(notes) or None)


# --- holdout sizing -----------------------------------------------------------------------------

class HoldoutSize(Result):
    """Tasks needed to detect ``effect`` in a paired before/after comparison (Miller 2024 Eq. 9).

    n = (z_{1-alpha/2} + z_power)^2 (omega2 + sigma2_before/k + sigma2_after/k) / effect^2.
    """

    n_tasks: int
    effect: float
    k: int
    power: float
    alpha: float
    omega2: float | None
    sigma2_before: float | None
    sigma2_after: float | None
    inputs_from: Literal["pilot", "one-arm pilot", "binomial model"]
    table: dict[int, int]
    note: str | None = None

    def render(self) -> str:
        lines = [f"holdout: {self.n_tasks} tasks at k={self.k} to detect {self.effect:.3f} "
                 f"(power {self.power:.2f}, alpha {self.alpha:.2f}; inputs from {self.inputs_from})"]
        lines.append("tasks needed by k: " + ", ".join(f"k={k}: {n}" for k, n in self.table.items()))
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _within_var(data: Rows, idx: np.ndarray | None = None) -> tuple[float, float, np.ndarray]:
    """(mean s_i^2, mean s_i^2/n_i, per-task rates) over tasks with >= 2 rollouts."""
    n, c = data.rollouts, data.passes
    if idx is not None:
        n, c = n[idx], c[idx]
    p = c / n
    ok = n >= 2
    if not ok.any():
        return float("nan"), float("nan"), p
    s2 = n[ok] / (n[ok] - 1) * p[ok] * (1 - p[ok])
    return float(s2.mean()), float((s2 / n[ok]).mean()), p


def holdout_size(effect: float = PROVE_EFFECT, *, k: int = HOLDOUT_K, before: Any = None,
                 after: Any = None, power: float = HOLDOUT_POWER, alpha: float = HOLDOUT_ALPHA,
                 threshold: float | None = None) -> HoldoutSize:
    """Tasks to hold out so a paired eval at ``k`` rollouts detects ``effect`` (Miller Eq. 9).

    Inputs: with pilot rows ``before`` and ``after`` (paired by task, >= 2 rollouts per task),
    omega2 = max(0, Var_i(d_i) - mean_i(s_A,i^2/n_A,i + s_B,i^2/n_B,i)) and sigma2 = mean s_i^2.
    With one arm only, Var(x) from that arm and omega2 = 2 Var(x) (1 - rho), rho = 0.8.
    With neither, the binomial planning model: x ~ U(0, 1), Var(x) = 1/12, E[sigma2] = 1/6, rho 0.8.
    """
    for name, value, lo, hi in (("effect", effect, 0.0, 1.0), ("power", power, 0.0, 1.0),
                                ("alpha", alpha, 0.0, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo < value < hi:
            raise ArgumentError(f"`{name}` must be a number strictly between {lo:g} and {hi:g}, "
                                f"got {value!r}. Fix: e.g. effect=0.05, power=0.8, alpha=0.05")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ArgumentError(f"`k` must be a positive integer, got {k!r}. Fix: e.g. k=4")
    z2 = (z_value(1 - alpha / 2) + z_value(power)) ** 2
    note = None
    table_ks = tuple(sorted(set(HOLDOUT_TABLE_KS) | {k}))
    if before is not None and after is not None:
        b, a = load_rows(before, threshold=threshold), load_rows(after, threshold=threshold)
        ib, ia = _pair(b, a)
        if ib.shape[0] < 3:
            raise ArgumentError(f"pilot runs share {ib.shape[0]} tasks; need >= 3 paired tasks. "
                                "Fix: score the same tasks before and after, or omit the pilot")
        s2b, s2b_n, pb = _within_var(b, ib)
        s2a, s2a_n, pa = _within_var(a, ia)
        var_d = float(np.var(pa - pb, ddof=1))
        if math.isnan(s2b) or math.isnan(s2a):
            # k = 1 pilot: the whole bracket at k = 1 is Var(d_i) (stats.md sec. 1.5).
            n1 = max(1, math.ceil(z2 * var_d / effect ** 2))
            return HoldoutSize(n_tasks=n1, effect=effect, k=1, power=power, alpha=alpha,
                               omega2=None, sigma2_before=None, sigma2_after=None,
                               inputs_from="pilot", table={1: n1},
                               note="pilot has one rollout per task: only k = 1 can be sized; "
                                    "re-run the pilot at k >= 2 to size other k")
        omega2 = max(0.0, var_d - (s2b_n + s2a_n))
        inputs_from = "pilot"
    elif before is not None or after is not None:
        one = load_rows(before if before is not None else after, threshold=threshold)
        s2, s2_n, p = _within_var(one)
        if math.isnan(s2) or one.n_tasks < 3:
            raise ArgumentError("a one-arm pilot needs >= 3 tasks with >= 2 rollouts each. Fix: "
                                "re-run the pilot at k >= 2, or omit it for the planning model")
        var_x = max(0.0, float(np.var(p, ddof=1)) - s2_n)
        omega2, s2b, s2a = 2 * var_x * (1 - PLANNING_RHO), s2, s2
        inputs_from = "one-arm pilot"
        note = f"after-arm assumed like the pilot, rho = {PLANNING_RHO} between arms"
    else:
        omega2 = 2 * PLANNING_VAR_X * (1 - PLANNING_RHO)
        s2b = s2a = PLANNING_SIGMA2
        inputs_from = "binomial model"
        note = (f"no pilot: pass rates uniform on [0, 1], rho = {PLANNING_RHO} between arms; "
                "a pilot run of both arms gives a sharper number")

    def size(kk: int) -> int:
        return max(1, math.ceil(z2 * (omega2 + s2b / kk + s2a / kk) / effect ** 2 - 1e-9))

    table = {kk: size(kk) for kk in table_ks}
    n_k = table[k]
    if n_k < 300:
        extra = ("under a few hundred tasks the normal approximation is optimistic "
                 "(Bowyer et al. 2025): round up")
        note = f"{note}; {extra}" if note else extra
    return HoldoutSize(n_tasks=n_k, effect=float(effect), k=k, power=float(power),
                       alpha=float(alpha), omega2=omega2, sigma2_before=s2b, sigma2_after=s2a,
                       inputs_from=inputs_from, table=table, note=note)
