"""A run that learns nothing, or the wrong thing: the signatures, step by step, from its files.

Its parts: ``doctor_files`` reads a run's files into per-step rollout rows and logged metrics,
``doctor_steps`` counts the per-step rates over groups, ``doctor_signatures`` tests the
signatures, ``doctor_results`` holds the answer; here :func:`diagnose_run` puts them together
(and re-exports the names other modules import).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..bootstrap import check_level
from ..defaults import BOOTSTRAP_SEED, CONFIDENCE_LEVEL, DOCTOR_MAX_OFF_POLICY, DOCTOR_STEPS_SHOWN
from ..errors import ArgumentError
from ..operations import READS, VERDICT, operation
from ..operations.args import RUN_OR_PATH, Arg, Level, StateDir
from .doctor_files import _load
from .doctor_results import (SIGNATURES, Diagnosis, DoctorStep, Finding, Interval, Signature,
                             Status)
from .doctor_signatures import _signatures
from .doctor_steps import RunArrays, _step_numbers

__all__ = ["SIGNATURES", "Diagnosis", "DoctorStep", "Finding", "Interval", "RunArrays",
           "Signature", "Status", "diagnose_run"]


@operation(
    cli="doctor", toolset="hacking", effect=READS, title="Is the run learning anything?",
    description=(
        "Reads a run's own files (prime-rl rollouts and metrics, TRL's log and the recipes' "
        "watch.jsonl) and names, per step, what makes a run learn nothing or the wrong thing: "
        "zero_advantage (groups with one reward), truncation_lock_in, reward_pays_feature, "
        "staleness (past max_off_policy_steps), verifier_noise (identical replies scored "
        "differently), diversity_collapse, entropy_runaway, kl_runaway; each found / clear / "
        "not_checked with evidence, an interval where it is a rate, the threshold's source and "
        "the action. Verdict healthy / sick / not_enough_data."),
    exit_code=VERDICT, doing="diagnosing a run")
def diagnose_run(
        source: Annotated[str, Field(min_length=1, max_length=1000, description=(
            "A run id from launch_run ('run-' and 12 hex digits), or a path: a prime-rl run "
            "folder (rollouts/step_<S>/train/..., metrics.jsonl, configs/orchestrator.json), a "
            "TRL output folder (the recipes' watch.jsonl, trainer_state.json), a "
            "watch.jsonl, or a rows file whose rows carry `step` (what watch_run reads)."),
            examples=["runs/prime-1", "run-0123456789ab"]),
            Arg(RUN_OR_PATH, positional=True)], *,
        max_off_policy_steps: Annotated[int | None, Field(ge=0, le=100_000, description=(
            "The staleness bound; null: the run's configs/orchestrator.json, else prime-rl's "
            "default 8."))] = None,
        level: Level = CONFIDENCE_LEVEL, state_dir: StateDir = None,
        seed: Annotated[int | None, Arg(cli=False, mcp=False)] = BOOTSTRAP_SEED) -> Diagnosis:
    """Name the signatures of a run that learns nothing or the wrong thing, per step."""
    level = check_level(level)
    if max_off_policy_steps is not None and (
            isinstance(max_off_policy_steps, bool) or not isinstance(max_off_policy_steps, int)
            or max_off_policy_steps < 0):
        raise ArgumentError(f"`max_off_policy_steps` must be an integer >= 0, got "
                            f"{max_off_policy_steps!r}", fix="the run's orchestrator setting, "
                            f"or leave it out (default {DOCTOR_MAX_OFF_POLICY})")
    label, steps, metrics, run_max_off, records, notes = _load(source, state_dir)
    max_off = (max_off_policy_steps if max_off_policy_steps is not None else
               run_max_off if run_max_off is not None else DOCTOR_MAX_OFF_POLICY)
    if max_off_policy_steps is None and run_max_off is None and any(
            r.get("policy_version") is not None for rows in steps.values() for r in rows):
        notes.append(f"no configs/orchestrator.json: staleness read against prime-rl's default "
                     f"max_off_policy_steps {DOCTOR_MAX_OFF_POLICY}")
    all_steps = sorted(set(steps) | set(metrics))
    nums = _step_numbers(RunArrays.from_rows(steps, all_steps), metrics, level)
    if not nums:
        return Diagnosis(verdict="not_enough_data", source=label, n_steps=0, found=[],
                         findings=[], steps=[], steps_shown="0 of 0", level=level,
                         max_off_policy_steps=max_off, notes=notes,
                         next_step="train for a few steps with the file monitor (prime-rl) or "
                                   "the recipes' watch callback (TRL), then diagnose again")
    findings = _signatures(nums, records, max_off, level, seed)
    by_step: dict[int, list[str]] = {}
    for f in findings:
        for s in f.steps:
            by_step.setdefault(s, []).append(f.signature)
    table = [DoctorStep(**{k: v for k, v in n.items() if k in DoctorStep.model_fields},
                        found=by_step.get(n["step"], [])) for n in nums]
    found = [f.signature for f in findings if f.status == "found"]
    checked = [f for f in findings if f.status != "not_checked"]
    verdict = "sick" if found else "healthy" if checked else "not_enough_data"
    next_step = ("; ".join(f"{f.signature}: {f.action}" for f in findings if f.status == "found")
                 if found else "nothing found: keep training, and diagnose again after more steps"
                 if checked else "write the rollouts with their rewards and replies (prime-rl's "
                 "file monitor, the recipes' watch callback), then diagnose again")
    shown = table[-DOCTOR_STEPS_SHOWN:]
    return Diagnosis(verdict=verdict, source=label, n_steps=len(table), found=found,
                     findings=findings, steps=shown, steps_shown=f"{len(shown)} of {len(table)}",
                     max_off_policy_steps=max_off, level=level, next_step=next_step, notes=notes)
