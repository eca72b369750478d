"""launch_run, run_status, list_runs, cancel_run (collect_run is in :mod:`.collect`).

The registry lives in the state directory (``--state-dir``, else ``$WHILEAI_STATE_DIR``, else
``~/.whileai``; over MCP never an argument). A launch is planned (free), then, with ``confirm``,
claimed in the registry under the run's lock, handed to the backend, and its handle recorded. A
launcher that dies in between leaves the run ``launching``, and the next status reconciles it
from what the backend can prove, never from a guess.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import SFT_MODEL
from ..errors import ArgumentError, ConfigError, WhileaiError
from ..operations import ASKS, SPENDS, STOPS, VERDICT, operation
from ..operations.args import Arg, RunId, StateDir, WorkspaceRoot
from ..operations.describe import named, values_of
from ..progress import step
from ..voice import arg, call, choose
from ..voice import name as op_name
from . import lock
from .local import LocalBackend
from .modal_backend import ModalBackend
from .forecast import forecast as forecast_run
from .forecast_check import recorded
from .plan import (NOT_READY, PlanChanged, _check_backend, _check_gpu, _check_local_teacher,
                   _check_name, _plan, _rejected, shown_approval)
from .registry import ACTIVE, FINISHED, Registry, RunRecord, _check_id, claimable, now
from .results import Cancelled, Launch, RunList, public
from .targets import resolve_target, stage_data

# --- a run already recorded ------------------------------------------------------------------

def get_backend(name: str):
    """The backend called ``name`` ("modal" or "local")."""
    if name == "local":
        return LocalBackend()
    if name == "modal":
        return ModalBackend()
    raise ArgumentError(f"`backend` must be 'modal' or 'local', got {name!r}", fix="'modal' for a "
                        "GPU run on Modal, 'local' for a recipe's CPU smoke here")


def _open(id: Any, state_dir: str | os.PathLike | None) -> tuple[Registry, RunRecord]:
    """The registry and the run ``id`` in it; checks the id before touching the disk."""
    run = _check_id(id)
    registry = Registry(state_dir, create=False)
    record = registry.get(run)
    if record is None:
        elsewhere = choose(
            python="pass state_dir= (or set WHILEAI_STATE_DIR)",
            cli="pass --state-dir (or set WHILEAI_STATE_DIR)",
            mcp="start the server with WHILEAI_STATE_DIR set to their folder")
        raise ArgumentError(f"no run {run!r} in {registry.path}",
                            fix=f"{op_name('list_runs')} shows "
                            f"the runs; {elsewhere} if they live elsewhere")
    return registry, record


# --- the calls --------------------------------------------------------------------------------

@operation(
    cli="launch", toolset="core", effect=SPENDS, title="Launch a training run",
    description=(
        "Plan, then launch, a recipe or a prime-rl config on Modal GPUs (or a recipe's CPU smoke "
        "locally). Without confirm=true it returns the plan only: where it runs, on which GPUs, "
        "the estimated GPU hours and the exact command. With confirm=true (on Modal also approved, "
        "the plan's approval) it starts the run (this spends money on Modal) and records it; the same target and name launched again "
        "return the existing run, never a second launch."),
    exit_code=VERDICT, doing="launching a run")
def launch_run(
        config_or_recipe: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "A recipe name ('grpo', 'dpo', 'sft', 'prime-rl') or the path of a prime-rl TOML "
            "that prime_rl_config wrote."), examples=["grpo", "configs/rl.toml"]),
            Arg(positional=True, metavar="TARGET")], *,
        backend: Annotated[Literal["modal", "local"], Field(description=(
            "'modal': the GPU run on Modal (spends money). 'local': the recipe's CPU smoke here "
            "(no GPU, no key; not for a prime-rl config)."))
        ] = "modal",
        gpu: Annotated[str | None, Field(max_length=100, description=(
            "Modal GPU as TYPE or TYPE:COUNT, e.g. 'H100:2'. null: the recipe's default (a "
            "config: its [deployment] GPU count). Ignored for 'local'."))] = None,
        name: Annotated[str | None, Field(max_length=200, description=(
            "The run's name. The same target under the same name is one run: launching it "
            "again returns that run. null: the recipe or config name."))] = None,
        data: Annotated[str | None, Field(max_length=4096, description=(
            "For 'sft': a folder of train.jsonl (export_sft), holdout.jsonl, grader.py "
            "(grade(ask, reply) -> float) and optionally settings.json ({\"model\": ...}; "
            f"else {SFT_MODEL}). For 'dpo': the folder write_dpo_data wrote. null: the recipe's "
            "demo data."), examples=["sft"]),
            Arg(metavar="DIR")] = None,
        experiment: Annotated[str | None, Field(max_length=64, description=(
            "Launch as an arm of an experiment registered before it (register_experiment); "
            "collect_run reads it by the registered rule. A `data` folder with another held-out "
            "set makes the plan not ready."))
        ] = None,
        arm: Annotated[str | None, Field(max_length=64, description=(
            "Which registered arm this run is (optional when the experiment has one)."))
        ] = None,
        confirm: Annotated[bool, Field(description=(
            "false: return the plan (where, GPUs, GPU hours, the command), launch nothing. "
            "true: launch, only once the user approved the plan (a Modal run costs money)."))
        ] = False,
        approved: Annotated[str | None, Field(max_length=71, description=(
            "With confirm=true: the plan's `approval` hash the user approved; only that exact "
            "plan launches. Required for a 'modal' launch (it spends); null: a 'local' run as it "
            "is now."))] = None,
        state_dir: StateDir = None,
        recipes_dir: Annotated[str | None, Field(description=(
            "Folder holding <recipe>/run.py; null: $WHILEAI_RECIPES_DIR, else this "
            "checkout's recipes/.")), Arg(metavar="DIR", mcp=False)] = None,
        root: WorkspaceRoot = None) -> Launch:
    """Plan a run, or with ``confirm=True`` launch it; the same target and name launch once.

    ``approved``: the plan's ``approval`` the user approved; with ``confirm=True`` only the plan
    that has it launches (the bytes hashed are the bytes launched), any other raises
    :class:`PlanChanged`. A launch that spends (Modal) needs it: without it the confirm raises
    :class:`ArgumentError`, nothing launched or recorded. ``root``: a config path (and ``data``)
    is read under this root, through the path door; a value with '/' or ending in '.toml' is a
    config, anything else a recipe name.
    """
    backend_name = _checked_request(backend, confirm, approved)
    target = resolve_target(config_or_recipe, recipes_dir=recipes_dir, root=root, data=data)
    joined, experiment, arm = _experiment_arm(experiment, arm, state_dir)
    runner = get_backend(backend_name)
    gpu_spec, gpu_count, run_name, rejected = _checked_target(target, runner, backend_name, gpu,
                                                              name, confirm)
    # A plan is free: nothing is written, not even the registry's folder, until a confirmed
    # launch has passed every check below (a refusal leaves the disk as a plan does).
    registry = Registry(state_dir, create=False)
    plan = _plan(target, run_name, runner, gpu_spec, gpu_count, registry, rejected, joined)
    if confirm and approved is not None and approved != plan.approval:
        raise _changed(plan, approved, Launch(action="planned", plan=plan, run=None,
                                              next_step="ask the user about this plan"))
    asked = _Asked(str(config_or_recipe), backend_name, gpu, name,
                   None if data is None else str(data), experiment, arm, _given(state_dir),
                   _given(recipes_dir), gpu_spec, run_name)
    if not confirm:
        return _planned(registry, plan, asked)
    # progress steps (where a cancelled call stops) come only before the claim and after the
    # handle is recorded: a stop between them would leave a started run unrecorded
    _spend_gate(plan, target, runner, gpu_count, registry, approved, asked)
    if not registry.exists:  # the first launch here: now the registry is made
        registry = Registry(state_dir)
    return _launch(registry, plan, target, runner, asked)


# --- launch_run's steps, in the order it takes them -------------------------------------------

def _checked_request(backend: Any, confirm: Any, approved: Any) -> str:
    """The backend's name, once the backend, ``confirm`` and ``approved`` are checked (in this
    order)."""
    backend_name = _check_backend(backend)
    if not isinstance(confirm, bool):
        raise ArgumentError(f"`{arg('confirm')}` must be true or false, got {confirm!r}",
                            fix=f"{arg('confirm', True)} to launch, omit it to see the plan")
    if approved is not None and not (isinstance(approved, str) and _APPROVAL.fullmatch(approved)):
        raise ArgumentError(f"`{arg('approved')}` must be a plan's approval (sha256: and 64 hex "
                            f"digits), got {str(approved)[:80]!r}", fix="pass the `approval` of "
                            "the plan the user approved, or omit it")
    return backend_name


def _experiment_arm(experiment: Any, arm: Any, state_dir: str | os.PathLike | None
                    ) -> tuple[Any, str | None, str | None]:
    """(the experiment this run is an arm of, or None; its name; the arm): the plan checks its
    held-out set."""
    if experiment is None and arm is None:
        return None, experiment, arm
    from ..experiments.store import arm_for_launch  # lazy: only a launch into an experiment reads it
    joined, arm = arm_for_launch(experiment, arm, state_dir)
    return joined, joined.name, arm


def _checked_target(target, runner, backend_name: str, gpu: Any, name: Any, confirm: bool
                    ) -> tuple[str | None, int, str, list[str]]:
    """(GPU spec, GPU count, run name, what prime-rl would reject in a config), once the
    backend takes the target; a confirmed launch of a config prime-rl rejects is refused."""
    runner.check_target(target)
    if backend_name == "modal" and target.kind == "config":
        _check_local_teacher(target)
    gpu_spec, gpu_count = _check_gpu(gpu, backend_name, target)
    run_name = _check_name(name, target)
    rejected = _rejected(target)
    if confirm and rejected:
        raise ConfigError(f"{target.path}: prime-rl would reject it ({len(rejected)} problem(s): "
                          f"{'; '.join(rejected[:3])}). Nothing was launched or recorded",
                          fix=f"{op_name('validate_config')} lists each; rewrite it with "
                          f"{op_name('prime_rl_config')}")
    return gpu_spec, gpu_count, run_name, rejected


@dataclass(frozen=True)
class _Asked:
    """The launch as asked (the arguments a next step repeats), with its checked GPU and name."""

    config_or_recipe: str
    backend: str
    gpu: str | None
    name: str | None
    data: str | None
    experiment: str | None
    arm: str | None
    state_dir: str | None
    recipes_dir: str | None
    gpu_spec: str | None
    run_name: str


def _confirm_call(asked: _Asked, plan) -> str:
    """The launch of exactly this plan, as the reader types it."""
    return call("launch_run", config_or_recipe=asked.config_or_recipe,
                backend=None if asked.backend == "modal" else asked.backend, gpu=asked.gpu,
                name=asked.name, data=asked.data, experiment=asked.experiment, arm=asked.arm,
                confirm=True, approved=plan.approval, state_dir=asked.state_dir,
                recipes_dir=asked.recipes_dir)


def _existing(asked: _Asked, plan, record: RunRecord, shown: RunRecord | None = None) -> Launch:
    """The answer for a run launched before: its record (``shown``, when reconciled)."""
    return Launch(action="existing", plan=plan, run=public(shown or record),
                  next_step=_existing_step(record, asked.gpu_spec, asked.state_dir,
                                           asked.experiment))


def _planned(registry: Registry, plan, asked: _Asked) -> Launch:
    """The answer without ``confirm``: the run launched before, or the plan and its next step."""
    record = registry.get(plan.run_id)
    if record is not None and record.status != "planned":
        return _existing(asked, plan, record)
    if not plan.ready:
        return Launch(action="planned", plan=plan, run=None,
                      next_step="fix what the plan's notes say is not ready, then plan again")
    return Launch(action="planned", plan=plan, run=None, next_step=_confirm_call(asked, plan))


def _spend_gate(plan, target, runner, gpu_count: int, registry: Registry,
                approved: str | None, asked: _Asked) -> None:
    """Refuse, before anything is recorded or spent, a launch whose forecast does not fit, whose
    backend is not ready, whose plan is not ready, or that spends without ``approved``."""
    if plan.forecast is None:  # the config could not be read for a forecast: say why, and stop
        try:
            forecast_run(target, asked.backend, asked.gpu_spec, gpu_count)
        except WhileaiError as exc:
            raise type(exc)(f"nothing was launched or recorded: {exc}") from None
    elif not plan.forecast.fits:  # refused before anything spends
        raise ConfigError(f"nothing was launched or recorded: {plan.forecast.refusal}",
                          fix=f"{'; or '.join(plan.forecast.fixes)}")
    step(1, 3, f"checking the {asked.backend} backend")
    try:  # a missing package or token fails before anything is recorded
        runner.check_ready(target)
    except WhileaiError as exc:
        raise type(exc)(f"nothing was launched or recorded: {exc}") from None
    unready = [n.removeprefix(NOT_READY) for n in plan.notes if n.startswith(NOT_READY)]
    if unready:  # what else the plan found (a data folder the run cannot read, another held-out
        # set than the experiment registered) is refused here too, before the run is claimed
        raise ConfigError(f"nothing was launched or recorded: {'; '.join(unready)}")
    if approved is None and plan.spends_money and _starts(registry, plan.run_id):
        # a launch that spends runs only the plan the user was shown, named by its approval:
        # without it this call would launch whatever the disk holds now (re-planned above)
        raise ArgumentError(_unapproved(plan, _confirm_call(asked, plan)))


def _launch(registry: Registry, plan, target, runner, asked: _Asked) -> Launch:
    """Claim the run under its lock, start it on the backend and record its handle; the run
    launched before when another call claimed it first."""
    run_dir = registry.run_dir(plan.run_id)

    def taken() -> bool:
        row = registry.get(plan.run_id)
        return row is not None and not claimable(row.status, row.handle)

    with lock.launch_lock(run_dir, taken=taken) as lock_fd:
        if lock_fd is None:
            return _existing(asked, plan, registry.get(plan.run_id))
        record, claimed = registry.claim(_record_fields(plan, target, asked))
        if not claimed:
            return _existing(asked, plan, record, _reconcile(registry, record))
        handle = _start(registry, record, target, runner, run_dir, lock_fd, asked.backend)
        registry.set_handle(record.id, handle)  # first: a crash after this still finds the run
        started = registry.transition(record.id, ("launching",), "running", handle=handle,
                                      launched_at=now())
    step(3, 3, f"{record.id} launched and recorded")
    return _launched(registry, plan, runner, run_dir, record, started, asked)


def _record_fields(plan, target, asked: _Asked) -> dict[str, Any]:
    """The fields the registry records of the run it claims."""
    return dict(id=plan.run_id, name=asked.run_name, target=target.label, target_kind=target.kind,
                recipe=target.recipe, sha256=target.sha256, backend=asked.backend,
                gpu=asked.gpu_spec,
                forecast=None if plan.forecast is None else recorded(plan.forecast),
                experiment=asked.experiment, arm=asked.arm)


def _start(registry: Registry, record: RunRecord, target, runner, run_dir, lock_fd,
           backend_name: str) -> dict[str, Any]:
    """The backend's handle of the run it started; a failure is recorded on the run."""
    def starting() -> None:  # the backend calls this just before it starts anything
        registry.set_handle(record.id, {"backend_called_at": now()})

    try:
        target = stage_data(target, run_dir)  # a data folder: the run reads this copy
        return runner.launch(record, target, run_dir, lock_fd, starting)
    except WhileaiError as exc:  # the backend refused before starting anything
        registry.transition(record.id, ("launching",), "failed", error=str(exc), handle=None)
        raise
    except Exception as exc:
        registry.transition(record.id, ("launching",), "failed",
                            error=f"{type(exc).__name__}: {exc}")
        raise ConfigError(f"launching {record.id} on {backend_name} failed with "
                          f"{type(exc).__name__}: {exc}. The run is recorded as failed; "
                          f"{op_name('run_status')} shows it") from None


