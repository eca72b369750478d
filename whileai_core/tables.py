"""Per-task tables that fit an agent's context: a summary by default, pages or a file on request.

A run of a million tasks has a million per-task rates: an answer that lists them all floods the
caller. A :class:`TaskTable` holds them once and gives three bounded views, each list saying
"n of N" in its ``shown`` text: :meth:`TaskTable.summary` (the band histogram and the extremes),
:meth:`TaskTable.page` (``limit`` tasks from ``offset``) and :meth:`TaskTable.write` (every task
as JSONL in a file).
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from . import voice
from .defaults import TASK_EXTREMES, TASK_PAGE_DEFAULT, TASK_PAGE_MAX
from .errors import ArgumentError
from .operations import WRITES, args, operation
from .operations.args import OUT, Arg, Overwrite, Threshold
from .result import Result
from .io import write_atomic
from .rows import load_rows

Metric = Literal["pass", "reward", "share"]

# the band histogram of values in [0, 1]: a pass rate of exactly 0 (the task always fails) and
# exactly 1 (always passes) apart, the split range in four bins
_BINS = ("0", "(0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1)", "1")


def _bin_counts(v: np.ndarray) -> list[int]:
    inner = (v > 0.0) & (v < 1.0)
    return [int(np.count_nonzero(v == 0.0)),
            int(np.count_nonzero(inner & (v < 0.25))),
            int(np.count_nonzero((v >= 0.25) & (v < 0.5))),
            int(np.count_nonzero((v >= 0.5) & (v < 0.75))),
            int(np.count_nonzero((v >= 0.75) & (v < 1.0))),
            int(np.count_nonzero(v == 1.0))]


class TaskRow(Result):
    """One task: its per-task value (pass rate, mean reward or share) and its rollouts."""

    task_id: str
    value: float
    rollouts: int

    def render(self) -> str:
        return f"{self.task_id} {self.value:.3f} ({self.rollouts} rollouts)"


class Bin(Result):
    """Tasks whose value falls in one bin of the band histogram."""

    label: str
    n_tasks: int


class TaskSummary(Result):
    """The per-task values in a few lines: the histogram and the extremes, never the whole table."""

    metric: Metric
    n_tasks: int
    histogram: list[Bin]
    lowest: list[TaskRow]
    highest: list[TaskRow]
    shown: str

    def render(self) -> str:
        bins = ", ".join(f"{b.label}: {b.n_tasks}" for b in self.histogram if b.n_tasks)
        low = ", ".join(r.render() for r in self.lowest)
        high = ", ".join(r.render() for r in self.highest)
        return (f"tasks by {self.metric}: {bins}\nlowest: {low}\nhighest: {high}\n({self.shown})")


class TaskPage(Result):
    """``limit`` tasks from ``offset`` (first-appearance order); ``next_offset`` is None at the end."""

    tasks: list[TaskRow]
    offset: int
    limit: int
    total: int
    next_offset: int | None
    shown: str

    def render(self) -> str:  # a summary: the page itself is in the structured answer
        head = [r.render() for r in self.tasks[:TASK_EXTREMES]]
        more = len(self.tasks) - len(head)
        shown = self.shown  # the next page as the reader asks for it (`--offset 3` at the shell)
        if self.next_offset is not None:
            shown = shown.replace(f"next page: offset={self.next_offset}",
                                  f"next page: {voice.arg('offset', self.next_offset)}")
        return "\n".join([shown] + head + ([f"... {more} more on this page"] if more else []))


class TableFile(Result):
    """Where the whole per-task table was written (JSONL: task_id, value, rollouts per line)."""

    path: str
    n_tasks: int

    def render(self) -> str:
        return f"wrote {self.n_tasks} tasks to {self.path}"


class TaskTable:
    """Per-task values of one run, in the rows' first-appearance order of tasks."""

    __slots__ = ("task_ids", "values", "rollouts", "metric")

    def __init__(self, task_ids: list[str], values: np.ndarray, rollouts: np.ndarray,
                 metric: Metric = "pass") -> None:
        self.task_ids, self.metric = task_ids, metric
        self.values = np.asarray(values, dtype=np.float64)
        self.rollouts = np.asarray(rollouts, dtype=np.int64)

    @classmethod
    def of(cls, rows, metric: Literal["pass", "reward"] = "pass") -> TaskTable:
        """The table of a :class:`~whileai_core.rows.Rows` for ``metric``."""
        return cls(rows.task_ids, rows.task_values(metric), rows.rollouts, metric)

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)

    def _row(self, i: int) -> TaskRow:
        return TaskRow(task_id=self.task_ids[i], value=float(self.values[i]),
                       rollouts=int(self.rollouts[i]))

    def summary(self, extremes: int = TASK_EXTREMES) -> TaskSummary:
        """The band histogram and the ``extremes`` lowest and highest tasks (ties: first seen)."""
        v, n = self.values, self.n_tasks
        counts = [Bin(label=label, n_tasks=c) for label, c in zip(_BINS, _bin_counts(v))]
        outside = n - sum(b.n_tasks for b in counts)
        if outside:  # rewards outside [0, 1] (a score, not a rate)
            counts.append(Bin(label="outside [0, 1]", n_tasks=outside))
        k = min(extremes, n)
        order = np.argsort(v, kind="stable")
        lowest = [self._row(int(i)) for i in order[:k]]
        top = np.argsort(-v, kind="stable")[:k]
        highest = [self._row(int(i)) for i in top]
        shown = (f"{k} lowest and {k} highest of {n} tasks; {voice.arg('detail')} pages "
                 f"the whole table, {voice.name('task_table')} writes it to a file") \
            if n > k else f"all {n} tasks shown"
        return TaskSummary(metric=self.metric, n_tasks=n, histogram=counts, lowest=lowest,
                           highest=highest, shown=shown)

    def page(self, offset: int = 0, limit: int = TASK_PAGE_DEFAULT) -> TaskPage:
        """Tasks ``offset`` .. ``offset + limit - 1`` in first-appearance order."""
        for name, value, low in (("offset", offset, 0), ("limit", limit, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ArgumentError(f"`{name}` must be an integer >= {low}, got {value!r}",
                                    fix=f"e.g. offset=0, limit={TASK_PAGE_MAX}")
        if limit > TASK_PAGE_MAX:
            raise ArgumentError(f"`limit` is {limit}, more than the {TASK_PAGE_MAX} tasks one "
                                "page may hold", fix=f"limit <= {TASK_PAGE_MAX}, or give `out` to "
                                "write the whole table to a file")
        n = self.n_tasks
        if offset > n:
            raise ArgumentError(f"`offset` {offset} is past the last of {n} tasks",
                                fix=f"offset in 0..{n}")
        stop = min(n, offset + limit)
        tasks = [self._row(i) for i in range(offset, stop)]
        shown = (f"tasks {offset + 1}-{stop} of {n}" if stop > offset else f"no task at offset "
                 f"{offset} of {n}") + (f"; next page: offset={stop}" if stop < n else "")
        return TaskPage(tasks=tasks, offset=offset, limit=limit, total=n,
                        next_offset=stop if stop < n else None, shown=shown)

    def write(self, path: str | os.PathLike, *, overwrite: bool = False) -> TableFile:
        """Every task as one JSON line ``{"task_id", "value", "rollouts"}``, written atomically."""
        import json

        lines = [json.dumps({"task_id": t, "value": float(x), "rollouts": int(r)})
                 for t, x, r in zip(self.task_ids, self.values.tolist(), self.rollouts.tolist())]
        target = write_atomic(path, "\n".join(lines) + "\n", overwrite=overwrite)
        return TableFile(path=str(target), n_tasks=self.n_tasks)


@operation(
    toolset="stats", effect=WRITES, title="Write the per-task table to a file",
    description=(
        "Write every task's value (pass rate, or mean reward) and rollouts as JSONL, for a "
        "table too long to page through. Never replaces an existing file unless "
        "overwrite=true."),
    doing="writing a per-task table", serves=("TaskTable",))
def task_table(rows: args.Rows, *, out: Annotated[str, Field(
                   min_length=1, max_length=4096, description=(
                       "Where to write the table as JSONL (one {task_id, value, rollouts} per "
                       "task)."), examples=["evals/tasks.jsonl"]),
                       Arg(OUT, metavar="FILE", writes="jsonl")],
               metric: args.Metric = "pass", threshold: Threshold = None,
               overwrite: Overwrite = False) -> TableFile:
    """Every task's value of ``metric`` and its rollouts, written to ``out`` as JSONL."""
    table = TaskTable.of(load_rows(rows, threshold=threshold), metric)
    return table.write(out, overwrite=overwrite)
