"""Graded rows: load once (JSONL, a JSON array, or a list of dicts) into a columnar view by task.

A row is one graded rollout: ``task_id`` (``scenario_id`` is accepted as an alias), ``reward`` (a
finite number; a pass is ``reward >= threshold``), ``truncated`` (bool, default false) and
``model`` (str or null). Other fields are kept on :attr:`Rows.records`.

Every statistic in the library reads the same :class:`Rows`: per-row numpy columns plus the
per-task counts (rollouts, passes, reward sums) computed once with ``np.bincount``. Bad input
raises :class:`~whileai_core.errors.RowsError` naming the file, the line, the field and the fix.

Why one module of ~400 lines: reading, its line-numbered errors and the columnar view are one
contract (a record's line travels from the reader into every error the view raises).
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import repeat
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .budgets import BudgetColumns, budget_columns
from .defaults import PASS_THRESHOLD
from .errors import RowsError
from .progress import step
from .rewards import RewardScale, classify_reward
from .safepath import Root, UserPath, as_user_path, is_path
from . import safejson

TASK_FIELD = "task_id"
TASK_ALIASES = ("scenario_id",)

RowsLike = "Rows | str | os.PathLike | Iterable[Mapping]"


class Rows:
    """Graded rows as columns, grouped by task. Build with :func:`load_rows`.

    Per row (length ``n_rows``): ``reward`` (float64), ``passed`` (bool), ``truncated`` (bool),
    ``model`` (list of str | None), ``task_index`` (int64 into ``task_ids``).
    Per task (length ``n_tasks``, first-appearance order): ``task_ids``, ``rollouts`` (int64),
    ``passes`` (int64), ``reward_sum`` (float64).
    """

    __slots__ = ("source", "threshold", "records", "reward", "passed", "truncated", "model",
                 "task_index", "task_ids", "rollouts", "passes", "reward_sum", "_lines",
                 "budget", "_scale", "_fields")

    def __init__(self, *, source: str | None, threshold: float, records: list[dict],
                 reward: np.ndarray, truncated: np.ndarray, model: list,
                 task_index: np.ndarray, task_ids: list[str], lines: list[int] | None = None,
                 budget: BudgetColumns | None = None, fields: frozenset | None = None):
        self.source = source
        self.threshold = float(threshold)
        self.records = records
        self.reward = reward
        self.truncated = truncated
        self.model = model
        self.task_index = task_index
        self.task_ids = task_ids
        self.passed = reward >= self.threshold
        n_tasks = len(task_ids)
        self.rollouts = np.bincount(task_index, minlength=n_tasks).astype(np.int64)
        self.passes = np.bincount(task_index, weights=self.passed, minlength=n_tasks).astype(np.int64)
        self.reward_sum = np.bincount(task_index, weights=reward, minlength=n_tasks)
        self._lines = lines
        self.budget = budget  # token budgets (whileai_core.budgets); None: no row says
        self._scale = None
        self._fields = fields  # every row's field names when known to be the same, else None

    def has_field(self, name: str) -> bool:
        """Whether any row carries ``name`` (free when every row is known to carry the same
        fields, else a scan that stops at the first row that does)."""
        if self._fields is not None:
            return name in self._fields
        return any(map(dict.__contains__, self.records, repeat(name, len(self.records))))

    # --- what the reward is (whileai_core.rewards), read once --------------------------------
    @property
    def reward_scale(self) -> RewardScale:
        """The reward's kind (binary, bounded in [0, 1], another scale) at this threshold."""
        if self._scale is None:
            self._scale = classify_reward(self.reward, self.threshold)
        return self._scale

    # --- sizes ---------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(self.reward.shape[0])

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)

    def __len__(self) -> int:
        return self.n_rows

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source else ""
        return f"<Rows {self.n_rows} rows, {self.n_tasks} tasks{src}>"

    # --- per-task views --------------------------------------------------------------------
    def pass_rate(self) -> np.ndarray:
        """Per-task pass rate c_i / n_i (float64, one per task)."""
        return self.passes / self.rollouts

    def mean_reward(self) -> np.ndarray:
        """Per-task mean reward (float64, one per task)."""
        return self.reward_sum / self.rollouts

    def task_values(self, metric: str = "pass") -> np.ndarray:
        """Per-task value of ``metric``: "pass" (pass rate) or "reward" (mean reward)."""
        if metric == "pass":
            return self.pass_rate()
        if metric == "reward":
            return self.mean_reward()
        raise RowsError(f"`metric` must be 'pass' or 'reward', got {metric!r}",
                        fix="use metric='pass' (pass rate) or metric='reward' (mean reward)")

    def per_task(self) -> dict[str, float]:
        """Task id -> pass rate, in first-appearance order."""
        return dict(zip(self.task_ids, self.pass_rate().tolist()))

    def models(self) -> dict[str | None, int]:
        """Model name (None when a row has none) -> number of rows."""
        first = self.model[0] if self.model else None
        if self.model.count(first) == len(self.model):  # one model: counted in C
            return {first: len(self.model)}
        return dict(Counter(self.model))

    def where(self, mask: np.ndarray) -> Rows:
        """The rows where ``mask`` is true, regrouped (tasks keep their first-appearance order).
        ``mask`` may also be the increasing row indices to keep (what a group-by gives, without
        a pass over every row per group)."""
        mask = np.asarray(mask)
        keep = np.flatnonzero(mask) if mask.dtype == bool else mask.astype(np.int64)
        old = self.task_index[keep]
        used, new_index = np.unique(old, return_inverse=True)
        # np.unique sorts; keep first-appearance order of the surviving tasks instead.
        first = np.full(used.shape[0], keep.shape[0], dtype=np.int64)
        np.minimum.at(first, new_index, np.arange(keep.shape[0]))
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.shape[0])
        return Rows(source=self.source, threshold=self.threshold,
                    records=[self.records[i] for i in keep.tolist()],
                    reward=self.reward[keep], truncated=self.truncated[keep],
                    model=[self.model[i] for i in keep.tolist()],
                    task_index=rank[new_index].astype(np.int64),
                    task_ids=[self.task_ids[i] for i in used[order].tolist()],
                    lines=None if self._lines is None else [self._lines[i] for i in keep.tolist()],
                    budget=None if self.budget is None else self.budget.take(keep),
                    fields=self._fields)

    def line_of(self, row: int) -> int | None:
        """The 1-based line (JSONL) or row number (JSON array, list) of row ``row``."""
        return self._lines[row] if self._lines is not None else row + 1


