"""One run's rates: pass@1, pass@k, pass^k, mean reward and field shares, each with its interval.

Rollouts are reduced to per-task values first (the pass rate c_i/n_i, the unbiased pass@k of
Chen et al. [1], pass^k of tau-bench [2]); the interval over tasks follows the one rule in
:mod:`whileai_core.stats.intervals`, and ``ci_method`` names the interval each result used.

[1] Chen et al. (2021). Evaluating Large Language Models Trained on Code. arXiv:2107.03374.
[2] Yao et al. (2024). tau-bench. arXiv:2406.12045 (pass^k = C(c,k)/C(n,k)).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level, check_resamples, check_seed
from ..defaults import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, GROUP_MIN_ROLLOUTS
from ..describe import require_field
from ..errors import ArgumentError
from ..result import Result, fmt_rate
from .. import voice
from ..voice import arg
from ..rows import Rows, load_rows
from ..tables import TaskPage, TaskSummary, TaskTable
from .fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from ..rewards import RewardScale
from .clustered import Families, check_cluster, families_of, intervals
from ..writers import one_writer
from .families import AUTO, split_cluster
from .intervals import Interval, PassK, TaskInterval, task_interval


# --- per-task estimators ----------------------------------------------------------------------

def pass_at_k_per_task(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per task, 1 - C(n-c, k)/C(n, k) [1], in the stable product form
    (computed once per distinct (n, c) pair)."""
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


def task_values(data: Rows, metric: str) -> np.ndarray:
    """Per-task values of ``metric`` (``Rows.task_values``), with mean rewards recomputed on
    rewards scaled by their largest magnitude when the plain sum overflows (rewards near 1e308:
    each task's mean is at most the largest reward, so it always fits)."""
    values = data.task_values(metric)
    if metric == "reward" and not bool(np.all(np.isfinite(values))):
        scale = float(np.max(np.abs(data.reward)))
        values = np.bincount(data.task_index, weights=data.reward / scale,
                             minlength=data.n_tasks) / data.rollouts * scale
    return values


def check_metric(metric: Any) -> str:
    if metric not in ("pass", "reward"):
        raise ArgumentError(f"`{voice.arg('metric')}` must be 'pass' or 'reward', got {metric!r}",
                            fix=f"{voice.arg('metric', 'pass')} compares pass rates, "
                            f"{voice.arg('metric', 'reward')} mean rewards")
    return metric


def trials_cap(data: Rows, metric: str, idx: np.ndarray | None = None) -> float | None:
    """The 0/1 outcomes behind a per-task mean of ``metric`` (the effective-n cap): the rollouts
    for a pass rate or a share (their binomial variance is a floor), and for a mean reward when
    every reward of those tasks is 0 or 1 (the same per-task values as the pass rate then get the
    same interval: one number per question); None for graded rewards (``hall_t``)."""
    if metric == "reward":
        rewards = data.reward if idx is None else data.reward[np.isin(data.task_index, idx)]
        if not bool(np.all((rewards == 0.0) | (rewards == 1.0))):
            return None
    n = data.rollouts if idx is None else data.rollouts[idx]
    return float(n.sum())


# --- one rate with its interval ---------------------------------------------------------------

class Rate(Result):
    """A per-task mean (pass rate, mean reward, or share of rollouts) with its interval and n."""

    value: float
    ci: Interval | None = Field(description="interval at `level` over tasks; null under 3 tasks")
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_tasks: int
    n_rows: int
    metric: Literal["pass", "reward", "share"] = "pass"
    note: str | None = None

    ci95 = ci95_alias("ci")

    def render(self) -> str:
        text = f"{fmt_rate(self.value, self.ci, self.n_tasks)}, {self.n_rows} rows"
        return text + (f"\nnote: {self.note}" if self.note else "")


def _rate(values: np.ndarray, iv: TaskInterval, level: float, n_rows: int, metric: str) -> Rate:
    # the mean of values scaled by their largest magnitude: rewards near 1e308 keep a finite mean
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    value = float(np.mean(values / scale) * scale) if scale > 0 else 0.0
    return Rate(value=value, ci=iv.ci, level=level, ci_method=iv.method,
                n_tasks=int(values.shape[0]), n_rows=n_rows, metric=metric, note=iv.note)


