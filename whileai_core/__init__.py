"""whileai_core: the library behind the whileai skill pack.

Decide how to post-train an open-weight model from graded rows: load rows once, read pass rates
with intervals clustered by task, compare runs, size a holdout, route to a method, and write a
config prime-rl accepts. Names are exported lazily so ``import whileai_core`` stays cheap (the MCP
server starts fast; scipy, torch and modal load only where used).
"""

from __future__ import annotations

import importlib
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
    "describe_rows": "describe",
    "classify_reward": "rewards",
    # stats
    "pass_at": "stats",
    "mean_reward": "stats",
    "field_share": "stats",
    "Rate": "stats",
    "compare": "stats",
    "compare_many": "stats",
    "noise_floor": "stats",
    "holdout_size": "stats",
    "PROVE_EFFECT": "defaults",
    # route
    "truncated_passes": "routing",
    "rollouts_per_task": "routing",
    "band": "routing",
    "split_share": "routing",
    "on_policy": "routing",
    "teacher_clears": "routing",
    "route": "routing",
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
    "prime_rl_config": "prime_rl.writer",
    "validate_config": "prime_rl.schema",
    "PrimeRLConfig": "prime_rl.result",
    "methods": "",
    "prime_rl": "",
    # --- judge and traces (issue: skills) ---
    "ablation_from_grades": "judge",
    "audit_judge": "judge",
    "label_sample": "judge",
    "cohen_kappa": "judge",
    "failures_needed": "judge",
    "order_reversal": "judge",
    "rubric_ablation": "judge",
    "wilson_interval": "judge",
    "decontaminate": "traces",
    "export_sft": "traces",
    "failed_asks": "traces",
    "FailedAsks": "traces",
    "load_traces": "traces",
    "rejection_sample": "traces",
    "select_sft": "traces",
    "split_by_task": "traces",
    "load_sft": "sft",
    "sft_examples": "sft",
    "check_chat_template": "sft",
    # --- importers (issue: real outputs) ---
    "import_rows": "importers",
    "detect_format": "importers",
    "Imported": "importers",
    # --- the eval set ---
    "eval_fingerprint": "evalset",
    "freeze_holdout": "evalset",
    "failure_capable": "evalset",
    "category_table": "categories",
    # --- wiring a project ---
    "init_project": "init",
    # --- runs (issue: launch_run) ---
    "launch_run": "runs",
    "run_status": "runs",
    "list_runs": "runs",
    "cancel_run": "runs",
    "collect_run": "runs",
    # --- preference pairs, GRPO plans, registered experiments ---
    "dpo_pairs": "pairs",
    "write_dpo_data": "pairs",
    "grpo_plan": "methods.grpo_plan",
    "register_experiment": "experiments",
    "record_run": "experiments",
    "list_experiments": "experiments",
    "export_experiments": "experiments",
    "archive_experiment": "experiments",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whileai_core' has no attribute {name!r}")
    if module == "":
        return importlib.import_module(f"{__name__}.{name}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
