"""CLI: fingerprint, freeze, failure-capable, by-category (the eval itself, before training)."""

from __future__ import annotations

import argparse

from ..defaults import CATEGORY_FIELD, EVALSET_NAME, PROVE_EFFECT


def _common(p: argparse.ArgumentParser, *, rows: bool) -> None:
    from . import add_interval_flags, add_json_flag, add_threshold_flag  # lazy: loads when the command runs, not when the parser is built

    if rows:
        add_interval_flags(p)
        add_threshold_flag(p)
    add_json_flag(p)


def _fingerprint(args):
    from ..evalset import eval_fingerprint  # lazy: loads when the command runs, not when the parser is built
    return eval_fingerprint(args.tasks, name=args.name)


def _freeze(args):
    from ..evalset import freeze_holdout  # lazy: loads when the command runs, not when the parser is built
    return freeze_holdout(args.tasks, args.out_dir, name=args.name)


def _failure_capable(args):
    from ..evalset import failure_capable  # lazy: loads when the command runs, not when the parser is built
    return failure_capable(args.rows, holdout=args.holdout, effect=args.effect, level=args.level,
                           seed=args.seed, threshold=args.threshold)


def _by_category(args):
    from ..categories import category_table  # lazy: loads when the command runs, not when the parser is built
    return category_table(args.rows, args.after, field=args.field, tasks=args.tasks,
                          level=args.level, seed=args.seed, threshold=args.threshold,
                          run_std=args.run_std, noise_runs=args.noise_runs)


def register(sub) -> None:
    p = sub.add_parser("fingerprint", help="name a task set by a hash of its content",
                       description="The content name of a task set: <name>-<12 hex of sha256> "
                                   "over every field of every task, sorted by task id.")
    p.add_argument("tasks", help="task records (.jsonl or .json), one per task, with task_id")
    p.add_argument("--name", default=EVALSET_NAME, help=f"name prefix ({EVALSET_NAME})")
    _common(p, rows=False)
    p.set_defaults(func=_fingerprint)

    p = sub.add_parser("freeze", help="write the held-out tasks once, under their content name",
                       description="Write TASKS as OUT_DIR/<name>-<hash>.jsonl; the same content "
                                   "again writes nothing; never overwrites.")
    p.add_argument("tasks", help="the held-out task records (.jsonl or .json)")
    p.add_argument("--out-dir", default=".", help="folder to write in (default: .)")
    p.add_argument("--name", default=EVALSET_NAME, help=f"name prefix ({EVALSET_NAME})")
    _common(p, rows=False)
    p.set_defaults(func=_freeze)

    p = sub.add_parser("failure-capable",
                       help="can the eval fail? pass@1, tasks that ever fail, truncation trap",
                       description="Read a baseline run before training: pass@1 with its "
                                   "interval, the tasks that ever fail (the ceiling on any "
                                   "gain), cut-off replies that pass, and the frozen set.")
    p.add_argument("rows", help="graded rows of the baseline on the held-out tasks")
    p.add_argument("--holdout", default=None,
                   help="the frozen task set; the run must have scored exactly its tasks")
    p.add_argument("--effect", type=float, default=PROVE_EFFECT,
                   help=f"smallest gain worth detecting ({PROVE_EFFECT})")
    _common(p, rows=True)
    p.set_defaults(func=_failure_capable)

    p = sub.add_parser("by-category", help="pass@1 per behaviour (category) with intervals and n",
                       description="pass@1 of each category of one run, with its interval and "
                                   "n; with --after, each category's paired change, corrected "
                                   "for the number of categories compared (Holm, "
                                   "Benjamini-Hochberg).")
    p.add_argument("rows", help="graded rows (.jsonl or .json)")
    p.add_argument("--after", default=None, metavar="ROWS",
                   help="a second run on the same tasks: compare category by category")
    p.add_argument("--run-std", type=float, default=None,
                   help="run_std of the same eval re-run (see noise-floor); sets the noise band")
    p.add_argument("--noise-runs", type=int, default=None,
                   help="re-runs behind --run-std (default: read as 3, and said)")
    p.add_argument("--tasks", default=None,
                   help="the task set holding each task's category (default: read it from the "
                        "rows)")
    p.add_argument("--field", default=CATEGORY_FIELD,
                   help=f"the field naming the behaviour ({CATEGORY_FIELD})")
    _common(p, rows=True)
    p.set_defaults(func=_by_category)
