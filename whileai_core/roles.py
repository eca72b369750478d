"""What each field of loaded rows is for: its role, read once per load and kept with the rows.

Real rows carry more than a task id and a reward: who wrote them (``model``, a ``checkpoint``),
who graded them (``grader``, ``judge_model``, a ``rubric``), how tasks group (``repo``,
``dataset``), budgets, turns, steps, text. :func:`read_fields` gives every field one role, from
its name, its JSON type and how it varies within and across tasks:

============  ======================================================================================
role          what it is, and what reads it
============  ======================================================================================
``task``      the task id (and fields that are the task again: lm-eval's ``doc_id``)
``reward``    the reward every statistic reads
``score``     another score (a reward function's column, ``judge_score``): not the reward read
``model``     who wrote the row: ``model``, a ``checkpoint``, an adapter, a sampler
``step``      the training step or version that sampled it (``step``, ``policy_version``)
``grader``    who graded it: a program, an LLM judge, people (``grader``, ``judge_model``...)
``family``    a group of tasks that pass and fail together (``repo``, ``dataset``, ``source``)
``category``  a behaviour or kind of task (``category``, ``difficulty``, ``topic``)
``budget``    token caps and what they cut (``max_tokens``, ``completion_tokens``, ``truncated``)
``turns``     turns of a multi-turn episode
``text``      prompts, replies, reasoning, messages
``id``        an id of the row or its request (``request_id``, ``sample_uuid``, hashes)
``flag``      another yes/no of the row (``errored``, ``well_formed``, ``thumbs_up``)
``unknown``   none of these
============  ======================================================================================

From the roles, :class:`Reading` tells every answer that reads rows whether they hold several
writers (never read as one set, :mod:`whileai_core.writers`), how they were graded and which
field groups the tasks into families; :meth:`Reading.report` says what an answer did with each
role present. Past ``DESCRIBE_SAMPLE_ROWS`` rows the roles are read on whole tasks sampled to
that many; counts of writers are always exact.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .defaults import (BOOTSTRAP_SEED, DESCRIBE_EXACT_CELLS, DESCRIBE_SAMPLE_ROWS,
                       LIST_SHOWN_MAX)
from .errors import as_json
from .records import TASK_ALIASES, TASK_FIELD
from .role_names import (HUMAN, JUDGE, NAMES, PROGRAM, RATING_TOPS, WRITER_STEPS, Role,
                         by_name, by_shape, words)

Grader = Literal["program", "llm_judge", "human"]
ROLES: tuple[str, ...] = ("task", "reward", "score", "model", "step", "grader", "family",
                          "category", "budget", "turns", "text", "id", "flag", "unknown")

@dataclass(frozen=True)
class FieldRole:
    """One field: its role, how it was read (``why``), whether its value differs across rows
    (``varies``) and within a task (``within_task``: constant, varies, one rollout each, or
    None when not comparable), and its distinct values (scalars only)."""

    name: str
    role: Role
    why: str
    varies: bool
    within_task: str | None
    n_values: int | None
    values: tuple = ()

    @property
    def grouping(self) -> bool:
        """Constant within every task with fewer values than tasks: it groups whole tasks."""
        return self.within_task == "constant" and self.n_values is not None and self.n_values >= 1


@dataclass(frozen=True)
class Writers:
    """Rows written by several policies: the field that tells them apart and rows per value."""

    field: str
    counts: dict[str, int]
    what: str  # "models", "checkpoints", "training steps"

    def listing(self) -> str:
        shown = list(self.counts.items())[:LIST_SHOWN_MAX]
        more = (f" ({len(shown)} of {len(self.counts)} shown)"
                if len(self.counts) > len(shown) else "")
        return ", ".join(f"{v}: {n} rows" for v, n in shown) + more


@dataclass(frozen=True)
class Reading:
    """Every field's role, and what follows from them (module docstring)."""

    fields: dict[str, FieldRole]
    writers: list[Writers] = field(default_factory=list)
    grader: Grader | None = None
    grader_why: str | None = None
    family: FieldRole | None = None
    note: str | None = None  # how much of the rows the roles were read from, when not all

    def of(self, *roles: str) -> list[FieldRole]:
        return [f for f in self.fields.values() if f.role in roles]

    def role(self, name: str) -> Role | None:
        f = self.fields.get(name)
        return None if f is None else f.role

    def report(self, did: dict[str, str]) -> list[str]:
        """What an answer did with each field, one line per role present, and a last line
        naming the fields it did not read. ``did`` maps a role or a field name to what the
        answer did with it; a field neither names is not read."""
        lines, unread = [], []
        for role in ROLES:
            present = [f for f in self.fields.values() if f.role == role]
            # ``did`` names roles and fields: a field named like a role (lm-eval's `task`) is
            # read as that field only when the role is its own
            done = [f for f in present if f.name in did and (f.name not in ROLES or f.name == role)]
            for f in done:
                lines.append(f"{f.name} [{role}]: {did[f.name]}")
            rest = [f for f in present if f not in done]
            if rest and role in did:
                names = ", ".join(f.name for f in rest[:6]) + (
                    f" ({6} of {len(rest)})" if len(rest) > 6 else "")
                lines.append(f"{names} [{role}]: {did[role]}")
            elif rest:
                unread += [f.name for f in rest]
        lines = lines[:LIST_SHOWN_MAX]
        if unread:
            shown = unread[:LIST_SHOWN_MAX]
            lines.append("not read: " + ", ".join(shown) + (
                f" ({len(shown)} of {len(unread)})" if len(unread) > len(shown) else ""))
        return lines


