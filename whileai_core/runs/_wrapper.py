"""The process a local run starts: ``python -m whileai_core.runs._wrapper RUN_DIR LOCK_FD -- CMD``.

It writes its pid to RUN_DIR, runs CMD with its output in ``log.txt``, then writes CMD's exit
code, holding the run's lock (LOCK_FD) throughout: an exit code means finished, a free lock
without one means the process died. CMD runs user code, so it is held as a reward is
(``confine.contain``): its own namespaces where allowed, no privilege, process, memory and
wall-clock limits (exit 124 past ``--timeout``), and every process it left killed at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from .. import confine
from ..defaults import CANCEL_GRACE_S
from ..io import write_atomic

PID_FILE, EXIT_FILE, LOG_FILE = "pid", "exit_code", "log.txt"

TIMED_OUT, TOO_MANY = 124, 125
_FLAGS = ("--timeout", "--memory-mb", "--processes")


def main(argv: list[str]) -> int:
    settings: dict[str, str] = {}
    while argv and argv[0] in _FLAGS:
        flag, value, *argv = argv
        settings[flag] = value
    run_dir, lock_fd, sep, *command = argv
    if sep != "--" or not command:
        print("usage: python -m whileai_core.runs._wrapper [--timeout S] [--memory-mb MB] "
              "[--processes N] RUN_DIR LOCK_FD -- CMD...", file=sys.stderr)
        return 2
    timeout_s = float(settings.get("--timeout", "inf"))
    processes = int(settings.get("--processes", "1000000"))
    folder = Path(run_dir)
    os.set_inheritable(int(lock_fd), False)  # the lock stays with this process, not the recipe
    write_atomic(folder / PID_FILE, f"{os.getpid()}\n", overwrite=True)
    with open(folder / LOG_FILE, "ab", buffering=0) as log:
        if "--memory-mb" in settings:
            confine.limit_memory(int(settings["--memory-mb"]))
        started: list[subprocess.Popen] = []

        def start() -> int:
            started.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT))
            return started[0].pid

        # SIGTERM (a cancel) is passed on to CMD, which gets CANCEL_GRACE_S to end; then it and
        # everything it left are killed
        outcome = confine.contain(start, timeout_s=timeout_s, max_processes=processes,
                                  stop_grace_s=CANCEL_GRACE_S)
        for child in started:  # reaped by the supervision, wherever it ran
            child.returncode = outcome.code if outcome.code is not None else -signal.SIGKILL
        code = outcome.code
        if outcome.how == confine.NOT_STARTED:  # the command itself cannot start, as a shell says
            log.write(f"cannot start {command[0]}: {outcome.error}\n".encode())
            code = 127
        elif outcome.how == confine.TIMED_OUT:
            log.write(f"\nwhileai: the run passed its time limit of {timeout_s:g} s and was "
                      "killed\n".encode())
            code = TIMED_OUT
        elif outcome.how == confine.TOO_MANY:
            log.write(f"\nwhileai: the run started more than {processes} processes and was "
                      "killed\n".encode())
            code = TOO_MANY
        elif outcome.how == confine.STOPPED and code is None:
            code = -signal.SIGKILL
    write_atomic(folder / EXIT_FILE, f"{code}\n", overwrite=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a subprocess
    sys.exit(main(sys.argv[1:]))
