"""Question 1 of the route: can a reply the token cap cut off pass, or earn more?

A truncated reply that passes is decided by the reward, not the model (:func:`truncated_passes`).
On a continuous reward no reply may reach the pass mark at all, so passes say nothing; what
matters is whether cut-off replies earn more than finished ones (an overlap score on a reply that
runs to the cap): :func:`cut_off_pay` compares them within each task that has both (the paired
rule, :func:`whileai_core.stats.paired.paired_interval`), else the two groups' means (MOVER).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from .defaults import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, TASK_EXTREMES
from .result import Result
from .rows import Rows, load_rows
from .stats.intervals import Interval, task_interval
from .stats.paired import min_paired_tasks, mover_difference, paired_interval


class CutOffPay(Result):
    """A continuous reward read on truncated against finished replies: ``gap`` is the mean
    reward of a task's cut-off replies minus its finished ones', over tasks that have both
    (``paired``), else the two groups' means (unpaired), with its interval."""

    truncated_mean: float
    finished_mean: float
    gap: float
    ci: Interval | None
    ci_method: str | None = None
    paired: bool
    n_tasks: int = Field(description="tasks the gap is read over (with both kinds of reply, "
                                     "when paired)")

    @property
    def pays(self) -> bool:
        """Cut-off replies earn more, the interval says so."""
        return self.ci is not None and self.ci[0] > 0

    def render(self) -> str:
        ci = "[no interval]" if self.ci is None else f"[{self.ci[0]:+.3f}, {self.ci[1]:+.3f}]"
        how = f"paired within {self.n_tasks} tasks" if self.paired else "unpaired"
        return (f"truncated replies earn {self.truncated_mean:.3f}, finished ones "
                f"{self.finished_mean:.3f}: {self.gap:+.3f} {ci} ({how})")


class TruncatedPasses(Result):
    """Rows that hit the token cap and still passed: the reward, not the model, decides them.
    On a continuous reward, ``pay`` compares what cut-off and finished replies earn: a reward
    that pays more for a reply the cap cut off is a hole, whatever the passes say."""

    count: int
    n_truncated: int
    n_rows: int
    n_tasks_hit: int
    tasks: list[str]
    pay: CutOffPay | None = None
    note: str | None = None
    shown: str | None = None

    def __bool__(self) -> bool:
        return self.count > 0 or (self.pay is not None and self.pay.pays)

    def render(self) -> str:
        text = (f"{self.count} truncated rows pass (of {self.n_truncated} truncated, "
                f"{self.n_rows} rows)" + (f"; e.g. tasks {', '.join(self.tasks)} ({self.shown})"
                                          if self.tasks else ""))
        if self.note:
            text += f" ({self.note})"
        return text + (f"; {self.pay.render()}" if self.pay is not None else "")


def truncated_passes(rows: Any, *, level: float = CONFIDENCE_LEVEL) -> TruncatedPasses:
    data = load_rows(rows)
    hit = data.truncated & data.passed
    hit_tasks = np.unique(data.task_index[hit])  # sorted task positions = first-appearance order
    tasks = [data.task_ids[i] for i in hit_tasks[:TASK_EXTREMES].tolist()]
    scale = data.reward_scale
    pay = note = None
    if scale.continuous and data.truncated.any() and not data.truncated.all():
        pay = cut_off_pay(data, level)
        if scale.high < data.threshold:
            note = (f"no reward reaches the pass mark {data.threshold:g}, so passes say nothing "
                    "here; the rewards do")
    return TruncatedPasses(count=int(hit.sum()), n_truncated=int(data.truncated.sum()),
                           n_rows=data.n_rows, n_tasks_hit=int(hit_tasks.shape[0]), tasks=tasks,
                           pay=pay, note=note,
                           shown=f"{len(tasks)} of {hit_tasks.shape[0]} tasks" if tasks else None)


def cut_off_pay(data: Rows, level: float = CONFIDENCE_LEVEL) -> CutOffPay:
    """What truncated and finished replies earn (:class:`CutOffPay`): paired within the tasks
    that have both (the sign-flip test with its t interval, :func:`paired_interval`) when
    there are enough of them for a test and the gap differs between them, else the unpaired
    difference of the two groups' per-task means (MOVER)."""
    n = data.n_tasks
    cut = data.truncated
    sums = [np.bincount(data.task_index[m], weights=data.reward[m], minlength=n) for m in (cut, ~cut)]
    counts = [np.bincount(data.task_index[m], minlength=n) for m in (cut, ~cut)]
    both = (counts[0] > 0) & (counts[1] > 0)
    means = [s / np.maximum(c, 1) for s, c in zip(sums, counts)]
    d = means[0][both] - means[1][both]
    pi = None
    if d.shape[0] >= min_paired_tasks(level):
        pi = paired_interval(d, level=level, seed=BOOTSTRAP_SEED, n_resamples=BOOTSTRAP_RESAMPLES,
                             scale=float(np.max(np.abs(data.reward))) or 1.0)
    if pi is not None and pi.ci is not None:  # (every task the same gap: no paired spread)
        return CutOffPay(truncated_mean=float(means[0][both].mean()),
                         finished_mean=float(means[1][both].mean()), gap=float(d.mean()),
                         ci=pi.ci, ci_method=pi.method, paired=True, n_tasks=int(both.sum()))
    a, b = means[0][counts[0] > 0], means[1][counts[1] > 0]
    ia, ib = (task_interval(x, level=level) for x in (a, b))
    ci = None
    if ia.ci is not None and ib.ci is not None:
        ci = mover_difference(float(a.mean()), ia.ci, float(b.mean()), ib.ci, None)
    return CutOffPay(truncated_mean=float(a.mean()), finished_mean=float(b.mean()),
                     gap=float(a.mean() - b.mean()), ci=ci,
                     ci_method="mover_unpaired" if ci else None, paired=False,
                     n_tasks=int(a.shape[0] + b.shape[0]))