def _launched(registry: Registry, plan, runner, run_dir, record: RunRecord,
              started: RunRecord | None, asked: _Asked) -> Launch:
    """The answer for a run just started (stopped again when it was cancelled meanwhile)."""
    if started is None:  # cancelled while it was launching: stop what was just started
        current = registry.get(record.id)
        runner.cancel(current, run_dir)
        return Launch(action="launched", plan=plan, run=current,
                      next_step="it was cancelled while launching; nothing is left running")
    return Launch(action="launched", plan=plan, run=started,
                  next_step=f"{call('run_status', id=started.id, state_dir=asked.state_dir)}, "
                            f"then {call('collect_run', id=started.id, state_dir=asked.state_dir)}")


_APPROVAL = re.compile(r"sha256:[0-9a-f]{64}")


def _changed(plan, approved: str, now_planned: Launch) -> PlanChanged:
    """The refusal of a confirmed launch whose plan is not the approved one."""
    where = f"{plan.gpu} ({plan.gpu_count} GPU)" if plan.backend == "modal" else plan.backend
    return PlanChanged(
        f"nothing was launched or recorded: the plan now is {shown_approval(plan.approval)} "
        f"({plan.target_kind} {plan.target} as {plan.name!r} on {where}, about "
        f"{plan.est_gpu_hours:.2f} GPU hours), not {shown_approval(approved)}, the one "
        "approved: its config, data, GPUs or cost changed after it was shown. Fix: show the user "
        f"this plan ({op_name('launch_run')} without {arg('confirm')}) and launch it with its "
        f"own {arg('approved')}", now_planned)


