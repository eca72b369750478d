"""The experiments as one Markdown file: each registration, then each run with its five lines.

Archived experiments are included by default and marked, since an archive is kept to be read.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..operations import WRITES, operation
from ..operations.args import Arg, OutFile, Overwrite, StateDir, WorkspaceRoot
from ..result import Result
from .store import Experiment, check_name, get_experiment, list_experiments
from ..io import write_atomic


class ExperimentExport(Result):
    path: str
    n_experiments: int
    n_runs: int
    n_records: int

    def render(self) -> str:
        return (f"wrote {self.n_experiments} experiment(s), {self.n_runs} run(s), "
                f"{self.n_records} record(s) to {self.path}")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def experiment_markdown(experiment: Experiment) -> str:
    """One experiment as Markdown: the registration, then each run and its record."""
    reg = experiment.registration
    state = f"archived {experiment.archived_at[:19]}Z" if experiment.archived_at else "open"
    lines = [f"## {experiment.name}", "",
             f"Registered {experiment.registered_at[:19]}Z, before its runs ({state}).", "",
             f"- **Question:** {reg.question}", f"- **Hypothesis:** {reg.hypothesis}",
             f"- **Metric:** {reg.metric} on `{reg.holdout}`"
             + (f" ({reg.holdout_tasks} tasks)" if reg.holdout_tasks else ""),
             f"- **Smallest effect that matters:** {reg.min_effect:.3f}",
             f"- **Noise floor:** {reg.noise()}", f"- **Decision rule:** {reg.rule.sentence()}", "",
             "| arm | what it changes |", "|---|---|"]
    lines += [f"| {_cell(name)} | {_cell(change)} |" for name, change in reg.arms.items()]
    lines.append("")
    if not experiment.runs:
        lines += ["No runs yet.", ""]
    for run in experiment.runs:
        lines += [f"### {run.id} ({run.arm or 'no arm'}, {run.status})", ""]
        if run.record is None:
            lines += ["No record written yet.", ""]
            continue
        note = run.record
        revised = f", revision {note.revision}" if note.revision > 1 else ""
        lines += [f"- **What changed:** {note.changed}", f"- **What moved:** {note.moved}",
                  f"- **Why:** {note.why}", f"- **What was learned:** {note.learned}",
                  f"- **How to reproduce:** `{note.reproduce}`", "",
                  f"Written {note.written_at[:19]}Z{revised}.", ""]
    return "\n".join(lines)


@operation(
    toolset="experiments", effect=WRITES, title="Export experiments as Markdown",
    description="Write the registrations, runs and records as one Markdown file.",
    doing="exporting experiments")
def export_experiments(
        out: Annotated[OutFile, Field(description="The Markdown file to write.",
                                      examples=["EXPERIMENTS.md"]),
                   Arg(positional=True, writes="markdown")], *,
        name: Annotated[str | None, Field(max_length=64, description=(
            "One experiment only; null: all of them."))] = None,
        include_archived: Annotated[bool, Field(description=(
            "Include archived experiments (marked)."))] = True,
        overwrite: Overwrite = False, state_dir: StateDir = None,
        root: WorkspaceRoot = None) -> ExperimentExport:
    """Write the experiments (or the one ``name``d) as Markdown to ``out``, atomically."""
    if name is not None:
        found = [get_experiment(check_name(name, "name"), state_dir=state_dir)]
    else:
        found = list_experiments(include_archived=include_archived,
                                 state_dir=state_dir).experiments
    body = ["# Experiments", ""]
    if not found:
        body.append("None registered.")
    body += [experiment_markdown(e) for e in found]
    path = write_atomic(out, "\n".join(body).rstrip() + "\n", overwrite=overwrite, root=root)
    runs = [r for e in found for r in e.runs]
    return ExperimentExport(path=str(path), n_experiments=len(found), n_runs=len(runs),
                            n_records=sum(r.record is not None for r in runs))
