"""Operations that launch runs and come back to them: launch_run, run_status, list_runs,
collect_run, cancel_run (an arm of a registered experiment is launched and collected here too:
``whileai_core.operations.experiments``).

Each is one call into ``whileai_core.runs``. The registry lives in the state directory: at the
shell ``--state-dir`` (else ``$WHILEAI_STATE_DIR``, else ``~/.whileai``); over MCP the server's
environment decides, never an argument, so a caller cannot point the server at another folder.
``launch_run`` spends money on Modal: without ``confirm`` it only returns the plan.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import SFT_MODEL
from . import ASKS, SPENDS, STOPS, VERDICT, operation
from .describe import named, values_of
from .args import Arg, RegisteredMetric, RunId, StateDir
from .surface import HERE, Context


def _status_doc() -> str:
    from ..runs import RunRecord  # lazy: the values named are the core's Literals

    return (f"A run's `status` ({named(values_of(RunRecord, 'status'))}), brought up to date "
            f"with its `backend` ({named(values_of(RunRecord, 'backend'))}) first (a run left "
            "launching by a crash is reconciled from what Modal or the local process shows), "
            "with its error if it failed.")


@operation(
    cli="launch", toolset="core", effect=SPENDS, title="Launch a training run",
    description=(
        "Plan, then launch, a recipe or a prime-rl config on Modal GPUs (or a recipe's CPU smoke "
        "locally). Without confirm=true it returns the plan only: where it runs, on which GPUs, "
        "the estimated GPU hours and the exact command. With confirm=true (on Modal also approved, "
        "the plan's approval) it starts the run (this spends money on Modal) and records it; the same target and name launched again "
        "return the existing run, never a second launch."),
    result="whileai_core.runs:Launch", exit_code=VERDICT, doing="launching a run")
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
        ctx: Context = HERE):
    from ..runs import launch_run as launch  # lazy: the registry loads on the call

    # a value with '/' or ending in '.toml' is a config, read through the door (under the
    # root over MCP); anything else is a recipe name; `data` is a folder, read the same way
    return launch(config_or_recipe, backend=backend, gpu=gpu, name=name, confirm=confirm,
                  data=data, experiment=experiment, arm=arm, approved=approved,
                  state_dir=state_dir, recipes_dir=recipes_dir, root=ctx.root)


@operation(
    cli="status", toolset="core", effect=ASKS, title="Status of a run", description=_status_doc,
    result="whileai_core.runs:RunRecord", doing="reading a run's status")
def run_status(id: RunId, *, state_dir: StateDir = None):
    from ..runs import run_status as status  # lazy: the registry loads on the call

    return status(id, state_dir=state_dir)


@operation(
    cli="runs", toolset="core", effect=ASKS, title="List runs",
    description=("Every run in the registry, oldest first, with status, backend, GPU and "
                 "target; active runs are brought up to date with their backend."),
    result="whileai_core.runs:RunList", doing="listing runs")
def list_runs(*, state_dir: StateDir = None):
    from ..runs import list_runs as listed  # lazy: the registry loads on the call

    return listed(state_dir=state_dir)


@operation(
    cli="collect", toolset="core", effect=ASKS, title="Collect a run's results",
    description=(
        "A finished run's metrics and, when it scored held-out tasks before and after "
        "training, the paired comparison (compare's answer, by category when the rows carry "
        "one). For an arm of a registered experiment: the decision by its registered rule, "
        "metric and noise floor; another reading is flagged. Not finished: says so (poll "
        "run_status)."),
    result="whileai_core.runs:Collected", exit_code=VERDICT, doing="collecting a run's results")
def collect_run(id: RunId, *, metric: RegisteredMetric = None,
                holdout: Annotated[str | None, Field(max_length=4096, description=(
                    "The frozen held-out file or content name the run was scored on, when its "
                    "results do not name it; another than the registered one is flagged.")),
                    Arg(metavar="FILE_OR_NAME")] = None,
                rule: Annotated[dict[str, Any] | None, Field(description=(
                    "null: the registered rule. Another rule (register_experiment's grammar) is "
                    "applied and flagged; for a run of no experiment it is flagged "
                    "not_registered.")), Arg(metavar="JSON", form="json")] = None,
                state_dir: StateDir = None, ctx: Context = HERE):
    from ..runs import collect_run as collect  # lazy: the registry loads on the call

    return collect(id, metric=metric, holdout=holdout, rule=rule, state_dir=state_dir,
                   root=ctx.root)


@operation(
    cli="cancel", toolset="core", effect=STOPS, title="Cancel a run",
    description=("Stop a planned, launching or running run (Modal: cancels the call and its "
                 "containers; local: stops the process). A finished run is left as it is."),
    result="whileai_core.runs:Cancelled", doing="cancelling a run")
def cancel_run(id: RunId, *, state_dir: StateDir = None):
    from ..runs import cancel_run as cancel  # lazy: the registry loads on the call

    return cancel(id, state_dir=state_dir)
