"""CLI: register-experiment, record-run, experiments, export-experiments, archive-experiment
(the manage-experiments skill from a shell), and dpo-pairs, dpo-data, grpo-plan."""

from __future__ import annotations

import argparse

from ..defaults import (CATEGORY_FIELD, DPO_MIN_MARGIN, GRPO_BALANCE_SHARE, GRPO_LOSS_TYPE,
                        GRPO_LOSS_TYPES, PAIRS_PER_TASK, PASS_THRESHOLD, PROVE_EFFECT, SPLIT_SEED)
from ..errors import ArgumentError
from .runs import _json_arg


def _arms(values: list[str] | None) -> dict[str, str]:
    out = {}
    for value in values or ():
        name, sep, change = value.partition("=")
        if not sep:
            raise ArgumentError(f"--arm {value!r} must be NAME=WHAT_IT_CHANGES. Fix: e.g. --arm "
                                "'dpo=one DPO round on on-policy pairs'")
        out[name.strip()] = change.strip()
    return out


def _register(args):
    from ..experiments import register_experiment  # lazy: loads when the command runs, not when the parser is built
    return register_experiment(args.name, question=args.question, hypothesis=args.hypothesis,
                               arms=_arms(args.arm), holdout=args.holdout,
                               rule=_json_arg(args.rule, "--rule"), metric=args.metric,
                               min_effect=args.min_effect, run_std=args.run_std,
                               noise_runs=args.noise_runs, state_dir=args.state_dir)


def _record(args):
    from ..experiments import record_run  # lazy: loads when the command runs, not when the parser is built
    return record_run(args.id, changed=args.changed, moved=args.moved, why=args.why,
                      learned=args.learned, reproduce=args.reproduce, state_dir=args.state_dir)


def _list(args):
    from ..experiments import list_experiments  # lazy: loads when the command runs, not when the parser is built
    return list_experiments(include_archived=args.include_archived, state_dir=args.state_dir)


def _export(args):
    from ..experiments import export_experiments  # lazy: loads when the command runs, not when the parser is built
    return export_experiments(args.out, name=args.name, overwrite=args.force,
                              state_dir=args.state_dir)


def _archive(args):
    from ..experiments import archive_experiment  # lazy: loads when the command runs, not when the parser is built
    return archive_experiment(args.name, state_dir=args.state_dir)


def _pairs(args):
    from ..pairs import dpo_pairs  # lazy: loads when the command runs, not when the parser is built
    found = dpo_pairs(args.rollouts, field=args.field, threshold=args.threshold,
                      min_margin=args.min_margin, per_task=args.per_task,
                      constructed=args.constructed, model=args.model)
    if args.out is not None:
        from ..io import write_jsonl  # lazy: loads when the command runs, not when the parser is built
        write_jsonl(args.out, found.pairs, overwrite=args.force)
    return found


def _data(args):
    from ..pairs import write_dpo_data  # lazy: loads when the command runs, not when the parser is built
    return write_dpo_data(args.pairs, args.out_dir, holdout=args.holdout, grader=args.grader,
                          settings=_json_arg(args.settings, "--settings"), overwrite=args.force)


def _plan(args):
    from ..methods.grpo_plan import grpo_plan  # lazy: loads when the command runs, not when the parser is built
    return grpo_plan(args.rows, model=args.model, loss=args.loss,
                     num_iterations=args.num_iterations,
                     balance=None if args.no_balance else args.balance, field=args.field,
                     tasks=args.tasks, seed=args.seed, threshold=args.threshold)


