"""What the run calls return: the plan, the launch, the list, a cancellation, the collected results.

Each is data (the MCP tools' output schemas) with a human rendering; the next step a result
suggests is spelled for its reader (``whileai_core.voice``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from ..experiments.rule import ExperimentDecision
from ..result import Result, fmt_value
from ..stats import Comparison, ManyComparisons
from .forecast_results import Forecast, ForecastError
from .forecast_check import describe
from .registry import RunRecord


ROW_FIELDS = ("before_rows", "after_rows")


def public(record: RunRecord) -> RunRecord:
    """The record as shown: row lists replaced by their size (collect_run reads them)."""
    if not record.results or not any(k in record.results for k in ROW_FIELDS):
        return record
    results = {k: (f"{len(v)} rows (collect_run reads them)" if k in ROW_FIELDS
                   and isinstance(v, list) else v) for k, v in record.results.items()}
    return record.model_copy(update={"results": results})


class RunPlan(Result):
    """What a confirmed launch would do: where, on which GPUs, for about how long, exactly how.

    ``forecast``: tokens, memory, wall clock and dollars, each with its kind (``est_gpu_hours``
    and ``est_basis`` its GPU hours and summary); ``past_error``: past forecasts on this backend
    against their runs. ``approval``: the content hash of this exact launch;
    ``launch_run(..., confirm=True, approved=<it>)`` launches this plan or nothing.
    """

    run_id: str
    name: str
    target: str
    target_kind: Literal["recipe", "config"]
    recipe: str
    sha256: str
    backend: Literal["modal", "local"]
    gpu: str | None
    gpu_count: int
    approval: str
    est_gpu_hours: float
    est_basis: str
    command: str
    spends_money: bool
    ready: bool
    notes: list[str]
    state_dir: str
    forecast: Forecast | None = None
    past_error: ForecastError | None = None

    def render(self) -> str:
        where = (f"Modal, {self.gpu} ({self.gpu_count} GPU)" if self.backend == "modal"
                 else "this machine, CPU only (the recipe's offline smoke)")
        lines = [f"plan {self.run_id}: {self.target_kind} {self.target} as {self.name!r}",
                 f"where:   {where}", f"command: {self.command}", f"approval: {self.approval}"]
        lines.append(self.forecast.render() if self.forecast is not None else
                     f"cost:    ~{self.est_gpu_hours:.2f} GPU hours ({self.est_basis})")
        if self.past_error is not None:
            lines.append(f"past:    {self.past_error.render()}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


class Launch(Result):
    """``action``: ``planned`` (nothing ran and nothing was recorded: ``run`` is None),
    ``launched`` (started now) or ``existing`` (this target under this name was launched before:
    that run, never a second one)."""

    action: Literal["planned", "launched", "existing"]
    plan: RunPlan
    run: RunRecord | None
    next_step: str

    negative_means: ClassVar[str | None] = (
        "the plan is not ready (a plan that is ready but not confirmed is 0)")

    @property
    def negative(self) -> bool:
        return not self.plan.ready

    def render(self) -> str:
        if self.action == "planned" or self.run is None:
            head, body = "planned, nothing launched or recorded", str(self.plan)
        elif self.action == "launched":
            head, body = f"launched {self.run.id}", self.run.render()
        else:
            head = f"already launched as {self.run.id} ({self.run.status}); not launched again"
            body = self.run.render()
        return "\n".join([head, body, f"next: {self.next_step}"])


class RunList(Result):
    state_dir: str
    runs: list[RunRecord]
    notes: list[str] = []

    def render(self) -> str:
        if not self.runs:
            return f"no runs in {self.state_dir}"
        lines = [r.summary_line() for r in self.runs] + [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


class Cancelled(Result):
    run: RunRecord
    stopped: str

    def render(self) -> str:
        return f"{self.run.render()}\n{self.stopped}"


class Collected(Result):
    """A run's results. ``metrics``: the recipe's results without its row lists;
    ``comparison``: the paired before/after verdict (``by_category``: per category, corrected for
    the number compared); ``decision``: for an arm of a registered experiment, by its rule."""

    run: RunRecord
    ready: bool
    metrics: dict[str, Any] | None = None
    n_before_rows: int | None = None
    n_after_rows: int | None = None
    comparison: Comparison | None = None
    verdict: str | None = None
    by_category: ManyComparisons | None = None
    decision: ExperimentDecision | None = None
    note: str | None = None

    negative_means: ClassVar[str | None] = (
        "the results are not ready, the before/after comparison is a significant regression, or"
        " the registered rule says `do_not_ship`")

    @property
    def negative(self) -> bool:
        return (not self.ready or (self.comparison is not None and self.comparison.negative)
                or (self.decision is not None and self.decision.decision == "do_not_ship"))

    def render(self) -> str:
        lines = [self.run.summary_line()]
        lines += describe(self.run.forecast, self.run.measured)
        if self.note:
            lines.append(self.note)
        for key, value in sorted((self.metrics or {}).items()):
            lines.append(f"{key}: {fmt_value(value)}")
        if self.comparison is not None:
            lines.append(f"held-out rows: {self.n_before_rows} before, {self.n_after_rows} after")
            lines.append(self.comparison.render())
        if self.by_category is not None:
            lines.append("by category:")
            lines.append(self.by_category.render())
        if self.decision is not None:
            lines.append(self.decision.render())
        return "\n".join(lines)
