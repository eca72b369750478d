"""Graded rows: load once (JSONL, a JSON array, or a list of dicts) into a columnar view by task.

A row is one graded rollout: ``task_id`` (``scenario_id`` is accepted as an alias), ``reward`` (a
finite number; a pass is ``reward >= threshold``), ``truncated`` (bool, default false) and
``model`` (str or null); token budgets (``whileai_core.budgets``) and every other field are
kept as columns too (``whileai_core.columns``).

Every statistic reads the same :class:`Rows`: per-row numpy columns plus per-task counts computed
once. A file is read by :func:`whileai_core.records.read_rows`, a list by
:meth:`~whileai_core.columns.Columns.from_dicts`; both end in :func:`_build`. Bad input raises
:class:`~whileai_core.errors.RowsError` naming the file, the line, the field and the fix.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from functools import partial
from itertools import compress, islice
from operator import ne
import math
from typing import Any

import numpy as np

from .budgets import BudgetColumns, budget_columns
from .columns import Columns, deep_size
from .defaults import PASS_THRESHOLD
from .errors import RowsError, as_json
from .progress import step
from .records import (TASK_ALIASES, TASK_FIELD, distinct, first_line, first_record,
                      is_graded_row, read_records, read_rows)
from .rewards import RewardScale, classify_reward, task_spread
from .safepath import OpenFile, Root, UserPath, as_user_path, is_path
from . import field_names, file_shapes, voice

_SMALL = 64  # rows a selection regroups in plain Python (Rows.where)

RowsLike = "Rows | str | os.PathLike | Iterable[Mapping]"


class Rows:
    """Graded rows as columns, grouped by task. Build with :func:`load_rows`.

    Per row (length ``n_rows``): ``reward`` (float64), ``passed`` (bool), ``truncated`` (bool),
    ``model`` (list of str | None), ``task_index`` (int64 into ``task_ids``).
    Per task (length ``n_tasks``, first-appearance order): ``task_ids``, ``rollouts`` (int64),
    ``passes`` (int64), ``reward_sum`` (float64).
    Every field: :attr:`fields`, :meth:`column`, :meth:`present`, :meth:`kinds`; the rows as
    dicts: :attr:`records`. Token budgets: :attr:`budget`; the reward's kind: :attr:`reward_scale`.
    """

    __slots__ = ("source", "threshold", "reward", "passed", "truncated", "model",
                 "task_index", "task_ids", "rollouts", "passes", "reward_sum", "_lines",
                 "_columns", "_records", "_model_counts", "budget", "_scale", "_reading",
                 "origin", "_runs", "_spread")

    def __init__(self, *, source: str | None, threshold: float, records: list[dict] | None = None,
                 reward: np.ndarray, truncated: np.ndarray, model: list,
                 task_index: np.ndarray, task_ids: list[str], lines: Any = None,
                 columns: Columns | None = None, budget: BudgetColumns | None = None,
                 starts: np.ndarray | bool | None = None):
        self.source = source
        self.threshold = float(threshold)
        if columns is None:
            columns = Columns.from_dicts(records if records is not None else [],
                                         source or "<rows>")
        self._columns = columns
        self._records = records
        self.reward = reward
        self.truncated = truncated
        self.model = model
        self.task_index = task_index
        self.task_ids = task_ids
        self.passed = reward >= self.threshold
        self.rollouts, self.passes, self.reward_sum = _per_task(
            task_index, self.passed, reward, len(task_ids), starts)
        self._lines = None if lines is None else np.asarray(lines, dtype=np.int64)
        self._model_counts: dict[str | None, int] | None = None
        self.budget = budget  # token budgets (whileai_core.budgets); None: no row says
        self._scale: RewardScale | None = None
        self._reading = None  # the fields' roles (whileai_core.roles), read on first use
        self.origin: str | None = None  # another system's output: what was read of it
        # where each task's rows start (runs()): False when not consecutive, None until asked
        self._runs: np.ndarray | bool | None = starts
        self._spread: np.ndarray | None = None  # per-task reward spread (spread())

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

    # --- every field -----------------------------------------------------------------------
    @property
    def records(self) -> list[dict]:
        """The rows as dicts, built on first use: prefer :meth:`column` for one field."""
        if self._records is None:
            self._records = self._columns.records()
        return self._records

    @property
    def fields(self) -> list[str]:
        """Every field some row carries, in the order first seen."""
        return self._columns.names()

    def column(self, name: str) -> list:
        """The value of field ``name`` in every row (``None`` where a row does not carry it)."""
        return self._columns.values(name)

    def present(self, name: str) -> np.ndarray:
        """Per row, whether it carries field ``name`` (a JSON null counts as carried)."""
        return self._columns.present(name)

    def kinds(self, name: str) -> set[type]:
        """The Python types of field ``name``'s values where rows carry it."""
        return self._columns.kinds(name)

    def width(self) -> int:
        """Fields per row, to size work by."""
        return self._columns.width()

    def has_field(self, name: str) -> bool:
        """Whether any row carries ``name`` (a JSON null counts), as :meth:`present` says."""
        return self._columns.has(name)

    def carried(self, name: str) -> tuple[np.ndarray, list]:
        """The rows that carry field ``name`` (increasing indices) and their values."""
        return self._columns.carried(name)

    @property
    def notes(self) -> list[str]:
        """What the reader changed to keep the rows valid JSON, each naming its line and field."""
        return list(self._columns.notes)

    # --- what the rows hold (a cache of loads charges it) --------------------------------------
    def nbytes(self) -> int:
        """Bytes these rows hold: arrays, columns, the per-row lists (each distinct string once)
        and the row dicts once built."""
        arrays = [self.reward, self.passed, self.truncated, self.task_index, self.rollouts,
                  self.passes, self.reward_sum, self._lines]
        if self.budget is not None:
            arrays += [self.budget.max_tokens, self.budget.completion_tokens]
        held = sys.getsizeof(self) + self._columns.nbytes() + sum(
            sys.getsizeof(a) if a.base is None else a.nbytes for a in arrays if a is not None)
        lists = [self.model, self.task_ids] + (
            [self.budget.finish_reason] if self.budget and self.budget.finish_reason else [])
        for values in lists:
            held += sys.getsizeof(values) + sum(map(sys.getsizeof, set(values) - {None}))
        if self._records is not None:
            held += deep_size(self._records)
        return held

    def shared(self) -> Rows:
        """These rows for one more caller: everything loaded shared, but not the row dicts one
        caller builds (a cached load stays the size it was charged)."""
        out = object.__new__(Rows)
        for name in Rows.__slots__:
            setattr(out, name, getattr(self, name))
        out._records = None
        return out

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
                        fix=f"use {voice.arg('metric', 'pass')} (pass rate) or "
                            f"{voice.arg('metric', 'reward')} (mean reward)")

    def runs(self) -> np.ndarray | None:
        """Where each task's rows start, when every task's rows are consecutive and the tasks
        come in order; else None."""
        if self._runs is None:
            index = self.task_index
            step = np.diff(index)
            grouped = index.shape[0] > 0 and index[0] == 0 and bool(
                ((step == 0) | (step == 1)).all())
            self._runs = np.concatenate([[0], np.flatnonzero(step) + 1]) if grouped else False
        return None if self._runs is False else self._runs

    def spread(self) -> np.ndarray:
        """Per task, its largest minus its smallest reward (0 for one rollout), computed once."""
        if self._spread is None:
            self._spread = task_spread(self.reward, self.task_index, self.n_tasks, self.runs())
        return self._spread

    def per_task(self) -> dict[str, float]:
        """Task id -> pass rate, in first-appearance order."""
        return dict(zip(self.task_ids, self.pass_rate().tolist()))

    def models(self) -> dict[str | None, int]:
        """Model name (None when a row has none) -> number of rows."""
        if self._model_counts is None:
            first = self.model[0] if self.model else None
            if self.model.count(first) == len(self.model):  # one model: counted in C
                self._model_counts = {first: len(self.model)}
            else:
                self._model_counts = dict(Counter(self.model))
        return dict(self._model_counts)

    def where(self, mask: np.ndarray) -> Rows:
        """The rows where ``mask`` (a bool mask, or increasing row indices) is true, regrouped
        (tasks keep their first-appearance order)."""
        mask = np.asarray(mask)
        keep = np.flatnonzero(mask) if mask.dtype == bool else mask.astype(np.int64)
        index = keep.tolist()
        if len(index) <= _SMALL:
            # a few rows: the same regrouping in plain Python, cheaper than numpy's calls
            old = list(map(self.task_index.item, index))
            position = {t: i for i, t in enumerate(dict.fromkeys(old))}
            task_index = np.array([position[t] for t in old], dtype=np.int64)
            task_ids = [self.task_ids[t] for t in position]
        else:
            old = self.task_index[keep]
            used, new_index = np.unique(old, return_inverse=True)
            # np.unique sorts; keep first-appearance order of the surviving tasks instead.
            first = np.full(used.shape[0], keep.shape[0], dtype=np.int64)
            np.minimum.at(first, new_index, np.arange(keep.shape[0]))
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.shape[0])
            task_index = rank[new_index].astype(np.int64)
            task_ids = [self.task_ids[i] for i in used[order].tolist()]
        return Rows(source=self.source, threshold=self.threshold,
                    records=(None if self._records is None
                             else list(map(self._records.__getitem__, index))),
                    columns=self._columns.take(keep),
                    reward=self.reward[keep], truncated=self.truncated[keep],
                    model=list(map(self.model.__getitem__, index)),
                    task_index=task_index, task_ids=task_ids,
                    lines=None if self._lines is None else self._lines[keep],
                    budget=None if self.budget is None else self.budget.take(keep)).of(self.origin)

    def of(self, origin: str | None) -> Rows:
        """These rows, saying they were read from another system's output (``origin``)."""
        self.origin = origin
        return self

    def line_of(self, row: int) -> int | None:
        """The 1-based line (JSONL) or row number (JSON array, list) of row ``row``."""
        return int(self._lines[row]) if self._lines is not None else row + 1