# --- reading the fields -------------------------------------------------------------------------

def sample_tasks(data, *, cells: int = DESCRIBE_EXACT_CELLS) -> tuple[Any, str | None]:
    """(rows, note): every row when rows x fields is at most ``cells``, else whole tasks drawn
    without replacement (seeded) until DESCRIBE_SAMPLE_ROWS rows."""
    if data.n_rows <= DESCRIBE_SAMPLE_ROWS or data.n_rows * max(1, data.width()) <= cells:
        return data, None
    sub = data.where(_chosen_tasks(data)[data.task_index])
    note = (f"whole tasks sampled (seed {BOOTSTRAP_SEED}): {sub.n_rows:,} rows of "
            f"{data.n_rows:,} ({sub.n_tasks:,} tasks)")
    return sub, note


def _chosen_tasks(data) -> np.ndarray:
    """Per task, whether it is drawn: whole tasks without replacement (seeded) until
    DESCRIBE_SAMPLE_ROWS rows."""
    order = np.random.default_rng(BOOTSTRAP_SEED).permutation(data.n_tasks)
    take = np.cumsum(data.rollouts[order]) <= DESCRIBE_SAMPLE_ROWS
    chosen = np.zeros(data.n_tasks, dtype=bool)
    chosen[order[take]] = True
    return chosen


def read_fields(data) -> Reading:
    """The :class:`Reading` of loaded rows (a :class:`~whileai_core.rows.Rows`), read once and
    kept on them: a later call on the same rows returns the same reading."""
    kept = getattr(data, "_reading", None)
    if kept is not None:
        return kept
    # a role needs a field's name, types and how it varies, not every row (bench/bench_fields.py)
    sub = _Sample(data)
    note = sub.note
    single = int(sub.rollouts.max()) == 1
    roles = {name: _typed(name, data) or _role(name, sub, single)
             for name in data.fields}
    family = _family(roles, sub.n_tasks)
    grader, why = _grader(roles, sub)
    reading = Reading(fields=roles, writers=_writers(data, sub, roles), grader=grader,
                      grader_why=why, family=family, note=note)
    try:
        data._reading = reading
    except AttributeError:  # rows built before the slot existed (a pickle): read every time
        pass
    return reading


class _Sample:
    """The rows roles are read on: every row, or past DESCRIBE_SAMPLE_ROWS the rows of the
    tasks drawn (:func:`_chosen_tasks`), by row index (no copy of the other columns)."""

    def __init__(self, data) -> None:
        self.data, self.idx, self.note = data, None, None
        self.task_index, self.n_tasks = data.task_index, data.n_tasks
        self.rollouts, self.reward = data.rollouts, data.reward
        if data.n_rows > DESCRIBE_SAMPLE_ROWS:
            chosen = _chosen_tasks(data)
            runs = data.runs()
            if runs is None:
                self.idx = np.flatnonzero(chosen[data.task_index])
                used, inverse = np.unique(data.task_index[self.idx], return_inverse=True)
            else:  # each task one run, in order: the chosen tasks' runs, end to end
                used = np.flatnonzero(chosen)
                sizes = data.rollouts[used]
                ends = np.cumsum(sizes)
                total = int(ends[-1]) if ends.shape[0] else 0
                self.idx = np.arange(total) + np.repeat(runs[used] - ends + sizes, sizes)
                inverse = np.repeat(np.arange(used.shape[0]), sizes)
            self.task_index, self.n_tasks = inverse.reshape(-1), int(used.shape[0])
            self.rollouts = np.bincount(self.task_index)
            self.reward = data.reward[self.idx]
            self.note = (f"roles read on {self.idx.shape[0]:,} rows ({self.n_tasks:,} whole "
                         f"tasks, seed {BOOTSTRAP_SEED}) of {data.n_rows:,}")
        self.n_rows = int(self.task_index.shape[0])

    def kinds(self, name: str) -> set:
        return self.data.kinds(name)

    def column(self, name: str) -> list:
        col = self.data.column(name)
        return col if self.idx is None else list(map(col.__getitem__, self.idx.tolist()))

    def carried(self, name: str) -> tuple[np.ndarray, list]:
        """The sampled rows that carry ``name`` (indices into the sample) and their values."""
        rows, vals = self.data.carried(name)
        if self.idx is None:
            return rows, vals
        keep = np.flatnonzero(np.isin(rows, self.idx))
        return np.searchsorted(self.idx, rows[keep]), [vals[i] for i in keep.tolist()]


