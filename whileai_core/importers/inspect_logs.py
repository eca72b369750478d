"""Inspect eval logs -> graded rows (one per sample and epoch).

A ``.json`` log of the version inspect 0.3.285 writes is decoded by msgspec into the documented
fields read here alone (:func:`read_json_log`). Any other log (a ``.eval`` archive, another
version, a field of another type) is read with ``inspect_ai.log.read_eval_log`` when it is
installed, which says what is wrong with a bad one; without it, ``.json`` logs are read as the
documented JSON with the checks below, and a ``.eval`` log needs inspect.

Per sample: ``task_id`` = the sample ``id``; ``epoch``; budgets (:func:`_budget`); ``reward`` =
the chosen scorer's value as inspect's ``value_to_float`` maps it (:func:`score_to_reward`);
``truncated`` when the output stopped at ``max_tokens``/``model_length`` or the sample hit a
``token``, ``context``, ``message`` or ``turn`` limit; ``model`` = the log's ``eval.model``;
``errored`` when the sample has an ``error`` (no score: counted, left out unless kept).
``metric`` names the scorer; a log with one scorer needs none.
"""

from __future__ import annotations

import json
import math
import zipfile
from typing import Any

import msgspec

from ..errors import RowsError, as_json
from ..safepath import UserPath, as_user_path
from ..voice import arg
from .foreign import ForeignRows
from .. import safejson

FORMAT = "inspect"
TRUNCATING_STOPS = frozenset({"max_tokens", "model_length"})
TRUNCATING_LIMITS = frozenset({"token", "context", "message", "turn"})
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def looks_like_log(data: Any) -> bool:
    """Whether a parsed JSON document is an Inspect eval log."""
    return (isinstance(data, dict) and isinstance(data.get("eval"), dict)
            and "status" in data and "version" in data)


def is_eval_archive(path: UserPath) -> bool:
    """A ``.eval`` log: a zip archive with a ``header.json`` or ``_journal/start.json``."""
    try:
        with path.open_binary("rows", error=RowsError) as fh:
            if not zipfile.is_zipfile(fh):
                return False
            fh.seek(0)
            with zipfile.ZipFile(fh) as archive:
                names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, RowsError):
        return False
    return "header.json" in names or "_journal/start.json" in names


def _read(path: UserPath) -> tuple[dict, list[dict], str]:
    """(eval spec, samples as dicts, how it was read)."""
    archive = is_eval_archive(path)
    if not archive:
        fast = read_json_log(path)
        if fast is not None:
            return fast
    try:
        from inspect_ai.log import read_eval_log  # lazy: inspect_ai is optional
    except ImportError:
        read_eval_log = None
    if read_eval_log is not None:
        try:
            # inspect reads the handle the door opened and checked, never the name again
            opened = path.open_archive if archive else path.open_binary
            with opened("rows", error=RowsError) as fh:
                log = read_eval_log(fh, format="eval" if archive else "json")
        except RowsError:
            raise
        except Exception as exc:  # noqa: BLE001 - inspect's reader: any failure is a bad log
            problem, field = _reader_problem(exc)
            raise RowsError(f"inspect's reader refused it ({problem})", source=str(path),
                            field=field, fix="pass the .eval or .json log inspect wrote, whole "
                                             "and unedited (re-run the eval if it is damaged)"
                            ) from None
        samples = [s.model_dump(mode="json") for s in (log.samples or [])]
        spec = log.eval.model_dump(mode="json")
        plan = log.plan.model_dump(mode="json") if log.plan is not None else {}
        return {**spec, "_plan_config": plan.get("config") or {}}, samples, \
            "inspect_ai.log.read_eval_log"
    if archive:
        raise RowsError("is an Inspect .eval log and inspect_ai is not installed",
                        source=str(path),
                        fix="pip install inspect_ai, or convert it: inspect log convert "
                            f"{path.name} --to json --output-dir DIR")
    try:
        data = safejson.loads(path.read_text("rows", error=RowsError))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RowsError(f"is not an Inspect JSON log ({exc})", source=str(path),
                        fix="pass an Inspect .json log (or install inspect_ai for .eval)") from None
    if not looks_like_log(data):
        raise RowsError("is not an Inspect eval log (no `eval`/`status`/`version`)",
                        source=str(path), fix="pass a log written by inspect eval")
    samples = data.get("samples") or []
    if not isinstance(samples, list):
        raise RowsError(f"`samples` is a {type(samples).__name__}, not a list", source=str(path),
                        field="samples", fix="pass the .json log inspect wrote, unedited")
    for i, sample in enumerate(samples):
        _check_sample(sample, i, path)
    plan = data.get("plan") if isinstance(data.get("plan"), dict) else {}
    config = plan.get("config") if isinstance(plan.get("config"), dict) else {}
    return {**data["eval"], "_plan_config": config}, samples, "documented JSON"


