"""Operations that keep experiments honest (the manage-experiments skill): register_experiment
(before the first launch), record_run (each run's five lines), list_experiments,
export_experiments, archive_experiment.

The experiments live in the run registry: at the shell ``--state-dir`` (else
``$WHILEAI_STATE_DIR``, else ``~/.whileai``); over MCP the server's environment decides, never an
argument. A registration is never changed and an experiment is archived, never deleted. An arm
is launched with ``launch_run(experiment=, arm=)`` and read by ``collect_run``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..defaults import CONFIDENCE_LEVEL, EXPERIMENT_TEXT_MAX, PROVE_EFFECT
from . import READS, RECORDS, WRITES, operation
from .args import (Arg, EffectSize, HoldoutSet, Level, Metric, NoiseRuns, OutFile, Overwrite,
                   Rule, RunId, RunStd, StateDir)
from .surface import HERE, Context

Sentence = Annotated[str, Field(min_length=1, max_length=EXPERIMENT_TEXT_MAX)]
Name = Annotated[str, Field(
    min_length=1, max_length=64, description="The experiment's name (letters, digits, '.', '_', "
                                             "'-').", examples=["dpo-round-1"]),
    Arg(positional=True, metavar="NAME")]


@operation(
    toolset="experiments", effect=RECORDS, title="Register an experiment before its first run",
    description=(
        "Write down, before any launch: the question, the hypothesis, the arms, the metric, the "
        "held-out set (its frozen file or content name), the smallest effect that matters, the "
        "noise floor and the decision rule (data, validated now). Launch each arm with "
        "launch_run, giving its `experiment` and `arm`; collect_run then gives the verdict by "
        "this rule and "
        "flags any other reading. Never changed once written."),
    result="whileai_core.experiments:Experiment", doing="registering an experiment")
def register_experiment(
        name: Name, *,
        question: Annotated[Sentence, Field(description="The question the experiment answers.")],
        hypothesis: Annotated[Sentence, Field(description="What you expect, before any run.")],
        arms: Annotated[dict[str, Sentence], Field(
            min_length=1, max_length=16, description=(
                "Each arm's name -> what that arm changes (at the shell: NAME=CHANGE words).")),
            Arg(metavar="NAME=CHANGE")],
        holdout: HoldoutSet, rule: Rule, metric: Metric = "pass",
        min_effect: Annotated[EffectSize, Field(description=(
            "The smallest change that matters, in (0, 1): 0.05 = 5 points."))] = PROVE_EFFECT,
        run_std: Annotated[RunStd, Field(description=(
            "Optional: noise_floor's run_std on re-runs of the held-out set (a noise_band "
            "clause needs it)."))] = None,
        noise_runs: NoiseRuns = None, level: Level = CONFIDENCE_LEVEL,
        state_dir: StateDir = None, ctx: Context = HERE):
    from ..experiments import register_experiment as register  # lazy: loads with the call

    return register(name, question=question, hypothesis=hypothesis, arms=arms, holdout=holdout,
                    rule=rule, metric=metric, min_effect=min_effect, run_std=run_std,
                    noise_runs=noise_runs, level=level, state_dir=state_dir, root=ctx.root)


@operation(
    toolset="experiments", effect=RECORDS, title="A run's five-line record",
    description=(
        "What changed, what moved (verdict, interval, n), why, what was learned, how to "
        "reproduce: one line each, kept in the registry; writing again adds a revision."),
    result="whileai_core.experiments:RunNote", doing="recording a run")
def record_run(
        id: RunId, *,
        changed: Annotated[Sentence, Field(description="What changed in this run (one line).")],
        moved: Annotated[Sentence, Field(description=(
            "What moved: the verdict with its interval and n (one line)."))],
        why: Annotated[Sentence, Field(description="Why it moved, or did not (one line).")],
        learned: Annotated[Sentence, Field(description="What was learned (one line).")],
        reproduce: Annotated[Sentence, Field(description=(
            "How to reproduce it: the launch call (one line)."))],
        state_dir: StateDir = None):
    from ..experiments import record_run as record  # lazy: loads with the call

    return record(id, changed=changed, moved=moved, why=why, learned=learned,
                  reproduce=reproduce, state_dir=state_dir)


@operation(
    cli="experiments", toolset="experiments", effect=READS, title="List experiments",
    description=("Every registered experiment, oldest first, with its registration, runs and "
                 "records (archived ones only when asked)."),
    result="whileai_core.experiments:ExperimentList", doing="listing experiments")
def list_experiments(
        *, include_archived: Annotated[bool, Field(description=(
            "Also list archived experiments."))] = False,
        state_dir: StateDir = None):
    from ..experiments import list_experiments as listed  # lazy: loads with the call

    return listed(include_archived=include_archived, state_dir=state_dir)


@operation(
    toolset="experiments", effect=WRITES, title="Export experiments as Markdown",
    description="Write the registrations, runs and records as one Markdown file.",
    result="whileai_core.experiments:ExperimentExport", doing="exporting experiments")
def export_experiments(
        out: Annotated[OutFile, Field(description="The Markdown file to write.",
                                      examples=["EXPERIMENTS.md"]),
                   Arg(positional=True, writes="markdown")], *,
        name: Annotated[str | None, Field(max_length=64, description=(
            "One experiment only; null: all of them."))] = None,
        include_archived: Annotated[bool, Field(description=(
            "Include archived experiments (marked)."))] = True,
        overwrite: Overwrite = False, state_dir: StateDir = None, ctx: Context = HERE):
    from ..experiments import export_experiments as export  # lazy: loads with the call

    return export(out, name=name, include_archived=include_archived, overwrite=overwrite,
                  state_dir=state_dir, root=ctx.root)


@operation(
    toolset="experiments", effect=RECORDS, title="Archive an experiment (never delete)",
    description=("Mark an experiment archived: it leaves the default list and takes no new "
                 "runs; its registration, runs and records stay."),
    result="whileai_core.experiments:Experiment", doing="archiving an experiment")
def archive_experiment(name: Name, *, state_dir: StateDir = None):
    from ..experiments import archive_experiment as archive  # lazy: loads with the call

    return archive(name, state_dir=state_dir)
