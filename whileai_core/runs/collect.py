"""collect_run: a finished run's results, its paired before/after verdict overall and by category,
and, for a run launched as an arm of a registered experiment, the decision by the rule registered
before it (``whileai_core.experiments``), with any other reading flagged as such."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..errors import ArgumentError, ConfigError
from ..operations import ASKS, VERDICT, operation
from ..operations.args import Arg, RegisteredMetric, RunId, StateDir, WorkspaceRoot
from ..progress import step
from ..voice import call
from .api import _open, _reconcile
from .forecast_check import measure
from .results import ROW_FIELDS, Collected, public


@operation(
    cli="collect", toolset="core", effect=ASKS, title="Collect a run's results",
    description=(
        "A finished run's metrics and, when it scored held-out tasks before and after "
        "training, the paired comparison (compare's answer, by category when the rows carry "
        "one). For an arm of a registered experiment: the decision by its registered rule, "
        "metric and noise floor; another reading is flagged. Not finished: says so (poll "
        "run_status)."),
    exit_code=VERDICT, doing="collecting a run's results")
def collect_run(id: RunId, *, metric: RegisteredMetric = None,
                holdout: Annotated[str | None, Field(max_length=4096, description=(
                    "The frozen held-out file or content name the run was scored on, when its "
                    "results do not name it; another than the registered one is flagged.")),
                    Arg(metavar="FILE_OR_NAME")] = None,
                rule: Annotated[dict[str, Any] | None, Field(description=(
                    "null: the registered rule. Another rule (register_experiment's grammar) is "
                    "applied and flagged; for a run of no experiment it is flagged "
                    "not_registered.")), Arg(metavar="JSON", form="json")] = None,
                state_dir: StateDir = None, root: WorkspaceRoot = None) -> Collected:
    """A finished run's results, with the paired before/after verdict when it has held-out rows.

    For an arm of a registered experiment, ``decision`` applies the registered rule on the
    registered metric and noise floor; ``metric``, ``holdout`` or ``rule`` read it another way,
    flagged ``deviates`` with each difference named (``not_registered`` for a run of none).
    """
    if metric not in (None, "pass", "reward"):
        raise ArgumentError(f"`metric` must be 'pass', 'reward' or omitted (the registered one), "
                            f"got {metric!r}")
    registry, record = _open(id, state_dir)
    step(0, 2, f"asking the backend about {record.id}")
    record = _reconcile(registry, record)
    if record.status != "succeeded":
        note = {"failed": f"the run failed: {record.error}",
                "cancelled": "the run was cancelled; it has no results"}.get(
            record.status, f"not finished ({record.status}): poll "
                           f"{call('run_status', id=record.id)}")
        return Collected(run=public(record), ready=False, note=note)
    if record.measured is None:  # the wall clock it took, beside what the plan forecast
        measured = measure(record, registry.run_dir(record.id))
        if measured is not None:
            record = registry.set_measured(record.id, measured) or record
    results = record.results or {}
    metrics = {k: v for k, v in results.items() if k not in ROW_FIELDS}
    before, after = results.get("before_rows"), results.get("after_rows")
    if before is None and after is None:
        return Collected(run=public(record), ready=True, metrics=metrics,
                         note="no before_rows/after_rows in the results: no paired verdict")
    if not isinstance(before, list) or not isinstance(after, list):
        raise ConfigError(f"run {record.id}: results need both `before_rows` and `after_rows` as "
                          "lists of graded rows to compare; got "
                          f"{type(before).__name__} and {type(after).__name__}", fix="the "
                          f"recipe {record.recipe!r} must write both")
    from ..experiments.decide import decide  # lazy: experiments.decide loads only when collect_run() runs
    from ..experiments.store import experiment_of  # lazy: experiments.store loads only when collect_run() runs

    step(1, 2, f"comparing {len(before)} rows before with {len(after)} after")
    comparison, by_category, decision = decide(
        record, experiment_of(record, registry), results, before, after, metric=metric,
        holdout=holdout, rule=rule, root=root)
    return Collected(run=public(record), ready=True, metrics=metrics, n_before_rows=len(before),
                     n_after_rows=len(after), comparison=comparison, verdict=comparison.verdict,
                     by_category=by_category, decision=decision)
