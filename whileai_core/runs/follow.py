"""Following a run until it finishes (the MCP server's runs served as tasks). Each look asks the
backend (``run_status``) and reports a progress step, so a listener that stops the call stops it
between two looks, never inside a registry write.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..defaults import RUN_TASK_POLL_S
from ..progress import step
from .api import run_status
from .registry import ACTIVE, RunRecord


def follow_run(id: str, *, state_dir: str | os.PathLike | None = None,
               every_s: float = RUN_TASK_POLL_S,
               until: Callable[[RunRecord], bool] | None = None,
               pause: Callable[[float], None] = time.sleep) -> RunRecord:
    """Look at run ``id`` every ``every_s`` seconds until it leaves launching/running (or
    ``until(record)`` is true); the last record seen. ``pause(seconds)`` waits between looks
    (a caller that can be stopped passes one that raises)."""
    started = time.monotonic()
    looks = 0
    while True:
        record = run_status(id, state_dir=state_dir)
        if record.status not in ACTIVE or (until is not None and until(record)):
            return record
        looks += 1
        step(looks, None, f"following {record.id}: {record.status} "
                          f"({time.monotonic() - started:.0f} s, look {looks})")
        pause(every_s)
