"""Question 4 of the route: does a candidate teacher clear the student?

The gap is read on its own interval, paired by task when both were scored on the same held-out
tasks (:func:`whileai_core.compare`; families resampled first with ``cluster``), else the unpaired
difference of the two rates' intervals (MOVER, Zou & Donner 2008); never "the two intervals do
not overlap", a far stricter test than it looks (docs/statistics-study.md, table C).

A teacher clears when the gap's interval lies above 0 and the gap is at least ``effect``
(``strict=True``: the interval's lower end reaches ``effect``), and not when it was scored with
more room than the student's cap (:mod:`whileai_core.budgets`): the answer then gives its score
at the student's cap (replies past it count as failed) and the fix.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from .bootstrap import check_level
from .budgets import BudgetCheck, capped_records, compare_budgets
from .defaults import CONFIDENCE_LEVEL, PROVE_EFFECT
from .errors import ArgumentError
from .operations import READS, VERDICT, args, operation
from .operations.args import Arg, Cluster, CompareEffect, Level, Threshold
from .result import Result, fmt_rate
from .roles import FIELDS_DOC, fields_report
from .writers import one_writer
from .rows import Rows, load_rows
from .stats import Rate, compare, pass_rate
from .stats.clustered import check_cluster
from .stats.arms import resolve_effect, resolve_metric
from .stats.fields import LEVEL_DOC, ci95_alias
from .stats.intervals import Interval
from .stats.paired import mover_difference
from . import voice


class AtStudentCap(Result):
    """The teacher held to the student's cap: its replies longer than ``cap`` tokens count as
    failed. ``clears`` is what the verdict would be on these numbers."""

    cap: int
    replies_over_cap: int
    teacher: Rate
    gap: float
    gap_ci: Interval | None = None
    clears: bool

    def render(self) -> str:
        ci = "" if self.gap_ci is None else f" [{self.gap_ci[0]:+.3f}, {self.gap_ci[1]:+.3f}]"
        return (f"at the student's cap ({self.cap} tokens; {self.replies_over_cap} longer replies "
                f"counted as failed): teacher {self.teacher.render()}, gap {self.gap:+.3f}{ci}")


class TeacherVerdict(Result):
    """Does the teacher clear (module docstring)? Truthy iff it does."""

    clears: bool
    teacher: Rate
    student: Rate
    gap: float = Field(description="teacher minus student (pass@1, or mean reward for a "
                                    "continuous reward; on the shared tasks when paired)")
    gap_ci: Interval | None = Field(None, description="interval of the gap at `level`")
    gap_ci_method: str | None = None
    p_value: float | None = Field(None, description="two-sided p-value for gap = 0 (paired)")
    paired: bool = False
    n_paired: int = Field(0, description="tasks both were scored on")
    effect: float
    strict: bool = Field(False, description="whether the interval's lower end had to reach "
                                            "`effect` (else: above 0, and the gap >= effect)")
    reaches: Literal["past_effect", "above_zero", "includes_zero", "no_interval"] = Field(
        "no_interval", description="where the gap's interval lies against 0 and the effect")
    metric: Literal["pass", "reward"] = "pass"
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    intervals_overlap: bool | None = Field(
        description="whether the two rates' intervals overlap (shown for reference: the "
                    "verdict reads the gap's own interval)")
    budget: BudgetCheck | None = Field(None, description="were both given the same room to "
                                                         "answer (max_tokens)")
    at_student_cap: AtStudentCap | None = None
    cluster: str | None = None
    reward_warning: str | None = None
    reason: str
    fields: list[str] = Field(default_factory=list, description=FIELDS_DOC)

    gap_ci95 = ci95_alias("gap_ci")

    def __bool__(self) -> bool:
        return self.clears

    negative_means: ClassVar[str | None] = "the teacher does not clear"

    @property
    def negative(self) -> bool:
        return not self.clears

    def render(self) -> str:
        ci = "[no interval]" if self.gap_ci is None else \
            f"[{self.gap_ci[0]:+.3f}, {self.gap_ci[1]:+.3f}]"
        how = f"paired on {self.n_paired} tasks" if self.paired else "unpaired"
        what = "mean reward" if self.metric == "reward" else "pass@1"
        lines = [f"warning: {self.reward_warning}"] if self.reward_warning else []
        lines += [f"teacher {what} {self.teacher.render()}", f"student {what} {self.student.render()}",
                  f"gap {self.gap:+.3f} {ci} ({how}, {self.gap_ci_method}; effect "
                  f"{self.effect:.2f}{', strict' if self.strict else ''}): "
                  f"{'clears' if self.clears else 'does not clear'}: {self.reason}"]
        if self.budget is not None and self.budget.note not in self.reason:  # said once
            lines.append(self.budget.render())
        if self.at_student_cap is not None:
            lines.append(self.at_student_cap.render())
        lines += [f"field {f}" for f in self.fields]
        return "\n".join(lines)


def _overlap(a: Interval | None, b: Interval | None) -> bool | None:
    if a is None or b is None:
        return None
    return not (a[0] > b[1] or b[0] > a[1])


def _gap(t_rows: Rows, s_rows: Rows, metric: str, level: float, effect: float,
         cluster: str | None) -> dict[str, Any]:
    """Both rates, the gap and its interval (paired when the tasks are shared)."""
    t = pass_rate(t_rows, level, metric=metric)
    s = pass_rate(s_rows, level, metric=metric)
    pair = compare(s_rows, t_rows, level=level, effect=effect, metric=metric,
                   cluster=cluster if _shares(t_rows, s_rows) else None)
    out: dict[str, Any] = dict(teacher=t, student=s, n_paired=pair.n_paired,
                               intervals_overlap=_overlap(t.ci, s.ci))
    if pair.ci is not None:
        out.update(gap=pair.delta, gap_ci=pair.ci, gap_ci_method=pair.ci_method,
                   p_value=pair.p_value, paired=True)
        if cluster is not None and pair.cluster is not None:
            out["teacher"] = t.model_copy(update={"ci": pair.mean_after_ci,
                                                  "ci_method": pair.mean_after_ci_method})
            out["student"] = s.model_copy(update={"ci": pair.mean_before_ci,
                                                  "ci_method": pair.mean_before_ci_method})
    elif t.ci is not None and s.ci is not None:
        scaled = metric == "reward" and "scale" in (t_rows.reward_scale.kind,
                                                    s_rows.reward_scale.kind)
        span = None if scaled else (-1.0, 1.0)   # a difference of two rates lies in [-1, 1]
        out.update(gap=t.value - s.value,
                   gap_ci=mover_difference(t.value, t.ci, s.value, s.ci, span),
                   gap_ci_method="mover_unpaired", p_value=None, paired=False)
    else:
        out.update(gap=t.value - s.value, gap_ci=None, gap_ci_method=None, p_value=None,
                   paired=False)
    return out


def _shares(a: Rows, b: Rows) -> bool:
    return bool(set(a.task_ids) & set(b.task_ids))


def _reaches(ci: Interval | None, effect: float) -> str:
    if ci is None:
        return "no_interval"
    if ci[0] >= effect:
        return "past_effect"
    return "above_zero" if ci[0] > 0 else "includes_zero"


def _decide(g: dict[str, Any], effect: float, strict: bool) -> tuple[bool, str]:
    ci, gap = g["gap_ci"], g["gap"]
    where = (f"on {g['n_paired']} shared tasks" if g["paired"]
             else "unpaired (too few shared tasks)")
    if ci is None:
        return False, ("too few tasks on one side for an interval, so no verdict; score both on "
                       "the same held-out tasks (10 or more)")
    span = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"
    if ci[0] >= effect:
        return True, (f"the whole interval {span} lies past the effect {effect:g} ({where}): "
                      "the teacher is better by at least that much")
    if ci[0] > 0:
        if strict:
            return False, (f"the interval {span} lies above 0 but its lower end {ci[0]:+.3f} "
                           f"falls short of the effect {effect:g} ({voice.arg('strict', True)}): better, by an "
                           "amount not yet shown to be worth distilling; score more held-out "
                           "tasks")
        if gap >= effect:
            return True, (f"the interval {span} lies above 0 ({where}) and the gap {gap:+.3f} "
                          f"is past the effect {effect:g}, but the interval reaches down to "
                          f"{ci[0]:+.3f}: a gap of {effect:g} is likely, not shown "
                          "(strict=True asks the lower end to reach it)")
        return False, (f"the gap {gap:+.3f} is below the effect {effect:g} though its interval "
                       f"{span} lies above 0: the teacher has little to give")
    if gap < effect:
        return False, (f"the gap {gap:+.3f} is below the effect {effect:g} and its interval "
                       f"{span} holds 0: the teacher has little to give")
    return False, (f"the gap {gap:+.3f} looks past the effect but its interval {span} holds 0 "
                   f"({where}): score both on more held-out tasks to tell them apart")


@operation(
    toolset="core", effect=READS, title="Is the teacher good enough to distil?",
    description=(
        "The gate before on-policy distillation: does a candidate teacher beat the student by "
        "at least `effect`, the gap's interval above 0, paired by task on the shared held-out "
        "tasks, at the same token budget? A teacher given a larger token cap does not clear "
        "(its score at the student's cap is given). Returns both rates and the gap with "
        "intervals, n, p, the budget check and the reason."),
    exit_code=VERDICT, doing="checking whether the teacher clears")
def teacher_clears(teacher_rows: Annotated[args.Rows, Field(description=(
                       "The candidate teacher's graded rows on the held-out tasks."))],
                   student_rows: Annotated[args.Rows, Field(description=(
                       "The student's (the model you will train) graded rows on the same "
                       "tasks."))], *,
                   effect: Annotated[CompareEffect, Field(description=(
                       "The smallest gap worth distilling, in the metric's units (0.05 = 5 "
                       "points of pass@1). Left out: 0.05, or 0.05 of a reward's span on "
                       "another scale, said in the reason."))] = None,
                   level: Level = CONFIDENCE_LEVEL,
                   strict: Annotated[bool, Field(description=(
                       "The gap's interval must itself reach `effect`; by default it lies "
                       "above 0 and the gap reaches `effect`."))] = False,
                   metric: Annotated[Literal["auto", "pass", "reward"],
                                     Arg(cli=False, mcp=False)] = "auto",
                   threshold: Threshold = None, cluster: Cluster = None) -> TeacherVerdict:
    """Does the teacher beat the student by >= ``effect``, on the same budget (module
    docstring)? ``metric`` "auto" compares mean rewards when the reward is continuous (no
    ``threshold`` given), else pass rates."""
    level = check_level(level)
    if effect is not None and (isinstance(effect, bool) or not isinstance(effect, (int, float))
                               or not 0 < effect < float("inf")):
        raise ArgumentError(f"`effect` must be a positive number, got {effect!r}", fix="the "
                            f"smallest gap worth distilling, e.g. {PROVE_EFFECT}")
    if not isinstance(strict, bool):
        raise ArgumentError(f"`strict` must be true or false, got {strict!r}")
    if metric != "auto" and metric not in ("pass", "reward"):
        raise ArgumentError(f"`metric` must be 'auto', 'pass' or 'reward', got {metric!r}")
    check_cluster(cluster)
    t_rows = load_rows(teacher_rows, threshold=threshold)
    s_rows = load_rows(student_rows, threshold=threshold)
    one_writer(t_rows, argument="teacher_rows", reads="one teacher's score")
    one_writer(s_rows, argument="student_rows", reads="one student's score")
    metric, warning, _ = resolve_metric(metric, [s_rows, t_rows], threshold)
    effect, effect_note = resolve_effect(effect, metric, [s_rows, t_rows])
    g = _gap(t_rows, s_rows, metric, level, effect, cluster)
    clears, reason = _decide(g, effect, strict)
    budget = compare_budgets(t_rows, s_rows)
    at_cap = None
    if budget.status == "teacher_longer":
        reason, at_cap = _teacher_longer(budget, t_rows, s_rows, metric, level, effect, cluster,
                                         strict)
        clears = False
    elif budget.status == "not_checked":
        reason += f"; budget not checked: {budget.note}"
    if effect_note:
        reason += f"; {effect_note}"
    return TeacherVerdict(clears=clears, effect=float(effect), strict=strict,
                          reaches=_reaches(g["gap_ci"], effect), metric=metric, level=level,
                          budget=budget, at_student_cap=at_cap, cluster=cluster,
                          reward_warning=warning, reason=reason,
                          fields=_fields_read(t_rows, s_rows, metric, cluster), **g)


def _teacher_longer(budget: BudgetCheck, t_rows: Rows, s_rows: Rows, metric: str, level: float,
                    effect: float, cluster: str | None,
                    strict: bool) -> tuple[str, AtStudentCap | None]:
    """The reason a teacher given more room does not clear, and its score at the student's cap
    when its rows say how long each reply was."""
    fix = (f"re-score the teacher at max_tokens={budget.student_cap} (the student's cap) "
           "on the same tasks")
    if budget.teacher_over_cap is None or t_rows.budget is None:
        return (f"the teacher was given more room than the student ({budget.note}), and "
                f"its score at the student's cap is unknown. Fix: {fix}"), None
    capped, over = capped_records(t_rows, budget.student_cap)
    c_rows = load_rows(capped, threshold=t_rows.threshold)
    cg = _gap(c_rows, s_rows, metric, level, effect, cluster)
    c_clears, _ = _decide(cg, effect, strict)
    at_cap = AtStudentCap(cap=budget.student_cap, replies_over_cap=over,
                          teacher=cg["teacher"], gap=cg["gap"], gap_ci=cg["gap_ci"],
                          clears=c_clears)
    unknown = budget.n_teacher_rows - budget.teacher_rows_with_tokens
    reason = (f"the teacher was given more room than the student ({budget.note}); held "
              f"to the student's cap it scores "
              + ("at most " if unknown else "")
              + f"{fmt_rate(cg['teacher'].value, cg['teacher'].ci, cg['teacher'].n_tasks)}"
              f" and the gap is {cg['gap']:+.3f}"
              + (f" [{cg['gap_ci'][0]:+.3f}, {cg['gap_ci'][1]:+.3f}]" if cg["gap_ci"] else "")
              + (f" ({unknown} of {budget.n_teacher_rows} teacher rows carry no "
                 "completion_tokens and count as within the cap)" if unknown else "")
              + ("" if not c_clears else
                 " (no reply ran past the cap, so it would clear there; the verdict "
                 "waits for rows scored at the student's cap)" if over == 0 and not unknown
                 else " (it would clear at that cap, but a cut reply is not the reply "
                 "it would write under the cap)")
              + f". Fix: {fix}")
    return reason, at_cap


def _fields_read(t_rows: Rows, s_rows: Rows, metric: str, cluster: str | None) -> list[str]:
    did = {"task": "paired by task_id" + (f", families of `{cluster}`" if cluster else ""),
           "reward": f"compared as the {'mean reward' if metric == 'reward' else 'pass rate'}",
           "model": "one writer a side", "max_tokens": "the two sides' caps compared",
           "completion_tokens": "a teacher's reply past the student's cap counts as failed",
           **({cluster: "the gap's interval resamples its families"} if cluster else {})}
    return [f"teacher {line}" for line in fields_report(t_rows, did)] + [
        f"student {line}" for line in fields_report(s_rows, did)]
