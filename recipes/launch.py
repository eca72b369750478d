"""What every recipe's ``run.py`` shares: the ``--smoke``/``--out`` contract and one error voice.

The run registry's local backend relies on it: ``run.py --smoke --out DIR`` runs the offline path
with no key and no GPU and writes ``DIR/results.json`` (with ``before_rows`` and ``after_rows``
when it has held-out samples). A bad flag or a missing token is one stderr line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from whileai_core.errors import ConfigError
from whileai_core.failures import explain
from whileai_core.io import write_atomic
from whileai_core.voice import CLI, speaking


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true",
                        help="run the offline CPU path (tiny random model, no key, no GPU)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for results.json (required with --smoke)")
    parser.add_argument("--force", action="store_true", help="replace an existing results.json")


def check_out(out: Path | None, *, overwrite: bool) -> None:
    """Refuse up front, before any training, when ``out/results.json`` exists and not ``--force``."""
    if out is not None and (Path(out) / "results.json").exists() and not overwrite:
        raise ConfigError(f"{Path(out) / 'results.json'} already exists; not overwriting it",
                          fix="pass --force or choose another --out")


def write_results(out: Path, results: dict, *, overwrite: bool) -> Path:
    return write_atomic(Path(out) / "results.json", json.dumps(results, indent=2, default=str),
                        overwrite=overwrite)


def guarded(main: Callable[[], int]) -> int:
    """Run ``main`` in the shell's voice; what is the user's to fix
    (``whileai_core.failures.explain``) becomes one stderr line and exit 2."""
    try:
        with speaking(CLI):
            return main()
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of the run
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        message = explain(exc)
        if message is None:  # a bug: let its traceback show
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
