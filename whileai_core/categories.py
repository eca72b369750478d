"""Every behaviour its own line: pass@1 per category, with its interval and n; and, given a second
run, each category's paired change, corrected for the number of categories compared.

A task's category comes from the rows (a field on every row, default ``category``) or from the
task set; a task with no category, or with two, is an error naming the file and line. One
category's line equals ``pass_at`` on that category's rows alone. With ``after``, the categories
are compared by :func:`whileai_core.stats.compare_many`, the one place the Holm and
Benjamini-Hochberg corrections live.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import Field

from .bootstrap import check_level, check_seed
from .defaults import BOOTSTRAP_SEED, CATEGORY_FIELD, CATEGORY_LINES_MAX, CONFIDENCE_LEVEL
from .errors import RowsError, as_json
from .operations import READS, VERDICT, args, operation
from .operations.args import Level, NoiseRuns, OptionalRecords, RowField, RunStd, Seed, Threshold
from .result import Result, fmt_rate
from .rewards import reward_notes
from .rows import TASK_FIELD, Rows, load_rows, read_records
from .stats import ManyComparisons, compare_many, pass_rate
from .stats.fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from .voice import arg

Interval = tuple[float, float]


class CategoryLine(Result):
    """One behaviour: its pass@1 with interval and n."""

    category: str
    pass_at_1: float
    ci: Interval | None = Field(description="interval of pass_at_1 at `level`, over tasks")
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_tasks: int
    n_rows: int
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)

    ci95 = ci95_alias("ci")

    def render(self) -> str:
        return f"{self.category:24} {fmt_rate(self.pass_at_1, self.ci, self.n_tasks)}"


class CategoryTable(Result):
    """pass@1 per category of ``rows``, sorted by name, and over all tasks; with a second run,
    ``comparison``: every category's paired change, corrected for the number compared."""

    field: str
    lines: list[CategoryLine]
    overall: CategoryLine
    n_categories: int
    comparison: ManyComparisons | None = Field(None, description=(
        "with `after`: each category's delta, interval, n and p-value, and which survive Holm "
        "(any false claim) and Benjamini-Hochberg (the share of false claims)"))
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    note: str | None = None
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")

    cut_lists = ("lines",)
    negative_means: ClassVar[str | None] = (
        "with a second run: a category drops (below 0 and surviving the Holm correction)")

    @property
    def negative(self) -> bool:
        return self.comparison is not None and self.comparison.negative

    def _cut_lists(self, limit: int) -> CategoryTable:
        """Cut as every result is; with a comparison, half as many lines and behaviours (each
        category is then two entries), and the lines shown are the categories the comparison
        shows, smallest p first, so the two parts of the answer speak of the same ones."""
        if self.comparison is None or len(self.lines) <= max(1, limit // 2):
            return super()._cut_lists(limit)  # nothing to cut: the lines stay sorted by name
        order = {b.name: i for i, b in enumerate(self.comparison.behaviours)}
        lines = sorted(self.lines, key=lambda ln: order.get(ln.category, len(order)))
        cut = Result._cut_lists(self.model_copy(update={"lines": lines}), max(1, limit // 2))
        if cut.shown and len(cut.lines) < len(lines):
            cut = cut.model_copy(update={"shown": cut.shown + " (the smallest p first)"})
        return cut

    def render(self) -> str:
        lines = self.lines[:CATEGORY_LINES_MAX]
        out = [f"pass@1 by {self.field} ({self.n_categories} categories"
               + (f", {len(lines)} of {self.n_categories} shown" if
                  len(lines) < self.n_categories else "") + ")"]
        out += [ln.render() for ln in lines]
        out.append(self.overall.render())
        if self.comparison is not None:
            out.append(f"second run against the first, by {self.field}:")
            out.append(self.comparison.render())
        if self.note:
            out.append(f"note: {self.note}")
        return "\n".join(out)


def task_categories(data: Rows, *, field: str = CATEGORY_FIELD, tasks: Any = None) -> list[str]:
    """The category of each task of ``data`` (in ``data.task_ids`` order): from ``tasks`` when
    given, else from the rows' own ``field``, every row of a task agreeing."""
    if tasks is not None:
        recs = read_records(tasks, noun="task")
        of: dict[str, str] = {}
        for i, rec in enumerate(recs.items):
            tid = rec.get(TASK_FIELD)
            value = rec.get(field)
            if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
                raise RowsError(f"task has no `{field}`" if value is None else
                                f"`{field}` is {as_json(value)}",
                                **recs.where(i), field=field,
                                fix=f'give every task "{field}": "<the behaviour it tests>"')
            of[str(tid)] = str(value)
        missing = [t for t in data.task_ids if t not in of]
        if missing:
            raise RowsError(f"{len(missing)} scored task(s) have no record here, e.g. "
                            f"{missing[0]!r}", source=recs.name, field=field,
                            fix="give the task set the rows were scored on (the frozen held-out "
                                "file)")
        return [of[t] for t in data.task_ids]
    values = data.column(field)
    cats: list[str | None] = [None] * data.n_tasks
    first_row: list[int] = [0] * data.n_tasks
    for i, (t, value) in enumerate(zip(data.task_index.tolist(), values)):
        if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
            raise RowsError(f"row has no `{field}`" if value is None else
                            f"`{field}` is {as_json(value)}",
                            source=data.source, line=data.line_of(i), field=field,
                            fix=f'add "{field}": "<the behaviour this task tests>" to every row, '
                                f"or pass the task set that holds it ({arg('tasks')})")
        value = str(value)
        if cats[t] is None:
            cats[t], first_row[t] = value, i
        elif cats[t] != value:
            raise RowsError(f"task {data.task_ids[t]!r} is `{field}` {value!r} here but "
                            f"{cats[t]!r} at line {data.line_of(first_row[t])}",
                            source=data.source, line=data.line_of(i), field=field,
                            fix="give every row of a task the same category")
    return cats  # type: ignore[return-value]


def _tagged(data: Rows, cats: np.ndarray, field: str) -> list[dict]:
    """The rows' records, each carrying its task's category in ``field``."""
    return [{**rec, field: cat} for rec, cat in zip(data.records, cats[data.task_index].tolist())]


@operation(
    cli="by-category", toolset="evals", effect=READS, title="pass@1 per behaviour (category)",
    description=(
        "pass@1 of each category (behaviour) of one run, each with its interval and n, plus "
        "the whole run; the category comes from the task set (`tasks`) or from every row. With "
        "`after` (a second run on the same tasks), each category's paired delta with its "
        "interval, n and p-value, and which survive the correction for the number of "
        "categories compared (Holm, Benjamini-Hochberg): a category changed only if it "
        "survives."),
    exit_code=VERDICT, doing="tabulating pass@1 by category")
def category_table(rows: args.Rows,
                   after: Annotated[args.OptionalRows, Field(description=(
                       "Optional: a second run on the same tasks (after training, or a re-run "
                       "of the same eval). Given, each category's paired change too, corrected "
                       "for the number of categories compared (Holm and "
                       "Benjamini-Hochberg)."))] = None, *,
                   tasks: Annotated[OptionalRecords, Field(description=(
                       "Optional: the task set holding each task's category (the frozen file). "
                       "null: read the category from every row."))] = None,
                   field: Annotated[RowField, Field(description=(
                       "The field that names a task's behaviour."))] = CATEGORY_FIELD,
                   level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
                   threshold: Threshold = None, run_std: RunStd = None,
                   noise_runs: NoiseRuns = None) -> CategoryTable:
    """pass@1 for each category of one run, each with its interval and n; with ``after``, each
    category's paired change (module docstring), the noise floor passed on."""
    level, seed = check_level(level), check_seed(seed)
    data = load_rows(rows, threshold=threshold)
    cats = np.asarray(task_categories(data, field=field, tasks=tasks), dtype=object)
    row_cat = cats[data.task_index]
    names = sorted(set(cats.tolist()))
    lines = []
    for name in names:
        part = data.where(row_cat == name)
        r = pass_rate(part, level, seed)
        lines.append(CategoryLine(category=name, pass_at_1=r.value, ci=r.ci,
                                  ci_method=r.ci_method, n_tasks=r.n_tasks, n_rows=r.n_rows,
                                  level=level))
    whole = pass_rate(data, level, seed)
    overall = CategoryLine(category="all", pass_at_1=whole.value, ci=whole.ci,
                           ci_method=whole.ci_method, n_tasks=whole.n_tasks,
                           n_rows=whole.n_rows, level=level)
    comparison = None
    if after is not None:
        later = load_rows(after, threshold=threshold)
        later_cats = np.asarray(task_categories(later, field=field, tasks=tasks), dtype=object)
        known = dict(zip(data.task_ids, cats.tolist()))
        for i, (tid, cat) in enumerate(zip(later.task_ids, later_cats.tolist())):
            if known.get(tid, cat) != cat:
                raise RowsError(f"task {tid!r} is `{field}` {cat!r} in the second run but "
                                f"{known[tid]!r} in the first", source=later.source,
                                field=field, fix="score both runs on the same frozen task set")
        # the correction is compare_many's: each arm carries its tasks' categories in `field`
        comparison = compare_many(_tagged(data, cats, field), _tagged(later, later_cats, field),
                                  by=field, level=level, seed=seed, run_std=run_std,
                                  noise_runs=noise_runs)
    if comparison is None:
        notes = [f"each interval is its own {level:.0%}: across {len(names)} categories about "
                 f"{(1 - level) * len(names):.1f} would miss by chance alone; compare two runs "
                 f"by category with {arg('after')}, which corrects for the number compared"]
    else:
        notes = [f"a category changed only if it survives the correction over the "
                 f"{comparison.n_tested} compared; its verdict alone is uncorrected"]
    notes = reward_notes(data) + notes
    small = [ln.category for ln in lines if ln.ci is None]
    if small:
        notes.append(f"{len(small)} categor{'y has' if len(small) == 1 else 'ies have'} fewer "
                     f"than 3 tasks and no interval (e.g. {small[0]!r}): score more tasks there")
    return CategoryTable(field=field, lines=lines, overall=overall,
                         n_categories=len(names), comparison=comparison, level=level,
                         note="; ".join(notes))
