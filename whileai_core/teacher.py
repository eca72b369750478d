"""Question 4 of the route: does a candidate teacher clear the student?

The gap is read on its own interval, paired by task when both were scored on the same held-out
tasks (:func:`whileai_core.compare`: the sign-flip test under 30 shared tasks, the paired
bootstrap above), else the unpaired difference of the two rates' intervals (MOVER, Zou & Donner
2008). Never "the two intervals do not overlap": that test is far stricter than it looks (issue
13: with 100 shared tasks and a true gap of 0.10 it clears 15% of the time, the paired test 82%).
Power and false-clear rate: docs/statistics-study.md.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .bootstrap import check_level
from .defaults import CONFIDENCE_LEVEL, PROVE_EFFECT
from .errors import ArgumentError
from .result import Result
from .rows import load_rows
from .stats import Rate, compare, pass_rate
from .stats.fields import LEVEL_DOC, ci95_alias
from .stats.intervals import Interval
from .stats.paired import mover_difference


class TeacherVerdict(Result):
    """Does the teacher clear? Truthy iff the teacher's pass@1 beats the student's by at least
    ``effect`` and the interval of that gap lies above 0.

    Score both on the same held-out tasks (at the student's max_tokens, with one tokenizer): the
    gap is then paired by task (``paired``: the sign-flip test under 30 shared tasks, the paired
    bootstrap above; :func:`whileai_core.compare`). With too few shared tasks it is the unpaired
    difference of the two rates' intervals (MOVER), never their overlap.
    """

    clears: bool
    teacher: Rate
    student: Rate
    gap: float = Field(description="teacher minus student pass@1 (on the shared tasks when paired)")
    gap_ci: Interval | None = Field(None, description="interval of the gap at `level`")
    gap_ci_method: str | None = None
    p_value: float | None = Field(None, description="two-sided p-value for gap = 0 (paired)")
    paired: bool = False
    n_paired: int = Field(0, description="tasks both were scored on")
    effect: float
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    intervals_overlap: bool | None = Field(
        description="whether the two rates' intervals overlap (shown for reference: the "
                    "verdict reads the gap's own interval)")
    reason: str

    gap_ci95 = ci95_alias("gap_ci")

    def __bool__(self) -> bool:
        return self.clears

    def render(self) -> str:
        ci = "[no interval]" if self.gap_ci is None else \
            f"[{self.gap_ci[0]:+.3f}, {self.gap_ci[1]:+.3f}]"
        how = f"paired on {self.n_paired} tasks" if self.paired else "unpaired"
        return (f"teacher {self.teacher.render()}\nstudent {self.student.render()}\n"
                f"gap {self.gap:+.3f} {ci} ({how}, {self.gap_ci_method}; needs >= "
                f"{self.effect:.2f}): {'clears' if self.clears else 'does not clear'}: "
                f"{self.reason}")


def _overlap(a: Interval | None, b: Interval | None) -> bool | None:
    if a is None or b is None:
        return None
    return not (a[0] > b[1] or b[0] > a[1])


def teacher_clears(teacher_rows: Any, student_rows: Any, *, effect: float = PROVE_EFFECT,
                   level: float = CONFIDENCE_LEVEL) -> TeacherVerdict:
    """Does the teacher beat the student by >= ``effect``, with the gap's interval above 0?"""
    level = check_level(level)
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect < 1:
        raise ArgumentError(f"`effect` must be a number strictly between 0 and 1, got {effect!r}. "
                            f"Fix: the smallest gap worth distilling, e.g. {PROVE_EFFECT}")
    t_rows, s_rows = load_rows(teacher_rows), load_rows(student_rows)
    t, s = pass_rate(t_rows, level), pass_rate(s_rows, level)
    pair = compare(s_rows, t_rows, level=level, effect=effect)
    common = dict(teacher=t, student=s, effect=float(effect), level=level,
                  intervals_overlap=_overlap(t.ci, s.ci), n_paired=pair.n_paired)
    if pair.ci is not None:
        gap, ci, method, p, paired = pair.delta, pair.ci, pair.ci_method, pair.p_value, True
    elif t.ci is not None and s.ci is not None:
        gap, p, paired = t.value - s.value, None, False
        ci, method = mover_difference(t.value, t.ci, s.value, s.ci), "mover_unpaired"
    else:
        return TeacherVerdict(clears=False, gap=t.value - s.value, **common,
                              reason="too few tasks on one side for an interval, so no verdict; "
                                     "score both on the same held-out tasks (10 or more)")
    clears = ci[0] > 0 and gap >= effect
    where = f"on {pair.n_paired} shared tasks" if paired else "unpaired (too few shared tasks)"
    if clears:
        reason = f"the gap is at least {effect:g} and its interval lies above 0 ({where})"
    elif gap < effect:
        reason = f"gap {gap:+.3f} is below {effect:.2f}: the teacher has little to give"
    else:
        reason = (f"the gap's interval reaches {ci[0]:+.3f} ({where}): score both on more "
                  "held-out tasks to tell them apart")
    return TeacherVerdict(clears=clears, gap=gap, gap_ci=ci, gap_ci_method=method, p_value=p,
                          paired=paired, **common, reason=reason)
