"""CLI: import (another system's eval output -> graded rows).

``whileai-skills import {prime-rl,inspect,lm-eval,auto} PATH [--out rows.jsonl [--force]]``
prints a summary (and the first rows); ``--out`` writes every row as JSONL, atomically, and
refuses to replace a file without ``--force``.
"""

from __future__ import annotations

import argparse


def _step(value: str):
    if value in ("first", "last"):
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid step {value!r}: give a step number, 'first' or 'last'") from None


def _import(args):
    from ..importers import import_rows  # lazy: loads when the command runs, not when the parser is built
    from ..io import write_jsonl  # lazy: loads when the command runs, not when the parser is built

    fmt = "auto" if args.format == "auto" else args.format
    result = import_rows(args.path, format=fmt, metric=args.metric, step=args.step,
                         kind=args.kind, keep_errored=args.keep_errored, agent=args.agent)
    if args.out is None:
        return result
    path = write_jsonl(args.out, result.rows, overwrite=args.force)
    return result.model_copy(update={"out": str(path), "preview": []}).with_rows(result.rows)


def register(sub) -> None:
    from . import add_json_flag  # lazy: loads when the command runs, not when the parser is built

    p = sub.add_parser(
        "import", help="graded rows from prime-rl, Inspect or lm-eval output",
        description="Turn another system's eval output into graded rows (task_id, reward, "
                    "truncated, model, errored, and the source's own ids): prime-rl episode "
                    "files (a run folder, or rollouts/step_<S>/eval/all/traces.jsonl), an "
                    "Inspect log (.eval or .json), lm-eval --log_samples files "
                    "(samples_<task>_<date>.jsonl, or their folder). 'auto' reads the format "
                    "from the content.")
    p.add_argument("format", choices=("prime-rl", "inspect", "lm-eval", "auto"),
                   help="the source format, or auto (detected from the content)")
    p.add_argument("path", help="the output file or folder")
    p.add_argument("--metric", default=None,
                   help="Inspect scorer or lm-eval metric (NAME or NAME,FILTER) to use as the "
                        "reward; needed when there are several")
    p.add_argument("--step", type=_step, default=None,
                   help="prime-rl: keep one step (a number, first or last; default every step)")
    p.add_argument("--kind", choices=("eval", "train"), default="eval",
                   help="prime-rl: eval episodes (default) or training rollouts")
    p.add_argument("--agent", default=None,
                   help="prime-rl: keep one agent's traces of a multi-agent taskset (its "
                        "agent.name; default every agent, one row per trace)")
    p.add_argument("--keep-errored", action="store_true",
                   help="keep errored rollouts as rows with errored: true (default: count them "
                        "and leave them out; a failed rollout is not a zero-reward answer)")
    p.add_argument("--out", default=None,
                   help="write every row here as JSONL (refuses to overwrite without --force)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    add_json_flag(p)
    p.set_defaults(func=_import)
