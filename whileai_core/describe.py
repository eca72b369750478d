"""What fields the rows carry: each field's type, how many rows carry it, its values or range,
and whether it is constant within a task; the fields that change the route's answer named.

The answer is bounded at any size: a few values shown (``DESCRIBE_VALUES_SHOWN``), long names
and values cut, and past ``DESCRIBE_EXACT_CELLS`` (rows x fields) read from whole tasks sampled
to ``DESCRIBE_SAMPLE_ROWS`` rows (the answer says so). Each field is read off the rows that
carry it (``Rows.carried``): the cost is the file's cells, not fields x rows.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import compress, repeat
from operator import is_not
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from .defaults import CATEGORY_FIELD, DESCRIBE_FIELDS_SHOWN, DESCRIBE_VALUES_SHOWN
from .errors import ArgumentError
from .operations import READS, args, operation
from .result import Result
from .rewards import RewardScale
from .roles import constant_within_tasks, read_fields, sample_tasks
from .rows import TASK_ALIASES, TASK_FIELD, Rows, load_rows
from . import voice

_NAME_MAX = 80      # characters of a field name shown
NoneType = type(None)
_VALUE_MAX = 40     # characters of a value shown

# Fields the route reads, or that change its answer when present, and what reads them.
ROLES: dict[str, str] = {
    TASK_FIELD: "the task: every interval resamples tasks",
    "reward": "the reward: pass is reward >= threshold; its kind decides question 3",
    "truncated": "question 1: a cut-off reply that passes",
    "model": "question 5: who wrote the rows",
    "max_tokens": "budget: teacher_clears compares both sides' caps",
    "completion_tokens": "budget: a teacher's reply past the student's cap counts as failed",
    "finish_reason": "budget: 'length' marks a reply the cap cut off (truncated)",
    "turns": "multi-turn rows: completion_tokens is summed over turns",
    CATEGORY_FIELD: "per-behaviour rates: category_table",
    "family": "tasks in families: pass cluster='family' to every interval",
}

JsonType = Literal["string", "integer", "number", "boolean", "null", "object", "array"]
_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null", dict: "object", list: "array"}


class FieldInfo(Result):
    """One field: its JSON types, the rows that carry a value, its values or range, whether it
    is constant within a task, and what in this library reads it."""

    name: str = Field(description=f"the field's name (cut to {_NAME_MAX} characters)")
    types: list[str] = Field(description="JSON types seen: string, integer, number, boolean, "
                                         "null, object, array")
    share: float = Field(description="share of rows carrying a non-null value")
    n_rows: int = Field(description="rows (of those read) carrying a non-null value")
    n_distinct: int | None = Field(None, description="distinct values (scalars only)")
    values: list[str] | None = Field(None, description="the most common values, up to "
                                                       f"{DESCRIBE_VALUES_SHOWN}")
    low: float | None = Field(None, description="smallest numeric value")
    high: float | None = Field(None, description="largest numeric value")
    within_task: Literal["constant", "varies", "one rollout each", "not comparable"] | None = Field(
        None, description="whether a task's rollouts all carry the same value")
    reads: str | None = Field(None, description="what in this library reads the field")
    role: str | None = Field(None, description="what the field is for (whileai_core.roles): "
                                               "task, reward, score, model, step, grader, "
                                               "family, category, budget, turns, text, id, "
                                               "flag, unknown")

    def render(self) -> str:
        what = "/".join(self.types)
        if self.low is not None:
            vals = f"{self.low:g}..{self.high:g}"
        elif self.values:
            more = (f" +{self.n_distinct - 3} more" if self.n_distinct and self.n_distinct > 3
                    else "")
            vals = ", ".join(_cut(v, 24) for v in self.values[:3]) + more
        else:
            vals = ""
        within = f"{self.within_task} within tasks" if self.within_task else ""
        reads = f"  <- {self.reads.split(':')[0]}" if self.reads else ""
        shown = "; ".join(filter(None, [f"{what}, {self.share:.0%} of rows", vals, within]))
        role = f" [{self.role}]" if self.role else ""
        return f"{self.name}{role}: {shown}{reads}"


class RowsDescription(Result):
    """Every field the rows carry (``fields``, the ones the route reads first), the reward's
    kind, and which fields present change the route's answer (``route_fields``)."""

    n_rows: int
    n_tasks: int
    rollouts_min: int
    rollouts_max: int
    n_fields: int
    fields: list[FieldInfo]
    route_fields: list[str] = Field(description="fields whose values change the route's answer "
                                                "(budgets, turns past one, categories, "
                                                "families, writers, the grader)")
    grader: str | None = Field(None, description="who graded the rows (program, llm_judge, "
                                                 "human) and what says so")
    reward: RewardScale
    read_from: str | None = Field(None, description="how many rows the values were read from, "
                                                    "when not all")
    shown: str | None = None
    cut_lists = ("fields",)

    def bounded(self, limit: int):
        """Cut for a tool answer: at most DESCRIBE_FIELDS_SHOWN fields (n of N), each with at
        most 3 values of 24 characters; `fields=[...]` asks for others by name."""
        out = super().bounded(min(limit, DESCRIBE_FIELDS_SHOWN))
        trimmed = [f.model_copy(update={"values": [_cut(v, 24) for v in f.values[:3]]})
                   if f.values else f for f in out.fields]
        return out.model_copy(update={"fields": trimmed})

    def render(self) -> str:
        lines = [f"{self.n_rows} rows, {self.n_tasks} tasks, {self.rollouts_min}-"
                 f"{self.rollouts_max} rollouts per task, {self.n_fields} fields",
                 f"reward: {self.reward.render()}"]
        if self.read_from:
            lines.append(f"values read from {self.read_from}")
        lines += [f"  {f.render()}" for f in self.fields]
        if self.shown:
            lines.append(f"({self.shown})")
        if self.route_fields:
            lines.append("changes the route: " + ", ".join(self.route_fields))
        if self.grader:
            lines.append(f"graded by: {self.grader}")
        return "\n".join(lines)


