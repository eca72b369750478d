"""CLI: launch, status, runs, collect, cancel (the run registry from a shell)."""

from __future__ import annotations

import argparse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", default=None,
                   help="folder of the run registry (default $WHILEAI_STATE_DIR, else ~/.whileai)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _launch(args):
    from ..runs import launch_run  # lazy: loads when the command runs, not when the parser is built
    return launch_run(args.target, backend=args.backend, gpu=args.gpu, name=args.name,
                      confirm=args.confirm, data=args.data, experiment=args.experiment,
                      arm=args.arm, state_dir=args.state_dir, recipes_dir=args.recipes_dir)


def _status(args):
    from ..runs import run_status  # lazy: loads when the command runs, not when the parser is built
    return run_status(args.id, state_dir=args.state_dir)


def _runs(args):
    from ..runs import list_runs  # lazy: loads when the command runs, not when the parser is built
    return list_runs(state_dir=args.state_dir)


def _collect(args):
    from ..runs import collect_run  # lazy: loads when the command runs, not when the parser is built
    return collect_run(args.id, metric=args.metric, holdout=args.holdout,
                       rule=_json_arg(args.rule, "--rule"), state_dir=args.state_dir)


def _json_arg(text, flag: str):
    """A JSON object given on the command line; a parse error names the flag."""
    import json

    from ..errors import ArgumentError  # lazy: already loaded; stays in the function until the CLI is generated

    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentError(f"{flag} must be JSON ({exc.msg} at character {exc.pos}). Fix: quote "
                            "it for the shell, e.g. '{\"ship_if\": [{\"kind\": \"delta_above\", "
                            "\"bound\": 0.05}]}'") from None


def _cancel(args):
    from ..runs import cancel_run  # lazy: loads when the command runs, not when the parser is built
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
    p.add_argument("--experiment", default=None, metavar="NAME",
                   help="launch as an arm of this registered experiment (register-experiment)")
    p.add_argument("--arm", default=None, help="which registered arm this run is")
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
        if command == "collect":
            p.add_argument("--metric", choices=("pass", "reward"), default=None,
                           help="read on this metric (default: the registered one, else pass; "
                                "another is flagged)")
            p.add_argument("--holdout", default=None, metavar="FILE_OR_NAME",
                           help="the frozen held-out file or content name the run was scored on "
                                "(another than the registered one is flagged)")
            p.add_argument("--rule", default=None, metavar="JSON",
                           help="read by this decision rule (default: the registered one; "
                                "another is flagged)")
        _common(p)
        p.set_defaults(func=handler)

    p = sub.add_parser("runs", help="every run in the registry, oldest first",
                       description="List the runs of the registry, active ones reconciled.")
    _common(p)
    p.set_defaults(func=_runs)