def _starts(registry: Registry, run_id: str) -> bool:
    """Whether a confirmed launch of ``run_id`` would start it (not return one launched
    before)."""
    row = registry.get(run_id) if registry.exists else None
    return row is None or claimable(row.status, row.handle)


def _unapproved(plan, launch: str) -> str:
    """The refusal of a spending launch confirmed without ``approved``."""
    return (f"nothing was launched or recorded: this launch spends money ({plan.gpu}, "
            f"{plan.gpu_count} GPU, about {plan.est_gpu_hours:.2f} GPU hours on Modal), so it "
            "runs only the plan the user approved, named by its approval; without it the call "
            "would launch whatever the config and data are by then. Fix: once the user approved "
            f"this plan ({shown_approval(plan.approval)}), add {arg('approved', plan.approval)}: "
            f"{launch}")


def _given(path: str | os.PathLike | None) -> str | None:
    return None if path is None else os.fspath(path)


def _existing_step(record: RunRecord, gpu: str | None, state_dir: str | None,
                   experiment: str | None = None) -> str:
    step = call("run_status", id=record.id, state_dir=state_dir)
    if record.gpu != gpu:
        step += (f"; note: that run was launched on {record.gpu}, not {gpu}: to run on {gpu}, "
                 "launch again with a new name")
    if experiment is not None and record.experiment != experiment:  # launched before, outside it
        step += (f"; note: that run is not an arm of {experiment!r}: to run it as one, launch "
                 f"again with a new {arg('name')}")
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


