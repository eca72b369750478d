"""The per-run lock: held while a run is being launched and, for a local run, while it runs.

It is an ``flock`` on ``<run dir>/lock``. The kernel drops it when the holder dies, however it
dies, so "nobody holds it" means "nothing is launching or running this run" without trusting a
pid that the system may have handed to another process since. The launching process takes it
before the registry write; a local run's wrapper inherits the same open file and keeps it until
it has written its exit code.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "lock"


def _open(run_dir: Path) -> int:
    run_dir.mkdir(parents=True, exist_ok=True)
    return os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def launch_lock(run_dir: Path) -> Iterator[int]:
    """Hold the run's lock (waiting for another launcher of the same run); yields its fd."""
    fd = _open(run_dir)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # a child that inherited the fd keeps the lock


def is_held(run_dir: Path) -> bool:
    """Whether some live process (a launcher or a run's wrapper) holds the run's lock."""
    if not (run_dir / LOCK_FILE).exists():
        return False
    fd = _open(run_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
