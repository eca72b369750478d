"""`whileai-skills`: the library from a shell. Human output by default, ``--json`` for machines.

Subcommands live in one module per command group (``whileai_core/cli/<group>.py``), each with
``register(subparsers)``: it adds its parsers and sets ``func`` to a handler ``(args) -> Result |
str``. This file only wires them and prints results. Everything runs in the CLI's voice
(``whileai_core.voice``): next steps and fixes read as the commands and flags a person types.

No traceback reaches the terminal. What is the user's to fix (a refused input, a path the system
refuses, a missing extra) is one line on stderr and exit code 2 (``whileai_core.failures``). A bug
is one line saying so and where to report it, exit code 70 (EX_SOFTWARE), with the traceback in
a file; ``WHILEAI_DEBUG=1`` shows it in the terminal instead.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import traceback

from .. import __version__
from ..failures import bug_report, explain
from ..result import shown
from ..voice import CLI, speaking

EXIT_USER = 2      # the input or the environment is the user's to fix
EXIT_BUG = 70      # EX_SOFTWARE (sysexits.h): an internal error
DEBUG_ENV = "WHILEAI_DEBUG"

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
    "whileai_core.cli.experiments",
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


def add_threshold_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threshold", type=float, default=None,
                        help="a row passes iff reward >= THRESHOLD (default 1.0)")


def add_interval_flags(parser: argparse.ArgumentParser, *, seed: bool = True) -> None:
    """``--level`` of every interval, and (``seed``) the bootstrap's ``--seed``."""
    from ..defaults import CONFIDENCE_LEVEL  # lazy: already loaded; stays in the function until the CLI is generated

    parser.add_argument("--level", type=float, default=CONFIDENCE_LEVEL,
                        help="interval level (default %(default)s)")
    if seed:
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with speaking(CLI):
        try:
            result = args.func(args)
            if isinstance(result, int):
                return result
            text = None
            if getattr(args, "json", False) and hasattr(result, "to_dict"):
                text = json.dumps(result.to_dict(), indent=2)
            elif result is not None:
                text = shown(result)  # long strings cut, terminal controls made visible
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            return _failed(exc, args.command)
    try:
        if text is not None:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _failed(exc: Exception, command: str) -> int:
    """Print the one line for ``exc``; return the exit code."""
    message = explain(exc)
    if message is not None:
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USER
    if os.environ.get(DEBUG_ENV):
        traceback.print_exception(exc, file=sys.stderr)
        where = f"above ({DEBUG_ENV} is set)"
    else:
        where = _save_traceback(exc)
    print(f"error: {bug_report(exc, f'running `whileai-skills {command}`', traceback_at=where)}",
          file=sys.stderr)
    return EXIT_BUG


def _save_traceback(exc: Exception) -> str:
    """Write the traceback to a file; say where it is (or how to see it)."""
    try:
        fd, path = tempfile.mkstemp(prefix="whileai-skills-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            traceback.print_exception(exc, file=fh)
    except OSError:
        return f"shown with {DEBUG_ENV}=1"
    return f"in {path}"
