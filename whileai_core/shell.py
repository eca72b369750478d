"""The ``whileai-skills`` program: Ctrl-C is quiet from its first line, then the CLI runs.

The console script imports this module, not ``whileai_core.cli``, so a Ctrl-C while the CLI's
modules load (about 0.2 s) exits 130 with one word instead of a traceback."""

from __future__ import annotations

from .interrupts import started, while_starting


def main() -> int:
    while_starting()
    from .cli import main as run  # lazy: loading the CLI is what a Ctrl-C may interrupt

    return run(on_ready=started)
