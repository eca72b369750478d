"""What an import returns: the graded rows (kept off the JSON) and a bounded summary of them,
with the mean reward's interval (so this module reads the statistics; the readers below it do
not)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr

from ..errors import ArgumentError
from ..io import write_jsonl
from ..operations import WRITES, operation
from ..operations.args import OUT, PATH, Arg, Overwrite
from ..result import Result, fmt_rate
from ..safepath import Root, UserPath
from ..rows import load_rows
from ..stats import Rate, pass_rate
from .detect import read_foreign
from .foreign import ForeignRows
from ..voice import name as op_name

PREVIEW_ROWS = 3
LIST_CAP = 20


class StepCount(Result):
    """Rows of one training step (prime-rl): scored, errored, and the policy versions behind them."""

    step: int | None
    rows: int
    errored: int
    policy_versions: list[int]
    mean_reward: Rate | None = None


class Imported(Result):
    """Graded rows made from another system's output, and what was read to make them.

    ``rows`` (a property, not part of the JSON) holds every row; ``preview`` the first few;
    ``files`` and ``by_step`` are bounded, a note saying how many there are. Errored records are
    counted and left out of ``rows`` unless kept (then they carry ``errored: true``).
    """

    format: str
    source: str
    files: list[str]
    n_files: int
    n_rows: int
    n_tasks: int
    errored: int
    kept_errored: bool
    mean_reward: Rate | None
    models: dict[str, int]
    metric: str | None = None
    by_step: list[StepCount] = []
    notes: list[str] = []
    out: str | None = None
    preview: list[dict] = []

    _rows: list[dict] = PrivateAttr(default_factory=list)

    @property
    def rows(self) -> list[dict]:
        return self._rows

    def with_rows(self, rows: list[dict]) -> "Imported":
        self._rows = rows
        return self

    def render(self) -> str:
        lines = [f"{self.format} -> {self.n_rows} graded rows, {self.n_tasks} tasks "
                 f"(from {self.n_files} file{'s' if self.n_files != 1 else ''} under {self.source})"]
        if self.metric:
            lines.append(f"reward: {self.metric}")
        if self.mean_reward is not None:
            r = self.mean_reward
            lines.append(f"mean reward {fmt_rate(r.value, r.ci, r.n_tasks)}, {r.n_rows} rows "
                         f"(scored rows; pass rates: {op_name('rate')} on the rows)")
            if r.note:
                lines.append(f"note: {r.note}")
        what = "kept with errored: true" if self.kept_errored else "left out, not scored 0"
        lines.append(f"errored: {self.errored} ({what})")
        if self.models:
            lines.append("models: " + ", ".join(f"{m} ({n})" for m, n in self.models.items()))
        for s in self.by_step:
            versions = ", ".join(f"v{v}" for v in s.policy_versions) or "none recorded"
            rate = s.mean_reward
            mean = (f"mean reward {fmt_rate(rate.value, rate.ci, rate.n_tasks)}, "
                    if rate else "")
            lines.append(f"step {s.step}: {mean}{s.rows} rows, {s.errored} errored, sampled by "
                         f"policy {versions}")
        lines.extend(f"note: {n}" for n in self.notes)
        if self.out:
            lines.append(f"wrote {self.n_rows} rows to {self.out}")
        elif self.preview:
            lines.append(f"first {len(self.preview)} of {self.n_rows} rows (--out writes them all):")
            lines.extend(f"  {row}" for row in self.preview)
        return "\n".join(lines)


def summarize(fmt: str, source: str, files: list[str], rows: list[dict], *, errored: int,
              kept_errored: bool, metric: str | None = None, by_step: list[StepCount] | None = None,
              notes: list[str] | None = None) -> Imported:
    """The summary of ``rows`` (a list of graded-row dicts), the rows attached."""
    scored = [r for r in rows if not r.get("errored")]
    models: dict[str, int] = {}
    for row in rows:
        if row.get("model") is not None:  # rows that name no model are counted nowhere here
            key = str(row["model"])
            models[key] = models.get(key, 0) + 1
    shown = files[:LIST_CAP]
    notes = list(notes or [])
    if len(files) > LIST_CAP:
        notes.append(f"files: {len(shown)} of {len(files)} listed")
    steps = list(by_step or [])
    if len(steps) > LIST_CAP:  # a long run evaluates hundreds of times: bounded, both ends kept
        half = LIST_CAP // 2
        notes.append(f"by_step: {2 * half} of {len(steps)} steps listed (the first {half} and "
                     f"the last {half}); step=N (CLI --step N) reads any one of them")
        steps = steps[:half] + steps[-half:]
    return Imported(
        format=fmt, source=source, files=shown, n_files=len(files), n_rows=len(rows),
        n_tasks=len({r["task_id"] for r in rows}), errored=errored, kept_errored=kept_errored,
        mean_reward=reward_rate(scored), models=models, metric=metric, by_step=steps,
        notes=notes, preview=rows[:PREVIEW_ROWS]).with_rows(rows)


@operation(
    cli="import", toolset="sft", effect=WRITES,
    title="Import graded rows from prime-rl, Inspect, lm-eval or a table",
    description=(
        "Turn another system's eval output into graded rows every other tool reads: prime-rl "
        "episodes (reward = the trace's summed rewards; step and the policy version that sampled "
        "each row), Inspect logs (one row per sample and epoch; C/I/P or numeric scores), "
        "lm-eval --log_samples files (one row per doc, the metric named), CSV/TSV tables (cells "
        "typed, look-alike columns renamed and said). Errored rollouts are "
        "counted, not scored 0. Writes `out` (JSONL); returns counts, per-step policy "
        "versions, notes and 3 preview rows."),
    doing="importing graded rows")
def import_rows(
        path: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "The output to import: a prime-rl run folder (or "
            "rollouts/step_<S>/eval/all/traces.jsonl), an Inspect log (.eval or .json), or "
            "lm-eval --log_samples files (samples_<task>_<date>.jsonl, or the folder holding "
            "them), or a CSV or TSV table of graded rows with a header line."),
            examples=["outputs/my-run", "logs/2026-01-01_task.eval"]),
            Arg(PATH, positional=True)], *,
        out: Annotated[str | None, Field(max_length=4096, description=(
            "Where to write the graded rows as JSONL; pass this file to rate, compare or "
            "route. null: only the summary and a preview."),
            examples=["evals/imported.jsonl"]),
            Arg(OUT, metavar="FILE", writes="jsonl")] = None,
        format: Annotated[Literal["auto", "prime-rl", "inspect", "lm-eval", "verifiers", "csv",
                                  "jsonl"], Field(description=(
            "The source format; 'auto' reads it from the content. A named format wins."))
        ] = "auto",
        scorer: Annotated[str | None, Field(max_length=500, description=(
            "Inspect: the scorer whose score becomes the reward. lm-eval: the metric, 'name' "
            "or 'name,filter'. Needed only when the output has several; the error lists "
            "them."))] = None,
        step: Annotated[Annotated[int, Field(ge=0, le=10**9)] | Literal["first", "last"] | None,
                        Field(description=(
                            "prime-rl only: keep one training step (its number, 'first' or "
                            "'last'). null keeps every step, each row with its `step` and "
                            "`policy_version`."))] = None,
        kind: Annotated[Literal["eval", "train"], Field(description=(
            "prime-rl only: held-out eval episodes or training rollouts."))] = "eval",
        agent: Annotated[str | None, Field(min_length=1, max_length=200, description=(
            "prime-rl only: keep one agent's traces (the trace's agent.name) of a multi-agent "
            "taskset. null keeps every agent, one row per trace."))] = None,
        keep_errored: Annotated[bool, Field(description=(
            "Keep errored rollouts as rows marked errored: true. Otherwise they are counted in "
            "`errored` and left out: a failed rollout is not a zero-reward answer."))
        ] = False,
        overwrite: Overwrite = False,
        metric: Annotated[str | None, Arg(cli=False, mcp=False)] = None,
        root: Annotated[Root | None, Arg(cli=False, mcp=False)] = None) -> Imported:
    """Graded rows from another system's output, in :class:`Imported` (``.rows``).

    ``metric`` (Python only) is ``scorer`` by an older name. Every file and folder is opened
    through the path door, under ``root`` when given; a link anywhere inside the output is
    refused, never followed. The answer's paths are as the caller wrote them.
    """
    if scorer is not None and metric is not None and scorer != metric:
        raise ArgumentError(f"`scorer` is {scorer!r} and `metric` {metric!r}: one name for one "
                            "choice", fix="give scorer alone")
    result = imported(read_foreign(path, format=format, metric=metric if scorer is None else scorer,
                                   step=step, kind=kind, keep_errored=keep_errored, agent=agent,
                                   root=root))
    update: dict[str, Any] = {} if root is not None else {
        "source": str(path), "files": _as_written(path, result.files)}
    if out is not None:
        write_jsonl(out, result.rows, overwrite=overwrite)
        update["out"] = str(out)
    return result.model_copy(update=update).with_rows(result.rows)


def _as_written(path: Any, files: list[str]) -> list[str]:
    """The files read, as the caller would write them: relative to the server's root when
    ``path`` came through it, else as named."""
    door = path.root if isinstance(path, UserPath) and path.root.confined else None
    return [door.relative(f) if door is not None else str(Path(f)) for f in files]


def imported(read: ForeignRows) -> Imported:
    """The summary of what an importer read, each step's mean reward with its interval."""
    steps = [StepCount(step=s.step, rows=s.rows, errored=s.errored,
                       policy_versions=s.policy_versions, mean_reward=reward_rate(s.scored))
             for s in read.steps]
    return summarize(read.format, read.source, read.files, read.rows, errored=read.errored,
                     kept_errored=read.kept_errored, metric=read.metric, by_step=steps,
                     notes=read.notes)


def reward_rate(rows: list[dict]) -> Rate | None:
    """Mean reward over tasks with its task-bootstrap interval, or None for no rows (over every
    writer an import holds: its ``models`` say which; the statistics refuse such rows)."""
    if not rows:
        return None
    data = load_rows(rows)
    rate = pass_rate(data, metric="reward")
    warning = data.reward_scale.warning if data.reward_scale.kind == "scale" else None
    return rate.model_copy(update={"note": "; ".join(filter(None, [rate.note, warning]))
                                   or None})