def register(sub) -> None:
    from . import add_json_flag, add_threshold_flag  # lazy: loads when the command runs, not when the parser is built

    def state(p: argparse.ArgumentParser) -> None:
        p.add_argument("--state-dir", default=None,
                       help="folder of the run registry (default $WHILEAI_STATE_DIR, else "
                            "~/.whileai)")
        add_json_flag(p)

    p = sub.add_parser("register-experiment", help="write the decision down before the first run",
                       description="Register an experiment before any of its runs: question, "
                                   "hypothesis, arms, metric, held-out set, the smallest effect "
                                   "that matters, the noise floor and the decision rule (JSON).")
    p.add_argument("name", help="the experiment's name")
    p.add_argument("--question", required=True)
    p.add_argument("--hypothesis", required=True)
    p.add_argument("--arm", action="append", metavar="NAME=CHANGE", required=True,
                   help="an arm and what it changes (repeatable)")
    p.add_argument("--holdout", required=True, metavar="FILE_OR_NAME",
                   help="the frozen held-out file (freeze) or its content name (fingerprint)")
    p.add_argument("--rule", required=True, metavar="JSON",
                   help='e.g. \'{"ship_if": [{"kind": "delta_above", "bound": 0.05}, {"kind": '
                        '"no_category_drop", "beyond": "noise_band"}]}\'')
    p.add_argument("--metric", choices=("pass", "reward"), default="pass")
    p.add_argument("--min-effect", type=float, default=PROVE_EFFECT,
                   help="the smallest change that matters (default %(default)s)")
    p.add_argument("--run-std", type=float, default=None, help="noise-floor's run_std")
    p.add_argument("--noise-runs", type=int, default=None, help="the re-runs run_std rests on")
    state(p)
    p.set_defaults(func=_register)

    p = sub.add_parser("record-run", help="a run's five-line record",
                       description="What changed, what moved, why, what was learned, how to "
                                   "reproduce: one line each; writing again adds a revision.")
    p.add_argument("id", help="run id (run-...)")
    for line in ("changed", "moved", "why", "learned", "reproduce"):
        p.add_argument(f"--{line}", required=True)
    state(p)
    p.set_defaults(func=_record)

    p = sub.add_parser("experiments", help="the registered experiments, their runs and records",
                       description="List the registered experiments, oldest first.")
    p.add_argument("--include-archived", action="store_true", help="also the archived ones")
    state(p)
    p.set_defaults(func=_list)

    p = sub.add_parser("export-experiments", help="the experiments as one Markdown file",
                       description="Write every registration, run and record as Markdown.")
    p.add_argument("out", help="the Markdown file to write")
    p.add_argument("--name", default=None, help="one experiment only")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    state(p)
    p.set_defaults(func=_export)

    p = sub.add_parser("archive-experiment", help="archive an experiment (never delete)",
                       description="It leaves the default list and takes no new runs; nothing "
                                   "of it is deleted.")
    p.add_argument("name")
    state(p)
    p.set_defaults(func=_archive)

    p = sub.add_parser("dpo-pairs", help="DPO pairs only where a task has a pass and a fail",
                       description="Pairs from the policy's own graded rollouts; per category, "
                                   "where contrast is missing and how to construct it.")
    p.add_argument("rollouts", help="graded rollouts (.jsonl) with messages (prompt then reply)")
    p.add_argument("--field", default=CATEGORY_FIELD, help="the category field (%(default)s)")
    p.add_argument("--min-margin", type=float, default=DPO_MIN_MARGIN,
                   help="chosen beats rejected by at least this reward (%(default)s)")
    p.add_argument("--per-task", type=int, default=PAIRS_PER_TASK,
                   help="at most this many pairs per task (%(default)s)")
    p.add_argument("--constructed", default=None, metavar="FILE",
                   help="only when asked: constructed rejected replies {task_id, rejected, reward}")
    p.add_argument("--model", default=None, help="the policy's id (another model's rows refused)")
    p.add_argument("--out", default=None, help="write the pairs here (JSONL)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--threshold", type=float, default=PASS_THRESHOLD,
                   help="a rollout passes iff reward >= THRESHOLD (%(default)s)")
    add_json_flag(p)
    p.set_defaults(func=_pairs)

    p = sub.add_parser("dpo-data", help="write the DPO recipe's data folder",
                       description="pairs.jsonl, the held-out asks frozen, grader.py, optional "
                                   "settings.json: what launch dpo --data DIR trains on.")
    p.add_argument("pairs", help="the pairs (dpo-pairs --out)")
    p.add_argument("--out-dir", required=True, help="the folder to write")
    p.add_argument("--holdout", required=True, help="the held-out tasks' records (JSONL)")
    p.add_argument("--grader", required=True, help="your grader.py (grade(ask, reply))")
    p.add_argument("--settings", default=None, metavar="JSON", help="DPO recipe settings")
    p.add_argument("--force", action="store_true", help="replace the folder's files")
    add_json_flag(p)
    p.set_defaults(func=_data)

    p = sub.add_parser("grpo-plan", help="a GRPO run's loss, --balance and control arms",
                       description="From the base model's graded rows: the loss variant's TRL "
                                   "fields and recipe flags, rare categories, and the arms.")
    p.add_argument("rows", help="the base model's graded rows on the training tasks")
    p.add_argument("--model", required=True, help="the base model")
    p.add_argument("--loss", choices=GRPO_LOSS_TYPES, default=GRPO_LOSS_TYPE)
    p.add_argument("--num-iterations", type=int, default=None,
                   help="optimizer steps per generation batch (default: 2 for dapo, else 1)")
    p.add_argument("--balance", type=float, default=GRPO_BALANCE_SHARE,
                   help="share under which a category is repeated (%(default)s)")
    p.add_argument("--no-balance", action="store_true", help="never balance")
    p.add_argument("--field", default=CATEGORY_FIELD, help="the category field (%(default)s)")
    p.add_argument("--tasks", default=None, help="task file holding each task's category")
    p.add_argument("--seed", type=int, default=SPLIT_SEED, help="seed of the random control")
    add_threshold_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_plan)
