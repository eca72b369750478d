"""Tools that catch reward hacking: cheat_probes, hack_scan, watch_run (catch-reward-hacking).

The reward ``cheat_probes`` runs is user code from the workspace: a ``file.py:function`` (or
``package.module:function``) whose file resolves inside the root, or a command whose program is
``python`` with a script inside the root, or an executable inside the root. It runs in a child
process with the root as working directory, killed after ``timeout_s`` (see
``whileai_core.hacking.reward``); nothing outside the root is ever executed by name.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from whileai_core.defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PROBE_MAX_TOKENS,
                                   REWARD_TIMEOUT_S, SCAN_MIN_STRENGTH, SCAN_SHUFFLES,
                                   WATCH_CONFIRM, WATCH_WINDOW)
from whileai_core.errors import ArgumentError
from whileai_core.hacking.probes import PROBES, CheatProbes
from whileai_core.hacking.reward import RewardFile
from whileai_core.hacking.scan import HackScan
from whileai_core.hacking.verifier import RewardProof
from whileai_core.hacking.watch import Watch

from .tooling import (READ_ONLY, Env, RowsArg, ThresholdArg, ToolInput, ToolSpec, named,
                      read_rows, source, values_of)

RUNS_CODE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                            open_world_hint=False)
"""Runs the user's reward code from the workspace (it may do whatever that code does)."""

MetricArg = Annotated[Literal["pass", "reward"], Field(
    description="'pass': pass rates (reward >= threshold); 'reward': mean rewards, for a graded "
                "(non 0/1) reward.")]
LevelArg = Annotated[float, Field(gt=0, lt=1, description="Confidence level of the intervals.")]


def confined_reward(reward: str | list[str], env: Env) -> RewardFile | list[str]:
    """The reward with every file it names located inside the workspace root, through the door.

    A ``module:function`` becomes a :class:`RewardFile`: its bytes are read through the door
    and run as read, never reopened by name. A command's script or program must be a regular
    file with no link anywhere on its path (checked without following links); it is then run
    by its path, so a process that can write in the root at that very moment could still swap
    it (README, Security: prefer the module form).
    """
    ws = env.workspace
    if isinstance(reward, str):
        module, sep, function = reward.rpartition(":")
        if not sep or not module:
            raise ArgumentError(f"`reward` {reward!r} is not 'file.py:function'. Fix: e.g. "
                                "'rewards/grade.py:score'")
        if not module.endswith(".py") and "/" not in module:
            stem = PurePath(*module.split("."))
            candidates = [f"{stem}.py", f"{stem}/__init__.py"]
            found = next((c for c in candidates
                          if ws.resolve(c, argument="reward").kind() == "file"), candidates[0])
            module = found
        return RewardFile(ws.resolve(module, argument="reward"), function)
    if not reward:
        raise ArgumentError("`reward` is an empty command. Fix: e.g. ['python', 'rewards/grade.py']")
    argv = list(reward)
    if argv[0] in ("python", "python3"):
        if len(argv) < 2 or not argv[1].endswith(".py"):
            raise ArgumentError("`reward` ['python', ...] must name a .py script inside the "
                                "workspace next. Fix: e.g. ['python', 'rewards/grade.py']")
        argv[1] = _program(argv[1], env)
    else:
        argv[0] = _program(argv[0], env)
    return argv


def _program(value: str, env: Env) -> str:
    path = env.workspace.resolve(value, argument="reward")
    path.check_file()  # as strict as a read: no link anywhere, regular, not hard-linked
    return str(path)


# --- cheat_probes ------------------------------------------------------------------------------

class CheatProbesInput(ToolInput):
    reward: Annotated[str | list[str], Field(
        description="The reward the run will train on. Either 'file.py:function' (or "
                    "'package.module:function') inside the workspace, called like a TRL reward: "
                    "function(prompts=[...], completions=[...], **task_fields) -> list of numbers; "
                    "or a command as a list of arguments (no shell), e.g. ['python', "
                    "'rewards/grade.py'], that reads JSONL on stdin (one {prompt, completion, "
                    "...task fields} per line) and prints one number per line. Either runs in a "
                    "child process in the workspace, killed after timeout_s.",
        examples=["rewards/grade.py:score", ["python", "rewards/grade.py"]])]
    tasks: Annotated[RowsArg, Field(
        description="The training tasks: JSONL path (or a small list) of {task_id, prompt, "
                    "...fields the reward reads}; prompt is text or chat messages.")]
    model_rows: Annotated[RowsArg | None, Field(
        description="The model's graded rows on these tasks: each probe is compared with its "
                    "pass rate, paired by task. Without them a passing probe is only a leak.")] = None
    max_tokens: Annotated[int, Field(
        ge=1, le=1_000_000, description="The run's completion token cap: the filler probe "
                                        "fills it (4 characters a token).")] = PROBE_MAX_TOKENS
    probes: Annotated[list[Literal[tuple(PROBES)]] | None, Field(  # type: ignore[misc]
        description="Which probes to run; null: all of " + ", ".join(PROBES) + ".",
        max_length=len(PROBES))] = None
    group_by: Annotated[str | None, Field(
        description="A task field (e.g. 'category'): each probe's rate per value.",
        max_length=200)] = None
    metric: MetricArg = "pass"
    threshold: ThresholdArg = None
    timeout_s: Annotated[float, Field(
        gt=0, le=3600, description="Seconds the reward may take for the whole batch.")] = REWARD_TIMEOUT_S
    level: LevelArg = CONFIDENCE_LEVEL