def _typed(name: str, data) -> FieldRole | None:
    """The role of a field every load types into an array (task id, reward, truncated, model),
    read off those arrays, never off a list of every row's value."""
    if name in (TASK_FIELD, *TASK_ALIASES):
        return FieldRole(name, "task", "by its name", data.n_tasks > 1, "constant", data.n_tasks)
    if name == "reward":
        n = data.reward_scale.n_distinct
        return FieldRole(name, "reward", "by its name", n > 1, None, n)
    if name == "truncated":
        n = 1 + int(bool(data.truncated.any()) and not bool(data.truncated.all()))
        return FieldRole(name, "budget", "by its name", n > 1, None, n)
    if name == "model":
        models = tuple(m for m in data.models() if m is not None)
        return FieldRole(name, "model", "by its name", len(models) > 1, None, len(models),
                         models[:LIST_SHOWN_MAX])
    return None


def _role(name: str, data, single: bool) -> FieldRole:
    """A field's role from the cells that carry it (``carried``: it costs its cells alone)."""
    kinds = data.kinds(name) - {type(None)}
    rows, vals = data.carried(name)
    present = len(vals) - vals.count(None)
    scalar = bool(kinds) and kinds <= {str, int, float, bool}
    n_values, within, values = None, None, ()
    if present and scalar:
        counts = Counter(vals)
        counts.pop(None, None)
        n_values = len(counts)
        values = tuple(v for v, _ in counts.most_common(LIST_SHOWN_MAX))
        within = "one rollout each" if single else (
            "constant" if constant_within_tasks(data, rows, vals, counts) else "varies")
    varies = n_values is not None and (n_values > 1 or present < data.n_rows)
    role, why = by_name(name, kinds, n_values, data.n_tasks, within)
    if role == "unknown":
        role, why = by_shape(kinds, vals, present, n_values, data.n_rows)
    return FieldRole(name=name, role=role, why=why, varies=varies or (not scalar and present > 1),
                     within_task=within, n_values=n_values, values=values)


def constant_within_tasks(data, rows: np.ndarray, col: list, counts: Counter) -> bool:
    """Whether every task that the rows ``rows`` (those carrying the field, ``col`` their
    values, ``counts`` the non-null ones counted) touch carries one value on all its rollouts
    (1, 1.0 and true are one value, as a Counter has them)."""
    if len(col) <= _FEW:  # a field on a few rows: plain Python costs less than numpy's calls
        by_task: dict[int, list] = {}
        for row, value in zip(rows.tolist(), col):
            if value is not None:
                by_task.setdefault(data.task_index.item(row), []).append(value)
        return all(len(v) == data.rollouts.item(t) and len(set(v)) == 1
                   for t, v in by_task.items())
    codes = {v: i for i, v in enumerate(counts)}
    codes[None] = -1
    coded = np.fromiter(map(codes.__getitem__, col), dtype=np.int64, count=len(col))
    carrying = coded >= 0
    tasks, coded = data.task_index[rows[carrying]], coded[carrying]
    n = np.bincount(tasks, minlength=data.n_tasks)
    low = np.full(data.n_tasks, np.iinfo(np.int64).max)
    high = np.full(data.n_tasks, -1)
    np.minimum.at(low, tasks, coded)
    np.maximum.at(high, tasks, coded)
    return bool(np.all(((n == 0) | (n == data.rollouts)) & ((n == 0) | (low == high))))


_FEW = 64