# A log is mostly messages and events, which inspect's reader builds one by one. These structs
# name only the fields read here, with their documented types (inspect_ai 0.3.285 EvalLog,
# EvalSample, EvalSampleLimit, ChatCompletionChoice, Score), so msgspec skips the rest unbuilt.

class _Score(msgspec.Struct):
    value: Any = None


class _Choice(msgspec.Struct):
    stop_reason: Any = None


class _Output(msgspec.Struct):
    choices: list[_Choice] = []
    usage: Any = None


class _Limit(msgspec.Struct):
    type: Any = None


class _Sample(msgspec.Struct):
    id: int | str
    epoch: int
    scores: dict[str, _Score] | None = None
    output: _Output | None = None
    limit: _Limit | None = None
    error: Any = None
    uuid: Any = None
    model_usage: dict[str, Any] | None = None
    turn_count: Any = None


class _Plan(msgspec.Struct):
    config: Any = None


class _Log(msgspec.Struct):
    version: int
    status: str
    eval: dict[str, Any]
    samples: list[_Sample] | None = None
    plan: _Plan | None = None


class _Head(msgspec.Struct):
    version: Any = msgspec.UNSET
    status: Any = msgspec.UNSET
    eval: Any = msgspec.UNSET


_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
LOG_VERSION = 2  # the log version inspect_ai 0.3.285 writes; another is left to inspect's reader


def read_json_log(path: UserPath) -> tuple[dict, list[dict], str] | None:
    """(eval spec, samples as dicts of the fields read here, how) for a ``.json`` log of the
    version this reader knows, or None: read it with inspect's reader (or the checks below)."""
    with path.open_stream("rows", error=RowsError) as fh:
        data = fh.read_all()
    try:
        log = msgspec.json.decode(data, type=_Log)
    except _REFUSED:
        return None
    if log.version != LOG_VERSION:
        return None
    samples = []
    for s in log.samples or []:
        samples.append({
            "id": s.id, "epoch": s.epoch, "uuid": s.uuid, "error": s.error,
            "scores": None if s.scores is None else {k: {"value": v.value}
                                                     for k, v in s.scores.items()},
            "output": None if s.output is None else {
                "choices": [{"stop_reason": c.stop_reason} for c in s.output.choices],
                "usage": s.output.usage},
            "limit": None if s.limit is None else {"type": s.limit.type},
            "model_usage": s.model_usage, "turn_count": s.turn_count})
    config = log.plan.config if log.plan is not None else None
    return ({**log.eval, "_plan_config": config if isinstance(config, dict) else {}}, samples,
            "documented JSON")


def peek_is_log(path: UserPath) -> bool:
    """Whether the JSON document at ``path`` is an Inspect log, read without building its
    samples (False when it is not JSON at all)."""
    with path.open_stream("rows", error=RowsError) as fh:
        data = fh.read_all()
    try:
        head = msgspec.json.decode(data, type=_Head)
    except _REFUSED:
        return False
    return (isinstance(head.eval, dict) and head.status is not msgspec.UNSET
            and head.version is not msgspec.UNSET)


