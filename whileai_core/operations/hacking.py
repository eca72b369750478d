"""Operations that catch reward hacking and dead runs: cheat_probes, prove_reward, hack_scan,
watch_run, diagnose_run.

The reward ``cheat_probes`` runs is the user's own code: a ``file.py:function`` or a command
``python SCRIPT.py`` with no argument (``whileai_core.hacking.reward.reward_spec`` reads both,
the one grammar of every surface), never a file an installer put there. Over MCP every file it
names must lie inside the workspace root; its bytes are read through the door and run in an
isolated child process with a clean environment, its whole process tree killed after
``timeout_s``; no other program is ever run.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PROBE_MAX_TOKENS, REWARD_TIMEOUT_S,
                        SCAN_MIN_STRENGTH, SCAN_RUN_SHARE, SCAN_SHUFFLES, WATCH_CONFIRM,
                        WATCH_WINDOW)
from . import READS, RUNS_CODE, VERDICT, operation
from .describe import named, values_of
from .args import (MAX_NAME, RUN_OR_PATH, Arg, Level, Metric, OptionalRowField, OptionalRows,
                   Records, Rows, Seed, StateDir, Threshold)
from .surface import HERE, Context


def _probes_doc() -> str:
    from ..hacking.probes import PROBES  # lazy: the probes module loads numpy

    return "Which probes to run; null: all of " + ", ".join(PROBES) + "."


def _probes_schema() -> dict[str, Any]:
    from ..hacking.probes import PROBES  # lazy: the probes module loads numpy

    return {"anyOf": [{"type": "array", "items": {"type": "string", "enum": list(PROBES)},
                       "maxItems": len(PROBES)}, {"type": "null"}]}


RewardArg = Annotated[str | list[Annotated[str, Field(max_length=4096)]], Field(
    max_length=200, description=(
        "The reward the run will train on: 'file.py:function' (or 'package.module:function'), "
        "called like a TRL reward: function(prompts=[...], completions=[...], **task_fields) -> "
        "list of numbers; or a command (a list of arguments, or one string split like a shell, "
        "never run by one): only python and a script of your own inside the workspace, no "
        "argument, e.g. ['python', 'rewards/grade.py'], that reads JSONL on stdin (one {prompt, "
        "completion, ...task fields} per line) and prints one number per line. Either runs in "
        "an isolated child process with a clean environment, its process tree killed after "
        "timeout_s."),
    examples=["rewards/grade.py:score", ["python", "rewards/grade.py"]]), Arg(metavar="REWARD")]
ProbeTasks = Annotated[Records, Field(description=(
    "The training tasks: {task_id, prompt, ...fields the reward reads}; prompt is text or chat "
    "messages."))]
MaxTokens = Annotated[int, Field(ge=1, le=1_000_000, description=(
    "The run's completion token cap: the filler probe fills it (4 characters a token)."))]
GroupBy = Annotated[OptionalRowField, Field(description=(
    "A task field (e.g. 'category'): every finding per value."))]
TimeoutS = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False, description=(
    "Seconds the reward may take for the whole batch."))]
PassEnv = Annotated[list[Annotated[str, Field(max_length=128)]] | None, Field(
    max_length=32, description=(
        "Environment variables the reward needs (e.g. ['OPENAI_API_KEY'] for a reward that "
        "calls an API); no other token or key reaches it.")), Arg(metavar="NAME")]


@operation(
    toolset="hacking", effect=RUNS_CODE, title="Probe a reward with degenerate answers",
    description=(
        "Before training: score degenerate answers (empty, a refusal, a question back, the "
        "prompt echoed, filler to the token cap, the most common answer, the answer format "
        "alone, the task's words stuffed) with the user's own reward on every task, and compare "
        "each with the model's pass rate, paired by task with an interval. A probe that scores "
        "at or above the model is a hole, named with an example. Runs the reward (workspace "
        "code) in a child process with a timeout."),
    result="whileai_core.hacking.probes:CheatProbes", exit_code=VERDICT, doing="probing a reward")
def cheat_probes(
        tasks: ProbeTasks, *, reward: RewardArg,
        model_rows: Annotated[OptionalRows, Field(description=(
            "The model's graded rows on these tasks: each probe is compared with its pass rate, "
            "paired by task. Without them a passing probe is only a leak."))] = None,
        max_tokens: MaxTokens = PROBE_MAX_TOKENS,
        probes: Annotated[list[Annotated[str, Field(max_length=MAX_NAME)]] | None, Field(
            max_length=50), Arg(describe=_probes_doc, schema=_probes_schema)] = None,
        group_by: GroupBy = None,
        metric: Metric = "pass", threshold: Threshold = None,
        timeout_s: TimeoutS = REWARD_TIMEOUT_S, level: Level = CONFIDENCE_LEVEL,
        pass_env: PassEnv = None, ctx: Context = HERE):
    from ..hacking import cheat_probes as probe  # lazy: numpy loads on the call
    from ..hacking.reward import reward_spec  # lazy: loads with the call

    return probe(reward_spec(reward, ctx.root), tasks, model_rows=model_rows,
                 max_tokens=max_tokens, threshold=threshold, metric=metric, group_by=group_by,
                 probes=probes, root=None if ctx.root is None else ctx.root.path,
                 timeout_s=timeout_s, level=level, pass_env=pass_env)


def _prove_doc() -> str:
    from ..hacking.verifier import RewardProof  # lazy: the verdicts named are the core's Literal

    return ("cheat_probes, plus two holes a verifier often has: a passing reply that runs on to "
            "the token cap (truncation: TRL does not tell a reward a reply was cut) and the "
            "answer format around a wrong answer against the same answer without it (a format "
            "bonus), each with an example, per group and the fix. `verdict` "
            f"{named(values_of(RewardProof, 'verdict'))}: fix_first names every hole. Runs the "
            "reward (workspace code) in a child process with a timeout.")


@operation(toolset="hacking", effect=RUNS_CODE, title="Prove a program reward before the GPU",
           description=_prove_doc, result="whileai_core.hacking.verifier:RewardProof",
           exit_code=VERDICT,
           doing="proving a reward")
def prove_reward(
        tasks: ProbeTasks, *, reward: RewardArg,
        model_rows: Annotated[OptionalRows, Field(description=(
            "The model's graded rollouts on these tasks, with their reply text (`completion`): "
            "the probes and the format bonus are set against them, and the truncation check "
            "extends their passing replies."))] = None,
        max_tokens: MaxTokens = PROBE_MAX_TOKENS, group_by: GroupBy = None,
        threshold: Threshold = None, timeout_s: TimeoutS = REWARD_TIMEOUT_S,
        level: Level = CONFIDENCE_LEVEL, pass_env: PassEnv = None, ctx: Context = HERE):
    from ..hacking import prove_reward as prove  # lazy: numpy loads on the call
    from ..hacking.reward import reward_spec  # lazy: loads with the call

    return prove(reward_spec(reward, ctx.root), tasks, model_rows=model_rows,
                 max_tokens=max_tokens, threshold=threshold, group_by=group_by,
                 root=None if ctx.root is None else ctx.root.path, timeout_s=timeout_s,
                 level=level, pass_env=pass_env)


@operation(
    toolset="hacking", effect=READS, title="Does the reward pay for a reply feature?",
    description=(
        "Within each task, which features of the reply (length, truncation, format markers, "
        "repeated n-grams, fields you name) rise with the task-centred reward beyond a "
        "within-task shuffle floor. A feature that only tracks task difficulty does not fire. "
        "Verdict clean / weak_signal (clears the floor under the strength gate) / suspect / "
        "not_enough_data (too few tasks, or no feature could be tested: the note says which and "
        "why) with evidence (feature, strength, floor, p, n, an example). look=j: the j-th scan "
        f"of a run, spending {SCAN_RUN_SHARE:g} (1 - level) / (j (j + 1)) so repeated scans "
        f"hold the run-level false-alarm rate at {SCAN_RUN_SHARE:g} (1 - level)."),
    result="whileai_core.hacking.scan:HackScan",
    exit_code=VERDICT, doing="scanning rows for reward hacking")
def hack_scan(
        rows: Annotated[Rows, Field(description=(
            "Graded rows with several rollouts per task and the reply text in `completion` (or "
            "reply/response/output/text): e.g. one training batch."))], *,
        features: Annotated[list[Annotated[str, Field(max_length=MAX_NAME)]] | None, Field(
            max_length=20, description=(
                "Extra row fields to test (numbers or booleans, e.g. 'called'), besides the "
                "built-ins length, truncated, markdown, xml_tags, boxed, repeated_ngrams."))
        ] = None,
        n_shuffles: Annotated[int, Field(ge=100, le=20_000, description=(
            "Within-task shuffles behind the floor."))] = SCAN_SHUFFLES,
        min_strength: Annotated[float, Field(ge=0, lt=1, description=(
            "Smallest within-task correlation called suspect."))] = SCAN_MIN_STRENGTH,
        level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
        threshold: Threshold = None,
        look: Annotated[int | None, Field(ge=1, le=100_000, description=(
            "This scan's number among a run's repeated scans (1, 2, ...); null: one scan at "
            "1 - level.")), Arg(metavar="J")] = None):
    from ..hacking import hack_scan as scan  # lazy: numpy loads on the call

    return scan(rows, features=features, n_shuffles=n_shuffles, min_strength=min_strength,
                level=level, seed=seed, threshold=threshold, look=look)


def _watch_picture(args: dict[str, Any], result: Any, *, out: Any = None,
                   overwrite: bool = False):
    from ..pictures import watch_picture  # lazy: matplotlib, only when a picture is asked for

    return watch_picture(result, out=out, overwrite=overwrite)


@operation(
    cli="watch", toolset="core", effect=READS, title="Watch a training run",
    description=(
        "During training: per step the training reward, the held-out pass rate paired by task "
        "against step 0 and each earlier look, length, truncation, and hack scans. A "
        "sequential plan stops an honest run at some look with probability at most 1 - level "
        "and states the sustained drop it catches in 80% of runs; the scans' alarm holds "
        f"{SCAN_RUN_SHARE:g} of it. Says stop when the held-out score falls below step 0 or "
        "an earlier look, or stays flat while the training reward climbs past its noise; else "
        "continue or not_enough_data. plot: the curve."),
    result="whileai_core.hacking.watch:Watch",
    exit_code=VERDICT, doing="watching a run", picture=_watch_picture,
    serves=("watch_picture",))
def watch_run(
        source: Annotated[str, Field(min_length=1, max_length=1000, description=(
            "A run id from launch_run, or a path: a TRL output folder (its watch.jsonl, else "
            "trainer_state.json), a watch.jsonl, or rows carrying `step` (held-out ones "
            "\"split\": \"eval\")."), examples=["run-0123456789ab", "runs/grpo-1"]),
            Arg(RUN_OR_PATH, positional=True)], *,
        metric: Metric = "pass", threshold: Threshold = None,
        confirm: Annotated[int, Field(ge=1, le=20, description=(
            "Held-out evaluations in a row at which a stop condition must hold (the plan's "
            "boundaries are solved for it)."))
        ] = WATCH_CONFIRM,
        window: Annotated[int, Field(ge=2, le=1000, description=(
            "Steps averaged at each end of the training reward to measure its climb."))
        ] = WATCH_WINDOW,
        looks: Annotated[int | None, Field(ge=1, le=100_000, description=(
            "Held-out evaluations after step 0 the run will make; null: from the run's config, "
            "else an open schedule.")), Arg(metavar="N")] = None,
        level: Level = CONFIDENCE_LEVEL, state_dir: StateDir = None):
    from ..hacking import watch_run as watch  # lazy: numpy loads on the call

    return watch(source, state_dir=state_dir, metric=metric, threshold=threshold, level=level,
                 confirm=confirm, window=window, looks=looks)


@operation(
    cli="doctor", toolset="hacking", effect=READS, title="Is the run learning anything?",
    description=(
        "Reads a run's own files (prime-rl rollouts and metrics, TRL's log and the recipes' "
        "watch.jsonl) and names, per step, what makes a run learn nothing or the wrong thing: "
        "zero_advantage (groups with one reward), truncation_lock_in, reward_pays_feature, "
        "staleness (past max_off_policy_steps), verifier_noise (identical replies scored "
        "differently), diversity_collapse, entropy_runaway, kl_runaway; each found / clear / "
        "not_checked with evidence, an interval where it is a rate, the threshold's source and "
        "the action. Verdict healthy / sick / not_enough_data."),
    result="whileai_core.hacking.doctor:Diagnosis", exit_code=VERDICT, doing="diagnosing a run")
def diagnose_run(
        source: Annotated[str, Field(min_length=1, max_length=1000, description=(
            "A run id from launch_run ('run-' and 12 hex digits), or a path: a prime-rl run "
            "folder (rollouts/step_<S>/train/..., metrics.jsonl, configs/orchestrator.json), a "
            "TRL output folder (the recipes' watch.jsonl, trainer_state.json), a "
            "watch.jsonl, or a rows file whose rows carry `step` (what watch_run reads)."),
            examples=["runs/prime-1", "run-0123456789ab"]),
            Arg(RUN_OR_PATH, positional=True)], *,
        max_off_policy_steps: Annotated[int | None, Field(ge=0, le=100_000, description=(
            "The staleness bound; null: the run's configs/orchestrator.json, else prime-rl's "
            "default 8."))] = None,
        level: Level = CONFIDENCE_LEVEL, state_dir: StateDir = None):
    from ..hacking import diagnose_run as diagnose  # lazy: numpy loads on the call

    return diagnose(source, state_dir=state_dir, level=level,
                    max_off_policy_steps=max_off_policy_steps)