def _family(roles: dict[str, FieldRole], n_tasks: int) -> FieldRole | None:
    """The field that groups the tasks into families: a family-named field every row carries,
    constant within tasks, with fewer values than tasks; the first by name priority."""
    order = [n for n, r in NAMES.items() if r == "family"]
    found = [f for f in roles.values() if f.role == "family" and f.within_task in (
        "constant", "one rollout each") and f.n_values is not None and f.n_values < n_tasks]
    found.sort(key=lambda f: order.index(f.name.lower()) if f.name.lower() in order
               else len(order))
    return found[0] if found else None


def _writers(data, sub, roles: dict[str, FieldRole]) -> list[Writers]:
    """Fields whose values split the rows into several policies (read on ``sub``, the rows the
    roles were read on), counted on every row of ``data``."""
    out = []
    models = {m: n for m, n in data.models().items() if m is not None}
    if len(models) > 1:
        what = "checkpoints" if len({m.split("@")[0] for m in models}) == 1 else "models"
        out.append(Writers("model", dict(sorted(models.items(), key=lambda kv: -kv[1])), what))
    for f in roles.values():
        if f.name == "model" or f.n_values is None or f.n_values < 2:
            continue
        checkpoint = f.role == "model" or (f.role == "step" and f.name.lower() in WRITER_STEPS)
        if not checkpoint or f.within_task == "one rollout each":
            continue
        if f.role == "step" and _rollout_index(sub, f.name):
            continue  # every rollout of a task has its own value: a repeat index, not a policy
        counts = Counter(map(as_key, data.column(f.name)))
        counts.pop(None, None)
        what = "training steps" if f.role == "step" else (
            "checkpoints" if f.name.lower() in ("checkpoint", "ckpt", "revision", "adapter",
                                                "lora") else "models")
        out.append(Writers(f.name, dict(counts.most_common()), what))
    return out


def as_key(value: Any) -> str | None:
    """A field's value as a writer's name (a step 50 is '50')."""
    return None if value is None else value if isinstance(value, str) else str(value)


def _rollout_index(data, name: str) -> bool:
    col = data.column(name)
    pairs = set(zip(data.task_index.tolist(), map(as_key, col)))
    return len(pairs) == data.n_rows


def _grader(roles: dict[str, FieldRole], data) -> tuple[Grader | None, str | None]:
    """How the rows were graded, from the grader fields' values, then their names, then the
    reward's own shape (whole numbers 1 to 5, 7 or 10 are a rating)."""
    graders = [f for f in roles.values() if f.role == "grader"]
    for f in graders:  # a value says it outright: grader "llm-judge", "unit-tests", "human"
        for v in f.values:
            if not isinstance(v, str):
                continue
            low = v.lower()
            for kind, pattern in (("human", HUMAN), ("llm_judge", JUDGE), ("program", PROGRAM)):
                if pattern.search(low) and not (kind == "llm_judge" and f.name.lower() in (
                        "feedback_source", "label_source", "annotator", "rater")):
                    return kind, f"`{f.name}` is {as_json(v)}"
    for f in graders:
        low = f.name.lower()
        if any(w in words(low) for w in ("judge", "rubric")) or low == "grader_model":
            return "llm_judge", f"the rows carry `{f.name}`"
        if any(w in words(low) for w in ("annotator", "rater", "labeler")):
            return "human", f"the rows carry `{f.name}`"
    scores = [f.name for f in roles.values() if f.role == "score"
              and any(w in ("judge", "rating", "grade") for w in words(f.name))]
    if scores:
        return "llm_judge", f"the rows carry `{scores[0]}`"
    r = data.reward
    if r.shape[0] and bool(np.all(r == np.round(r))):
        lo, hi = float(r.min()), float(r.max())
        distinct = np.unique(r).shape[0]
        if lo >= 1 and distinct >= 3 and any(hi <= top for top in RATING_TOPS):
            top = next(t for t in RATING_TOPS if hi <= t)
            return "llm_judge", (f"the reward is a whole number from 1 to {top} ({distinct} "
                                 "values), the shape of a judge's rating; if a program graded "
                                 "the rows, say so with a `grader` field")
    return None, None


FIELDS_DOC = ("what this answer did with each field of the rows, one line per role present "
              "(whileai_core.roles); the last line names the fields it did not read")


def fields_report(data, did: dict[str, str]) -> list[str]:
    """:meth:`Reading.report` of ``data``, led by what was read of another system's output."""
    return ([f"read: {data.origin}"] if data.origin else []) + read_fields(data).report(did)
