"""launch_run, run_status, list_runs, cancel_run, collect_run: the five calls an agent makes.

A launch is planned first (nothing runs without ``confirm=True``), then claimed in the registry
under the run's lock, then handed to the backend, and the backend's handle is recorded. If the
launching process dies anywhere in between, the run stays ``launching`` and the next status call
reconciles it from what the backend can prove (the run's lock, its pid and exit files, or the
Modal call), never from a guess.
"""

from __future__ import annotations

import os
import re
import tomllib
from typing import Any, Literal

from ..defaults import MODAL_GPU_TYPES, MODAL_MAX_GPUS, PRIME_RL_RECIPE, RUN_GPU, RUN_WALL_HOURS
from ..errors import ArgumentError, ConfigError, WhileaiError
from ..result import Result
from ..safepath import Root, UserPath
from ..stats import Comparison
from . import lock
from .backend import get_backend
from .registry import (ACTIVE, BACKENDS, FINISHED, Registry, RunRecord, claimable, now,
                       run_id)
from .targets import Target, resolve_target

ROW_FIELDS = ("before_rows", "after_rows")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_RUN_ID = re.compile(r"^run-[0-9a-f]{12}$")
_GPU = re.compile(r"^(?P<type>[A-Za-z0-9-]+)(?::(?P<count>\d+))?$")


# --- results ----------------------------------------------------------------------------------

class RunPlan(Result):
    """What a confirmed launch would do: where, on which GPUs, for about how long, exactly how."""

    run_id: str
    name: str
    target: str
    target_kind: Literal["recipe", "config"]
    recipe: str
    sha256: str
    backend: Literal["modal", "local"]
    gpu: str | None
    gpu_count: int
    est_gpu_hours: float
    est_basis: str
    command: str
    spends_money: bool
    ready: bool
    notes: list[str]
    state_dir: str

    def render(self) -> str:
        where = (f"Modal, {self.gpu} ({self.gpu_count} GPU)" if self.backend == "modal"
                 else "this machine, CPU only (the recipe's offline smoke)")
        lines = [f"plan {self.run_id}: {self.target_kind} {self.target} as {self.name!r}",
                 f"where:   {where}",
                 f"cost:    ~{self.est_gpu_hours:g} GPU hours ({self.est_basis})",
                 f"command: {self.command}"]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


class Launch(Result):
    """``action``: ``planned`` (nothing ran), ``launched`` (started now) or ``existing`` (this
    target under this name was launched before: that run, never a second one)."""

    action: Literal["planned", "launched", "existing"]
    plan: RunPlan
    run: RunRecord
    next_step: str

    def render(self) -> str:
        head = {"planned": "planned, nothing launched",
                "launched": f"launched {self.run.id}",
                "existing": f"already launched as {self.run.id} ({self.run.status}); not launched "
                            "again"}[self.action]
        return "\n".join([head, str(self.plan) if self.action == "planned" else
                          self.run.render(), f"next: {self.next_step}"])


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
    """A run's results. ``metrics``: the recipe's results without its row lists; ``comparison``:
    the paired before/after verdict when the results hold ``before_rows`` and ``after_rows``."""

    run: RunRecord
    ready: bool
    metrics: dict[str, Any] | None = None
    n_before_rows: int | None = None
    n_after_rows: int | None = None
    comparison: Comparison | None = None
    verdict: str | None = None
    note: str | None = None

    def render(self) -> str:
        lines = [self.run.summary_line()]
        if self.note:
            lines.append(self.note)
        for key, value in sorted((self.metrics or {}).items()):
            if isinstance(value, (dict, list)):  # nested data: in the JSON, not the summary
                value = f"<{type(value).__name__} of {len(value)}: see --json>"
            lines.append(f"{key}: {value}")
        if self.comparison is not None:
            lines.append(f"held-out rows: {self.n_before_rows} before, {self.n_after_rows} after")
            lines.append(self.comparison.render())
        return "\n".join(lines)


# --- argument checks --------------------------------------------------------------------------

def _default_gpu(target: Target) -> str:
    """The recipe's GPU; for a prime-rl config, as many as its ``[deployment]`` asks for."""
    default = RUN_GPU.get(target.recipe, RUN_GPU[PRIME_RL_RECIPE])
    if target.kind != "config":
        return default
    deployment = tomllib.loads((target.data or b"").decode("utf-8")).get("deployment") or {}
    if deployment.get("type", "single_node") != "single_node":
        raise ArgumentError(f"{target.path}: [deployment] type {deployment.get('type')!r} is "
                            "multi-node; launch_run starts one Modal container (up to "
                            f"{MODAL_MAX_GPUS} GPUs). Fix: use a single_node deployment")
    count = int(deployment.get("num_train_gpus", 1)) + int(deployment.get("num_infer_gpus", 1))
    return f"{default.split(':')[0]}:{count}"


