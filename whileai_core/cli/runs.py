"""CLI: launch, status, runs, collect, cancel (the run registry from a shell)."""

from __future__ import annotations

import argparse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", default=None,
                   help="folder of the run registry (default $WHILEAI_STATE_DIR, else ~/.whileai)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _launch(args):
    from ..runs import launch_run
    return launch_run(args.target, backend=args.backend, gpu=args.gpu, name=args.name,
                      confirm=args.confirm, data=args.data, state_dir=args.state_dir,
                      recipes_dir=args.recipes_dir)


def _status(args):
    from ..runs import run_status
    return run_status(args.id, state_dir=args.state_dir)


def _runs(args):
    from ..runs import list_runs
    return list_runs(state_dir=args.state_dir)


def _collect(args):
    from ..runs import collect_run
    return collect_run(args.id, state_dir=args.state_dir)


def _cancel(args):
    from ..runs import cancel_run
    return cancel_run(args.id, state_dir=args.state_dir)


def register(sub) -> None:
    p = sub.add_parser("launch", help="plan a run, or start it with --confirm (Modal or local)",
                       description="Plan a recipe or prime-rl config run; --confirm starts it. "
                                   "The same target and name launch once: a second launch "
                                   "returns the first run.")
    p.add_argument("target", help="a recipe name (grpo, dpo, sft, prime-rl) or a prime-rl TOML "
                                  "path")
    p.add_argument("--backend", choices=("modal", "local"), default="modal",
                   help="modal: GPUs on Modal (spends money); local: the recipe's CPU smoke here "
                        "(default modal)")
    p.add_argument("--gpu", default=None,
                   help="Modal GPU TYPE[:COUNT], e.g. H100:2 (default: the recipe's)")
    p.add_argument("--name", default=None, help="run name (default: the recipe or config name)")
    p.add_argument("--confirm", action="store_true",
                   help="launch it; without this flag only the plan is shown")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="a data folder for a recipe that trains on your files (sft: train.jsonl, "
                        "holdout.jsonl, grader.py); default: the recipe's own demo data")
    p.add_argument("--recipes-dir", default=None,
                   help="folder holding <recipe>/run.py (default $WHILEAI_RECIPES_DIR, else this "
                        "checkout's recipes/)")
    _common(p)
    p.set_defaults(func=_launch)

    for command, helptext, handler in (
            ("status", "a run's status, reconciled with its backend", _status),
            ("collect", "a finished run's results and its before/after verdict", _collect),
            ("cancel", "stop a planned, launching or running run", _cancel)):
        p = sub.add_parser(command, help=helptext, description=helptext[0].upper() + helptext[1:])
        p.add_argument("id", help="run id (run-...), from launch or runs")
        _common(p)
        p.set_defaults(func=handler)

    p = sub.add_parser("runs", help="every run in the registry, oldest first",
                       description="List the runs of the registry, active ones reconciled.")
    _common(p)
    p.set_defaults(func=_runs)