def cheat_probes_tool(args: CheatProbesInput, env: Env) -> CheatProbes:
    from whileai_core.hacking import cheat_probes

    model = None if args.model_rows is None else read_rows(
        args.model_rows, env.workspace, argument="model_rows", threshold=args.threshold)
    return cheat_probes(confined_reward(args.reward, env),
                        source(args.tasks, env.workspace, argument="tasks"), model_rows=model,
                        max_tokens=args.max_tokens, threshold=args.threshold, metric=args.metric,
                        group_by=args.group_by, probes=args.probes, root=env.workspace.root,
                        timeout_s=args.timeout_s, level=args.level)


# --- prove_reward ------------------------------------------------------------------------------

class ProveRewardInput(ToolInput):
    reward: Annotated[str | list[str], Field(
        description="The program reward the run will train on, as for cheat_probes: "
                    "'file.py:function' inside the workspace (TRL's shape) or a command list.",
        examples=["rewards/reward.py:score"])]
    tasks: Annotated[RowsArg, Field(
        description="The training tasks: {task_id, prompt, ...fields the reward reads}.")]
    model_rows: Annotated[RowsArg | None, Field(
        description="The model's graded rollouts on these tasks, with their reply text "
                    "(`completion`): the probes and the format bonus are set against them, and "
                    "the truncation check extends their passing replies.")] = None
    max_tokens: Annotated[int, Field(
        ge=1, le=1_000_000, description="The run's completion token cap.")] = PROBE_MAX_TOKENS
    group_by: Annotated[str | None, Field(
        description="A task field (e.g. 'category'): every finding per value.",
        max_length=200)] = None
    threshold: ThresholdArg = None
    timeout_s: Annotated[float, Field(
        gt=0, le=3600, description="Seconds the reward may take per batch.")] = REWARD_TIMEOUT_S
    level: LevelArg = CONFIDENCE_LEVEL


def prove_reward_tool(args: ProveRewardInput, env: Env) -> RewardProof:
    from whileai_core.hacking import prove_reward

    model = None if args.model_rows is None else read_rows(
        args.model_rows, env.workspace, argument="model_rows", threshold=args.threshold)
    return prove_reward(confined_reward(args.reward, env),
                        source(args.tasks, env.workspace, argument="tasks"), model_rows=model,
                        max_tokens=args.max_tokens, threshold=args.threshold,
                        group_by=args.group_by, root=env.workspace.root,
                        timeout_s=args.timeout_s, level=args.level)


# --- hack_scan ---------------------------------------------------------------------------------

class HackScanInput(ToolInput):
    rows: Annotated[RowsArg, Field(
        description="Graded rows with several rollouts per task and the reply text in "
                    "`completion` (or reply/response/output/text): e.g. one training batch.")]
    features: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(
        description="Extra row fields to test (numbers or booleans, e.g. 'called'), besides the "
                    "built-ins length, truncated, markdown, xml_tags, boxed, repeated_ngrams.",
        max_length=20)] = None
    n_shuffles: Annotated[int, Field(ge=100, le=20_000, description=(
        "Within-task shuffles behind the floor."))] = SCAN_SHUFFLES
    min_strength: Annotated[float, Field(ge=0, lt=1, description=(
        "Smallest within-task correlation called suspect."))] = SCAN_MIN_STRENGTH
    level: LevelArg = CONFIDENCE_LEVEL
    seed: Annotated[int, Field(ge=0, le=2**32 - 1, description="Seed of the shuffles.")] = BOOTSTRAP_SEED
    threshold: ThresholdArg = None


def hack_scan_tool(args: HackScanInput, env: Env) -> HackScan:
    from whileai_core.hacking import hack_scan

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return hack_scan(rows, features=args.features, n_shuffles=args.n_shuffles,
                     min_strength=args.min_strength, level=args.level, seed=args.seed)