def _status_doc() -> str:
    return (f"A run's `status` ({named(values_of(RunRecord, 'status'))}), brought up to date "
            f"with its `backend` ({named(values_of(RunRecord, 'backend'))}) first (a run left "
            "launching by a crash is reconciled from what Modal or the local process shows), "
            "with its error if it failed.")


@operation(
    cli="status", toolset="core", effect=ASKS, title="Status of a run", description=_status_doc,
    doing="reading a run's status")
def run_status(id: RunId, *, state_dir: StateDir = None) -> RunRecord:
    """The run's status, reconciled with its backend first when it is launching or running."""
    registry, record = _open(id, state_dir)
    return public(_reconcile(registry, record))


@operation(
    cli="runs", toolset="core", effect=ASKS, title="List runs",
    description=("Every run in the registry, oldest first, with status, backend, GPU and "
                 "target; active runs are brought up to date with their backend."),
    doing="listing runs")
def list_runs(*, state_dir: StateDir = None) -> RunList:
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


@operation(
    cli="cancel", toolset="core", effect=STOPS, title="Cancel a run",
    description=("Stop a planned, launching or running run (Modal: cancels the call and its "
                 "containers; local: stops the process). A finished run is left as it is."),
    doing="cancelling a run")
def cancel_run(id: RunId, *, state_dir: StateDir = None) -> Cancelled:
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