def pass_rate(rows: Rows, level: float = CONFIDENCE_LEVEL, seed: int | None = BOOTSTRAP_SEED,
              metric: str = "pass", n_resamples: int = BOOTSTRAP_RESAMPLES,
              families: Families | None = None) -> Rate:
    """Task-weighted mean of the per-task ``metric`` with its interval over tasks (over
    families, then tasks, when ``families`` is given: :mod:`.clustered`)."""
    values = task_values(rows, metric)
    cap = trials_cap(rows, metric)
    if families is None:
        iv = task_interval(values, level=level, seed=seed, n_resamples=n_resamples, cap=cap)
    else:
        bounds = (0.0, 1.0) if metric != "reward" or not rows.reward_scale.kind == "scale" else None
        iv = intervals([values], [cap], level, seed, n_resamples, families, bounds)[0]
    return _rate(values, iv, level, rows.n_rows, metric)


def mean_reward(rows: Any, *, level: float = CONFIDENCE_LEVEL,
                seed: int | None = BOOTSTRAP_SEED, cluster: str | None = None) -> Rate:
    # cluster "auto" reads tasks here: rate's answer gives the families beside (families_beside)
    """Mean reward (each task's mean, averaged over tasks) with its interval over tasks.

    For graded rows whose reward is a score (an LCS ratio, a partial credit), not pass/fail.
    ``cluster``: a row field naming each task's family; the interval then resamples families.
    """
    level, seed = check_level(level), check_seed(seed)
    data = load_rows(rows)
    one_writer(data, reads="one mean reward")
    cluster, _ = split_cluster(check_cluster(cluster), data)
    families = families_of(data, cluster) if cluster is not None else None
    rate = pass_rate(data, level, seed, metric="reward", families=families)
    warning = data.reward_scale.warning if data.reward_scale.kind == "scale" else None
    if warning:
        rate = rate.model_copy(update={"note": "; ".join(filter(None, [rate.note, warning]))})
    return rate


def field_shares(data: Rows, field: str) -> np.ndarray:
    """Per task, the share of its rollouts whose ``field`` is truthy (one value per task)."""
    if not isinstance(field, str) or not field:
        raise ArgumentError(f"`field` must be the name of a row field, got {field!r}", fix="e.g. "
                            "field='truncated' or field='tool_call'")
    if field == "truncated":  # a column of its own, false where a row does not say
        flags = data.truncated
    else:
        require_field(data, field, reader=arg("field"))
        kinds = data.kinds(field) - {bool, type(None)}
        values = data.column(field)
        if kinds:
            bad = next(v for v in values if type(v) in kinds)
            kind = {int: "whole numbers", float: "numbers", str: "strings"}.get(
                type(bad), f"{type(bad).__name__} values")
            describe = voice.name("describe_rows")
            reads = (f"{voice.name('category_table')} reads a field of a few values as "
                     f"behaviours, and {describe} shows any field's values or range"
                     if isinstance(bad, str)
                     else f"{describe} shows its range; a share needs a yes/no flag")
            raise ArgumentError(f"`{field}` holds {kind} (e.g. {_short(bad)}), not true/false: "
                                f"a share of {arg('field')} counts rows whose flag is true",
                                fix=f"{reads}")
        flags = np.fromiter((v is True for v in values), dtype=bool, count=data.n_rows)
    return np.bincount(data.task_index, weights=flags, minlength=data.n_tasks) / data.rollouts


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
    over tasks of each task's share, with its interval over tasks."""
    level, seed = check_level(level), check_seed(seed)
    data = load_rows(rows)
    one_writer(data, reads="one share")
    per_task = field_shares(data, field)
    iv = task_interval(per_task, level=level, seed=seed, n_resamples=BOOTSTRAP_RESAMPLES,
                       cap=trials_cap(data, "pass"))
    return _rate(per_task, iv, level, data.n_rows, "share")


# --- pass@k -----------------------------------------------------------------------------------

K1_CANNOT = ("the per-task band and the split share at larger k cannot be read from one "
             "rollout per task (a task at p = 0.5 shows as one pass or one fail)")