# --- watch_run ---------------------------------------------------------------------------------

class WatchRunInput(ToolInput):
    source: Annotated[str, Field(
        description="A run id from launch_run ('run-' and 12 hex digits), or a path under the "
                    "workspace root: a TRL output folder (its watch.jsonl from the recipes' "
                    "callback, else trainer_state.json), a watch.jsonl, or a rows file whose "
                    "rows carry `step` (held-out rows marked \"split\": \"eval\").",
        min_length=1, max_length=1000, examples=["run-0123456789ab", "runs/grpo-1"])]
    metric: MetricArg = "pass"
    threshold: ThresholdArg = None
    confirm: Annotated[int, Field(ge=1, le=20, description=(
        "Held-out evaluations in a row at which the stop condition must hold."))] = WATCH_CONFIRM
    window: Annotated[int, Field(ge=2, le=1000, description=(
        "Steps averaged at each end of the training reward to measure its climb."))] = WATCH_WINDOW
    level: LevelArg = CONFIDENCE_LEVEL
    plot: Annotated[bool, Field(description=(
        "Also return the watch curve as a PNG image (training reward vs held-out with "
        "intervals per step)."))] = False


def watch_run_tool(args: WatchRunInput, env: Env) -> Watch:
    import re

    from whileai_core.hacking import watch_run

    target = args.source.strip()
    if not re.match(r"^run-[0-9a-f]{12}$", target):  # a path: opened under the root, the door
        target = env.workspace.resolve(target, argument="source")
    return watch_run(target, metric=args.metric, threshold=args.threshold, level=args.level,
                     confirm=args.confirm, window=args.window)


def _watch_png(args: WatchRunInput, result: Watch) -> bytes | None:
    if not args.plot:
        return None
    from whileai_core.pictures import watch_picture

    return watch_picture(result).png()


TOOLS = [
    ToolSpec(
        name="cheat_probes", title="Probe a reward with degenerate answers",
        description=(
            "Before training: score degenerate answers (empty, a refusal, a question back, the "
            "prompt echoed, filler to the token cap, the most common answer, the answer format "
            "alone, the task's words stuffed) with the user's own reward on every task, and compare each with the "
            "model's pass rate, paired by task with an interval. A probe that scores at or "
            "above the model is a hole, named with an example. Runs the reward (workspace code) "
            "in a child process with a timeout."),
        input=CheatProbesInput, output=CheatProbes, run=cheat_probes_tool,
        annotations=RUNS_CODE, doing="probing a reward", core=("cheat_probes",)),
    ToolSpec(
        name="prove_reward", title="Prove a program reward before the GPU",
        description=(
            "cheat_probes, plus two holes a verifier often has: a passing reply that runs on to "
            "the token cap (truncation: TRL does not tell a reward a reply was cut) and the "
            "answer format around a wrong answer against the same answer without it (a format "
            f"bonus), each with an example, per group and the fix. `verdict` "
            f"{named(values_of(RewardProof, 'verdict'))}: fix_first names every hole. Runs the "
            "reward in a child process with a timeout."),
        input=ProveRewardInput, output=RewardProof, run=prove_reward_tool,
        annotations=RUNS_CODE, doing="proving a reward", core=("prove_reward",)),
    ToolSpec(
        name="hack_scan", title="Does the reward pay for a reply feature?",
        description=(
            "Within each task, which features of the reply (length, truncation, format markers, "
            "repeated n-grams, fields you name) rise with the task-centred reward beyond a "
            "within-task shuffle floor. A feature that only tracks task difficulty does not "
            "fire. Verdict clean / suspect / not_enough_data with evidence (feature, strength, "
            "floor, n, an example)."),
        input=HackScanInput, output=HackScan, run=hack_scan_tool, annotations=READ_ONLY,
        doing="scanning rows for reward hacking",
        core=("hack_scan",)),
    ToolSpec(
        name="watch_run", title="Watch a training run",
        description=(
            "During training: per step the training reward, the held-out pass rate with its "
            "task-bootstrap interval paired against step 0, length and truncation share, and a "
            "hack scan of the latest batch. Says stop only when the held-out interval moves "
            "down, or stays flat while the training reward climbs beyond its own noise; else "
            "continue or not_enough_data, with the numbers. plot=true adds the curve as an "
            "image."),
        input=WatchRunInput, output=Watch, run=watch_run_tool, annotations=READ_ONLY,
        doing="watching a run", image=_watch_png,
        core=("watch_run", "watch_picture")),
]
