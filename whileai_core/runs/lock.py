"""The per-run lock: an ``flock`` on ``<run dir>/lock``, held while a run is launched and, for a
local run, while it runs (its wrapper inherits the open file). The kernel drops it when the
holder dies, so a free lock means nothing is launching or running the run, no pid trusted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..defaults import REGISTRY_LOCK_WAIT_S
from ..errors import ConfigError

LOCK_FILE = "lock"
_RETRY_S = 0.01
_WAIT_S = 3 * REGISTRY_LOCK_WAIT_S  # the other launcher's claim itself may wait for the registry


def _open(run_dir: Path) -> int:
    run_dir.mkdir(parents=True, exist_ok=True)
    return os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def launch_lock(run_dir: Path, *, taken: Callable[[], bool]) -> Iterator[int | None]:
    """Hold the run's lock and yield its fd, or yield None once ``taken()`` says the run is
    someone else's (another launcher claimed it, or it is running and its wrapper holds the
    lock): a second launch returns at once instead of waiting for the first run to end."""
    fd = _open(run_dir)
    deadline = time.monotonic() + _WAIT_S
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if taken():
                    yield None
                    return
                if time.monotonic() > deadline:
                    raise ConfigError(
                        f"another process has held the launch lock of {run_dir.name} for more "
                        f"than {_WAIT_S:g} s without recording the run", fix="retry in a moment; "
                        "run_status shows the run once that launch has recorded it")
                time.sleep(_RETRY_S)
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
