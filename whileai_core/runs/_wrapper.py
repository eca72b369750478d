"""The process a local run starts: ``python -m whileai_core.runs._wrapper RUN_DIR LOCK_FD -- CMD``.

It writes its pid, runs CMD with its output in ``log.txt``, then writes CMD's exit code, all in
RUN_DIR, while it keeps the run's lock (inherited as LOCK_FD). A later status call reads these:
an exit code means the run finished (0: succeeded); a free lock with no exit code means the
process died (killed, machine restarted). SIGTERM/SIGINT are passed on to CMD.

CMD runs user code (a data folder's grader), so it gets an address-space limit (``RLIMIT_AS``,
``WHILEAI_CHILD_MEMORY_MB``, set here and inherited) and a wall-clock limit
(``--timeout S``): past it CMD is killed and the exit code is 124, as ``timeout(1)`` gives.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ..io import write_atomic

PID_FILE, EXIT_FILE, LOG_FILE = "pid", "exit_code", "log.txt"


TIMED_OUT = 124


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        size = megabytes << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    except (ImportError, ValueError, OSError):  # no RLIMIT_AS here: the timeout still holds
        pass


def main(argv: list[str]) -> int:
    timeout_s, memory_mb = None, None
    while argv and argv[0] in ("--timeout", "--memory-mb"):
        flag, value, *argv = argv
        if flag == "--timeout":
            timeout_s = float(value)
        else:
            memory_mb = int(value)
    run_dir, lock_fd, sep, *command = argv
    if sep != "--" or not command:
        print("usage: python -m whileai_core.runs._wrapper [--timeout S] [--memory-mb MB] RUN_DIR "
              "LOCK_FD -- CMD...", file=sys.stderr)
        return 2
    folder = Path(run_dir)
    os.set_inheritable(int(lock_fd), False)  # the lock stays with this process, not the recipe
    write_atomic(folder / PID_FILE, f"{os.getpid()}\n", overwrite=True)
    with open(folder / LOG_FILE, "ab", buffering=0) as log:
        if memory_mb is not None:
            _limit_memory(memory_mb)
        try:
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT)
        except OSError as exc:  # the command itself cannot start: say so, as a shell would
            log.write(f"cannot start {command[0]}: {exc}\n".encode())
            write_atomic(folder / EXIT_FILE, "127\n", overwrite=True)
            return 0

        def forward(signum, _frame):
            child.send_signal(signum)

        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, forward)
        try:
            code = child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            log.write(f"\nwhileai: the run passed its time limit of {timeout_s:g} s and was "
                      "killed\n".encode())
            code = TIMED_OUT
    write_atomic(folder / EXIT_FILE, f"{code}\n", overwrite=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a subprocess
    sys.exit(main(sys.argv[1:]))