# --- loading -----------------------------------------------------------------------------

def load_rows(source: Any, *, threshold: float | None = None, root: Root | None = None) -> Rows:
    """Load graded rows from a path (JSONL or a JSON array), a list of dicts, or :class:`Rows`.

    A path may also be another system's eval output that reads without a choice
    (:mod:`whileai_core.importers`); errored rollouts are left out. ``threshold``: a row passes
    iff ``reward >= threshold`` (default ``PASS_THRESHOLD``). ``root``: open a path under it.
    Raises :class:`RowsError` naming the file, line, field and fix for any row it cannot use.
    """
    thr = check_threshold(threshold)
    if isinstance(source, Rows):
        return with_threshold(source, threshold)
    if not is_path(source):
        recs = read_records(source, noun="row", root=root)
        return _build(Columns.from_dicts(recs.items, recs.name), threshold=thr)
    step(0, 3, f"reading {source}")
    # another system's output (read through the door too, like every path)
    path = as_user_path(source, root, argument="rows", error=RowsError)
    foreign = _foreign(path)
    if foreign is not None:
        return imported(path, foreign, threshold=thr)
    with path.open_stream("rows", error=RowsError) as fh:
        return load_open(fh, threshold=thr)


def imported(path: UserPath, found: Any, *, threshold: float | None = None) -> Rows:
    """The rows ``_foreign`` read from another system's output at ``path``."""
    return _build(Columns.from_dicts(found.rows, f"{path} ({found.format} import)"),
                  threshold=check_threshold(threshold)).of(found.read)