# The documented types of the fields read here (inspect's EvalSample), checked when the JSON is
# read without inspect: inspect's own reader checks them itself.
_SAMPLE_TYPES = (("id", (int, str), "an integer or a string"), ("epoch", (int,), "an integer"),
                 ("scores", (dict, type(None)), "an object of scorer name -> score"),
                 ("output", (dict, type(None)), "an object"),
                 ("limit", (dict, type(None)), "an object"))


def _check_sample(sample: Any, i: int, path: UserPath) -> None:
    where = f"{path} samples[{i}]"
    if not isinstance(sample, dict):
        raise RowsError(f"is a {type(sample).__name__}, not a sample object", source=where,
                        fix="pass the .json log inspect wrote, unedited")
    for name, types, what in _SAMPLE_TYPES:
        if name not in sample and name in ("id", "epoch"):
            raise RowsError(f"has no `{name}`", source=where, field=name,
                            fix="pass the .json log inspect wrote, unedited (every sample has "
                                "an id and an epoch)")
        value = sample.get(name)
        if isinstance(value, bool) or not isinstance(value, types):
            raise RowsError(f"`{name}` is {as_json(value)}, not {what}", source=where, field=name,
                            fix="pass the .json log inspect wrote, unedited")


def _reader_problem(exc: Exception) -> tuple[str, str | None]:
    """One line for what inspect's reader refused: a pydantic ValidationError names the first
    bad field (``samples.2.id``) and its value, never pydantic's multi-line text."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
        except Exception:  # noqa: BLE001 - not a pydantic error after all
            found = None
        if found and isinstance(found[0], dict):
            first = found[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or None
            value = repr(first.get("input"))
            value = value if len(value) <= 80 else value[:77] + "..."
            more = f"; {len(found) - 1} more" if len(found) > 1 else ""
            where = f"`{field}` " if field else ""
            shown = "" if first.get("type") == "missing" else f", value {value}"
            return f"{where}{first.get('msg', 'invalid')}{shown}{more}", field
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(exc).__name__}: {text}", None


def score_to_reward(value: Any) -> float | None:
    """inspect's value_to_float mapping, or None for a value it cannot map (a list, a dict)."""
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        low = value.strip().lower()
        if low in _WORDS:
            return _WORDS[low]
        try:
            number = float(low)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return None


def read_inspect(path: str | UserPath, *, metric: str | None = None,
                 keep_errored: bool = False) -> ForeignRows:
    """Graded rows from one Inspect log (``.eval`` or ``.json``); see the module docstring."""
    path = as_user_path(path, None, argument="path", error=RowsError)
    if not path.is_file():
        raise RowsError("no such file" if not path.exists() else "is not a file",
                        source=str(path), fix="pass an Inspect .eval or .json log")
    spec, samples, how = _read(path)
    if not samples:
        raise RowsError("has no samples (a header-only log, or a run that scored nothing)",
                        source=str(path), fix="pass a log written with its samples")
    scorers = sorted({name for s in samples for name in (s.get("scores") or {})})
    chosen = _choose(scorers, metric, path)
    model = spec.get("model")
    cap = _max_tokens(spec)
    rows, errored = [], 0
    for i, sample in enumerate(samples):
        where = f"{path} sample {sample.get('id')!r} epoch {sample.get('epoch')}"
        row = {"task_id": str(sample.get("id")), "epoch": sample.get("epoch"),
               "model": model if isinstance(model, str) else None,
               "truncated": _truncated(sample), "errored": sample.get("error") is not None,
               "sample_uuid": sample.get("uuid"), "task": spec.get("task"),
               "run_id": spec.get("run_id"), **_budget(sample, model, cap)}
        score = (sample.get("scores") or {}).get(chosen)
        if row["errored"] or score is None:
            if not row["errored"]:
                raise RowsError(f"has no `{chosen}` score and no error", source=where,
                                field=f"scores.{chosen}",
                                fix=f"score every sample with {chosen}, or pick another metric")
            errored += 1
            if keep_errored:
                rows.append({**row, "reward": 0.0, "error": _error_text(sample)})
            continue
        value = score.get("value") if isinstance(score, dict) else None
        reward = score_to_reward(value)
        if reward is None:
            raise RowsError(f"score `{chosen}` is {as_json(value)}, which has no numeric reading",
                            source=where, field=f"scores.{chosen}.value",
                            fix="use a scorer whose value is C/I/P/N, a number or a boolean "
                                "(a dict or list value needs a reducer or another scorer)")
        rows.append({**row, "reward": reward, "score": value})
    notes = [f"read with {how}"]
    if len(scorers) > 1:
        notes.append(f"scorers in the log: {', '.join(scorers)}; reward from `{chosen}`")
    return ForeignRows(FORMAT, str(path), [str(path)], rows, errored=errored,
                       kept_errored=keep_errored, metric=chosen, notes=notes)


