"""Launch training runs and find them again: a registry on SQLite, a Modal and a local backend.

``launch_run`` plans (and with ``confirm=True`` starts) a recipe or a prime-rl config;
``run_status``, ``list_runs``, ``cancel_run`` and ``collect_run`` come back to it from any process.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy: ``whileai_core.experiments`` reads ``.registry`` while ``.api`` and ``.collect`` read the
# experiments; importing nothing here keeps that one-way (a submodule import runs this file).
_WHERE = {"Cancelled": "results", "Launch": "results", "RunList": "results", "RunPlan": "results",
          "Collected": "results", "cancel_run": "api", "launch_run": "api", "list_runs": "api",
          "run_status": "api", "collect_run": "collect", "Registry": "registry",
          "RunRecord": "registry", "state_dir": "registry", "PlanChanged": "plan"}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