def load_open(fh: OpenFile, *, threshold: float | None = None) -> Rows:
    """The graded rows of the rows file open as ``fh`` (read from that handle, never reopened)."""
    columns = read_rows(fh)
    step(2, 3, f"grouping {columns.n} rows by task")
    rows = _build(columns, threshold=check_threshold(threshold))
    step(3, 3, f"{rows.n_rows} rows, {rows.n_tasks} tasks")
    return rows


def check_threshold(threshold: Any) -> float:
    """``threshold`` as given, or the default; a :class:`RowsError` unless a finite number."""
    thr = PASS_THRESHOLD if threshold is None else threshold
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not math.isfinite(thr):
        raise RowsError(f"`{voice.arg('threshold')}` must be a finite number, got {threshold!r}",
                        fix=f"pass e.g. {voice.arg('threshold', 1.0)} (a pass is reward >= the "
                            "threshold)")
    return thr


def with_threshold(rows: Rows, threshold: float | None) -> Rows:
    """``rows`` themselves, or the same rows judged at another ``threshold`` (nothing re-read)."""
    thr = check_threshold(threshold)
    if threshold is None or float(thr) == rows.threshold:
        return rows
    # everything a load reads but the pass mark carries over; the reward's kind is read again
    # (its warning depends on the threshold)
    out = Rows(source=rows.source, threshold=thr, records=rows._records,
               columns=rows._columns, reward=rows.reward, truncated=rows.truncated,
               model=rows.model, task_index=rows.task_index, task_ids=rows.task_ids,
               lines=rows._lines, budget=rows.budget, starts=rows._runs).of(rows.origin)
    out._reading = rows._reading  # the fields' roles do not depend on the pass mark
    out._spread = rows._spread  # nor the tasks' reward spreads
    return out


