"""CLI: cheat-probes, prove-reward, hack-scan, watch (the catch-reward-hacking skill from a shell), and the
``--plot FILE`` flag that route, compare and audit-judge share."""

from __future__ import annotations

import argparse
import shlex
import sys

from ..defaults import (PROBE_MAX_TOKENS, REWARD_TIMEOUT_S, SCAN_MIN_STRENGTH, SCAN_RUN_SHARE,
                        SCAN_SHUFFLES, WATCH_CONFIRM, WATCH_WINDOW)
from ..errors import ArgumentError


def add_plot_flags(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--plot", metavar="FILE", default=None,
                   help=f"also draw {what} as a PNG to FILE (needs matplotlib: pip install "
                        "'whileai-skills[plot]')")
    p.add_argument("--force", action="store_true", help="replace the --plot file if it exists")


def plotted(args, result, draw):
    """``result``, after ``draw(out=..., overwrite=...)`` wrote the picture when --plot is set."""
    if getattr(args, "plot", None):
        picture = draw(out=args.plot, overwrite=args.force)
        print(f"picture: {picture.path} ({picture.title})", file=sys.stderr)
    return result


def _reward(args):
    if (args.reward is None) == (args.reward_command is None):
        raise ArgumentError("give exactly one of --reward FILE.py:FUNCTION and --reward-command "
                            "'COMMAND ARGS'. Fix: e.g. --reward rewards/grade.py:score")
    if args.reward is not None:
        return args.reward
    argv = shlex.split(args.reward_command)
    if not argv:
        raise ArgumentError("--reward-command is empty. Fix: e.g. --reward-command "
                            "'python rewards/grade.py'")
    return argv


def _probes(args):
    from ..hacking import cheat_probes  # lazy: loads when the command runs, not when the parser is built
    return cheat_probes(_reward(args), args.tasks, model_rows=args.model_rows,
                        max_tokens=args.max_tokens, threshold=args.threshold,
                        metric=args.metric, group_by=args.group_by, probes=args.probes,
                        timeout_s=args.timeout, pass_env=args.pass_env)


def _prove(args):
    from ..hacking import prove_reward  # lazy: loads when the command runs, not when the parser is built
    return prove_reward(_reward(args), args.tasks, model_rows=args.model_rows,
                        max_tokens=args.max_tokens, threshold=args.threshold,
                        group_by=args.group_by, timeout_s=args.timeout, pass_env=args.pass_env)


def _scan(args):
    from ..hacking import hack_scan  # lazy: loads when the command runs, not when the parser is built
    return hack_scan(args.rows, features=args.features, n_shuffles=args.shuffles,
                     min_strength=args.min_strength, threshold=args.threshold, seed=args.seed,
                     look=args.look)


def _watch(args):
    from ..hacking import watch_run  # lazy: loads when the command runs, not when the parser is built
    watch = watch_run(args.source, state_dir=args.state_dir, metric=args.metric,
                      threshold=args.threshold, confirm=args.confirm, window=args.window)

    def draw(out, overwrite):
        from ..pictures import watch_picture  # lazy: loads when the command runs, not when the parser is built
        return watch_picture(watch, out=out, overwrite=overwrite)
    return plotted(args, watch, draw)


def _doctor(args):
    from ..hacking import diagnose_run  # lazy: loads when the command runs, not when the parser is built
    return diagnose_run(args.source, state_dir=args.state_dir,
                        max_off_policy_steps=args.max_off_policy_steps)


