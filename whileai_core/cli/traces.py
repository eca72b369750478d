"""CLI: split, select-sft, decontaminate, export-sft (the sft-from-traces skill from a shell).

select-sft and decontaminate return the kept records; with ``--out`` they are written there as
JSONL (atomically; an existing file is replaced only with ``--force``) and left out of the
printed result.
"""

from __future__ import annotations

import argparse
import sys

from ..defaults import (DECONTAM_MAX_OVERLAP, DECONTAM_NGRAM, HOLDOUT_SHARE, PASS_THRESHOLD,
                       SPLIT_SEED)


def _out(p: argparse.ArgumentParser, *, required: bool = False, what: str) -> None:
    p.add_argument("--out", required=required, default=None,
                   help=f"write {what} here as JSONL (refuses to overwrite without --force)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def _kept(result, args):
    """Write the result's records to --out, if given, and drop them from what is printed."""
    if args.out is None:
        return result
    from ..io import write_jsonl  # lazy: loads when the command runs, not when the parser is built

    path = write_jsonl(args.out, result.records, overwrite=args.force)
    print(f"wrote {len(result.records)} records to {path}", file=sys.stderr)
    return result.model_copy(update={"records": []})


def _split(args):
    import json
    import os

    from ..errors import ConfigError  # lazy: already loaded; stays in the function until the CLI is generated
    from ..io import write_atomic, write_jsonl  # lazy: loads when the command runs, not when the parser is built
    from ..rows import read_records  # lazy: loads when the command runs, not when the parser is built
    from ..traces import split_by_task  # lazy: loads when the command runs, not when the parser is built

    split = split_by_task(args.rows, share=args.share, seed=args.seed, stratify=args.stratify)
    targets = [(flag, value) for flag, value in (("--out", args.out),
                                                  ("--holdout-out", args.holdout_out),
                                                  ("--train-out", args.train_out)) if value]
    if not targets:
        return split
    if len({os.path.realpath(v) for _, v in targets}) < len(targets):
        raise ConfigError("--out, --holdout-out and --train-out name the same file; nothing "
                          "was written. Fix: give each its own path")
    for flag, value in targets:  # refuse before writing anything: nothing half-written
        if os.path.lexists(value) and not os.path.isfile(value):
            raise ConfigError(f"{flag} {value} exists and is not a regular file; it is never "
                              "replaced, with or without --force; nothing was written. Fix: "
                              "choose another path")
        if os.path.lexists(value) and not args.force:
            raise ConfigError(f"{flag} {value} already exists; nothing was written. Fix: "
                              "pass --force or choose another path")
    records = read_records(args.rows, noun="record").items if len(targets) > (
        args.out is not None) else []
    for flag, value in targets:
        if flag == "--out":
            path = write_atomic(value, json.dumps(split.holdout_tasks) + "\n",
                                overwrite=args.force)
            print(f"wrote {len(split.holdout_tasks)} held-out task ids to {path}",
                  file=sys.stderr)
        else:
            side = split.holdout(records) if flag == "--holdout-out" else split.train(records)
            path = write_jsonl(value, side, overwrite=args.force)
            print(f"wrote {len(side)} {flag[2:-4]} records to {path}", file=sys.stderr)
    return split


def _select(args):
    from ..traces import select_sft  # lazy: loads when the command runs, not when the parser is built
    return _kept(select_sft(args.attempts, threshold=args.threshold), args)


def _decontaminate(args):
    from ..traces import decontaminate  # lazy: loads when the command runs, not when the parser is built
    return _kept(decontaminate(args.train, args.holdout, ngram=args.ngram,
                               max_overlap=args.max_overlap), args)


def _export(args):
    from ..traces import export_sft  # lazy: loads when the command runs, not when the parser is built
    return export_sft(args.records, args.out, overwrite=args.force)


TRACE_FORM = ('each line {"task_id": ..., "messages": [{"role": "user", "content": "..."}, '
              '...]}')


def register(sub) -> None:
    from . import add_json_flag  # lazy: loads when the command runs, not when the parser is built

    p = sub.add_parser(
        "split", help="hold out a share of the tasks (never part of a task)",
        description="Split graded rows by task: the frozen held-out test and the tasks left "
                    "to train on. Depends only on the task ids and the seed.")
    p.add_argument("rows", help="graded rows (.jsonl or .json) with task_id and reward")
    p.add_argument("--share", type=float, default=HOLDOUT_SHARE,
                   help="share of the tasks to hold out, in (0, 1) (default %(default)s)")
    p.add_argument("--seed", type=int, default=SPLIT_SEED, help="split seed (default %(default)s)")
    p.add_argument("--stratify", default=None, metavar="FIELD",
                   help="split within each value of this record field (e.g. category)")
    p.add_argument("--out", default=None,
                   help="write the held-out task ids here as a JSON list (the frozen test)")
    p.add_argument("--holdout-out", default=None, metavar="FILE",
                   help="write the input's records whose task is held out here (JSONL)")
    p.add_argument("--train-out", default=None, metavar="FILE",
                   help="write the input's records whose task is not held out here (JSONL): "
                        "the only side to build training data from")
    p.add_argument("--force", action="store_true",
                   help="overwrite --out, --holdout-out, --train-out if they exist")
    add_json_flag(p)
    p.set_defaults(func=_split)

    p = sub.add_parser(
        "select-sft", help="keep the best passing attempt per ask",
        description="From graded attempts keep, per ask, the best passing one (highest reward, "
                    "then the shortest reply); list the asks with no pass; attempt pass@1 with "
                    "its interval.")
    p.add_argument("attempts", help=f"graded attempts (.jsonl or .json), {TRACE_FORM} plus "
                                    '"reward": number')
    p.add_argument("--threshold", type=float, default=PASS_THRESHOLD,
                   help="an attempt passes when reward >= THRESHOLD (default %(default)s)")
    _out(p, what="the kept traces")
    add_json_flag(p)
    p.set_defaults(func=_select)

    p = sub.add_parser(
        "decontaminate", help="drop training traces that leak the held-out test",
        description="Drop training traces whose task is held out, whose prompt equals a "
                    "held-out prompt, or whose n-gram overlap with held-out prompts reaches "
                    "--max-overlap; every drop with its reason.")
    p.add_argument("train", help=f"training traces (.jsonl or .json), {TRACE_FORM}")
    p.add_argument("holdout", help='held-out asks (.jsonl or .json): {"task_id": ..., "prompt": '
                                   'str} or {"task_id": ..., "messages": [...]}')
    p.add_argument("--ngram", type=int, default=DECONTAM_NGRAM,
                   help="words per n-gram (default %(default)s)")
    p.add_argument("--max-overlap", type=float, default=DECONTAM_MAX_OVERLAP,
                   help="drop a prompt when this share of its n-grams is in held-out prompts, "
                        "in (0, 1] (default %(default)s)")
    _out(p, what="the kept traces")
    add_json_flag(p)
    p.set_defaults(func=_decontaminate)

    p = sub.add_parser(
        "export-sft", help="write the SFT file (TRL conversational JSONL)",
        description='Write traces as TRL\'s conversational JSONL ({"messages": [...]} a line), '
                    "atomically, and say which tokens TRL will train on.")
    p.add_argument("records", help=f"traces to train on (.jsonl or .json), {TRACE_FORM}; each "
                                   "ends with an assistant turn (select-sft/decontaminate --out)")
    _out(p, required=True, what="the SFT file")
    add_json_flag(p)
    p.set_defaults(func=_export)