class PassAt(Result):
    """Pass rates of one run, each with its interval over tasks.

    ``pass_at_1`` is the task-weighted mean of per-task pass rates (every task counts once);
    ``pass_at_k``/``pass_pow_k`` are given only when every task has >= k rollouts. ``tasks``
    summarises the per-task pass rates (the whole table: ``TaskTable.of(rows)``).
    """

    pass_at_1: float
    ci: Interval | None = Field(description="interval of pass@1 at `level`; null under 3 tasks")
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_tasks: int
    n_rows: int
    k: int | None
    pass_at_k: float | None = None
    pass_at_k_ci: Interval | None = None
    pass_at_k_ci_method: str | None = None
    pass_pow_k: float | None = None
    pass_pow_k_ci: Interval | None = None
    pass_pow_k_ci_method: str | None = None
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    tasks: TaskSummary
    page: TaskPage | None = None
    reward: RewardScale | None = Field(None, description="the reward's kind; its warning when "
                                                         "pass rates at this threshold mislead")
    mean_reward: Rate | None = Field(None, description="the headline for a continuous reward: "
                                                       "the mean reward with its interval")
    cluster: str | None = Field(None, description="the row field naming each task's family; "
                                                  "intervals then resample families")
    n_families: int | None = None
    k_not_computed: str | None = Field(
        None, description="why pass@k and pass^k are absent for the `k` asked for (some task "
                          "has fewer than k rollouts: how many tasks, and their rollouts)")
    note: str | None = None

    @property
    def single_rollout(self) -> bool:
        """Every task has one rollout: the per-task band and pass@k for k > 1 cannot be read."""
        return self.n_rows == self.n_tasks

    ci95 = ci95_alias("ci")
    pass_at_k_ci95 = ci95_alias("pass_at_k_ci")
    pass_pow_k_ci95 = ci95_alias("pass_pow_k_ci")

    def render(self) -> str:
        lines = []
        if self.reward is not None and self.reward.warning:
            lines.append(f"warning: {self.reward.warning}")
        if self.mean_reward is not None:
            lines.append(f"mean reward  {fmt_rate(self.mean_reward.value, self.mean_reward.ci, self.n_tasks)}"
                         f" ({self.reward.summary() if self.reward else 'reward'})")
        lines.append(f"pass@1  {fmt_rate(self.pass_at_1, self.ci, self.n_tasks)}, {self.n_rows} rows")
        if self.pass_at_k is not None:
            lines.append(f"pass@{self.k}  {fmt_rate(self.pass_at_k, self.pass_at_k_ci, self.n_tasks)}")
            lines.append(f"pass^{self.k}  {fmt_rate(self.pass_pow_k, self.pass_pow_k_ci, self.n_tasks)}")
        elif self.k_not_computed and not self.single_rollout:
            lines.append(f"pass@{self.k}, pass^{self.k}  not computed: {self.k_not_computed}")
        methods = dict.fromkeys(m for m in (self.ci_method, self.pass_at_k_ci_method,
                                            self.pass_pow_k_ci_method) if m)
        if methods:
            over = (f"families in `{self.cluster}` ({self.n_families}), then tasks"
                    if self.cluster else "tasks")
            lines.append(f"{self.level:.0%} intervals over {over}: {', '.join(methods)}")
        if not self.single_rollout:   # one rollout a task: its histogram is the 0/1 outcomes
            lines.append(self.tasks.render())
        if self.page is not None:
            lines.append(self.page.render())
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def pass_at(rows: Any, *, k: int | None = None, level: float = CONFIDENCE_LEVEL,
            seed: int | None = BOOTSTRAP_SEED, threshold: float | None = None,
            n_resamples: int = BOOTSTRAP_RESAMPLES, cluster: str | None = AUTO) -> PassAt:
    """pass@1, and pass@k / pass^k, each with its interval over tasks.

    ``k``: rollouts for pass@k and pass^k; default the smallest number of rollouts any task
    has, when that is at least 2. A pass is ``reward >= threshold`` (default 1.0).
    ``n_resamples`` is accepted for compatibility (no interval over tasks needs a bootstrap; the
    clustered one draws ``CLUSTER_RESAMPLES``). ``cluster``: a row field naming each task's
    family (:mod:`whileai_core.stats.clustered`); ``"auto"`` reads tasks here, and the ``rate``
    answer gives a family field's interval beside (:mod:`.report`).

    A continuous reward (in [0, 1], not all 0/1) also gets ``mean_reward``, its headline
    number; a reward on another scale gets ``reward.warning`` with the fix.
    """
    level, seed = check_level(level), check_seed(seed)
    check_resamples(n_resamples)
    check_cluster(cluster)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ArgumentError(f"`{voice.arg('k')}` must be a positive integer, got {k!r}", fix="e.g. "
                            f"{voice.arg('k', 4)}, or omit {voice.arg('k')}")
    data = load_rows(rows, threshold=threshold)
    one_writer(data, reads="one pass rate")
    k, columns, not_computed, notes = _pass_columns(data.rollouts, data.passes, k)
    cluster, _ = split_cluster(cluster, data)
    families = families_of(data, cluster) if cluster is not None else None
    ivs = _pass_intervals(columns, data, k, level, seed, n_resamples, families)
    notes += list(dict.fromkeys(iv.note for iv in ivs if iv.note))
    scale = data.reward_scale  # its warning is rendered first, and in `reward.warning`
    mean = None
    if scale.continuous:
        mean = pass_rate(data, level, seed, "reward", n_resamples, families)
        if scale.kind == "bounded":
            notes.insert(0, f"the reward is continuous in [0, 1]: pass@1 counts only rewards >= "
                            f"{data.threshold:g}; the mean reward is the number to read")
    extra: dict[str, Any] = {}
    if len(columns) == 3:
        extra = dict(pass_at_k=float(columns[1].mean()), pass_at_k_ci=ivs[1].ci,
                     pass_at_k_ci_method=ivs[1].method, pass_pow_k=float(columns[2].mean()),
                     pass_pow_k_ci=ivs[2].ci, pass_pow_k_ci_method=ivs[2].method)
    return PassAt(tasks=TaskTable.of(data).summary(), pass_at_1=float(columns[0].mean()),
                  ci=ivs[0].ci,
                  ci_method=ivs[0].method, n_tasks=data.n_tasks, n_rows=data.n_rows, k=k,
                  level=level, reward=scale, mean_reward=mean, cluster=cluster,
                  n_families=None if families is None else families.n_families,
                  k_not_computed=not_computed, note="; ".join(notes) or None, **extra)


