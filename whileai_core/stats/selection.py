"""Was a checkpoint chosen on the tasks it is scored on?

The best of several checkpoints, scored on the tasks it was picked on, reports the maximum of
several noisy estimates: biased upwards (the winner's curse; Cawley & Talbot [1] show the same
optimism for model selection on one validation set), and no interval computed afterwards on
those tasks corrects for it. The fix is two splits: choose on one, then score the chosen
checkpoint once on another, frozen before the choice (``freeze_holdout``).

[1] Cawley & Talbot (2010). On over-fitting in model selection and subsequent selection bias in
    performance evaluation. JMLR 11, 2079-2107.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import RowsError
from ..result import Result
from ..rows import TASK_ALIASES, TASK_FIELD, read_records

SelectionCase = Literal["same_set", "overlapping", "separate"]
_FIX = ("select on one split, confirm on a frozen one: freeze_holdout each split (it names each "
        "by its content), choose the checkpoint on the selection split, then score it once on "
        "the confirmation split and compare there")


class Selection(Result):
    """Where the compared checkpoint was chosen, against where it is scored."""

    case: SelectionCase
    n_scored: int
    n_selection: int
    n_shared: int
    note: str

    def render(self) -> str:
        return f"selection: {self.case} ({self.n_shared} of {self.n_scored} scored tasks were " \
               f"in the {self.n_selection} it was chosen on): {self.note}"


def selection_ids(selected_on: Any) -> set[str]:
    """The task ids of ``selected_on``: a path to a JSONL or JSON-array file of task records or
    graded rows (a task may repeat), a list of such dicts, or a list of task ids."""
    if isinstance(selected_on, (list, tuple)) and selected_on and all(
            isinstance(t, str) for t in selected_on):
        return set(selected_on)
    recs = read_records(selected_on, noun="task")
    ids = set()
    for i, rec in enumerate(recs.items):
        tid = next((rec[k] for k in (TASK_FIELD, *TASK_ALIASES) if rec.get(k) is not None), None)
        if tid is None or isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError("has no usable `task_id`" if tid is None else
                            f"`task_id` is {tid!r}", **recs.where(i), field=TASK_FIELD,
                            fix="give the tasks (or graded rows) the checkpoint was chosen on, "
                                "each with its task_id")
        ids.add(str(tid))
    if not ids:
        raise RowsError("no tasks", source=recs.name, fix="give the tasks (or graded rows) the "
                        "checkpoint was chosen on")
    return ids


def selection_check(scored: set[str], chosen_on: set[str]) -> Selection:
    """Which case holds for a checkpoint chosen on ``chosen_on`` and scored on ``scored``."""
    shared = len(scored & chosen_on)
    fields = dict(n_scored=len(scored), n_selection=len(chosen_on), n_shared=shared)
    if shared == 0:
        return Selection(case="separate", note="chosen on other tasks than it is scored on: "
                         "this score confirms the choice on fresh tasks", **fields)
    what = ("the same held-out tasks it is scored on" if shared == len(scored) else
            f"tasks it is partly scored on ({shared} of {len(scored)})")
    return Selection(case="same_set" if shared == len(scored) else "overlapping",
                     note=f"chosen on {what}: the best of several checkpoints scores higher on "
                          f"the tasks it was picked on than it will on new ones (the winner's "
                          f"curse), so this delta and its interval are optimistic. Fix: {_FIX}",
                     **fields)