def _check_gpu(gpu: Any, backend: str, target: Target) -> tuple[str | None, int]:
    if backend == "local":
        return None, 0
    value = _default_gpu(target) if gpu is None else gpu
    match = _GPU.match(value) if isinstance(value, str) else None
    kind = match and match["type"].upper()
    count = int(match["count"]) if match and match["count"] else 1
    if not match or kind not in MODAL_GPU_TYPES or not 1 <= count <= MODAL_MAX_GPUS:
        raise ArgumentError(f"`gpu` must be TYPE or TYPE:COUNT with TYPE one of "
                            f"{', '.join(MODAL_GPU_TYPES)} and COUNT 1-{MODAL_MAX_GPUS}, got "
                            f"{value!r}. Fix: e.g. 'H100' or 'H100:8' (default for "
                            f"{target.recipe}: {_default_gpu(target)!r})")
    return (kind if count == 1 else f"{kind}:{count}"), count


def _check_name(name: Any, target: Target) -> str:
    if name is None:
        return target.default_name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ArgumentError(f"`name` must be 1-100 letters, digits, '.', '_' or '-' (starting "
                            f"with a letter or digit), got {name!r}. Fix: e.g. 'grpo-lr2e-6', "
                            "or omit it to use the recipe or config name")
    return name


def _check_backend(backend: Any) -> str:
    if backend not in BACKENDS:
        raise ArgumentError(f"`backend` must be 'modal' or 'local', got {backend!r}. Fix: 'modal' "
                            "for a GPU run on Modal, 'local' for a recipe's CPU smoke here")
    return backend


def _check_id(id: Any) -> str:
    if not isinstance(id, str) or not _RUN_ID.match(id.strip()):
        raise ArgumentError(f"`id` must be a run id like 'run-0123456789ab', got {id!r}. Fix: "
                            "take it from launch_run or list_runs")
    return id.strip()


def _open(id: Any, state_dir: str | os.PathLike | None) -> tuple[Registry, RunRecord]:
    """The registry and the run ``id`` in it; checks the id before touching the disk."""
    run = _check_id(id)
    registry = Registry(state_dir, create=False)
    return registry, _load(registry, run)


def _load(registry: Registry, id: Any) -> RunRecord:
    record = registry.get(_check_id(id))
    if record is None:
        raise ArgumentError(f"no run {id!r} in {registry.path}. Fix: list_runs shows the runs; "
                            "pass --state-dir (or WHILEAI_STATE_DIR) if they live elsewhere")
    return record


def public(record: RunRecord) -> RunRecord:
    """The record as shown: row lists replaced by their size (collect_run reads them)."""
    if not record.results or not any(k in record.results for k in ROW_FIELDS):
        return record
    results = {k: (f"{len(v)} rows (collect_run reads them)" if k in ROW_FIELDS
                   and isinstance(v, list) else v) for k, v in record.results.items()}
    return record.model_copy(update={"results": results})


# --- the calls --------------------------------------------------------------------------------

def _plan(target: Target, name: str, backend, gpu: str | None, gpu_count: int,
          registry: Registry) -> RunPlan:
    id = run_id(target.sha256, name, backend.name)
    run_dir = registry.run_dir(id)
    notes: list[str] = []
    ready = True
    if backend.name == "modal":
        hours = RUN_WALL_HOURS[target.recipe] if target.recipe in RUN_WALL_HOURS else max(
            RUN_WALL_HOURS.values())
        est, basis = hours * gpu_count, (f"{gpu_count} GPU x ~{hours:g} h wall clock for "
                                         f"{target.recipe} (defaults.RUN_WALL_HOURS, a planning "
                                         "guess, not a measurement)")
        notes.append("spends money on Modal: launch only with confirm=True")
        try:
            backend.check_ready()
        except WhileaiError as exc:
            ready = False
            notes.append(f"not ready to launch: {exc}")
    else:
        est, basis = 0.0, "CPU only: the recipe's offline smoke, no GPU"
        notes.append("the local backend runs only the recipe's CPU smoke path, not its training")
    try:
        command = backend.describe(target, run_dir, gpu, name)
    except WhileaiError as exc:
        ready, command = False, "(unknown: see notes)"
        notes.append(f"not ready to launch: {exc}")
    return RunPlan(run_id=id, name=name, target=target.label, target_kind=target.kind,
                   recipe=target.recipe, sha256=target.sha256, backend=backend.name, gpu=gpu,
                   gpu_count=gpu_count, est_gpu_hours=est, est_basis=basis,
                   command=command, spends_money=backend.spends_money,
                   ready=ready, notes=notes, state_dir=str(registry.dir))


