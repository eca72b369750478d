"""lm-evaluation-harness ``--log_samples`` output -> graded rows.

lm-eval (0.4.x) writes one JSON object per doc and filter to ``samples_<task>_<date>.jsonl``:
``doc_id``, ``doc``, ``target``, ``arguments``, ``resps`` (the raw responses, one list per request
with one entry per repeat), ``filtered_resps``, ``filter``, ``metrics`` (the metric names) and
each metric's value under its own name; ``results_<date>.json`` beside it carries the rows'
``model`` (:func:`_model`).

Rows: one per doc of the chosen filter, ``reward`` = the chosen metric (a number or boolean); a
metric whose value is a list (one number per repeat) gives one row per repeat (``repeat``); a
plain one gives one row per doc, with its number of raw responses in ``repeats``. lm-eval records
no truncation (``truncated`` is false) and no completion length; ``max_tokens`` is the request's
``max_gen_toks`` (:func:`_max_gen_toks`). ``metric`` is a name or ``name,filter`` (lm-eval's own
spelling); with one metric (or one filter) it may be left out.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import RowsError, as_json
from ..records import read_records
from ..safepath import UserPath, as_user_path
from ..voice import arg
from .foreign import ForeignRows
from .. import safejson

FORMAT = "lm-eval"
SAMPLE_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_REQUIRED = ("doc_id", "filter", "metrics")


def looks_like_sample(record: Any) -> bool:
    """Whether a JSON record has the shape of one lm-eval logged sample."""
    return (isinstance(record, dict) and "doc_id" in record and "filter" in record
            and isinstance(record.get("metrics"), list) and "task_id" not in record)


def sample_files(path: UserPath) -> list[UserPath]:
    """``samples_*.jsonl`` files: ``path`` itself, or those in the folder (not nested)."""
    if path.is_dir():
        files = [path.child(name) for name, _ in path.list_dir(error=RowsError)
                 if SAMPLE_FILE.match(name)]
        if not files:
            raise RowsError("has no samples_<task>_<date>.jsonl files", source=str(path),
                            fix="run lm_eval with --log_samples --output_path DIR and point "
                                "at the model folder inside DIR")
        # lm-eval writes every run of a model into the same folder, one date per run: two
        # files of one task are two runs, never repeats of one run
        by_task: dict[str, list[str]] = {}
        for file in files:
            by_task.setdefault(SAMPLE_FILE.match(file.name).group("task"), []).append(file.name)
        for task, names in sorted(by_task.items()):
            if len(names) > 1:
                names.sort()
                raise RowsError(f"holds {len(names)} runs of task {task!r} ({', '.join(names)}); "
                                "reading them together would count each doc once per run",
                                source=str(path),
                                fix=f"import one run's file, e.g. the newest: {path / names[-1]}")
        return sorted(files, key=lambda f: f.name)
    return [path]


def _model(file: UserPath) -> str | None:
    """``model_name`` from the ``results_<date>.json`` written with this samples file."""
    match = SAMPLE_FILE.match(file.name)
    if not match:
        return None
    results = file.with_name(f"results_{match.group('date')}.json")
    try:
        data = safejson.loads(results.read_text("rows", error=RowsError))
    except (RowsError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    name, kind = data.get("model_name"), config.get("model")
    if "model_args" in config and not _names_a_model(config["model_args"]) \
            and isinstance(kind, str):
        # lm-eval (EvaluationTracker) names the model from model_args; without a name there it
        # makes up a random 8-character id, which is no model: the LM type says more
        return kind
    name = name or kind
    return name if isinstance(name, str) else None


# lm-eval 0.4.13 (loggers/evaluation_tracker.py, GeneralConfigTracker._get_model_name): the
# model_args keys it takes the model's name from, in this order.
MODEL_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _names_a_model(model_args: Any) -> bool:
    if isinstance(model_args, dict):
        return any(key in model_args for key in MODEL_NAME_KEYS)
    if isinstance(model_args, str):
        return any(f"{key}=" in model_args for key in MODEL_NAME_KEYS)
    return False


def read_lm_eval(path: str | UserPath, *, metric: str | None = None) -> ForeignRows:
    """Graded rows from lm-eval sample files (a file, or the folder holding them)."""
    path = as_user_path(path, None, argument="path", error=RowsError)
    files = sample_files(path)
    rows: list[dict] = []
    chosen = None
    for file in files:
        recs = read_records(file, noun="sample")
        for i, rec in enumerate(recs.items):
            if not looks_like_sample(rec):
                missing = [k for k in _REQUIRED if k not in rec]
                problem = (f"missing {', '.join(missing)}" if missing else
                           f"`metrics` is {rec.get('metrics')!r}, not a list of metric names")
                raise RowsError(f"not an lm-eval logged sample ({problem})",
                                **recs.where(i), field=missing[0] if missing else "metrics",
                                fix="import lm-eval's samples_<task>_<date>.jsonl "
                                    "(lm_eval --log_samples)")
            doc_id = rec["doc_id"]
            if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
                raise RowsError(f"`doc_id` is {as_json(doc_id)}, not an id", **recs.where(i),
                                field="doc_id", fix="lm-eval writes each doc's index as an "
                                                    "integer: import the file it wrote")
        metrics = sorted({m for rec in recs.items for m in rec["metrics"]})
        filters = sorted({str(rec["filter"]) for rec in recs.items})
        name, filt = _choose(metrics, filters, metric, file)
        chosen = f"{name},{filt}"
        match = SAMPLE_FILE.match(file.name)
        task = match.group("task") if match else None
        model = _model(file)
        for i, rec in enumerate(recs.items):
            if str(rec["filter"]) != filt:
                continue
            value = rec.get(name)
            values = value if isinstance(value, list) else [value]
            for r, v in enumerate(values):
                if isinstance(v, bool):
                    v = float(v)
                if not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise RowsError(f"`{name}` is {as_json(value)}, not a finite number",
                                    **recs.where(i), field=name,
                                    fix="pick a metric with a numeric value per doc "
                                        f"(this file has {', '.join(metrics)})")
                row = {"task_id": str(rec["doc_id"]) if task is None or len(files) == 1
                       else f"{task}/{rec['doc_id']}",
                       "reward": float(v), "truncated": False, "model": model,
                       "errored": False, "doc_id": rec["doc_id"], "task": task,
                       "filter": filt, "metric": name, "doc_hash": rec.get("doc_hash"),
                       "repeats": sum(len(x) for x in rec.get("resps") or []
                                      if isinstance(x, list))}
                if isinstance(value, list):
                    row["repeat"] = r
                cap = _max_gen_toks(rec)
                if cap is not None:
                    row["max_tokens"] = cap
                rows.append(row)
    notes = ["lm-eval records no truncation: `truncated` is false"]
    if len(files) > 1:
        notes.append("several tasks: task ids are <task>/<doc_id>")
    return ForeignRows(FORMAT, str(path), [str(f) for f in files], rows, errored=0,
                       kept_errored=False, metric=chosen, notes=notes)


def _max_gen_toks(rec: dict) -> int | None:
    """The generation cap lm-eval logs with a ``generate_until`` request: ``max_gen_toks`` in
    the request's generation kwargs (``arguments.gen_args_0.arg_1``)."""
    args = rec.get("arguments")
    first = args.get("gen_args_0") if isinstance(args, dict) else None
    kwargs = first.get("arg_1") if isinstance(first, dict) else None
    cap = kwargs.get("max_gen_toks") if isinstance(kwargs, dict) else None
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None


def _choose(metrics: list[str], filters: list[str], metric: str | None,
            file: UserPath) -> tuple[str, str]:
    name, _, filt = (metric or "").partition(",")
    if metric is not None:
        if name not in metrics:
            raise RowsError(f"has no metric {name!r}; its metrics are {metrics}",
                            source=str(file), field="scorer", fix="pass one of those names")
    elif len(metrics) == 1:
        name = metrics[0]
    else:
        raise RowsError(f"has {len(metrics)} metrics ({', '.join(metrics)}) and none was chosen",
                        source=str(file), field="scorer",
                        fix=f"name one: {arg('scorer', metrics[0], op='import_rows')}")
    if filt:
        if filt not in filters:
            raise RowsError(f"has no filter {filt!r}; its filters are {filters}",
                            source=str(file), field="scorer",
                            fix=f"write {arg('scorer', op='import_rows')} as '{name},<filter>' "
                                "with one of those filters")
    elif len(filters) == 1:
        filt = filters[0]
    else:
        raise RowsError(f"has {len(filters)} filters ({', '.join(filters)}) and none was chosen",
                        source=str(file), field="scorer",
                        fix=f"name one: {arg('scorer', f'{name},{filters[0]}', op='import_rows')}")
    return name, filt
