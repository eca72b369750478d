"""`whileai-skills`: the library from a shell. Human output by default, ``--json`` for machines.

Subcommands live in one module per command group (``whileai_core/cli/<group>.py``), each with
``register(subparsers)``: it adds its parsers and sets ``func`` to a handler ``(args) -> Result |
str``. This file only wires them, turns a :class:`WhileaiError` into one line on stderr and exit
code 2, and prints results.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from .. import __version__
from ..errors import WhileaiError

# one module per concept; each has register(subparsers)
COMMAND_MODULES = (
    "whileai_core.cli.stats",
    "whileai_core.cli.runs",
    "whileai_core.cli.config",
    "whileai_core.cli.judge",
    "whileai_core.cli.traces",
    "whileai_core.cli.evalset",
    "whileai_core.cli.init",
    "whileai_core.cli.imports",
    "whileai_core.cli.hacking",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whileai-skills",
        description="Decide how to post-train an open-weight model from graded rows.")
    parser.add_argument("--version", action="version", version=f"whileai-skills {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except WhileaiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if isinstance(result, int):
        return result
    try:
        if getattr(args, "json", False) and hasattr(result, "to_dict"):
            print(json.dumps(result.to_dict(), indent=2))
        elif result is not None:
            print(str(result))
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
