"""A launch's plan: the arguments checked, then what the launch would do and cost, before
anything runs or is written.

The checks refuse what no backend could run (a backend, GPU spec or run name outside the
grammar, a Modal run of a config whose OPD teacher is on localhost). ``_plan`` gathers the
run's id, the forecast, what the backend needs, what prime-rl rejects, the data folder (read by
the recipe's hooks from a private copy of the hashed bytes), the command and past forecast
error. A note starting with ``NOT_READY`` is one a confirmed launch refuses. The plan's
``approval`` hashes the exact launch: ``approved=<it>`` launches that plan or nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from typing import TYPE_CHECKING, Any

from ..defaults import MODAL_GPU_TYPES, MODAL_MAX_GPUS, PRIME_RL_RECIPE, RUN_GPU
from ..errors import ArgumentError, ConfigError, WhileaiError
from ..voice import arg
from .forecast import forecast as forecast_run
from .forecast_check import past_error
from .registry import BACKENDS, Registry, run_id
from .results import RunPlan
from .targets import Target, verified_copy
from ..prime_rl.teacher import is_local
from ..prime_rl import validate_config
from .modal_backend import recipe_reads_data, recipe_starts_teacher
from ..experiments.decide import holdout_before_launch

if TYPE_CHECKING:
    from ..experiments.store import Experiment

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
NOT_READY = "not ready to launch: "  # a plan's note that a confirmed launch refuses
_GPU = re.compile(r"^(?P<type>[A-Za-z0-9-]+)(?::(?P<count>\d+))?$")


# --- argument checks --------------------------------------------------------------------------

def _default_gpu(target: Target) -> str:
    """The recipe's GPU; for a prime-rl config, as many as its ``[deployment]`` asks for."""
    default = RUN_GPU.get(target.recipe, RUN_GPU[PRIME_RL_RECIPE])
    if target.kind != "config":
        return default
    deployment = tomllib.loads((target.data or b"").decode("utf-8")).get("deployment", {})
    if not isinstance(deployment, dict):
        raise ConfigError(f"{target.path}: `deployment` = {deployment!r:.40} is not a "
                          "table", fix="a [deployment] table (type, num_train_gpus, "
                          "num_infer_gpus), or none")
    if deployment.get("type", "single_node") != "single_node":
        raise ArgumentError(f"{target.path}: [deployment] type {deployment.get('type')!r} is "
                            "multi-node; launch_run starts one Modal container (up to "
                            f"{MODAL_MAX_GPUS} GPUs)", fix="use a single_node deployment")
    counts = [deployment.get(key, 1) for key in ("num_train_gpus", "num_infer_gpus")]
    for key, value in zip(("num_train_gpus", "num_infer_gpus"), counts):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MODAL_MAX_GPUS:
            raise ConfigError(f"{target.path}: [deployment] {key} = {value!r} is not a number of "
                              f"GPUs from 1 to {MODAL_MAX_GPUS}", fix=f"e.g. {key} = 1")
    return f"{default.split(':')[0]}:{sum(counts)}"


def _check_gpu(gpu: Any, backend: str, target: Target) -> tuple[str | None, int]:
    if backend == "local":
        return None, 0
    value = _default_gpu(target) if gpu is None else gpu
    match = _GPU.fullmatch(value) if isinstance(value, str) else None
    kind = match and match["type"].upper()
    count = int(match["count"]) if match and match["count"] else 1
    if not match or kind not in MODAL_GPU_TYPES or not 1 <= count <= MODAL_MAX_GPUS:
        raise ArgumentError(f"`{arg('gpu')}` must be TYPE or TYPE:COUNT with TYPE one of "
                            f"{', '.join(MODAL_GPU_TYPES)} and COUNT 1-{MODAL_MAX_GPUS}, got "
                            f"{value!r}", fix="e.g. 'H100' or 'H100:8' (default for "
                            f"{target.recipe}: {_default_gpu(target)!r})")
    return (kind if count == 1 else f"{kind}:{count}"), count