def _pass_columns(n: np.ndarray, c: np.ndarray, k: int | None
                  ) -> tuple[int | None, list[np.ndarray], str | None, list[str]]:
    """(k in force, the per-task columns: pass@1, then pass@k and pass^k when every task has k
    rollouts, why they are absent when not, notes)."""
    notes: list[str] = []
    min_n = int(n.min())
    if k is None and min_n >= 2:
        k = min_n
    columns = [c / n]
    not_computed = None
    if k is not None:
        if min_n >= k:
            columns += [pass_at_k_per_task(n, c, k), pass_pow_k_per_task(n, c, k)]
        else:
            not_computed = short_of_k(n, k)
    if int(n.max()) == 1:
        notes.append(f"one rollout per task: pass@1, the mean over tasks, is estimable; "
                     f"{K1_CANNOT}, nor pass@k or pass^k for k > 1; re-sample every prompt at "
                     f"k >= {GROUP_MIN_ROLLOUTS}")
    elif k is None and min_n < 2:
        notes.append("no pass@k: some task has a single rollout; pass@k needs k >= 2 on every task")
    return k, columns, not_computed, notes


def _pass_intervals(columns: list[np.ndarray], data: Rows, k: int | None, level: float,
                    seed: int | None, n_resamples: int, families: Families | None) -> list:
    """Each column's interval. pass@1 is a share of rollouts (the binomial floor applies);
    pass@k and pass^k are held to what pass@1's interval implies for them (Jensen;
    :mod:`whileai_core.stats.intervals`), over families too (the bounds hold for any mix)."""
    ivs = intervals(columns[:1], [trials_cap(data, "pass")], level, seed, n_resamples, families)
    if len(columns) == 3 and ivs[0].ci is not None:
        specs = [PassK(k, False, ivs[0].ci), PassK(k, True, ivs[0].ci)]
        ivs += intervals(columns[1:], [None, None], level, seed, n_resamples, families,
                         pass_k=specs)
    elif len(columns) == 3:
        ivs += [ivs[0], ivs[0]]   # under 3 tasks or 2 families: no interval for any of them
    return ivs


def short_of_k(rollouts: np.ndarray, k: int) -> str:
    """Why pass@k cannot be computed on tasks with ``rollouts`` each: the unbiased estimator [1]
    needs k of a task's n rollouts (C(n, k) is 0 for n < k), so it is not extrapolated."""
    short = rollouts < k
    counts = np.unique(rollouts[short])
    have = (f"{int(counts[0])} rollouts each" if counts.size == 1 else
            f"{int(counts[0])} to {int(counts[-1])} rollouts")
    most = int(rollouts.min())
    smaller = f", or ask for {arg('k', most)} (every task has {most})" if most >= 2 else ""
    return (f"it needs at least {k} rollouts per task, and {int(short.sum())} of "
            f"{rollouts.shape[0]} tasks have fewer ({have}). Fix: sample {k} or more rollouts "
            f"per task{smaller}")
