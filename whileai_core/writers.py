"""Several writers in one set of rows (models, checkpoints, training steps): refused, or one kept.

One pass rate over two models' rows means nothing. :func:`one_writer` is the refusal every
answer that reads rows makes (naming each writer, and how to keep one); :func:`select_writer`
keeps one writer's rows, and :func:`select_rows` is ``model_filter``, the argument every
operation with rows takes. The writers are read with the rows' fields
(:attr:`whileai_core.roles.Reading.writers`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .defaults import PASS_THRESHOLD
from .errors import RowsError
from .rewards import check_reach
from .roles import as_key, read_fields
from .rows import load_rows
from . import voice

FILTER_ARG = "model_filter"


def one_writer(data, *, argument: str = "rows", reads: str = "one rate") -> None:
    """A :class:`~whileai_core.errors.RowsError` when ``data`` holds several writers (models,
    checkpoints, training steps), naming each with its rows and how to keep one."""
    writers = read_fields(data).writers
    if not writers:
        return
    w = writers[0]
    first = next(iter(w.counts))
    raise RowsError(f"`{argument}` holds rows of {len(w.counts)} {w.what} in `{w.field}` "
                    f"({w.listing()}): {reads} over several {w.what} reads them as one set, "
                    "which means nothing", source=data.source, field=w.field,
                    fix=f"keep one's rows with {voice.arg(FILTER_ARG, first)} (any value of "
                        f"`{w.field}`), or split the file by `{w.field}`")


def select_writer(data, value: str, *, argument: str = "rows"):
    """The rows of ``data`` whose writer is ``value``: its model, or its value of a checkpoint
    or step field (:class:`Writers`). An error naming the values there are when none matches."""
    if not isinstance(value, str) or not value.strip():
        raise RowsError(f"`{FILTER_ARG}` must be a model id or a checkpoint's value, got "
                        f"{value!r}", fix=f"e.g. {voice.arg(FILTER_ARG, 'Qwen/Qwen3-8B')}")
    reading = read_fields(data)
    fields = ["model"] + [f.name for f in reading.of("model", "step") if f.name != "model"]
    for name in fields:
        col = data.model if name == "model" else list(map(as_key, data.column(name)))
        keep = np.fromiter((v == value for v in col), dtype=bool, count=data.n_rows)
        if keep.any():
            return data.where(keep)
    seen = [f"`{w.field}`: {', '.join(list(w.counts)[:8])}" for w in reading.writers]
    models = [m for m in data.models() if m is not None]
    if not seen and models:
        seen = [f"`model`: {', '.join(models[:8])}"]
    raise RowsError(f"no row of `{argument}` was written by {value!r}" + (
        f"; the rows' writers are {'; '.join(seen)}" if seen else
        "; the rows name no model or checkpoint"), source=data.source, field=FILTER_ARG,
        fix=f"give one of those values as {voice.arg(FILTER_ARG)}, or leave it out")


def rows_arguments(call: dict[str, Any], rows_args: list[str], writer: Any,
                   threshold: float | None) -> dict[str, Any]:
    """What every surface does to an operation's rows arguments before the call: a pass mark
    no reward (or every reward) reaches is refused (``rewards.check_reach``), and
    ``model_filter`` keeps one writer's rows (:func:`select_rows`); the arguments it replaced."""
    out = {} if writer is None else select_rows(call, writer, rows_args, threshold)
    if threshold is None or float(threshold) == PASS_THRESHOLD:
        return out
    for name in rows_args:
        value = out.get(name, call.get(name))
        if isinstance(value, dict):   # checkpoint name -> rows
            out[name] = {k: _reaches(v, threshold) for k, v in value.items()}
        elif isinstance(value, list) and value and not isinstance(value[0], dict):
            out[name] = [_reaches(v, threshold) for v in value]   # runs (or their scores)
        elif value is not None:
            out[name] = _reaches(value, threshold)
    return out


def _reaches(value: Any, threshold: float) -> Any:
    """``value`` loaded at ``threshold``, refused when no reward, or every one, reaches it."""
    if isinstance(value, (int, float)):  # a run given as its score
        return value
    data = load_rows(value, threshold=threshold)
    check_reach(data.reward_scale, data.source)
    return data


def select_rows(arguments: dict[str, Any], writer: Any, rows_args: list[str],
                threshold: float | None) -> dict[str, Any]:
    """``model_filter`` applied to an operation's rows arguments: ``writer`` is a value for
    every one given, or a mapping argument -> value. Returns the arguments it changed, each
    as its writer's rows (a list of runs: each run's)."""
    if isinstance(writer, dict):
        unknown = [k for k in writer if k not in rows_args]
        if unknown:
            raise RowsError(f"`{FILTER_ARG}` names {', '.join(map(repr, unknown))}, not a rows "
                            f"argument of this call", field=FILTER_ARG,
                            fix=f"name {', '.join(rows_args)}, or give one model id for all")
        wanted = dict(writer)
    else:
        wanted = {name: writer for name in rows_args if arguments.get(name) is not None}
    out = {}
    plain = not isinstance(writer, dict)
    for name, value in wanted.items():
        given = arguments.get(name)
        if given is None:
            continue
        runs = given if isinstance(given, list) and given and not isinstance(given[0], dict) \
            else None
        loaded = [load_rows(r, threshold=threshold) for r in (runs or [given])]
        if plain and not any(_carries(d, value) for d in loaded) \
                and not any(read_fields(d).writers for d in loaded):
            continue  # one writer, another one: a plain id selects where the rows carry it
        picked = [select_writer(d, value, argument=name) for d in loaded]
        out[name] = picked if runs is not None else picked[0]
    if plain and wanted and not out:
        first = next(iter(wanted))
        select_writer(load_rows(arguments[first], threshold=threshold), writer, argument=first)
    return out


def _carries(data, value: str) -> bool:
    if value in data.models():
        return True
    return any(value in map(as_key, data.column(f.name))
               for f in read_fields(data).of("model", "step") if f.name != "model")


def own_rows(data, model: str) -> tuple[Any, str | None]:
    """The rows the route reads: ``data``, or where it holds several writers the rows of
    ``model`` (and what was set aside); an error when none of them is ``model``."""
    writers = read_fields(data).writers
    if not writers:
        return data, None
    w = writers[0]
    if w.field == "model" and model in w.counts:
        mine = data.where(np.fromiter((m == model for m in data.model), dtype=bool,
                                      count=data.n_rows))
        one_writer(mine, reads="one route")
        others = ", ".join(f"{m} ({n} rows)" for m, n in w.counts.items() if m != model)
        return mine, (f"{len(w.counts)} models wrote these rows: routed on the {mine.n_rows} "
                      f"rows of {model}, the model you will train; set aside {others} "
                      f"(score one as a teacher with {voice.arg('teacher_rows')} and "
                      f"{voice.arg(FILTER_ARG)})")
    if w.field == "model":
        raise RowsError(f"`rows` holds rows of {len(w.counts)} {w.what} ({w.listing()}), none "
                        f"of them {model!r}, the model you will train: the route reads that "
                        "model's own rows, never several writers as one set",
                        source=data.source, field="model",
                        fix=f"grade {model} on these tasks and route its rows, or keep one "
                            f"writer's rows with {voice.arg(FILTER_ARG, next(iter(w.counts)))} to "
                            "route them as another model's")
    one_writer(data, reads="one route")
    return data, None
