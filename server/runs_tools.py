"""Tools that launch runs and come back to them: launch_run, run_status, list_runs, collect_run,
cancel_run.

Each makes one call into ``whileai_core.runs``. A config path resolves inside the workspace root;
the registry is the server's state directory (``$WHILEAI_STATE_DIR``, else ``~/.whileai``), never
an argument, so a caller cannot point the server at another folder. ``launch_run`` spends money
on Modal: without ``confirm=true`` it only returns the plan.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from whileai_core.runs import (Cancelled, Collected, Launch, RunList, RunRecord, cancel_run,
                               collect_run, launch_run, list_runs, run_status)
from whileai_core.defaults import SFT_MODEL

from .tooling import Env, ToolInput, ToolSpec, named, values_of

SPENDS_MONEY = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                               open_world_hint=True)
"""Starts a paid GPU run on Modal (open world) or a local process; the same target and name
launch once, so repeating the call returns the same run (idempotent)."""

ASKS_BACKEND = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                               open_world_hint=True)
"""Reads the registry and asks the backend (Modal, or the local process) how a run is doing;
changes nothing but the registry's record of it."""

STOPS_RUN = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                            open_world_hint=True)
"""Stops a run on Modal or locally; cancelling twice leaves it cancelled."""

RunIdArg = Annotated[str, Field(
    description="The run's id ('run-' and 12 hex digits), from launch_run or list_runs.",
    examples=["run-0123456789ab"])]


# --- launch_run ----------------------------------------------------------------------------

class LaunchRunInput(ToolInput):
    config_or_recipe: Annotated[str, Field(
        description="A recipe name ('grpo', 'dpo', 'sft', 'prime-rl') or the path of a prime-rl "
                    "TOML (relative to the workspace root) that prime_rl_config wrote.",
        examples=["grpo", "configs/rl.toml"])]
    backend: Annotated[Literal["modal", "local"], Field(
        description="'modal': the real GPU run on Modal (spends money). 'local': the recipe's "
                    "CPU smoke on this machine (no GPU, no key; a prime-rl config cannot run "
                    "locally).")] = "modal"
    gpu: Annotated[str | None, Field(
        description="Modal GPU as TYPE or TYPE:COUNT, e.g. 'H100:2'. null: the recipe's "
                    "default (a config: its [deployment] GPU count). Ignored for 'local'.")] = None
    name: Annotated[str | None, Field(
        description="The run's name. The same target under the same name is one run: launching "
                    "it again returns that run. null: the recipe or config name.")] = None
    data: Annotated[str | None, Field(
        description="For 'sft': the data folder (relative to the workspace root) holding "
                    "train.jsonl (export_sft), holdout.jsonl (the held-out tasks' traces), "
                    "grader.py (grade(ask, reply) -> float) and, optionally, settings.json: "
                    f"{{\"model\": \"<the model to train>\"}} (without it: {SFT_MODEL}) and "
                    "any other SFT setting. For 'dpo': the folder write_dpo_data wrote "
                    "(pairs.jsonl, the frozen held-out asks, grader.py). The plan reads the "
                    "folder and names the model. null: the recipe's own demo data. Other "
                    "recipes take none.",
        examples=["sft"])] = None
    experiment: Annotated[str | None, Field(
        max_length=64, description="Launch this run as an arm of an experiment registered "
                                   "before it (register_experiment); collect_run then reads it "
                                   "by the registered rule.")] = None
    arm: Annotated[str | None, Field(
        max_length=64, description="Which registered arm this run is (optional when the "
                                   "experiment has one arm).")] = None
    confirm: Annotated[bool, Field(
        description="false (default): return the plan (where, GPUs, estimated GPU hours, the "
                    "exact command) and launch nothing. true: launch. Set true only after the "
                    "user approved the plan: a Modal run costs money.")] = False


def launch_run_tool(args: LaunchRunInput, env: Env) -> Launch:
    # a value with '/' or ending in '.toml' is a config under the root, read through the door;
    # anything else is a recipe name (the server's own directory is never looked at); `data` is
    # a folder under the root, its files read through the door too
    return launch_run(args.config_or_recipe, backend=args.backend, gpu=args.gpu, name=args.name,
                      confirm=args.confirm, data=args.data, experiment=args.experiment,
                      arm=args.arm, root=env.workspace.door)


