"""Launch training runs and find them again: a registry on SQLite, a Modal and a local backend.

``launch_run`` plans (and with ``confirm=True`` starts) a recipe or a prime-rl config;
``run_status``, ``list_runs``, ``cancel_run`` and ``collect_run`` come back to it later, from any
process. The registry lives in the state directory (``--state-dir``, ``$WHILEAI_STATE_DIR``, or
``~/.whileai``).
"""

from __future__ import annotations

from .api import (Cancelled, Launch, RunList, RunPlan, cancel_run, launch_run,
                  list_runs, run_status)
from .collect import collect_run
from .results import Collected
from .registry import Registry, RunRecord, state_dir

__all__ = ["Cancelled", "Collected", "Launch", "Registry", "RunList", "RunPlan", "RunRecord",
           "cancel_run", "collect_run", "launch_run", "list_runs", "run_status", "state_dir"]