def _foreign(path: UserPath):
    """Another system's output read on the fly (``importers.on_the_fly``), or None."""
    if path.is_file() and is_graded_row(first_record(first_line(path))):
        return None  # graded rows: the importers are not needed
    from .importers.on_the_fly import read_as_rows  # lazy: a JSONL file loads without the importers

    return read_as_rows(path)


_NoneType = type(None)


def _build(cols: Columns, *, threshold: float) -> Rows:
    """The rows' fields checked and turned into the typed columns every statistic reads, the
    first row that breaks a rule named by ``cols.where`` (its file and line). Where a typed
    array holds exactly what the file held, the columns derive the field from it."""
    n, source = cols.n, cols.source
    if not n:
        raise RowsError("no rows", source=source,
                        fix="give at least one row with task_id and reward")
    factorized = cols.typed.get(TASK_FIELD)  # (the reader's: every id a string)
    tids, plain_ids = _task_ids(cols, read=factorized is not None)
    reward, plain_rewards = _rewards(cols)
    truncated, plain_truncated, budget = _truncated(cols)
    model, one_model, every_model = _models(cols)
    task_index, task_ids, starts = _factorize(tids) if factorized is None else factorized
    del tids
    cols.typed = {}  # (read: the rows hold them now)
    rows = Rows(source=source, threshold=threshold, columns=cols, reward=reward,
                truncated=truncated, model=model, task_index=task_index,
                task_ids=task_ids, lines=cols.line_numbers(), budget=budget,
                starts=False if starts is None else starts)  # (read as the ids were)
    if one_model:
        rows._model_counts = {model[0]: n}
    if plain_ids:
        cols.derive(TASK_FIELD, lambda: list(map(task_ids.__getitem__, task_index.tolist())))
    if plain_rewards:
        cols.derive("reward", reward.tolist)
    if plain_truncated:
        cols.derive("truncated", truncated.tolist)
    if every_model:
        cols.derive("model", lambda: list(model))
    return rows


def _fail(cols: Columns, i: int, problem: str, field: str, fix: str) -> RowsError:
    return RowsError(problem, **cols.where(i), field=field, fix=fix)


def _kinds_of(cols: Columns, field: str, carried: np.ndarray) -> set[type]:
    """The types of a field's values, absent rows counted as None (as ``dict.get`` reads)."""
    return cols.kinds(field) | (set() if carried.all() else {_NoneType})


def _task_ids(cols: Columns, *, read: bool) -> tuple[list | None, bool]:
    """Every row's task id as a string (None when the reader ``read`` them typed), and
    whether each row held exactly that (a string ``task_id``)."""
    carried = cols.present(TASK_FIELD)
    kinds = _kinds_of(cols, TASK_FIELD, carried)
    # (read, never changed: a new list where it must)
    tids = None if read else cols.shared_values(TASK_FIELD)
    plain = bool(carried.all())
    if _NoneType in kinds:
        plain = False
        for alias in TASK_ALIASES:
            tids = [t if t is not None else a for t, a in zip(tids, cols.values(alias))]
        if None in tids:
            i = tids.index(None)
            if not carried[i]:
                raise _missing(cols, i, TASK_FIELD, 'add "task_id": "<the prompt or scenario '
                               'this rollout answers>"')
            raise _fail(cols, i, "`task_id` is null", TASK_FIELD,
                        'give "task_id": "<the prompt or scenario this rollout answers>"')
        kinds = set(map(type, tids))
    if not kinds <= {str}:
        plain = False
        if kinds <= {str, int}:
            tids = [t if type(t) is str else str(t) for t in tids]
        else:
            i = next(j for j, t in enumerate(tids) if type(t) not in (str, int))
            raise _fail(cols, i, f"`task_id` is {as_json(tids[i])}", TASK_FIELD,
                        "use a string id")
    return tids, plain