def register(sub) -> None:
    from ..hacking.probes import PROBES  # lazy: loads when the command runs, not when the parser is built
    from . import add_json_flag, add_threshold_flag  # lazy: loads when the command runs, not when the parser is built

    def common(p):
        p.add_argument("--metric", choices=("pass", "reward"), default="pass",
                       help="pass rates (default) or mean rewards (a graded reward)")
        add_threshold_flag(p)
        add_json_flag(p)

    p = sub.add_parser(
        "cheat-probes", help="score degenerate answers with your reward before training",
        description="Empty, refusal, a question back, the prompt echoed, filler to the token "
                    "cap, the most common answer, the answer format alone (tags around a wrong "
                    "answer), the task's words stuffed: each scored by your reward on every task "
                    "and compared with the model's pass rate, paired by task. A probe at or "
                    "above the model is a hole. The reward runs in a child process in the "
                    "current directory, killed after --timeout seconds.")
    p.add_argument("tasks", help="tasks (.jsonl): {task_id, prompt, ...fields the reward reads}")
    p.add_argument("--reward", default=None, metavar="FILE.py:FUNCTION",
                   help="a TRL-style reward function(prompts, completions, **fields)")
    p.add_argument("--reward-command", default=None, metavar="'python SCRIPT.py ARGS'",
                   help="a Python script (and its arguments) that reads JSONL {prompt, "
                        "completion, ...} on stdin and prints one reward per line (split like a "
                        "shell, run without one; no other program)")
    p.add_argument("--model-rows", default=None, metavar="ROWS",
                   help="the model's graded rows on these tasks (the rate each probe must beat)")
    p.add_argument("--max-tokens", type=int, default=PROBE_MAX_TOKENS,
                   help="the run's completion cap; filler fills it (default %(default)s)")
    p.add_argument("--probe", dest="probes", action="append", choices=list(PROBES), default=None,
                   help="run only this probe (repeatable; default: all)")
    p.add_argument("--group-by", default=None, metavar="FIELD",
                   help="a task field (e.g. category): each probe's rate per value")
    p.add_argument("--timeout", type=float, default=REWARD_TIMEOUT_S,
                   help="seconds the reward may take for the whole batch (default %(default)s)")
    p.add_argument("--pass-env", action="append", default=None, metavar="NAME",
                   help="an environment variable the reward needs, e.g. OPENAI_API_KEY "
                        "(repeatable); the reward gets no other token or key")
    common(p)
    p.set_defaults(func=_probes)

    p = sub.add_parser(
        "prove-reward", help="the probes, plus truncation and format-bonus holes, before the GPU",
        description="cheat-probes, then: does a passing reply that runs on to the token cap "
                    "still pass (truncation), and does the answer format around a wrong answer "
                    "earn more than the same answer without it (a format bonus)? Each finding "
                    "with an example, per group and its fix; fix_first names every hole.")
    p.add_argument("tasks", help="tasks (.jsonl): {task_id, prompt, ...fields the reward reads}")
    p.add_argument("--reward", default=None, metavar="FILE.py:FUNCTION",
                   help="a TRL-style reward function(prompts, completions, **fields)")
    p.add_argument("--reward-command", default=None, metavar="'COMMAND ARGS'",
                   help="a command that reads JSONL on stdin and prints one reward per line")
    p.add_argument("--model-rows", default=None, metavar="ROWS",
                   help="the model's graded rollouts with their reply text (completion)")
    p.add_argument("--max-tokens", type=int, default=PROBE_MAX_TOKENS,
                   help="the run's completion cap (default %(default)s)")
    p.add_argument("--group-by", default=None, metavar="FIELD",
                   help="a task field (e.g. category): every finding per value")
    p.add_argument("--timeout", type=float, default=REWARD_TIMEOUT_S,
                   help="seconds the reward may take per batch (default %(default)s)")
    p.add_argument("--pass-env", action="append", default=None, metavar="NAME",
                   help="an environment variable the reward needs (repeatable)")
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_prove)

    p = sub.add_parser(
        "hack-scan", help="which reply features the reward pays for within tasks",
        description="Length, truncation, format markers, repeated n-grams (and --feature "
                    "fields) against the task-centred reward, with a within-task shuffle floor: "
                    "clean, weak_signal (past the floor, under --min-strength), suspect (with "
                    "evidence) or not_enough_data (too few tasks, or no feature testable: it "
                    "says which and why).")
    p.add_argument("rows", help="graded rows with the reply text (completion) and several "
                                "rollouts per task")
    p.add_argument("--feature", dest="features", action="append", metavar="FIELD", default=None,
                   help="a row field to test too (number or bool; repeatable)")
    p.add_argument("--shuffles", type=int, default=SCAN_SHUFFLES,
                   help="within-task shuffles behind the floor (default %(default)s)")
    p.add_argument("--min-strength", type=float, default=SCAN_MIN_STRENGTH,
                   help="smallest within-task correlation called suspect (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffles (0)")
    p.add_argument("--look", type=int, default=None, metavar="J",
                   help=f"this is the J-th scan of a run: spend {SCAN_RUN_SHARE:g} (1 - level) / "
                        "(J (J + 1)) of the run's false-alarm rate, the scans' share (default: "
                        "one scan at 1 - level)")
    common(p)
    p.set_defaults(func=_scan)

    p = sub.add_parser(
        "watch", help="is the held-out pass rate following the training reward? stop/continue",
        description="Per step: training reward, held-out pass rate paired against step 0, "
                    "length and truncation, hack scans of the batches; stop only when the "
                    "held-out interval moves down, or stays flat while the training reward "
                    "climbs beyond its noise. Each held-out evaluation is a look tested at its "
                    "share of the error, alpha/(t(t+1)): the false-stop rate of an honest run "
                    "holds however many looks it gets.")
    p.add_argument("source", help="a run id, a TRL output folder, a watch.jsonl, or a rows file "
                                  "whose rows carry `step`")
    p.add_argument("--confirm", type=int, default=WATCH_CONFIRM,
                   help="evaluations in a row the stop condition must hold (default %(default)s)")
    p.add_argument("--window", type=int, default=WATCH_WINDOW,
                   help="steps averaged at each end of the training reward (default %(default)s)")
    p.add_argument("--state-dir", default=None, help="run registry folder (for a run id)")
    add_plot_flags(p, "the watch curve")
    common(p)
    p.set_defaults(func=_watch)

    p = sub.add_parser(
        "doctor", help="is the run learning anything? dead-run and wrong-thing signatures per step",
        description="Reads a run's own files (a prime-rl run folder, a TRL output folder, a "
                    "watch.jsonl, a run id) and names, per step: zero-advantage groups, "
                    "truncation lock-in, a reward paying a reply feature, staleness past "
                    "max_off_policy_steps, verifier noise (identical replies scored "
                    "differently), collapsing diversity, entropy or KL running away; each with "
                    "its evidence, interval, threshold and the fix.")
    p.add_argument("source", help="a run id, a prime-rl run folder, a TRL output folder, or a "
                                  "watch.jsonl")
    p.add_argument("--max-off-policy-steps", type=int, default=None, metavar="N",
                   help="the staleness bound (default: the run's configs/orchestrator.json, "
                        "else prime-rl's default 8)")
    p.add_argument("--state-dir", default=None, help="run registry folder (for a run id)")
    add_json_flag(p)
    p.set_defaults(func=_doctor)
