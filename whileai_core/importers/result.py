"""What an import returns: the graded rows (kept off the JSON) and a bounded summary of them,
with the mean reward's interval (so this module reads the statistics; the readers below it do
not)."""

from __future__ import annotations

import os

from pydantic import PrivateAttr

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
    ``files`` and ``by_step`` list at most 20 (``by_step``: the first 10 and last 10 steps), a note
    saying how many there are.
    Errored records are counted in ``errored`` and left out of ``rows`` unless the import was
    asked to keep them (then they carry ``errored: true``).
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
    result = Imported(
        format=fmt, source=source, files=shown, n_files=len(files), n_rows=len(rows),
        n_tasks=len({r["task_id"] for r in rows}), errored=errored, kept_errored=kept_errored,
        mean_reward=reward_rate(scored),
        models=models, metric=metric, by_step=steps, notes=notes,
        preview=rows[:PREVIEW_ROWS])
    return result.with_rows(rows)


def import_rows(source: str | os.PathLike | UserPath, *, format: str = "auto",
                metric: str | None = None, step: int | str | None = None, kind: str = "eval",
                keep_errored: bool = False, agent: str | None = None,
                root: Root | None = None) -> Imported:
    """Graded rows from another system's output. Returns :class:`Imported` (``.rows``).

    ``format``: ``"auto"`` (from the content), or one of ``prime-rl``, ``inspect``, ``lm-eval``
    (wins over the content). ``metric``: the Inspect scorer or lm-eval metric (``name`` or
    ``name,filter``) that becomes the reward; needed when there are several. ``step`` and
    ``kind``: prime-rl only (one step, an int or ``"first"``/``"last"``; ``"eval"`` or
    ``"train"`` episodes). ``keep_errored``: keep errored rollouts as rows with
    ``errored: true`` instead of only counting them. ``agent``: prime-rl only, one agent's
    traces of a multi-agent taskset (``agent.name``). Every file and folder is opened through
    the path door: under ``root`` when given (confined), else as the user's own path; a link
    anywhere inside the output is refused, never followed.
    """
    return imported(read_foreign(source, format=format, metric=metric, step=step, kind=kind,
                                 keep_errored=keep_errored, agent=agent, root=root))


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