def launch_run(config_or_recipe: str | os.PathLike | UserPath, *, backend: str = "modal",
               gpu: str | None = None, name: str | None = None, confirm: bool = False,
               state_dir: str | os.PathLike | None = None,
               recipes_dir: str | os.PathLike | None = None, root: Root | None = None) -> Launch:
    """Plan a run, or with ``confirm=True`` launch it; the same target and name launch once.

    Parameters
    ----------
    config_or_recipe : a recipe name (``grpo``, ``dpo``, ``prime-rl``) or a prime-rl TOML path
    backend : ``"modal"`` (GPU, spends money) or ``"local"`` (the recipe's CPU smoke here)
    gpu : Modal GPU spec ``TYPE[:COUNT]``, default ``defaults.RUN_GPU[recipe]`` (a config: its
        ``[deployment]`` GPU count); ignored by ``local``
    name : the run's name, default the recipe name or the config's file stem
    confirm : False returns the plan and launches nothing
    state_dir : the registry's folder (default ``$WHILEAI_STATE_DIR`` or ``~/.whileai``)
    recipes_dir : the recipes folder (default ``$WHILEAI_RECIPES_DIR`` or this checkout's)
    root : a config path is read under this root (the server's workspace), through the path door
    """
    backend_name = _check_backend(backend)
    if not isinstance(confirm, bool):
        raise ArgumentError(f"`confirm` must be true or false, got {confirm!r}. Fix: confirm=true "
                            "to launch, omit it to see the plan")
    target = resolve_target(config_or_recipe, recipes_dir=recipes_dir, root=root)
    runner = get_backend(backend_name)
    runner.check_target(target)
    gpu_spec, gpu_count = _check_gpu(gpu, backend_name, target)
    run_name = _check_name(name, target)
    registry = Registry(state_dir)
    plan = _plan(target, run_name, runner, gpu_spec, gpu_count, registry)
    fields = dict(id=plan.run_id, name=run_name, target=target.label, target_kind=target.kind,
                  recipe=target.recipe, sha256=target.sha256, backend=backend_name, gpu=gpu_spec)
    if not confirm:
        record = registry.plan(fields)
        if record.status != "planned":
            return Launch(action="existing", plan=plan, run=public(record),
                          next_step=_existing_step(record, gpu_spec))
        if not plan.ready:
            return Launch(action="planned", plan=plan, run=record,
                          next_step="fix what the plan's notes say is not ready, then plan again")
        return Launch(action="planned", plan=plan, run=record, next_step=(
            f"launch_run({str(config_or_recipe)!r}, backend={backend_name!r}"
            + (f", gpu={gpu_spec!r}" if gpu_spec else "") + f", name={run_name!r}, confirm=True)"))
    try:  # a missing package or token fails before anything is recorded
        runner.check_ready()
    except WhileaiError as exc:
        raise type(exc)(f"nothing was launched or recorded: {exc}") from None
    run_dir = registry.run_dir(plan.run_id)

    def taken() -> bool:
        row = registry.get(plan.run_id)
        return row is not None and not claimable(row.status, row.handle)

    with lock.launch_lock(run_dir, taken=taken) as lock_fd:
        if lock_fd is None:
            record = registry.get(plan.run_id)
            return Launch(action="existing", plan=plan, run=public(record),
                          next_step=_existing_step(record, gpu_spec))
        record, claimed = registry.claim(fields)
        if not claimed:
            return Launch(action="existing", plan=plan, run=public(_reconcile(registry, record)),
                          next_step=_existing_step(record, gpu_spec))
        def starting() -> None:  # the backend calls this just before it starts anything
            registry.set_handle(record.id, {"backend_called_at": now()})

        try:
            handle = runner.launch(record, target, run_dir, lock_fd, starting)
        except WhileaiError as exc:  # the backend refused before starting anything
            registry.transition(record.id, ("launching",), "failed", error=str(exc), handle=None)
            raise
        except Exception as exc:
            registry.transition(record.id, ("launching",), "failed",
                                error=f"{type(exc).__name__}: {exc}")
            raise ConfigError(f"launching {record.id} on {backend_name} failed with "
                              f"{type(exc).__name__}: {exc}. The run is recorded as failed; "
                              "run_status shows it") from None
        registry.set_handle(record.id, handle)  # first: a crash after this still finds the run
        started = registry.transition(record.id, ("launching",), "running", handle=handle,
                                      launched_at=now())
    if started is None:  # cancelled while it was launching: stop what was just started
        current = registry.get(record.id)
        runner.cancel(current, run_dir)
        return Launch(action="launched", plan=plan, run=current,
                      next_step="it was cancelled while launching; nothing is left running")
    return Launch(action="launched", plan=plan, run=started,
                  next_step=f"run_status('{started.id}'), then collect_run('{started.id}')")