# --- reading records (shared by every JSONL input: rows, traces, judge items) ---------------

class Records:
    """Records read from a JSONL/JSON file or given as a list, and where each one came from.

    ``where(i)`` gives the keyword arguments of a :class:`RowsError` for record ``i``: the file and
    its line (JSONL), the file and array element (JSON array), or ``<rows> row i`` for a list.
    """

    __slots__ = ("items", "name", "_lines", "_noun")

    def __init__(self, items: list, name: str, lines: list[int] | None | str, noun: str):
        self.items, self.name, self._lines, self._noun = items, name, lines, noun

    def __len__(self) -> int:
        return len(self.items)

    def where(self, i: int) -> dict[str, Any]:
        if isinstance(self._lines, list):
            return {"source": self.name, "line": self._lines[i]}
        if self._lines == "jsonl":
            return {"source": self.name, "line": i + 1}
        if self._lines == "array":
            return {"source": f"{self.name} array element {i + 1}"}
        return {"source": f"{self.name} {self._noun} {i + 1}"}


# what one record of each kind looks like, for the fix of a file that holds none
RECORD_FORMS = {
    "row": '{"task_id": "t1", "reward": 1.0}',
    "item": '{"id": "t1", "label": true, "grades": {"judge-a": true}}',
    "pair": '{"id": "p1", "forward": "first", "reversed": "second"}',
    "trace": ('{"task_id": "t1", "messages": [{"role": "user", "content": "..."}, '
              '{"role": "assistant", "content": "..."}]}'),
    "record": '{"task_id": "t1", ...}',
    "held-out record": '{"task_id": "h1", "prompt": "..."}',
}


