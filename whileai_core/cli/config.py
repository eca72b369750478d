"""`whileai-skills config` (write a prime-rl config) and `whileai-skills validate FILE`."""

from __future__ import annotations

import argparse
import json
import tomllib
from typing import Any

from ..errors import ArgumentError
from .. import safejson


def _value(text: str) -> Any:
    """A --set value as TOML reads it (3e-6, true, "x", [1, 2]); a bare word stays a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _method(args: argparse.Namespace) -> Any:
    method: Any = args.method
    if method.lstrip().startswith("{"):
        try:
            method = safejson.loads(method)
        except json.JSONDecodeError as err:
            raise ArgumentError(f"--method JSON is invalid ({err}); e.g. "
                                "'{\"name\": \"opsd\", \"anchor\": \"live\"}'") from None
    if args.teacher:
        if method not in ("grpo", "opd"):
            raise ArgumentError("--teacher is for --method opd (or give the teacher inside the "
                                "--method JSON)")
        method = {"name": "opd", "teacher": args.teacher}
    if args.correction:
        method = {"name": "async", "method": method, "correction": args.correction,
                  **({"off_policy_steps": args.off_policy_steps}
                     if args.off_policy_steps is not None else {})}
    elif args.off_policy_steps is not None:
        raise ArgumentError("--off-policy-steps needs --correction (ipo or icepop)")
    return method


def _config(args: argparse.Namespace):
    from ..prime_rl import prime_rl_config  # lazy: loads when the command runs, not when the parser is built

    overrides = {}
    for item in args.set or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ArgumentError(f"--set {item!r} is not KEY=VALUE (e.g. trainer.optim.lr=3e-6)")
        overrides[key.strip()] = _value(raw.strip())
    knobs = dict(model=args.model, out=args.out, overwrite=args.force, gpus=args.gpus,
                 nodes=args.nodes, steps=args.steps, batch=args.batch, lora=not args.full_weights,
                 max_tokens=args.max_tokens, seq_len=args.seq_len, renderer=args.renderer,
                 train_split=args.train_split, eval_split=args.eval_split,
                 overrides=overrides or None, group_size=args.group_size, lr=args.lr,
                 serve_policy=args.serve_policy if args.serve_policy else True)
    if args.serve_policy == "self":
        knobs["serve_policy"] = False
    return prime_rl_config(args.taskset, _method(args), **knobs)


def _validate(args: argparse.Namespace) -> int:
    from ..prime_rl import validate_config  # lazy: loads when the command runs, not when the parser is built

    check = validate_config(args.file)
    print(json.dumps(check.to_dict(), indent=2) if args.json else str(check))
    return 0 if check.ok else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    from . import add_json_flag  # lazy: loads when the command runs, not when the parser is built

    p = subparsers.add_parser(
        "config", help="write a prime-rl (559b447) rl config for a taskset and a method",
        description="Write a prime-rl rl TOML and report where each knob went, what prime-rl "
                    "ignores, warnings and the launch command.")
    p.add_argument("taskset", help="verifiers taskset id, e.g. reverse-text")
    p.add_argument("--model", required=True, help="policy model id")
    p.add_argument("--method", default="grpo",
                   help="grpo | max_rl | rae | opsd | opd, or a JSON spec such as "
                        "'{\"name\": \"opsd\", \"anchor\": \"live\"}' (default grpo)")
    p.add_argument("--teacher", help="OPD teacher as model@http://host:port/v1 (implies opd)")
    p.add_argument("--correction", choices=("ipo", "icepop", "tis"),
                   help="wrap the method in Async with this off-policy correction")
    p.add_argument("--off-policy-steps", type=int, help="Async staleness bound (default 8)")
    p.add_argument("--out", help="write the TOML here (refuses to overwrite without --force)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--gpus", type=int, default=2, help="GPUs per node (default 2)")
    p.add_argument("--nodes", type=int, default=1, help="nodes (default 1; >1 = SLURM multi-node)")
    p.add_argument("--steps", type=int, default=100, help="optimizer steps (default 100)")
    p.add_argument("--batch", type=int, default=128, help="rollouts per step (default 128)")
    p.add_argument("--group-size", type=int, help="rollouts per prompt (default: the method's)")
    p.add_argument("--lr", type=float, help="learning rate (default: the method's)")
    p.add_argument("--full-weights", action="store_true", help="train full weights, not LoRA")
    p.add_argument("--max-tokens", type=int, help="completion tokens per turn")
    p.add_argument("--seq-len", type=int, help="sequence length (default 2048, or fits max-tokens)")
    p.add_argument("--renderer", help="[orchestrator.renderer] name (default: from the model id)")
    p.add_argument("--train-split", help="dataset split to train on, e.g. 'train[:872]'")
    p.add_argument("--eval-split", help="dataset split to evaluate on, e.g. 'train[872:]'")
    p.add_argument("--serve-policy", metavar="self|URL",
                   help="you serve the policy ('self' = http://localhost:8000/v1, or its URL); "
                        "default: rl starts vLLM")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a dotted key, e.g. trainer.optim.weight_decay=0.0 (repeatable)")
    add_json_flag(p)
    p.set_defaults(func=_config)

    v = subparsers.add_parser("validate", help="check a prime-rl TOML against the 559b447 schema",
                              description="Check a prime-rl rl TOML (unknown keys, renamed keys, "
                                          "cross-field rules) before a GPU starts. Exit 1 when "
                                          "rejected.")
    v.add_argument("file", help="path to the TOML")
    add_json_flag(v)
    v.set_defaults(func=_validate)