def _existing_step(record: RunRecord, gpu: str | None) -> str:
    step = f"run_status('{record.id}')"
    if record.gpu != gpu:
        step += (f"; note: that run was launched on {record.gpu}, not {gpu}: to run on {gpu}, "
                 "launch again with a new name")
    return step


def _reconcile(registry: Registry, record: RunRecord) -> RunRecord:
    """Bring an active run's status up to date with what its backend can prove."""
    if record.status not in ACTIVE:
        return record
    seen = get_backend(record.backend).poll(record, registry.run_dir(record.id))
    fields: dict[str, Any] = {}
    if seen.handle is not None and seen.handle != record.handle:
        fields["handle"] = seen.handle
    if seen.never_started:
        fields["handle"] = None
    if seen.error is not None:
        fields["error"] = seen.error
    if seen.results is not None:
        fields["results"] = seen.results
    handle = seen.handle or record.handle or {}
    if record.launched_at is None and ("pid" in handle or "call_id" in handle):
        fields["launched_at"] = handle.get("started_at") or now()
    if seen.status == record.status and not fields:
        return record
    updated = registry.transition(record.id, (record.status,), seen.status, **fields)
    return updated or registry.get(record.id)


def run_status(id: str, *, state_dir: str | os.PathLike | None = None) -> RunRecord:
    """The run's status, reconciled with its backend first when it is launching or running."""
    registry, record = _open(id, state_dir)
    return public(_reconcile(registry, record))


def list_runs(*, state_dir: str | os.PathLike | None = None) -> RunList:
    """Every run in the registry, oldest first, active ones reconciled with their backend."""
    registry = Registry(state_dir, create=False)
    runs, notes = [], []
    for record in registry.all():
        try:
            record = _reconcile(registry, record)
        except WhileaiError as exc:  # e.g. no Modal token: show what was last recorded
            notes.append(f"{record.id}: shown as last recorded ({exc})")
        runs.append(public(record))
    return RunList(state_dir=str(registry.dir), runs=runs, notes=notes)


def cancel_run(id: str, *, state_dir: str | os.PathLike | None = None) -> Cancelled:
    """Stop a run (planned, launching or running); a finished run is left as it is."""
    registry, record = _open(id, state_dir)
    record = _reconcile(registry, record)
    if record.status in FINISHED:
        return Cancelled(run=public(record), stopped=f"nothing to stop: it already {record.status}")
    marked = registry.transition(record.id, ("planned", *ACTIVE), "cancelled")
    if marked is None:  # it finished between the two reads
        current = registry.get(record.id)
        return Cancelled(run=public(current), stopped=f"nothing to stop: it {current.status}")
    if record.status not in ACTIVE:
        return Cancelled(run=public(marked), stopped="it was only planned; nothing ran")
    try:
        stopped = get_backend(record.backend).cancel(marked, registry.run_dir(record.id))
    except WhileaiError:  # not stopped after all: do not claim it was
        registry.transition(record.id, ("cancelled",), record.status, finished_at=None)
        raise
    return Cancelled(run=public(marked), stopped=stopped)


def collect_run(id: str, *, state_dir: str | os.PathLike | None = None) -> Collected:
    """A finished run's results, with the paired before/after verdict when it has held-out rows."""
    registry, record = _open(id, state_dir)
    record = _reconcile(registry, record)
    if record.status != "succeeded":
        note = {"failed": f"the run failed: {record.error}",
                "cancelled": "the run was cancelled; it has no results"}.get(
            record.status, f"not finished ({record.status}): poll run_status('{record.id}')")
        return Collected(run=public(record), ready=False, note=note)
    results = record.results or {}
    metrics = {k: v for k, v in results.items() if k not in ROW_FIELDS}
    before, after = results.get("before_rows"), results.get("after_rows")
    if before is None and after is None:
        return Collected(run=public(record), ready=True, metrics=metrics,
                         note="no before_rows/after_rows in the results: no paired verdict")
    if not isinstance(before, list) or not isinstance(after, list):
        raise ConfigError(f"run {record.id}: results need both `before_rows` and `after_rows` as "
                          "lists of graded rows to compare; got "
                          f"{type(before).__name__} and {type(after).__name__}. Fix: the "
                          f"recipe {record.recipe!r} must write both")
    from ..stats import compare

    comparison = compare(before, after)
    return Collected(run=public(record), ready=True, metrics=metrics, n_before_rows=len(before),
                     n_after_rows=len(after), comparison=comparison, verdict=comparison.verdict)