def read_records(source: Any, *, noun: str = "row", root: Root | None = None) -> Records:
    """Records from a path (JSONL, or one JSON array of objects) or a list of mappings.

    Every record is an object; anything else raises :class:`RowsError` naming the file and line
    (or the list position, called ``noun`` in messages) and the fix. A path is opened through
    the door (``whileai_core.safepath``): under ``root`` when one is given (confined: no ``..``,
    no link, nothing outside it), else as the user's own path; regular files only, within the
    size limit for rows files.
    """
    if is_path(source):
        path = as_user_path(source, root, argument=f"{noun}s", error=RowsError)
        items, lines, name = _read_file(path, noun)
        return Records(items, name, "jsonl" if lines is None else lines, noun)
    if isinstance(source, Mapping):
        raise RowsError(f"got one {noun} (a dict), expected a list of them",
                        fix=f"wrap it in a list: [{noun}]")
    if not isinstance(source, Iterable) or isinstance(source, (str, bytes, bytearray)):
        raise RowsError(f"cannot read {noun}s from a {type(source).__name__}",
                        fix="pass a path to a .jsonl/.json file or a list of dicts")
    items = list(source)
    for i, rec in enumerate(items):
        if not isinstance(rec, Mapping):
            raise RowsError(f"{noun} {i + 1} is a {type(rec).__name__}, expected an object",
                            source=f"<{noun}s>",
                            fix='give each as a JSON object, e.g. {"task_id": "...", "reward": 1.0}')
    if items and not all(type(r) is dict for r in items):
        items = [dict(r) for r in items]
    return Records(items, f"<{noun}s>", None, noun)


# --- loading -----------------------------------------------------------------------------

def load_rows(source: Any, *, threshold: float | None = None, root: Root | None = None) -> Rows:
    """Load graded rows from a path (JSONL or a JSON array), a list of dicts, or :class:`Rows`.

    A path may also be another system's eval output that reads without a choice (see
    :mod:`whileai_core.importers`): prime-rl episodes of one step, an Inspect log with one
    scorer, lm-eval samples with one metric and filter. Errored rollouts are left out.

    ``threshold``: a row passes iff ``reward >= threshold`` (default ``PASS_THRESHOLD`` = 1.0).
    ``root``: open a path under this root (see :func:`read_records`).
    Raises :class:`RowsError` naming the file, line, field and fix for any row it cannot use.
    """
    thr = PASS_THRESHOLD if threshold is None else threshold
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not math.isfinite(thr):
        raise RowsError(f"threshold must be a finite number, got {threshold!r}",
                        fix="pass e.g. threshold=1.0 (a pass is reward >= threshold)")
    if isinstance(source, Rows):
        if threshold is None or float(thr) == source.threshold:
            return source
        return Rows(source=source.source, threshold=thr, records=source.records,
                    reward=source.reward, truncated=source.truncated, model=source.model,
                    task_index=source.task_index, task_ids=source.task_ids, lines=source._lines,
                    budget=source.budget, fields=source._fields)
    is_file = is_path(source)
    if is_file:
        step(0, 3, f"reading {source}")
        # another system's output (read through the door too, like every path)
        path = as_user_path(source, root, argument="rows", error=RowsError)
        foreign = _foreign(path)
        if foreign is not None:
            return _build(Records(foreign[1], f"{path} ({foreign[0]} import)", None, "row"),
                          threshold=thr)
        source = path
    records = read_records(source, noun="row", root=root)
    if is_file:
        step(2, 3, f"grouping {len(records)} rows by task")
    rows = _build(records, threshold=thr)
    if is_file:
        step(3, 3, f"{rows.n_rows} rows, {rows.n_tasks} tasks")
    return rows


def _foreign(path: UserPath) -> tuple[str, list[dict]] | None:
    """(format, rows) when ``path`` is another system's output that reads unambiguously
    (``whileai_core.importers``), else None (graded rows, or something the reader will name)."""
    from .importers import ROWS, detect_format, rows_for_load

    fmt = detect_format(path)
    if fmt is None or fmt == ROWS:
        return None
    return fmt, rows_for_load(path, fmt)