def _rewards(cols: Columns) -> tuple[np.ndarray, bool]:
    """Every row's reward as float64, each finite, and whether each row held a JSON float."""
    carried = cols.present("reward")
    kinds = _kinds_of(cols, "reward", carried)
    floats = cols.typed.get("reward")  # (the reader's: every reward a float)
    rewards = cols.shared_values("reward") if floats is None else None
    if not kinds <= {float, int}:
        i = next(j for j, v in enumerate(rewards) if type(v) not in (float, int))
        if rewards[i] is None:
            fix = 'add "reward": <a number; a pass is >= the threshold (1.0)>'
            if not carried[i]:
                raise _missing(cols, i, "reward", fix)
            raise _fail(cols, i, "`reward` is null", "reward", fix)
        raise _fail(cols, i, f"`reward` is {as_json(rewards[i])}", "reward",
                    "write the reward as a JSON number, e.g. 1.0")
    try:
        reward = floats if floats is not None else \
            np.fromiter(rewards, dtype=np.float64, count=cols.n)
    except OverflowError:  # an integer past a float's range (JSON lets it have 4,300 digits)
        reward = np.array(list(map(_as_float, rewards)), dtype=np.float64)
    finite = np.isfinite(reward)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        value = rewards[i] if rewards is not None else reward[i].item()
        shown = repr(value) if type(value) is float else \
            f"an integer of {len(str(abs(value)))} digits"
        raise _fail(cols, i, f"`reward` is {shown}, not a finite number", "reward",
                    "grade the rollout with a finite score (a failed grade is 0.0)")
    return reward, kinds == {float}


def _truncated(cols: Columns) -> tuple[np.ndarray, bool, BudgetColumns | None]:
    """Every row's ``truncated`` flag, whether each row held a bool, and the token budgets
    (``whileai_core.budgets``): a reply the cap cut off is truncated where its row does not
    say otherwise."""
    n = cols.n
    carried = cols.present("truncated")
    kinds = _kinds_of(cols, "truncated", carried)
    same = cols.constant("truncated")  # one flag in every row: no list of it
    trunc = None if kinds == {_NoneType} or same is not None else \
        cols.shared_values("truncated")
    if not kinds <= {bool, _NoneType}:
        trunc = cols.values("truncated")
        i = next(j for j, v in enumerate(trunc) if type(v) not in (bool, _NoneType))
        raise _fail(cols, i, f"`truncated` is {as_json(trunc[i])}", "truncated",
                    "write true or false (true when the reply hit the token cap)")
    if same is not None:  # (kinds == {bool})
        truncated = np.full(n, same[0], dtype=bool)
    elif trunc is None or trunc.count(True) == 0:  # (kinds <= {bool, None}: only True is true)
        truncated = np.zeros(n, dtype=bool)
    else:
        truncated = np.array([v is True for v in trunc] if _NoneType in kinds else trunc,
                             dtype=bool)
    plain = kinds == {bool}
    budget = budget_columns(cols, partial(_fail, cols))
    if budget is not None and budget.finish_reason is not None and not plain:
        unsaid = (np.ones(n, dtype=bool) if trunc is None else
                  np.fromiter((v is None for v in trunc), dtype=bool, count=n))
        truncated = truncated | (budget.cut_off() & unsaid)
    return truncated, plain, budget


