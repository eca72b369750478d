"""Table of contents: the modules whose ``TOOLS`` the server offers, in the order listed.

To add a capability: write ``server/<domain>_tools.py`` with an input model, a plain function
and a ``ToolSpec`` per tool (see ``server.tooling``), export them as ``TOOLS``, and add one line
here. Then regenerate the tools/list snapshot and the start-up cache ``server/tools.json``
(``UPDATE_SNAPSHOTS=1 pytest tests/test_server_snapshot.py``) and review the snapshot's diff.
"""

from __future__ import annotations

import importlib

from .tooling import ToolSpec

TOOL_MODULES = (
    "server.stats_tools",   # describe_rows, route_rows, inspect_rows, pass_at, compare_runs,
                            # compare_many, holdout_size, teacher_clears
    "server.rates_tools",   # noise_floor, mean_reward, field_share, task_table
    "server.config_tools",  # prime_rl_config, validate_config
    "server.judge_tools",   # audit_judge, order_reversal, failures_needed, rubric_ablation
    "server.traces_tools",  # split_by_task, failed_asks, select_sft, decontaminate, export_sft
    "server.methods_tools",  # rollout_update, shape_group
    "server.evalset_tools",  # eval_fingerprint, freeze_holdout, failure_capable, category_table
    "server.runs_tools",    # launch_run, run_status, list_runs, collect_run, cancel_run
    "server.import_tools",  # import_rows
    "server.hacking_tools",  # cheat_probes, prove_reward, hack_scan, watch_run
    "server.training_tools",  # dpo_pairs, write_dpo_data, grpo_plan
    "server.experiments_tools",  # register_experiment, record_run, list_experiments,
                                 # export_experiments, archive_experiment
    "server.picture_tools",  # plot_band, plot_forest, plot_judge_audit
    "server.skills",        # list_skills, get_skill (+ skill:// resources and prompts)
)

# Library calls a skill step makes that no tool serves, and why: the agent does these itself,
# with its own model, grader or judge (the server cannot call them), or they are not calls.
# A skill step that calls one of these shows an {"agent": ...} line in its ```mcp block.
AGENT_SIDE = {
    "rejection_sample": "it calls your sampler and your grader for every attempt; sample and "
                        "grade with your own model, write the graded attempts as JSONL",
    "defaults": "constants, not a call: every tool's input schema states its defaults",
}


def tool_specs() -> list[ToolSpec]:
    """Every tool spec, in table-of-contents order; a duplicate name is a wiring bug."""
    specs: list[ToolSpec] = []
    for module in TOOL_MODULES:
        specs.extend(importlib.import_module(module).TOOLS)
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuntimeError(f"tool names registered twice: {dupes}")
    return specs