def _read_file(path: UserPath, noun: str = "row") -> tuple[list, list[int] | None | str, str]:
    name = str(path)
    text = path.read_text("rows", error=RowsError, fix="save the rows as UTF-8 JSONL")
    step(1, 3, f"parsing {len(text):,} characters of {name}")
    stripped = text.lstrip()
    if not stripped:
        form = RECORD_FORMS.get(noun)
        raise RowsError(f"is empty: no {noun}s", source=name,
                        fix=f"write one JSON object per line, one {noun} each"
                        + (f", e.g. {form}" if form else ""))
    if stripped[0] == "[":
        try:
            data = safejson.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":  # "[...]" then more lines: JSONL whose first row is bad
                return _read_jsonl(text, name)
            raise RowsError(f"invalid JSON ({exc.msg})", source=name, line=exc.lineno,
                            fix="make the file one JSON array of row objects, or JSONL") from None
        if not isinstance(data, list):
            raise RowsError("is not a JSON array of rows", source=name,
                            fix="write one JSON object per line (JSONL)")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise RowsError(f"array element {i + 1} is a {type(rec).__name__}, expected an "
                                "object", source=name,
                                fix='give each row as {"task_id": "...", "reward": 1.0}')
        return data, "array", name
    return _read_jsonl(text, name)


def _read_jsonl(text: str, name: str) -> tuple[list, list[int] | None, str]:
    # Fast path: one C-level parse of all rows as an array. It is taken only when the text is
    # "{...}" lines with every newline between "}" and "{" (counted in C; a JSON string cannot
    # hold a raw newline, so these newlines are exactly the line breaks, and a blank line breaks
    # the count) and the number of objects equals the number of lines. Anything else goes line
    # by line, which skips blank lines and names the first bad one.
    breaks = text.count("\n")
    n = breaks if text.endswith("\n") else breaks + 1
    if (text.startswith("{") and text.endswith(("}", "}\n"))
            and text.count("}\n{") == n - 1):
        try:
            # the first n - 1 newlines become commas; a final newline stays as JSON whitespace
            parsed = safejson.loads("[" + text.replace("\n", ",", n - 1) + "]")
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if parsed is not None and len(parsed) == n and set(map(type, parsed)) == {dict}:
            return parsed, None, name  # no blank line: row i is line i + 1
    lines = text.split("\n")
    numbers = [i + 1 for i, ln in enumerate(lines) if ln and not ln.isspace()]
    records = []
    for lineno in numbers:
        ln = lines[lineno - 1]
        try:
            rec = safejson.loads(ln)
        except json.JSONDecodeError as exc:
            raise RowsError(f"invalid JSON at column {exc.colno} ({exc.msg})", source=name,
                            line=lineno, fix="write exactly one JSON object per line") from None
        if not isinstance(rec, dict):
            raise RowsError(f"a {type(rec).__name__}, expected a JSON object", source=name,
                            line=lineno, fix='write each row as {"task_id": "...", "reward": 1.0}')
        records.append(rec)
    return records, numbers, name


def _column(records: list[dict], field: str) -> list:
    """records[i].get(field) for every row, mapped in C (no Python frame per row)."""
    return list(map(dict.get, records, repeat(field, len(records))))