def _models(cols: Columns) -> tuple[list, bool, bool]:
    """Every row's ``model`` (one string shared by every row when there is one model),
    whether there is one, and whether every row carries the field."""
    n = cols.n
    carried = cols.present("model")
    kinds = _kinds_of(cols, "model", carried)
    same = cols.constant("model")
    model = cols.shared_values("model") if same is None else None
    if not kinds <= {str, _NoneType}:
        i = next(j for j, v in enumerate(model) if type(v) not in (str, _NoneType))
        raise _fail(cols, i, f"`model` is {as_json(model[i])}", "model",
                    'write the model id that sampled the rollout, e.g. "Qwen/Qwen3-8B", or null')
    first = model[0] if same is None else same[0]
    one_model = same is not None or model.count(first) == n  # (counted in C)
    if one_model:
        model = [first] * n
    return model, one_model, bool(carried.all())


def _per_task(task_index: np.ndarray, passed: np.ndarray, reward: np.ndarray, n_tasks: int,
              starts: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per task: rollouts, passes and the reward sum (added in row order, as ``np.bincount``
    adds them); where every task's rows are one run of the same length (``starts``), summed as a
    table column by column, without scattering every row."""
    n = task_index.shape[0]
    width = n // max(n_tasks, 1)
    if isinstance(starts, np.ndarray) and 1 <= width <= 64 and width * n_tasks == n and \
            bool((np.diff(starts) == width).all()):
        rewards, passes = reward.reshape(n_tasks, width), passed.reshape(n_tasks, width)
        total, count = np.zeros(n_tasks), np.zeros(n_tasks, dtype=np.int64)
        with np.errstate(over="ignore"):  # (a sum past a float's range is inf, as bincount's)
            for j in range(width):
                total += rewards[:, j]
                count += passes[:, j]
        return np.full(n_tasks, width, dtype=np.int64), count, total
    return (np.bincount(task_index, minlength=n_tasks).astype(np.int64),
            np.bincount(task_index, weights=passed, minlength=n_tasks).astype(np.int64),
            np.bincount(task_index, weights=reward, minlength=n_tasks))


def _missing(cols: Columns, i: int, field: str, fix: str) -> RowsError:
    """Row ``i`` lacks ``field``: the error names a look-alike field the rows carry (`score`
    for `reward`: ``whileai_core.field_names``) with the rename, or rows kept inside a one-line
    document (``{"samples": [...]}``)."""
    names = cols.names()
    if cols.n == 1:
        inside = file_shapes.nested_rows({n: cols.values(n)[0] for n in names})
        if inside is not None:
            key, count = inside
            return RowsError(f"row has no `{field}`; its `{key}` holds a list of {count} "
                             "objects: the rows may be inside it", **cols.where(i), field=field,
                             fix=f"write the rows of `{key}` one per line, e.g. "
                                 + field_names.jsonl_command(
                                     "import json,sys; rs=json.loads(open(sys.argv[1]).readline())"
                                     f"[{json.dumps(key)}]", cols.source))
    problem, found = field_names.missing(field, names)
    if found is not None:
        renames = {found: field}
        for other in (TASK_FIELD, "reward"):  # the other one too, when it is missing as well
            if other != field and not cols.has(other) and other not in renames.values():
                alike = field_names.look_alikes(other, [n for n in names if n not in renames])
                if alike:
                    renames[alike[0][0]] = other
        fix = field_names.rename_fix(renames, cols.source, rows=True)
    return RowsError(problem, **cols.where(i), field=field, fix=fix)


def _as_float(value: float | int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _factorize(tids: list[str]) -> tuple[np.ndarray, list[str], np.ndarray | None]:
    """Task index per row, the task ids in first-appearance order, and where each task's rows
    start when they are consecutive (else None): then the index is a cumulative count of the
    places where the id changes (compared in C); otherwise a dict maps each id to its position."""
    n = len(tids)
    # (bytes of the comparisons' bools, read as a bool array: no per-item numpy conversion)
    change = np.frombuffer(bytes(map(ne, islice(tids, 1, None), tids)), dtype=bool)
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    run_ids = list(map(tids.__getitem__, starts.tolist()))
    if distinct(run_ids):
        index = np.empty(n, dtype=np.int64)
        index[0] = 0
        np.cumsum(change, out=index[1:])
        return index, run_ids, starts
    order = dict.fromkeys(tids)
    for i, key in enumerate(order):
        order[key] = i
    return (np.fromiter(map(order.__getitem__, tids), dtype=np.int64, count=n), list(order),
            None)