def _check_local_teacher(target: Target) -> None:
    """Refuse a Modal run of a config whose OPD teacher is on localhost unless the recipe that
    runs it starts that teacher: inside a Modal container, localhost is the container, not the
    machine where the user served the teacher."""
    # the bytes read once through the path door (never the path again, by name)
    text = target.data.decode("utf-8") if target.data is not None else ""
    algo = (tomllib.loads(text).get("orchestrator") or {}).get("algo") or {}
    teacher = algo.get("teacher") if isinstance(algo, dict) else None
    if not isinstance(teacher, dict) or not is_local(str(teacher.get("base_url", ""))):
        return
    if target.recipe_dir is None:
        starts, why = False, f"the {target.recipe} recipe was not found"
    else:
        starts, why = recipe_starts_teacher(target, text)
    if not starts:
        raise ConfigError(
            f"{target.path}: its OPD teacher {teacher.get('name')!r} is at "
            f"{teacher.get('base_url')}, and on Modal localhost is the run's own container; the "
            f"{target.recipe} recipe does not start that teacher there ({why}). Nothing was "
            "planned or launched", fix="serve the teacher where Modal can reach it and rewrite the "
            "config with prime_rl_config(method={'name': 'opd', 'teacher': "
            "'<model>@https://<host>/v1'}, teacher_served=true, ...), or run the config on a "
            "machine that serves the teacher (the `first:` lines of prime_rl_config)")


def _check_name(name: Any, target: Target) -> str:
    if name is None:
        if not _NAME.fullmatch(target.default_name) or target.default_name.strip(".") == "":
            raise ArgumentError(f"{target.path}: its file name {target.default_name!r} cannot name "
                                f"the run (1-100 letters, digits, '.', '_' or '-'; the run's "
                                "folders are named after it)", fix=f"pass `{arg('name')}`, e.g. "
                                "'grpo-lr2e-6', or rename the file")
        return target.default_name
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.strip(".") == "":
        raise ArgumentError(f"`{arg('name')}` must be 1-100 letters, digits, '.', '_' or '-' (starting "
                            f"with a letter or digit), got {name!r}",
                            fix="e.g. 'grpo-lr2e-6', "
                            "or omit it to use the recipe or config name")
    return name


def _check_backend(backend: Any) -> str:
    if backend not in BACKENDS:
        raise ArgumentError(f"`{arg('backend')}` must be 'modal' or 'local', got {backend!r}",
                            fix="'modal' for a GPU run on Modal, 'local' for a recipe's CPU smoke "
                                "here")
    return backend


# --- the plan ---------------------------------------------------------------------------------

APPROVAL_PREFIX = "sha256:"
APPROVAL_SHOWN = 16  # hex digits of the approval a question shows (64 bits: a person compares it)


def approval(facts: dict[str, Any]) -> str:
    """``sha256:<hex>`` of a plan's launch facts, as canonical JSON (keys sorted, floats as
    ``repr`` gives them: the same inputs give the same forecast, so the same hash)."""
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return APPROVAL_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()


def shown_approval(value: str) -> str:
    """The approval as a question shows it: its first ``APPROVAL_SHOWN`` hex digits."""
    return value[:len(APPROVAL_PREFIX) + APPROVAL_SHOWN]


class PlanChanged(ConfigError):
    """A confirmed launch whose plan is not the one approved (``approved``): nothing launched or
    recorded. ``launch`` is the plan as it is now (a gate asks about it again)."""

    def __init__(self, message: str, launch: Any) -> None:
        super().__init__(message)
        self.launch = launch


def _rejected(target: Target) -> list[str]:
    """What prime-rl's schema (as whileai checks it) rejects in a config target; [] else."""
    if target.kind != "config":
        return []
    return validate_config(tomllib.loads((target.data or b"").decode("utf-8"))).errors


