"""The ``rate`` operation and its answer: one rate of a run with its interval and n, the per-task
values summarised, and one page of them on request.

The rate is the pass rate (with pass@k and pass^k: :func:`~whileai_core.stats.pass_at`), the
mean reward (:func:`~whileai_core.stats.mean_reward`) or the share of rollouts with a flag
(:func:`~whileai_core.stats.field_share`); each is read from the same loaded rows.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, PrivateAttr

from ..errors import ArgumentError
from ..operations import READS, operation
from ..operations.args import (MAX_K, AutoCluster, Level, Metric, OptionalRowField, Rows, Seed,
                               Threshold)
from ..result import Result, fmt_rate
from ..rewards import RewardScale
from ..rows import load_rows
from ..tables import TaskPage, TaskSummary, TaskTable
from ..defaults import BOOTSTRAP_SEED, CONFIDENCE_LEVEL
from ..roles import FIELDS_DOC
from ..voice import arg
from .families import AUTO, FamilyInterval, beside, family_roles, split_cluster
from .rates import (PassAt, Rate, field_share, field_shares, mean_reward, pass_at, task_values,
                    trials_cap)
from .clustered import Families, intervals
from ..roles import fields_report


class RateReport(Result):
    """A per-task mean of one run (``rate``: pass rate, mean reward or share, with its interval
    and n); for the pass rate also pass@k and pass^k over ``k`` rollouts; the per-task values
    summarised (``tasks``), and a page of them when one was asked for (``page``)."""

    rate: Rate
    field: str | None = None
    k: int | None = None
    pass_at_k: Rate | None = None
    pass_pow_k: Rate | None = None
    k_not_computed: str | None = Field(
        None, description="why pass@k and pass^k are absent for the `k` asked for (some task "
                          "has fewer than k rollouts: how many tasks, and their rollouts)")
    tasks: TaskSummary
    page: TaskPage | None = None
    reward: RewardScale | None = Field(None, description="the reward's kind; its warning when "
                                                         "pass rates at this threshold mislead")
    mean_reward: Rate | None = Field(None, description="the headline for a continuous reward "
                                                       "beside its pass rate: the mean reward "
                                                       "with its interval")
    cluster: str | None = Field(None, description="the row field naming each task's family; "
                                                  "intervals then resample families")
    n_families: int | None = None
    families: FamilyInterval | None = Field(None, description=(
        "cluster='auto': the interval clustered by the family field the rows carry, beside the "
        "one over tasks"))
    fields: list[str] = Field(default_factory=list, description=FIELDS_DOC)
    single_rollout: bool = Field(False, description="pass rates from one rollout per task: the "
                                                    "per-task band and pass@k for k > 1 cannot "
                                                    "be read (the note says so)")
    _table: Any = PrivateAttr(default=None)

    @classmethod
    def of(cls, rate: Rate, table: TaskTable, **extra: Any) -> RateReport:
        report = cls(rate=rate, tasks=table.summary(), **extra)
        report._table = table
        return report

    @classmethod
    def of_pass(cls, result: PassAt, table: TaskTable) -> RateReport:
        """The report of a :class:`PassAt`, its pass@1 as the rate."""
        def rate(value, ci, method, note=None):
            return None if value is None else Rate(
                value=value, ci=ci, level=result.level, ci_method=method, n_tasks=result.n_tasks,
                n_rows=result.n_rows, metric="pass", note=note)

        return cls.of(rate(result.pass_at_1, result.ci, result.ci_method, result.note), table,
                      k=result.k,
                      pass_at_k=rate(result.pass_at_k, result.pass_at_k_ci,
                                     result.pass_at_k_ci_method),
                      pass_pow_k=rate(result.pass_pow_k, result.pass_pow_k_ci,
                                      result.pass_pow_k_ci_method),
                      k_not_computed=result.k_not_computed,
                      reward=result.reward, mean_reward=result.mean_reward,
                      cluster=result.cluster, n_families=result.n_families,
                      single_rollout=result.single_rollout)

    def read(self, data: Any, cluster: str | None, seed: int | None = BOOTSTRAP_SEED
             ) -> RateReport:
        """This report with the families beside (``cluster`` "auto") and what it did with each
        field of ``data``, the rows it was read from."""
        cluster, found = split_cluster(cluster, data)
        reward = ("not read: the share of a flag" if self.field else
                  f"pass@1 at threshold {data.threshold:g}" + (
                      "; the mean reward beside it" if self.mean_reward else "")
                  if self.rate.metric == "pass"
                  else "the mean reward of each task, averaged over tasks")
        did = {self.field: "the share of rollouts where it is true"} if self.field else {}
        by_family, fields = read_fields_of(data, cluster, None if self.field else found,
                                           self.rate.level, seed, reward, **did)
        return self._copy(cluster=cluster, families=by_family, fields=fields)

    def with_page(self, offset: int, limit: int) -> RateReport:
        """This report with ``limit`` tasks of its table from ``offset``."""
        return self._copy(page=self._table.page(offset, limit))

    def _copy(self, **update: Any) -> RateReport:
        copy = self.model_copy(update=update)
        copy._table = self._table
        return copy

    def render(self) -> str:
        r = self.rate
        name = {"pass": "pass@1", "reward": "mean reward",
                "share": f"share of {self.field}"}[r.metric]
        lines = []
        if self.reward is not None and self.reward.warning:
            lines.append(f"warning: {self.reward.warning}")
        if self.mean_reward is not None:
            m = self.mean_reward
            lines.append(f"mean reward  {fmt_rate(m.value, m.ci, m.n_tasks)} "
                         f"({self.reward.summary() if self.reward else 'reward'})")
        lines.append(f"{name}  {fmt_rate(r.value, r.ci, r.n_tasks)}, {r.n_rows} rows")
        for label, extra in ((f"pass@{self.k}", self.pass_at_k), (f"pass^{self.k}", self.pass_pow_k)):
            if extra is not None:
                lines.append(f"{label}  {fmt_rate(extra.value, extra.ci, extra.n_tasks)}")
        if self.pass_at_k is None and self.k_not_computed and not self.single_rollout:
            lines.append(f"pass@{self.k}, pass^{self.k}  not computed: {self.k_not_computed}")
        methods = dict.fromkeys(m.ci_method for m in (r, self.pass_at_k, self.pass_pow_k)
                                if m is not None and m.ci_method)
        if methods:
            over = "tasks"
            if self.cluster:
                count = f" ({self.n_families})" if self.n_families is not None else ""
                over = f"families in `{self.cluster}`{count}, then tasks"
            lines.append(f"{r.level:.0%} intervals over {over}: {', '.join(methods)}")
        if not self.single_rollout:   # one rollout a task: its histogram is the 0/1 outcomes
            lines.append(self.tasks.render())
        if self.page is not None:
            lines.append(self.page.render())
        if self.families is not None:
            lines.append(f"families {self.families.render()}")
        if r.note:
            lines.append(f"note: {r.note}")
        lines += [f"field {f}" for f in self.fields]
        return "\n".join(lines)


def read_fields_of(data: Any, cluster: str | None, found: Families | None, level: float,
                   seed: int | None, reward: str, **did: str
                   ) -> tuple[FamilyInterval | None, list[str]]:
    """(the families' interval beside, what the rate did with each field): ``reward`` says how
    the reward was read, ``did`` what else was (a field's share)."""
    by_family = None if found is None else families_beside(data, found, level, seed)
    done = {"task": "every interval resamples tasks" + (
                f" within families of `{cluster}`" if cluster else ""),
            "reward": reward, "model": "one writer", **did, **family_roles(cluster, by_family)}
    return by_family, fields_report(data, done)


def families_beside(data: Any, found: Families, level: float,
                    seed: int | None) -> FamilyInterval:
    """The headline's interval (the mean reward of a continuous reward, else pass@1) clustered
    by the family field found in the rows (:mod:`.families`)."""
    metric = "reward" if data.reward_scale.continuous else "pass"
    values = task_values(data, metric)
    bounds = None if metric == "reward" and data.reward_scale.kind == "scale" else (0.0, 1.0)
    iv = intervals([values], [trials_cap(data, metric)], level, seed, 0, found, bounds)[0]
    return beside(found, iv.ci, iv.method, iv.note)


PassK = Annotated[int | None, Field(ge=1, le=MAX_K, description=(
    "pass@k and pass^k (metric 'pass'), unbiased from n rollouts per task, k <= the smallest "
    "n. null: that smallest n (when >= 2)."))]


@operation(
    cli="pass-at", toolset="core", effect=READS,
    title="A rate with its interval: pass@k, mean reward, share",
    description=(
        "One rate of graded rows, each task counted once, with its interval (bootstrap over "
        "tasks, not rows) and n: the pass rate pass@1 (metric 'pass'; with k, also pass@k and "
        "pass^k), the mean reward (metric 'reward', for scores), or the share of rollouts whose "
        "boolean `field` is true (truncated, a tool call...). The per-task values are "
        "summarised; detail=true pages them, task_table writes them all."),
    doing="computing a rate", paged=True,
    serves=("pass_at", "mean_reward", "field_share", "load_rows"))
def rate(rows: Rows, *, metric: Metric = "pass",
         field: Annotated[OptionalRowField, Field(description=(
             "Instead of the metric: the share of rollouts whose boolean row field is true "
             "(e.g. 'truncated'; a missing field counts as false)."))] = None,
         k: PassK = None, level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
         threshold: Threshold = None, cluster: AutoCluster = AUTO) -> RateReport:
    """One rate of ``rows`` with its per-task table: the pass rate (:func:`.pass_at`, with
    pass@k and pass^k given ``k``), the mean reward (``metric="reward"``,
    :func:`.mean_reward`) or the share of rollouts whose boolean ``field`` is true
    (:func:`.field_share`)."""
    if k is not None and (metric != "pass" or field is not None):
        raise ArgumentError(f"`{arg('k')}` (pass@k) is for pass rates", fix=f"drop `{arg('k')}`, "
                            f"or use {arg('metric', 'pass')} without `{arg('field')}`")
    if field is not None and metric != "pass":
        raise ArgumentError(f"give `{arg('field')}` (a share of rollouts) or "
                            f"{arg('metric', 'reward')}, not both", fix="drop one of them")
    if field is not None and cluster not in (None, AUTO):
        raise ArgumentError(f"`{arg('cluster')}` is for pass rates and mean rewards, not a "
                            "field's share", fix=f"drop `{arg('cluster')}`, or `{arg('field')}`")
    data = load_rows(rows, threshold=threshold)
    if field is not None:
        table = TaskTable(data.task_ids, field_shares(data, field), data.rollouts, "share")
        return RateReport.of(field_share(data, field, level=level, seed=seed), table,
                             field=field).read(data, None, seed)
    if metric == "reward":
        return RateReport.of(mean_reward(data, level=level, seed=seed, cluster=cluster),
                             TaskTable.of(data, "reward")).read(data, cluster, seed)
    return RateReport.of_pass(pass_at(data, k=k, level=level, seed=seed, cluster=cluster),
                              TaskTable.of(data)).read(data, cluster, seed)