def field_names(data: Rows) -> list[str]:
    """Every field name some row of ``data`` carries, in the order first seen."""
    return data.fields


def _sample(data: Rows) -> tuple[Rows, str | None]:
    """(rows, note): whole tasks sampled past DESCRIBE_EXACT_CELLS (:func:`roles.sample_tasks`)."""
    sub, note = sample_tasks(data)
    return sub, None if note is None else (
        f"{note}: field names, shares and values are read there (a field no sampled row "
        "carries is not listed)")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _describe_field(name: str, data: Rows, single: bool, role: str | None = None) -> FieldInfo:
    """One field read off the rows that carry it (``Rows.carried``)."""
    n = data.n_rows
    rows, col = data.carried(name)
    kinds = data.kinds(name) - {NoneType}
    present = len(col) - col.count(None)
    types = sorted({_TYPE_NAMES.get(t, t.__name__) for t in kinds})
    info: dict[str, Any] = dict(name=_cut(name, _NAME_MAX), types=types or ["null"],
                                share=present / n if n else 0.0, n_rows=present,
                                reads=ROLES.get(name), role=role)
    if present and kinds <= {str, int, float, bool}:
        vals = col if present == len(col) else list(compress(col, map(is_not, col,
                                                                       repeat(None))))
        numeric = kinds <= {int, float}
        counts = Counter(vals)
        info["n_distinct"] = len(counts)
        if numeric:
            arr = _numbers(vals)
            finite = arr[np.isfinite(arr)]
            if finite.shape[0]:
                info["low"], info["high"] = float(finite.min()), float(finite.max())
        if not numeric or len(counts) <= DESCRIBE_VALUES_SHOWN:
            info["values"] = [_cut(v if isinstance(v, str) else json.dumps(v), _VALUE_MAX)
                              for v, _ in counts.most_common(DESCRIBE_VALUES_SHOWN)]
        info["within_task"] = ("one rollout each" if single else "constant"
                               if constant_within_tasks(data, rows, col, counts) else "varies")
    elif present:
        info["within_task"] = "not comparable"
    return FieldInfo(**info)


def _numbers(vals: list) -> np.ndarray:
    """Numeric values as float64; an integer past a float's range becomes +-inf (not shown)."""
    try:
        return np.fromiter(vals, dtype=np.float64, count=len(vals))
    except OverflowError:  # JSON allows integers of 4,300 digits
        return np.array([v if type(v) is float or abs(v) < 2 ** 1023 else math.copysign(math.inf, v)
                         for v in vals], dtype=np.float64)


