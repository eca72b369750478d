"""Ctrl-C while a program is still starting (imports, the parser, the server's set-up): exit code
130 and at most one word, never a traceback. A program calls :func:`while_starting` first and
:func:`started` once its own handling of ``KeyboardInterrupt`` is in place; importing the
library never touches the signal handlers."""

from __future__ import annotations

import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C


def while_starting(word: str | None = "interrupted") -> None:
    """Until :func:`started`, Ctrl-C exits 130, printing ``word`` (None: nothing) to stderr."""

    def interrupted(signum, frame):  # noqa: ARG001 - the signal handler's signature
        if word:
            try:
                print(word, file=sys.stderr, flush=True)
            except (OSError, ValueError):
                pass
        raise SystemExit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, interrupted)


def started() -> None:
    """Ctrl-C raises ``KeyboardInterrupt`` again, for the program's own handler."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
