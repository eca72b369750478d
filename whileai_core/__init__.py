"""whileai_core: the library behind the whileai skill pack.

Decide how to post-train an open-weight model from graded rows: load rows once, read pass rates
with intervals clustered by task, compare runs, size a holdout, route to a method, and write a
config prime-rl accepts. Names are exported lazily so ``import whileai_core`` stays cheap (the MCP
server starts fast; scipy, torch and modal load only where used).

Every operation (``whileai_core.operations``: what the CLI and the MCP server offer) is exported
under its own name, read from ``calls.json`` (generated from the declarations); ``_EXPORTS``
lists the other public names.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it (one line per name; keep sorted within a section)
_EXPORTS: dict[str, str] = {
    # errors and defaults
    "WhileaiError": "errors",
    "RowsError": "errors",
    "SpecError": "errors",
    "ConfigError": "errors",
    "ArgumentError": "errors",
    "defaults": "",
    # rows
    "Rows": "rows",
    "load_rows": "rows",
    "classify_reward": "rewards",
    # stats
    "pass_at": "stats",
    "mean_reward": "stats",
    "field_share": "stats",
    "Rate": "stats",
    "PROVE_EFFECT": "defaults",
    # route
    "route": "routing",  # route_rows, by the name the skills call it
    "truncated_passes": "routing",
    "rollouts_per_task": "routing",
    "band": "routing",
    "split_share": "routing",
    "on_policy": "routing",
    "row_facts": "routing",
    # models
    "model_size_b": "models",
    # --- methods and prime-rl (issue: methods/config) ---
    "Endpoint": "methods.specs",
    "RLMethod": "methods.specs",
    "OPD": "methods.specs",
    "OPSD": "methods.specs",
    "Async": "methods.specs",
    "method_spec": "methods.specs",
    "GroupwiseGrading": "methods.grouping",
    "FlashReinforce": "methods.single_rollout",
    "SAO": "methods.single_rollout",
    "BPCO": "methods.single_rollout",
    "ReinforceAda": "methods.sampling",
    "icepop_loss": "methods.icepop",
    "PrimeRLConfig": "prime_rl.result",
    "methods": "",
    "prime_rl": "",
    # --- judge and traces (issue: skills) ---
    "ablation_from_grades": "judge",
    "label_sample": "judge",
    "cohen_kappa": "judge",
    "wilson_interval": "judge",
    "FailedAsks": "traces",
    "load_traces": "traces",
    "rejection_sample": "traces",
    "load_sft": "sft",
    "sft_examples": "sft",
    "check_chat_template": "sft",
    # --- importers (issue: real outputs) ---
    "detect_format": "importers",
    "Imported": "importers",
    # --- runs (issue: launch_run) ---
}



def _operations() -> dict[str, str]:
    """Operation name -> its declaring module, from ``calls.json`` (generated from the
    declarations by ``python -m whileai_core.operations``: this table stays below them)."""
    from .voice import OPS

    return {name: op.module for name, op in OPS.items()}


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(set(_EXPORTS) | set(_operations()))
    module = _EXPORTS.get(name)
    if module is None:
        # a submodule being imported (``from . import safejson``) is not an operation: looking
        # it up would load every declaration in the middle of another module's import
        here = importlib.util.find_spec(f"{__name__}.{name}") if not name.startswith("_") \
            else None
        where = _operations().get(name) if not name.startswith("_") and here is None else None
        if where is None:
            raise AttributeError(f"module 'whileai_core' has no attribute {name!r}")
        value = getattr(importlib.import_module(where), name)
        globals()[name] = value
        return value
    if module == "":
        return importlib.import_module(f"{__name__}.{name}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | set(_operations()))