def _plan(target: Target, name: str, backend, gpu: str | None, gpu_count: int,
          registry: Registry, rejected: list[str] = (),
          experiment: Experiment | None = None) -> RunPlan:
    id = run_id(target.sha256, name, backend.name)
    run_dir = registry.run_dir(id)
    notes: list[str] = [f"{NOT_READY}prime-rl would reject it: {p}" for p in rejected]
    ready = not rejected
    if backend.name == "modal":
        notes.append(f"spends money on Modal: launch only with {arg('confirm', True)}")
    else:
        notes.append("the local backend runs only the recipe's CPU smoke path, not its training")
    try:  # the run's own shape: tokens, memory per GPU, time, dollars (a misfit is refused)
        forecast = forecast_run(target, backend.name, gpu, gpu_count)
    except WhileaiError as exc:
        forecast = None
        ready = False
        notes.append(f"{NOT_READY}{exc}")
    if forecast is not None and not forecast.fits:
        ready = False
        notes.append(f"{NOT_READY}it does not fit in memory (the forecast's refusal "
                     "says where, its fixes what would fit)")
    try:  # what the run will need (a package, a token) is checked now, not when it fails
        backend.check_ready(target)
    except WhileaiError as exc:
        ready = False
        notes.append(f"{NOT_READY}{exc}")
    # the recipe's hooks read a data folder by name: they get a private copy of the bytes the
    # door hashed (targets.verified_copy), and parse its code without running any of it
    with verified_copy(target) as readable:
        mine = readable.data_dir and str(readable.data_dir)
        words = (lambda text: str(text).replace(mine, str(target.data_dir))) if mine else str
        if target.data_dir is not None:  # the data folder is read now, on either backend
            try:
                reading = recipe_reads_data(readable, smoke=backend.name == "local")
                notes.append(f"data: {words(reading.words)}")
            except (WhileaiError, OSError) as exc:
                ready, reading = False, None
                notes.append(f"{NOT_READY}{words(exc)}")
            if reading is not None and experiment is not None:  # an arm: its registered set
                refusal, note = holdout_before_launch(
                    experiment, reading.holdout, names_holdout=reading.names_holdout,
                    recipe=target.recipe, data=str(target.data_label or target.data_dir))
                if refusal is not None:
                    ready = False
                    notes.append(f"{NOT_READY}{refusal}")
                if note is not None:
                    notes.append(note)
        try:
            command = backend.describe(readable if backend.name == "modal" else target,
                                       run_dir, gpu, name)
        except WhileaiError as exc:
            ready, command = False, "(unknown: see notes)"
            if f"{NOT_READY}{words(exc)}" not in notes:
                notes.append(f"{NOT_READY}{words(exc)}")
    hours = forecast.gpu_hours.value if forecast else 0.0
    dollars = forecast.dollars.value if forecast and forecast.dollars is not None else None
    # what the user approves: the content (config bytes; a recipe's files and its data folder's,
    # in target.sha256), where and as what it runs, the GPUs, and what it costs
    facts = dict(run_id=id, name=name, target=target.label, target_kind=target.kind,
                 recipe=target.recipe, sha256=target.sha256, backend=backend.name, gpu=gpu,
                 gpu_count=gpu_count, gpu_hours=hours, dollars=dollars,
                 wall_s=forecast.wall_s.value if forecast else None, ready=ready)
    return RunPlan(run_id=id, name=name, target=target.label, target_kind=target.kind,
                   recipe=target.recipe, sha256=target.sha256, backend=backend.name, gpu=gpu,
                   gpu_count=gpu_count, approval=approval(facts),
                   est_gpu_hours=hours,
                   est_basis=forecast.summary() if forecast else "no forecast (see notes)",
                   command=command, spends_money=backend.spends_money,
                   ready=ready, notes=notes, state_dir=str(registry.dir), forecast=forecast,
                   past_error=past_error(registry.all(), backend.name))