@operation(
    cli="describe", toolset="core", effect=READS, title="What fields do the rows carry?",
    description=(
        "Every field of graded rows: its type, share of rows, values or range, constant within "
        "a task or not, and its role (grader, writer, family, budget...); the reward's kind "
        "(binary, in [0, 1], another scale: a warning and the fix when a pass threshold would "
        "mislead); which fields change route_rows's answer. Call it first on rows you have "
        "not seen."),
    doing="describing rows", serves=("classify_reward",))
def describe_rows(rows: args.Rows, *,
                  fields: Annotated[list[Annotated[str, Field(max_length=500)]] | None, Field(
                      max_length=200, description=(
                          "Optional: only these fields, in this order (20 shown at a time).")),
                      args.Arg(metavar="NAME")] = None,
                  threshold: args.Threshold = None) -> RowsDescription:
    """Every field of ``rows`` described (module docstring); ``fields``: only these, in order."""
    data = load_rows(rows, threshold=threshold)
    sub, note = _sample(data)
    names = field_names(sub)
    if fields is not None:
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise ArgumentError(f"`fields` must be a list of field names, got {fields!r}",
                                fix="e.g. fields=['max_tokens', 'turns'], or leave it out")
        unknown = [f for f in fields if f not in names]
        if unknown:
            raise ArgumentError(f"no row carries {', '.join(map(repr, unknown))}; the rows' "
                                f"fields are {listing(names)}", fix="name fields from that list")
        names_shown = list(fields)
    else:
        # the route's fields first (in ROLES order), then the rest by first appearance
        names_shown = [f for f in ROLES if f in names] + [f for f in names if f not in ROLES]
    single = int(sub.rollouts.max()) == 1
    reading = read_fields(data)
    infos = [_describe_field(f, sub, single, reading.role(f)) for f in names_shown]
    grader = (f"{reading.grader} ({reading.grader_why})" if reading.grader else None)
    return RowsDescription(n_rows=data.n_rows, n_tasks=data.n_tasks,
                           rollouts_min=int(data.rollouts.min()),
                           rollouts_max=int(data.rollouts.max()), n_fields=len(names),
                           fields=infos, route_fields=route_fields(data), grader=grader,
                           reward=data.reward_scale,
                           read_from=note)


def route_fields(data: Rows) -> list[str]:
    """The fields present whose values change the route's answer: a positive token cap or
    reply length, a cut-off reply's mark, turns past one, categories and families of two or
    more values, the writers that split the rows, and the grader field."""
    reading = read_fields(data)
    writers = {w.field for w in reading.writers}
    out = []
    for f in reading.fields.values():
        low = f.name.lower()
        if f.role == "budget":
            if low in ("max_tokens", "completion_tokens"):
                hit = f.n_values is not None and any(isinstance(v, (int, float)) and v > 0
                                                     for v in f.values)
            elif low == "finish_reason":
                hit = data.budget is not None and bool(data.budget.cut_off().any())
            elif low == "truncated":
                hit = bool(data.truncated.any())
            else:
                hit = False
        elif f.role == "turns":
            hit = any(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 1
                      for v in f.values)
        elif f.role in ("category", "family"):
            hit = f.n_values is not None and f.n_values >= 2 and f.within_task != "varies"
        elif f.role in ("model", "step"):
            hit = f.name in writers
        elif f.role == "grader":
            hit = reading.grader_why is not None and f"`{f.name}`" in reading.grader_why
        else:
            hit = False
        if hit:
            out.append(f.name)
    return out


def listing(names: list[str], limit: int = 30) -> str:
    shown = ", ".join(_cut(n, _NAME_MAX) for n in names[:limit])
    return shown + (f" ({limit} of {len(names)})" if len(names) > limit else "")


def require_field(data: Rows, field: str, *, reader: str) -> None:
    """An error naming the fields that exist when no row carries ``field`` (``reader``: the
    argument that names it, as the current reader types it, for the message)."""
    if field in TASK_ALIASES or data.has_field(field):
        return
    raise ArgumentError(f"no row carries `{field}`; the rows' fields are "
                        f"{listing(field_names(data))}", fix=f"give {reader} one of those "
                        f"({voice.name('describe_rows')} lists every field with its type and "
                        "values)")