def _build(recs: Records, *, threshold: float) -> Rows:
    records, source = recs.items, recs.name
    if not records:
        raise RowsError("no rows", source=source,
                        fix="give at least one row with task_id and reward")

    def fail(i: int, problem: str, field: str, fix: str) -> RowsError:
        return RowsError(problem, **recs.where(i), field=field, fix=fix)

    tids = _column(records, TASK_FIELD)
    complete = set()  # fields every row carries a value for (read off the checks below)
    if None not in tids:
        complete.add(TASK_FIELD)
    if None in tids:
        for alias in TASK_ALIASES:
            tids = [t if t is not None else r.get(alias) for t, r in zip(tids, records)]
        if None in tids:
            i = tids.index(None)
            raise fail(i, "row has no `task_id`", TASK_FIELD,
                       'add "task_id": "<the prompt or scenario this rollout answers>"')
    kinds = set(map(type, tids))
    if not kinds <= {str}:
        if kinds <= {str, int}:
            tids = [t if type(t) is str else str(t) for t in tids]
        else:
            i = next(j for j, t in enumerate(tids) if type(t) not in (str, int))
            raise fail(i, f"`task_id` is {tids[i]!r} (a {type(tids[i]).__name__})", TASK_FIELD,
                       "use a string id")
    rewards = _column(records, "reward")
    kinds = set(map(type, rewards))
    if not kinds <= {float, int}:
        i = next(j for j, v in enumerate(rewards) if type(v) not in (float, int))
        if rewards[i] is None:
            raise fail(i, "row has no `reward`" if "reward" not in records[i]
                       else "`reward` is null", "reward",
                       'add "reward": <a number; a pass is >= the threshold (1.0)>')
        raise fail(i, f"`reward` is {rewards[i]!r} (a {type(rewards[i]).__name__})", "reward",
                   "write the reward as a JSON number, e.g. 1.0")
    reward = np.array(rewards, dtype=np.float64)
    finite = np.isfinite(reward)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise fail(i, f"`reward` is {rewards[i]!r}, not a finite number", "reward",
                   "grade the rollout with a finite score (a failed grade is 0.0)")
    trunc = _column(records, "truncated")
    # count() compares by identity first, and only None equals None: all-absent in one C pass.
    kinds = {type(None)} if trunc.count(None) == len(trunc) else set(map(type, trunc))
    if not kinds <= {bool, type(None)}:
        i = next(j for j, v in enumerate(trunc) if type(v) not in (bool, type(None)))
        raise fail(i, f"`truncated` is {trunc[i]!r} (a {type(trunc[i]).__name__})", "truncated",
                   "write true or false (true when the reply hit the token cap)")
    if type(None) not in kinds:
        complete.add("truncated")
    if kinds == {type(None)}:
        truncated = np.zeros(len(records), dtype=bool)
    else:
        truncated = np.array([v is True for v in trunc] if type(None) in kinds else trunc, dtype=bool)
    model = _column(records, "model")
    first = model[0]
    if (first is None or type(first) is str) and model.count(first) == len(model):
        kinds = {type(first)}  # one value throughout; only a str equals a str
    else:
        kinds = set(map(type, model))
    if type(None) not in kinds:
        complete.add("model")
    if not kinds <= {str, type(None)}:
        i = next(j for j, v in enumerate(model) if type(v) not in (str, type(None)))
        raise fail(i, f"`model` is {model[i]!r} (a {type(model[i]).__name__})", "model",
                   'write the model id that sampled the rollout, e.g. "Qwen/Qwen3-8B", or null')
    # optional columns: token budgets (whileai_core.budgets); a reply the cap cut off is
    # truncated when the row does not say otherwise
    fields = _uniform_fields(records, complete | {"reward"})
    budget = budget_columns(records, fail, present=fields)
    if budget is not None and budget.finish_reason is not None:
        unsaid = np.fromiter((v is None for v in trunc), dtype=bool, count=len(trunc))
        truncated = truncated | (budget.cut_off() & unsaid)
    task_index, task_ids = _factorize(tids)
    lines = recs._lines if isinstance(recs._lines, list) else None
    return Rows(source=source, threshold=threshold, records=records, reward=reward,
                truncated=truncated, model=model, task_index=task_index,
                task_ids=task_ids, lines=lines, budget=budget, fields=fields)


def _uniform_fields(records: list[dict], complete: set[str]) -> frozenset | None:
    """The one set of field names every row carries, when the checks already made prove it:
    every field of the first row is in ``complete`` (fields every row carries a value for) and
    every row has as many fields as the first. Else None (unknown)."""
    first = records[0]
    if not set(first) <= complete:
        return None
    if set(map(len, records)) != {len(first)}:
        return None
    return frozenset(first)


def _factorize(tids: list[str]) -> tuple[np.ndarray, list[str]]:
    """Task index per row and the task ids in first-appearance order.

    Graded rows usually come grouped (a task's rollouts are consecutive): then the index is a
    cumulative count of the places where the id changes, found by one vectorised comparison,
    provided no id starts two runs. Otherwise a dict maps each id to its position.
    """
    ids = np.array(tids, dtype=object)
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    run_ids = ids[starts].tolist()
    if len(set(run_ids)) == len(run_ids):
        marks = np.zeros(len(tids), dtype=np.int64)
        marks[starts[1:]] = 1
        return np.cumsum(marks), run_ids
    order = dict.fromkeys(tids)
    for i, key in enumerate(order):
        order[key] = i
    return np.fromiter(map(order.__getitem__, tids), dtype=np.int64, count=len(tids)), list(order)
