"""Tools that keep experiments honest: register_experiment (before the first launch),
record_run (each run's five lines), list_experiments, export_experiments, archive_experiment.

The registry is the server's state directory (as for the run tools), never an argument. A
registration is never changed and an experiment is archived, never deleted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from whileai_core.defaults import CONFIDENCE_LEVEL, EXPERIMENT_TEXT_MAX, PROVE_EFFECT
from whileai_core.experiments import Experiment, ExperimentExport, ExperimentList, RunNote

from .runs_tools import RunIdArg
from .tooling import WRITES_FILE, Env, LevelArg, ToolInput, ToolSpec

RECORDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                          open_world_hint=False)
"""Adds to the run registry; never changes or removes what is there (a registration is written
once; a record's revision is added beside the earlier ones; an archive only marks)."""
READS_REGISTRY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                 idempotent_hint=True, open_world_hint=False)

Sentence = Annotated[str, Field(min_length=1, max_length=EXPERIMENT_TEXT_MAX)]
NameArg = Annotated[str, Field(max_length=64, description="The experiment's name (letters, "
                                                          "digits, '.', '_', '-').",
                               examples=["dpo-round-1"])]
RULE_DOC = ("The decision rule as data: {\"ship_if\": [clause, ...]}, ship when every clause "
            "holds. Clauses: {\"kind\": \"delta_above\", \"bound\": 0.05} (the paired delta's "
            "interval lies above bound); {\"kind\": \"no_category_drop\", \"field\": "
            "\"category\", \"beyond\": \"noise_band\" or a number} (no category's interval lies "
            "below 0 with its delta past the band).")


class RegisterExperimentInput(ToolInput):
    name: NameArg
    question: Annotated[Sentence, Field(description="The question the experiment answers.")]
    hypothesis: Annotated[Sentence, Field(description="What you expect, before any run.")]
    arms: Annotated[dict[str, Sentence], Field(
        min_length=1, max_length=16, description="Each arm's name -> what that arm changes.")]
    holdout: Annotated[str, Field(
        description="The frozen held-out file (relative to the root; its tasks are checked at "
                    "collection) or its content name from eval_fingerprint.",
        examples=["evals/holdout-b7c37b988f77.jsonl"])]
    rule: Annotated[dict[str, Any], Field(description=RULE_DOC)]
    metric: Annotated[Literal["pass", "reward"], Field(
        description="'pass': pass rates; 'reward': mean rewards (a graded reward).")] = "pass"
    min_effect: Annotated[float, Field(gt=0, le=1, description=(
        "The smallest change that matters."))] = PROVE_EFFECT
    run_std: Annotated[float | None, Field(ge=0, le=1, description=(
        "noise_floor's run_std on re-runs of the held-out set (needed by a noise_band "
        "clause)."))] = None
    noise_runs: Annotated[int | None, Field(ge=2, le=10_000, description=(
        "The re-runs run_std rests on (noise_floor's n_runs)."))] = None
    level: LevelArg = CONFIDENCE_LEVEL


def register_experiment_tool(args: RegisterExperimentInput, env: Env) -> Experiment:
    from whileai_core.experiments import register_experiment

    return register_experiment(args.name, question=args.question, hypothesis=args.hypothesis,
                               arms=args.arms, holdout=args.holdout, rule=args.rule,
                               metric=args.metric, min_effect=args.min_effect,
                               run_std=args.run_std, noise_runs=args.noise_runs,
                               level=args.level, root=env.workspace.door)


class RecordRunInput(ToolInput):
    id: RunIdArg
    changed: Annotated[Sentence, Field(description="What changed in this run (one line).")]
    moved: Annotated[Sentence, Field(description="What moved: the verdict with its interval "
                                                 "and n (one line).")]
    why: Annotated[Sentence, Field(description="Why it moved, or did not (one line).")]
    learned: Annotated[Sentence, Field(description="What was learned (one line).")]
    reproduce: Annotated[Sentence, Field(description="How to reproduce it: the launch call "
                                                     "(one line).")]


def record_run_tool(args: RecordRunInput, env: Env) -> RunNote:
    from whileai_core.experiments import record_run

    return record_run(args.id, changed=args.changed, moved=args.moved, why=args.why,
                      learned=args.learned, reproduce=args.reproduce)


class ListExperimentsInput(ToolInput):
    include_archived: Annotated[bool, Field(description="Also list archived experiments.")
                                ] = False


def list_experiments_tool(args: ListExperimentsInput, env: Env) -> ExperimentList:
    from whileai_core.experiments import list_experiments

    return list_experiments(include_archived=args.include_archived)


class ExportExperimentsInput(ToolInput):
    out: Annotated[str, Field(description="The Markdown file to write, relative to the root.",
                              examples=["EXPERIMENTS.md"])]
    name: Annotated[str | None, Field(max_length=64, description=(
        "One experiment only; null: all of them."))] = None
    include_archived: Annotated[bool, Field(description="Include archived ones (marked).")
                                ] = True
    overwrite: Annotated[bool, Field(description="Replace `out` if it exists.")] = False


def export_experiments_tool(args: ExportExperimentsInput, env: Env) -> ExperimentExport:
    from whileai_core.experiments import export_experiments

    return export_experiments(args.out, name=args.name, include_archived=args.include_archived,
                              overwrite=args.overwrite, root=env.workspace.door)


class ArchiveExperimentInput(ToolInput):
    name: NameArg


def archive_experiment_tool(args: ArchiveExperimentInput, env: Env) -> Experiment:
    from whileai_core.experiments import archive_experiment

    return archive_experiment(args.name)


TOOLS = [
    ToolSpec(
        name="register_experiment", title="Register an experiment before its first run",
        description=(
            "Write down, before any launch: the question, the hypothesis, the arms, the metric, "
            "the held-out set (its frozen file or content name), the smallest effect that "
            "matters, the noise floor and the decision rule (data, validated now). Launch each "
            "arm with launch_run(experiment=, arm=); collect_run then gives the verdict by this "
            "rule and flags any other reading. Never changed once written."),
        input=RegisterExperimentInput, output=Experiment, run=register_experiment_tool,
        annotations=RECORDS, doing="registering an experiment", core=("register_experiment",)),
    ToolSpec(
        name="record_run", title="A run's five-line record",
        description=(
            "What changed, what moved (verdict, interval, n), why, what was learned, how to "
            "reproduce: one line each, kept in the registry; writing again adds a revision."),
        input=RecordRunInput, output=RunNote, run=record_run_tool, annotations=RECORDS,
        doing="recording a run", core=("record_run",)),
    ToolSpec(
        name="list_experiments", title="List experiments",
        description="Every registered experiment with its registration, runs and records "
                    "(archived ones only when asked).",
        input=ListExperimentsInput, output=ExperimentList, run=list_experiments_tool,
        annotations=READS_REGISTRY, doing="listing experiments", core=("list_experiments",)),
    ToolSpec(
        name="export_experiments", title="Export experiments as Markdown",
        description="Write the registrations, runs and records as one Markdown file.",
        input=ExportExperimentsInput, output=ExperimentExport, run=export_experiments_tool,
        annotations=WRITES_FILE, doing="exporting experiments", core=("export_experiments",)),
    ToolSpec(
        name="archive_experiment", title="Archive an experiment (never delete)",
        description="Mark an experiment archived: it leaves the default list and takes no new "
                    "runs; its registration, runs and records stay.",
        input=ArchiveExperimentInput, output=Experiment, run=archive_experiment_tool,
        annotations=RECORDS, doing="archiving an experiment", core=("archive_experiment",)),
]
