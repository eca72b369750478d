"""Token budgets on graded rows: ``max_tokens``, ``completion_tokens``, ``finish_reason``.

A row may say the cap it was sampled under (``max_tokens``, per reply), how many tokens the model
wrote (``completion_tokens``; summed over turns) and why it stopped (``finish_reason``).
:func:`budget_columns` turns them into typed columns where rows load; :func:`compare_budgets` is
the check ``teacher_clears`` and the route make: a teacher scored with more room than the
student's cap is compared at that cap (a longer reply counts as failed), never as it was scored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field

from .errors import as_json
from .result import Result

if TYPE_CHECKING:  # the store rows load into; columns imports nothing from here
    from .columns import Columns

BUDGET_FIELDS = ("max_tokens", "completion_tokens", "finish_reason")
# finish reasons that mean the token cap (or the context window) cut the reply off
CUT_OFF_REASONS = frozenset({"length", "max_tokens", "model_length"})


@dataclass(frozen=True)
class BudgetColumns:
    """Per row: ``max_tokens`` and ``completion_tokens`` (float64, NaN where a row does not say)
    and ``finish_reason`` (str or None per row; None when no row carries it)."""

    max_tokens: np.ndarray
    completion_tokens: np.ndarray
    finish_reason: list | None

    def take(self, keep: np.ndarray) -> BudgetColumns:
        """The columns at row indices ``keep``."""
        reasons = None if self.finish_reason is None else [self.finish_reason[i]
                                                          for i in keep.tolist()]
        return BudgetColumns(self.max_tokens[keep], self.completion_tokens[keep], reasons)

    def cut_off(self) -> np.ndarray:
        """Rows whose finish_reason says the cap stopped them."""
        if self.finish_reason is None:
            return np.zeros(self.max_tokens.shape[0], dtype=bool)
        return np.fromiter((r in CUT_OFF_REASONS for r in self.finish_reason), dtype=bool,
                           count=len(self.finish_reason))


Fail = Callable[[int, str, str, str], Exception]


def budget_columns(store: Columns, fail: Fail) -> BudgetColumns | None:
    """The budget columns of the rows store ``store``, or None when no row carries a budget
    field. ``fail(i, problem, field, fix)`` builds the error for row ``i`` (its file and line)."""
    carried = [f for f in BUDGET_FIELDS if store.has(f)]
    if not carried:
        return None
    n = store.n
    kinds = {f: store.kinds(f) - {type(None)} for f in carried}
    if not any(kinds.values()):  # carried, but null in every row
        return None
    numbers = {}
    for field, low in (("max_tokens", 1), ("completion_tokens", 0)):
        if not kinds.get(field):
            numbers[field] = np.full(n, np.nan)
            continue
        col = store.values(field)
        fix = f"write a whole number of tokens >= {low}, or leave the field out"
        if not kinds[field] <= {int, float}:
            bad = next(i for i, v in enumerate(col) if v is not None and type(v) not in (int, float))
            raise fail(bad, f"`{field}` is {as_json(col[bad], 60)}", field, fix)
        try:
            arr = np.array(col, dtype=np.float64)  # None becomes NaN
        except OverflowError:  # an integer past a float's range (JSON allows 4,300 digits)
            bad = next(i for i, v in enumerate(col) if type(v) is int and abs(v) > 2 ** 1023)
            raise fail(bad, f"`{field}` is {as_json(col[bad], 60)}", field, fix) from None
        wrong = ~np.isnan(arr) & ((arr < low) | ~np.isfinite(arr) | (arr != np.floor(arr)))
        if wrong.any():
            bad = int(np.flatnonzero(wrong)[0])
            raise fail(bad, f"`{field}` is {as_json(col[bad], 60)}", field, fix)
        numbers[field] = arr
    reasons = None
    if kinds.get("finish_reason"):
        reasons = store.values("finish_reason")
        if not kinds["finish_reason"] <= {str}:
            bad = next(i for i, v in enumerate(reasons) if v is not None and type(v) is not str)
            raise fail(bad, f"`finish_reason` is {as_json(reasons[bad], 60)}", "finish_reason",
                       'write the reason as a string ("stop", "length"), or leave it out')
    return BudgetColumns(numbers["max_tokens"], numbers["completion_tokens"], reasons)


# --- the check: teacher against student ------------------------------------------------------

BudgetStatus = Literal["matched", "teacher_longer", "teacher_shorter", "not_checked"]


class BudgetCheck(Result):
    """Were teacher and student given the same room to answer? ``student_cap``: the student's
    ``max_tokens`` (the smallest, when its rows differ)."""

    status: BudgetStatus
    student_cap: int | None = None
    teacher_cap: int | None = None
    teacher_over_cap: int | None = Field(None, description="teacher rows past the student's cap")
    n_teacher_rows: int
    teacher_rows_with_tokens: int = Field(0, description="teacher rows carrying completion_tokens")
    note: str

    def render(self) -> str:
        return f"budget {self.status.replace('_', ' ')}: {self.note}"


def _cap(col: np.ndarray) -> tuple[int | None, bool]:
    """(the smallest cap the rows carry, whether every row carries the same one)."""
    seen = col[~np.isnan(col)]
    if seen.shape[0] == 0:
        return None, True
    return int(seen.min()), bool(seen.min() == seen.max() and seen.shape[0] == col.shape[0])


def compare_budgets(teacher, student) -> BudgetCheck:
    """The budget check of two loaded :class:`~whileai_core.rows.Rows` (teacher, student)."""
    tb, sb = teacher.budget, student.budget
    n_t = teacher.n_rows
    s_cap, s_same = _cap(sb.max_tokens) if sb is not None else (None, True)
    t_cap, _ = _cap(tb.max_tokens) if tb is not None else (None, True)
    tokens = tb.completion_tokens if tb is not None else np.full(n_t, np.nan)
    with_tokens = int((~np.isnan(tokens)).sum())
    base = dict(student_cap=s_cap, teacher_cap=None if tb is None else _max(tb.max_tokens),
                n_teacher_rows=n_t, teacher_rows_with_tokens=with_tokens)
    if s_cap is None:
        return BudgetCheck(status="not_checked", **base, note=(
            "the student's rows carry no max_tokens, so the cap the teacher "
            "must be held to is unknown; record max_tokens on both sides (the importers fill it "
            "where the source system records it)"))
    over = int((tokens > s_cap).sum())
    base["teacher_over_cap"] = over if with_tokens else None
    vary = "" if s_same else " (the smallest of the student's caps: its rows differ)"
    t_max = base["teacher_cap"]
    if (t_max is not None and t_max > s_cap) or over > 0:
        said = (f"the teacher was scored at max_tokens={t_max}" if t_max is not None and
                t_max > s_cap else "the teacher's rows carry no larger max_tokens")
        return BudgetCheck(status="teacher_longer", **base, note=(
            f"{said}, the student is capped at {s_cap}{vary}; "
            + (f"{over} of {n_t} teacher rows wrote more than {s_cap} tokens"
               if with_tokens == n_t else
               f"{over} of the {with_tokens} teacher rows that carry completion_tokens wrote "
               f"more than {s_cap} tokens ({n_t - with_tokens} of {n_t} carry none)"
               if with_tokens else "the teacher rows carry no completion_tokens, so which "
               "replies ran past the cap is unknown")))
    if t_cap is None and with_tokens < n_t:
        return BudgetCheck(status="not_checked", **base, note=(
            f"the student is capped at {s_cap}{vary}, but the teacher's rows "
            "carry neither max_tokens nor completion_tokens for every row; record them"))
    if t_max is not None and t_max < s_cap:
        return BudgetCheck(status="teacher_shorter", **base, note=(
            f"the teacher was scored at max_tokens={t_max}, below the student's {s_cap}: the "
            "gap, if any, is not from a longer budget"))
    return BudgetCheck(status="matched", **base, note=(
        f"both within max_tokens={s_cap}{vary}"))


def _max(col: np.ndarray) -> int | None:
    seen = col[~np.isnan(col)]
    return None if seen.shape[0] == 0 else int(seen.max())


def capped_records(teacher, cap: int) -> tuple[list[dict], int]:
    """The teacher's records with every reply longer than ``cap`` tokens scored a fail
    (reward 0, truncated): what the teacher scores held to the student's cap."""
    tokens = teacher.budget.completion_tokens
    over = tokens > cap
    out = [({**r, "reward": 0.0, "truncated": True} if o else r)
           for r, o in zip(teacher.records, over.tolist())]
    return out, int(over.sum())