def _choose(scorers: list[str], metric: str | None, path: UserPath) -> str:
    if metric is not None:
        if metric not in scorers:
            raise RowsError(f"has no scorer {metric!r}; its scorers are {scorers}",
                            source=str(path), field="scorer", fix="pass one of those names")
        return metric
    if len(scorers) == 1:
        return scorers[0]
    if not scorers:
        raise RowsError("has no scores at all", source=str(path),
                        fix="score the eval (inspect score LOG) before importing it")
    raise RowsError(f"has {len(scorers)} scorers ({', '.join(scorers)}) and none was chosen",
                    source=str(path), field="scorer",
                    fix=f"name one: {arg('scorer', scorers[0], op='import_rows')}")


def _max_tokens(spec: dict) -> int | None:
    """The cap Inspect records: ``eval.model_generate_config.max_tokens`` (the model's generate
    config, e.g. ``--max-tokens``), else the task's ``plan.config.max_tokens``."""
    for config in (spec.get("model_generate_config"), spec.get("_plan_config")):
        value = config.get("max_tokens") if isinstance(config, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _budget(sample: dict, model: Any, cap: int | None) -> dict:
    """A sample's budget fields as Inspect records them: ``completion_tokens`` from the sample's
    ``model_usage`` of the evaluated model (all its generations), else ``output.usage``;
    ``finish_reason`` the output's first choice's ``stop_reason``; ``turns`` the sample's
    ``turn_count``; ``max_tokens`` the eval's cap. What the log does not record is left out."""
    out: dict = {} if cap is None else {"max_tokens": cap}
    # every level is checked for its type: a hand-edited log is an input, never a traceback
    by_model = sample.get("model_usage")
    usage = by_model.get(model) if isinstance(by_model, dict) and isinstance(model, str) else None
    output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
    if not isinstance(usage, dict):
        usage = output.get("usage")
    tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
    if isinstance(tokens, int) and not isinstance(tokens, bool):
        out["completion_tokens"] = tokens
    choices = output.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    reason = first.get("stop_reason") if isinstance(first, dict) else None
    if isinstance(reason, str):
        out["finish_reason"] = reason
    turns = sample.get("turn_count")
    if isinstance(turns, int) and not isinstance(turns, bool):
        out["turns"] = turns
    return out


def _truncated(sample: dict) -> bool:
    output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
    choices = output.get("choices") if isinstance(output.get("choices"), list) else []
    stops = {c.get("stop_reason") for c in choices
             if isinstance(c, dict) and isinstance(c.get("stop_reason"), str)}
    limit = sample.get("limit") or {}
    return bool(stops & TRUNCATING_STOPS) or (isinstance(limit, dict)
                                               and limit.get("type") in TRUNCATING_LIMITS)


def _error_text(sample: dict) -> str | None:
    error = sample.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))[:200]
    return None if error is None else str(error)[:200]
