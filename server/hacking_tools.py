"""Tools that catch reward hacking: cheat_probes, hack_scan, watch_run (catch-reward-hacking).

The reward ``cheat_probes`` runs is user code from the workspace: a ``file.py:function`` (or
``package.module:function``) or a command ``["python", "script.py", *args]`` whose file
resolves inside the root. Its bytes are read through the door and run in an isolated child
process (see ``whileai_core.hacking.reward``); no other program is ever run.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from whileai_core.defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PROBE_MAX_TOKENS,
                                   REWARD_TIMEOUT_S, SCAN_MIN_STRENGTH, SCAN_RUN_SHARE,
                                   SCAN_SHUFFLES, WATCH_CONFIRM, WATCH_WINDOW)
from whileai_core.errors import ArgumentError
from whileai_core.hacking.probes import PROBES, CheatProbes
from whileai_core.hacking.reward import RewardFile, RewardScript, command_parts
from whileai_core.hacking.scan import HackScan
from whileai_core.hacking.verifier import RewardProof
from whileai_core.hacking.doctor import Diagnosis
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


def confined_reward(reward: str | list[str], env: Env) -> RewardFile | RewardScript:
    """The reward with its file located inside the workspace root (the core reads its bytes
    through the door and runs exactly those; the command's rules are the core's)."""
    ws = env.workspace
    if isinstance(reward, str):
        module, sep, function = reward.rpartition(":")
        if not sep or not module:
            raise ArgumentError(f"`reward` {reward[:200]!r} is not 'file.py:function'. Fix: e.g. "
                                "'rewards/grade.py:score'")
        if not module.endswith(".py") and "/" not in module:
            stem = PurePath(*module.split("."))
            candidates = [f"{stem}.py", f"{stem}/__init__.py"]
            found = next((c for c in candidates
                          if ws.resolve(c, argument="reward").kind() == "file"), candidates[0])
            module = found
        return RewardFile(ws.resolve(module, argument="reward"), function)
    script, args = command_parts(reward)
    return RewardScript(ws.resolve(script, argument="reward"), args)


# --- cheat_probes ------------------------------------------------------------------------------

class CheatProbesInput(ToolInput):
    reward: Annotated[str | list[str], Field(
        description="The reward the run will train on. Either 'file.py:function' (or "
                    "'package.module:function') inside the workspace, called like a TRL reward: "
                    "function(prompts=[...], completions=[...], **task_fields) -> list of numbers; "
                    "or a command as a list of arguments (no shell), e.g. ['python', "
                    "'rewards/grade.py'] (only python and a script inside the workspace, then "
                    "string arguments for the script), that reads JSONL on stdin (one {prompt, "
                    "completion, ...task fields} per line) and prints one number per line. "
                    "Either runs in an isolated child process in the workspace with a clean "
                    "environment, killed after timeout_s.",
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
    pass_env: Annotated[list[Annotated[str, Field(max_length=128)]] | None, Field(
        description="Environment variables the reward needs (e.g. ['OPENAI_API_KEY'] for a "
                    "reward that calls an API); no other token or key reaches it.",
        max_length=32)] = None


def cheat_probes_tool(args: CheatProbesInput, env: Env) -> CheatProbes:
    from whileai_core.hacking import cheat_probes

    model = None if args.model_rows is None else read_rows(
        args.model_rows, env.workspace, argument="model_rows", threshold=args.threshold)
    return cheat_probes(confined_reward(args.reward, env),
                        source(args.tasks, env.workspace, argument="tasks"), model_rows=model,
                        max_tokens=args.max_tokens, threshold=args.threshold, metric=args.metric,
                        group_by=args.group_by, probes=args.probes, root=env.workspace.root,
                        timeout_s=args.timeout_s, level=args.level, pass_env=args.pass_env)


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
    pass_env: Annotated[list[Annotated[str, Field(max_length=128)]] | None, Field(
        description="Environment variables the reward needs (e.g. ['OPENAI_API_KEY']); no "
                    "other token or key reaches it.", max_length=32)] = None


def prove_reward_tool(args: ProveRewardInput, env: Env) -> RewardProof:
    from whileai_core.hacking import prove_reward

    model = None if args.model_rows is None else read_rows(
        args.model_rows, env.workspace, argument="model_rows", threshold=args.threshold)
    return prove_reward(confined_reward(args.reward, env),
                        source(args.tasks, env.workspace, argument="tasks"), model_rows=model,
                        max_tokens=args.max_tokens, threshold=args.threshold,
                        group_by=args.group_by, root=env.workspace.root,
                        timeout_s=args.timeout_s, level=args.level, pass_env=args.pass_env)


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
    look: Annotated[int | None, Field(ge=1, le=100_000, description=(
        f"This scan's number among a run's repeated scans (1, 2, ...): it spends "
        f"{SCAN_RUN_SHARE:g} (1 - level) / (look (look + 1)), the scans' share of the run's "
        "error. Null: one scan at 1 - level."))] = None


def hack_scan_tool(args: HackScanInput, env: Env) -> HackScan:
    from whileai_core.hacking import hack_scan

    rows = read_rows(args.rows, env.workspace, argument="rows", threshold=args.threshold)
    return hack_scan(rows, features=args.features, n_shuffles=args.n_shuffles,
                     min_strength=args.min_strength, level=args.level, seed=args.seed,
                     look=args.look)


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


# --- diagnose_run ------------------------------------------------------------------------------

class DiagnoseRunInput(ToolInput):
    source: Annotated[str, Field(
        description="A run id from launch_run ('run-' and 12 hex digits), or a path under the "
                    "workspace root: a prime-rl run folder (rollouts/step_<S>/train/..., "
                    "metrics.jsonl, configs/orchestrator.json), a TRL output folder (the "
                    "recipes' watch.jsonl, trainer_state.json) or a watch.jsonl.",
        min_length=1, max_length=1000, examples=["runs/prime-1", "run-0123456789ab"])]
    max_off_policy_steps: Annotated[int | None, Field(ge=0, le=100_000, description=(
        "The staleness bound; null: the run's configs/orchestrator.json, else prime-rl's "
        "default 8."))] = None
    level: LevelArg = CONFIDENCE_LEVEL


def diagnose_run_tool(args: DiagnoseRunInput, env: Env) -> Diagnosis:
    import re

    from whileai_core.hacking import diagnose_run

    target = args.source.strip()
    if not re.match(r"^run-[0-9a-f]{12}$", target):  # a path: opened under the root, the door
        target = env.workspace.resolve(target, argument="source")
    return diagnose_run(target, level=args.level, max_off_policy_steps=args.max_off_policy_steps)


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
            "fire. Verdict clean / weak_signal (clears the floor under the strength gate) / "
            "suspect / not_enough_data (too few tasks, or no feature could be tested: the note "
            "says which and why) with evidence (feature, strength, floor, p, n, an example). "
            f"look=j: the j-th scan of a run, spending {SCAN_RUN_SHARE:g} (1 - level) / (j (j + "
            f"1)) so repeated scans hold the run-level false-alarm rate at {SCAN_RUN_SHARE:g} "
            "(1 - level)."),
        input=HackScanInput, output=HackScan, run=hack_scan_tool, annotations=READ_ONLY,
        doing="scanning rows for reward hacking",
        core=("hack_scan",)),
    ToolSpec(
        name="watch_run", title="Watch a training run",
        description=(
            "During training: per step the training reward, the held-out pass rate paired "
            "against step 0 by task, length and truncation share, and hack scans of its batches. "
            "Each held-out evaluation is a look tested at a level that spends (1 - level) / "
            "(t (t + 1)), so an honest run is stopped at some look with probability at most "
            "1 - level however many looks it gets; the scans' feature alarm likewise holds "
            f"{SCAN_RUN_SHARE:g} (1 - level). Says "
            "stop only when the held-out interval moves down, or stays flat while the training "
            "reward climbs beyond its own noise; else continue or not_enough_data, with the "
            "numbers. plot=true adds the curve as an image."),
        input=WatchRunInput, output=Watch, run=watch_run_tool, annotations=READ_ONLY,
        doing="watching a run", image=_watch_png,
        core=("watch_run", "watch_picture")),
    ToolSpec(
        name="diagnose_run", title="Is the run learning anything?",
        description=(
            "Reads a run's own files (prime-rl rollouts and metrics, TRL's log and the recipes' "
            "watch.jsonl) and names, per step, what makes a run learn nothing or the wrong "
            "thing: zero_advantage (groups with one reward), truncation_lock_in, "
            "reward_pays_feature, staleness (past max_off_policy_steps), verifier_noise "
            "(identical replies scored differently), diversity_collapse, entropy_runaway, "
            "kl_runaway; each found / clear / not_checked with evidence, an interval where it "
            "is a rate, the threshold's source and the action. Verdict healthy / sick / "
            "not_enough_data."),
        input=DiagnoseRunInput, output=Diagnosis, run=diagnose_run_tool, annotations=READ_ONLY,
        doing="diagnosing a run", core=("diagnose_run",)),
]