# --- run_status, list_runs, collect_run, cancel_run -----------------------------------------

class RunIdInput(ToolInput):
    id: RunIdArg


class ListRunsInput(ToolInput):
    pass


class CollectRunInput(ToolInput):
    id: RunIdArg
    metric: Annotated[Literal["pass", "reward"] | None, Field(
        description="null: the registered metric (else pass). Another metric than the "
                    "registered one is read and flagged as a deviation.")] = None
    holdout: Annotated[str | None, Field(
        description="The frozen held-out file (under the root) or content name the run was "
                    "scored on, when its results do not name it; another than the registered "
                    "one is flagged.")] = None
    rule: Annotated[dict[str, Any] | None, Field(
        description="null: the registered rule. Another rule (same grammar as "
                    "register_experiment's) is applied and flagged; for a run with no "
                    "experiment it is flagged not_registered.")] = None


def run_status_tool(args: RunIdInput, env: Env) -> RunRecord:
    return run_status(args.id)


def list_runs_tool(args: ListRunsInput, env: Env) -> RunList:
    return list_runs()


def collect_run_tool(args: CollectRunInput, env: Env) -> Collected:
    return collect_run(args.id, metric=args.metric, holdout=args.holdout, rule=args.rule,
                       root=env.workspace.door)


def cancel_run_tool(args: RunIdInput, env: Env) -> Cancelled:
    return cancel_run(args.id)


TOOLS = [
    ToolSpec(
        name="launch_run", title="Launch a training run",
        description=(
            "Plan, then launch, a recipe or a prime-rl config on Modal GPUs (or a recipe's CPU "
            "smoke locally). Without confirm=true it returns the plan only: where it runs, on "
            "which GPUs, the estimated GPU hours and the exact command. With confirm=true it "
            "starts the run (this spends money on Modal) and records it; the same target and "
            "name launched again return the existing run, never a second launch."),
        input=LaunchRunInput, output=Launch, run=launch_run_tool,
        annotations=SPENDS_MONEY, doing="launching a run", core=("launch_run",)),
    ToolSpec(
        name="run_status", title="Status of a run",
        description=(
            f"A run's `status` ({named(values_of(RunRecord, 'status'))}), brought up to date "
            f"with its `backend` ({named(values_of(RunRecord, 'backend'))}) first (a run left "
            "launching by a crash is reconciled from what Modal or the local process shows), "
            "with its error if it failed."),
        input=RunIdInput, output=RunRecord, run=run_status_tool,
        annotations=ASKS_BACKEND, doing="reading a run's status", core=("run_status",)),
    ToolSpec(
        name="list_runs", title="List runs",
        description=(
            "Every run in the registry, oldest first, with status, backend, GPU and target; "
            "active runs are brought up to date with their backend."),
        input=ListRunsInput, output=RunList, run=list_runs_tool,
        annotations=ASKS_BACKEND, doing="listing runs", core=("list_runs",)),
    ToolSpec(
        name="collect_run", title="Collect a run's results",
        description=(
            "A finished run's results (metrics) and, when it scored held-out tasks before and "
            "after training, the paired comparison: pass@1 before and after with 95% intervals, "
            "the delta with its interval, n paired tasks, and the verdict, and by category when "
            "the rows carry one. For an arm of a registered experiment: the decision by its "
            "registered rule, metric and noise floor; another reading is flagged. Not finished "
            "yet: says so (poll run_status)."),
        input=CollectRunInput, output=Collected, run=collect_run_tool,
        annotations=ASKS_BACKEND, doing="collecting a run's results", core=("collect_run",)),
    ToolSpec(
        name="cancel_run", title="Cancel a run",
        description=(
            "Stop a planned, launching or running run (Modal: cancels the call and its "
            "containers; local: stops the process). A finished run is left as it is."),
        input=RunIdInput, output=Cancelled, run=cancel_run_tool,
        annotations=STOPS_RUN, doing="cancelling a run", core=("cancel_run",)),
]
