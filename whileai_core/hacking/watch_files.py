"""Where watch_run's step records come from, and how they are read and checked.

A source is a run id from ``launch_run`` (its folder in the run registry), a TRL output folder
(the recipes' ``watch.jsonl``, else the newest ``trainer_state.json``), a prime-rl run folder
(its eval episodes are the held-out evaluations, its train episodes each step's batch), a
``watch.jsonl``, or a graded-rows file whose rows carry ``step``. The schedule comes from the
records' ``eval_every`` and ``max_steps``, or prime-rl's ``configs/orchestrator.json``.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from .. import safejson, voice
from ..errors import ArgumentError, RowsError, WhileaiError, as_json
from ..importers.prime_rl import read_prime_rl
from ..rows import Rows, load_rows, read_records
from ..defaults import RUN_ID_PATTERN
from ..safepath import UserPath, as_user_path, is_path, user_path
from ..writers import one_writer

_RUN_ID = re.compile(RUN_ID_PATTERN)
WATCH_FILE = "watch.jsonl"
TRL_STATE = "trainer_state.json"


def records_from_rows(rows: Any, *, held_out_field: str = "held_out") -> list[dict]:
    """Step records from graded rows that carry a ``step``: rows whose ``held_out_field`` is true
    (or whose ``split`` is ``"eval"``) are the held-out evaluation of their step, the others
    that step's training batch (its mean reward is the training reward)."""
    recs = read_records(rows, noun="row")
    steps: dict[int, dict[str, list]] = {}
    for i, rec in enumerate(recs.items):
        step = rec.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise RowsError(f"`step` is {as_json(step)}", **recs.where(i), field="step",
                            fix="give every row the step (or policy version) that sampled it")
        held = rec.get(held_out_field) is True or rec.get("split") == "eval"
        steps.setdefault(step, {"held_out": [], "batch": []})["held_out" if held else "batch"].append(rec)
    out = []
    for step in sorted(steps):
        batch = steps[step]["batch"]
        rec: dict[str, Any] = {"step": step, "held_out": steps[step]["held_out"] or None,
                               "batch": batch or None}
        if batch:
            data = load_rows(batch)
            rec.update(train_reward=float(data.reward.mean()), n_completions=data.n_rows,
                       train_reward_std=float(data.reward.std()),
                       truncated_share=float(data.truncated.mean()))
        out.append(rec)
    return out


def read_json(path: UserPath, kind: str, *, fix: str) -> Any:
    """A JSON file a trainer wrote, through the door; unreadable JSON is a RowsError with ``fix``."""
    try:
        return safejson.loads(path.read_text(kind, error=RowsError))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RowsError(f"cannot be read as JSON ({exc})", source=str(path), fix=fix) from None


def trl_log_history(path: UserPath) -> list:
    """The ``log_history`` list of a TRL ``trainer_state.json``."""
    state = read_json(path, "rows", fix="point at the trainer_state.json TRL wrote")
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RowsError("has no `log_history` list", source=str(path), field="log_history",
                        fix="point at the trainer_state.json TRL wrote in its output folder")
    return history


def records_from_trl_state(path: str | os.PathLike | UserPath) -> list[dict]:
    """Step records from a TRL ``trainer_state.json``: each ``log_history`` entry with a
    ``reward`` (GRPOTrainer's logged mean reward) is one step; there are no held-out rows."""
    path = as_user_path(path, None, argument="source", error=RowsError)
    out = []
    for entry in trl_log_history(path):
        if not isinstance(entry, dict) or "reward" not in entry or "step" not in entry:
            continue
        out.append({"step": entry["step"], "train_reward": entry.get("reward"),
                    "train_reward_std": entry.get("reward_std"),
                    "mean_length": entry.get("completions/mean_length"),
                    "truncated_share": entry.get("completions/clipped_ratio")})
    if not out:
        raise RowsError("log_history has no entry with a `reward`", source=str(path),
                        field="log_history", fix="a GRPOTrainer logs `reward` every logging "
                        "step; was this a GRPO run with logging_steps set?")
    return out


def records_from_prime_rl(path: UserPath) -> list[dict]:
    """Step records from a prime-rl run folder through the prime-rl importer: its eval episodes
    are the held-out evaluations (per ``step``), its train episodes each step's batch; the first
    record carries the schedule of ``configs/orchestrator.json`` when it has one."""
    rows = [dict(r, split="eval") for r in read_prime_rl(path, kind="eval").rows]
    try:
        rows += read_prime_rl(path, kind="train").rows
    except WhileaiError:  # a run whose training episodes were not kept: held-out only
        pass
    out = records_from_rows(rows)
    schedule = prime_rl_schedule(path)
    if out and schedule:
        out[0].update(schedule)
    return out


def prime_rl_config(run: UserPath) -> dict:
    """A prime-rl run's ``configs/orchestrator.json`` ({} when it has none, or not an object)."""
    root = run if (run / "rollouts").kind() == "dir" else run.parent
    config = root / "configs" / "orchestrator.json"
    if config.kind() not in _PRESENT:
        return {}
    data = read_json(config, "config", fix="point at the run folder prime-rl wrote")
    return data if isinstance(data, dict) else {}


def prime_rl_schedule(run: UserPath) -> dict[str, int]:
    """``{"eval_every", "max_steps"}`` from a prime-rl run's orchestrator config (prime-rl
    559b447: ``eval.interval``, default 100, and ``max_steps``), or {} when either is missing:
    the watch then plans an open schedule."""
    data = prime_rl_config(run)
    evals = data.get("eval")
    every = evals.get("interval", 100) if isinstance(evals, dict) else None
    steps = data.get("max_steps")
    if all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (every, steps)):
        return {"eval_every": every, "max_steps": steps}
    return {}


# Folders are read through the path door (whileai_core.safepath): listed and walked without
# following links. A link where a file is looked for counts as found, so that opening it
# refuses it by name instead of skipping it silently.
_PRESENT = ("file", "link", "special")


def _newest_state(folder: UserPath) -> UserPath | None:
    if folder.child(TRL_STATE).kind() in _PRESENT:
        return folder.child(TRL_STATE)
    checkpoints = []
    for name, kind in folder.list_dir(error=RowsError):
        tail = name.split("-", 1)[1] if name.startswith("checkpoint-") else ""
        if tail.isdigit() and kind in ("dir", "link") \
                and folder.child(name, TRL_STATE).kind() in _PRESENT:
            checkpoints.append((int(tail), folder.child(name, TRL_STATE)))
    return max(checkpoints, key=lambda c: c[0])[1] if checkpoints else None


def _find(folder: UserPath, name: str, depth: int = 3) -> UserPath | None:
    level_dirs = [folder]
    for _ in range(depth + 1):
        hits, below = [], []
        for here in level_dirs:
            for entry, kind in here.list_dir(error=RowsError):
                if entry == name and kind in _PRESENT:
                    hits.append(here.child(entry))
                elif kind == "dir":
                    below.append(here.child(entry))
        if len(hits) > 1:
            shown = ", ".join("/".join(h.parts[len(folder.parts):]) for h in hits[:5])
            raise ArgumentError(f"{folder} holds {len(hits)} {name} files at the same depth "
                                f"({shown}): several runs", fix="point at one run's folder")
        if hits:
            return hits[0]
        level_dirs = below
    return None


def _first_record(path: UserPath) -> Any:
    try:
        with path.open_binary("rows", error=RowsError) as fh:
            return safejson.loads(fh.readline(1 << 20).decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None


def _records_from_path(path: UserPath) -> tuple[Any, str]:
    if path.kind() in _PRESENT:
        if path.name == TRL_STATE:
            return records_from_trl_state(path), f"TRL {path}"
        first = _first_record(path)
        if isinstance(first, dict) and ("task_id" in first or "scenario_id" in first):
            return records_from_rows(path), f"rows {path}"  # graded rows, each with its step
        return path, f"watch records {path}"
    if not path.is_dir():
        raise ArgumentError(f"{path} does not exist", fix="give a run id, a TRL or prime-rl "
                            "output folder, a watch.jsonl, or a rows file with a `step` field")
    found = _find(path, WATCH_FILE)
    if found is not None:
        return found, f"watch records {found}"
    state = _newest_state(path)
    if state is not None:
        return records_from_trl_state(state), f"TRL {state}"
    if (path / "rollouts").kind() in ("dir", "link") or path.name == "rollouts":
        return records_from_prime_rl(path), f"prime-rl {path}"
    raise ArgumentError(f"{path} holds no {WATCH_FILE} (the TRL watch callback's records), no "
                        f"{TRL_STATE} (a TRL output folder or its checkpoint-N) and no prime-rl "
                        "rollouts/", fix="point at the trainer's output folder")


def registered_run(source: str, state_dir: Any) -> tuple[Any, Any]:
    """(the registry's record of run id ``source``, its folder through the door), or the error
    naming where the runs live (watch_run and diagnose_run read a run id the same way)."""
    from ..runs.registry import Registry  # lazy: a heavy import

    registry = Registry(state_dir, create=False)
    record = registry.get(source.strip())
    if record is None:
        raise ArgumentError(f"no run {source!r} in {registry.path}",
                            fix=f"{voice.name('list_runs')} shows the runs; pass "
                            f"{voice.arg('state_dir')} if they live elsewhere")
    return record, user_path(registry.run_dir(record.id), argument="run folder")


def source_records(source: Any, state_dir: str | os.PathLike | None) -> tuple[Any, str]:
    """(step records, or a path to a watch.jsonl; a label naming the source) for ``source``: a
    run id, a path (see the module docstring), or step records as a list."""
    if isinstance(source, str) and _RUN_ID.match(source.strip()):
        record, run_dir = registered_run(source, state_dir)
        found = _find(run_dir, WATCH_FILE, depth=4) if run_dir.is_dir() else None
        if found is None and record.backend == "modal":
            raise ArgumentError(f"run {record.id} runs on Modal; its records are on the runs "
                                "volume, not here", fix="download its folder (modal volume get "
                                f"whileai-runs {record.name}) and watch that folder")
        if found is None:
            raise ArgumentError(f"run {record.id} has written no {WATCH_FILE} under {run_dir} "
                                f"yet (status {record.status})", fix="wait for its first step, "
                                "or check that the recipe runs the watch callback")
        return found, f"run {record.id}"
    if is_path(source):
        return _records_from_path(as_user_path(source, None, argument="source", error=RowsError))
    return source, "<records>"


# --- the records: what watch_records reads from them ------------------------------------------

STEP_NUMBERS = ("train_reward", "train_reward_std", "mean_length", "truncated_share")
STEP_COUNTS = ("n_completions", "eval_every", "max_steps")


def _number(rec: dict, key: str, where: dict, *, integer: bool = False) -> Any:
    value = rec.get(key)
    if value is None:
        return None
    ok = (isinstance(value, int) if integer else isinstance(value, (int, float)))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or (integer and value < 0):
        raise RowsError(f"`{key}` is {as_json(value)}", **where, field=key,
                        fix=f"write {key} as a {'whole' if integer else 'finite'} number or null")
    return value


def check_records(records: Any) -> list[dict]:
    """The step records, each checked: its ``step``, its numbers, its row lists, its schedule."""
    recs = read_records(records, noun="step record")
    out = []
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        step = rec.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise RowsError(f"`step` is {as_json(step)}", **where, field="step",
                            fix="give each record its optimizer step as an integer >= 0")
        clean = {"step": step}
        clean.update({key: _number(rec, key, where) for key in STEP_NUMBERS})
        clean.update({key: _number(rec, key, where, integer=True) for key in STEP_COUNTS})
        for key in ("held_out", "batch"):
            value = rec.get(key)
            if value is not None and not isinstance(value, list):
                raise RowsError(f"`{key}` is a {type(value).__name__}", **where, field=key,
                                fix=f"give {key} as a list of graded rows, or leave it out")
            clean[key] = value or None
        clean["_where"] = where
        out.append(clean)
    if not out:
        raise RowsError("no step records", source=recs.name,
                        fix="train for at least one step with the watch callback")
    return out


def step_records(records: Any) -> list[dict]:
    """One record per step, in step order: a step logged twice (a resumed run) keeps the later
    record's fields, field by field."""
    by_step: dict[int, dict] = {}
    for rec in sorted(check_records(records), key=lambda r: r["step"]):
        merged = by_step.setdefault(rec["step"], {"step": rec["step"]})
        merged.update({k: v for k, v in rec.items() if v is not None})
    return [by_step[s] for s in sorted(by_step)]


def planned_looks(steps: list[dict], evals: list[dict]) -> int | None:
    """The looks the run's schedule gives: evaluations every ``eval_every`` steps up to
    ``max_steps`` after the first (the TRL callback adds one at the end when ``max_steps`` is
    not a multiple), from the latest record that states both; None: no schedule."""
    stated = [s for s in steps if s.get("eval_every") and s.get("max_steps")]  # 0: no plan
    if not stated:
        return None
    every, last = stated[-1]["eval_every"], stated[-1]["max_steps"]
    first = evals[0]["step"] if evals else 0
    return max(1, math.ceil((last - first) / every))


def held_out_rows(evals: list[dict], threshold: float | None) -> list[Rows]:
    """Each evaluation's held-out rows, loaded (one writer each); a bad row names its step."""
    out = []
    for s in evals:
        try:
            rows = load_rows(s["held_out"], threshold=threshold)
            one_writer(rows, argument=f"held-out rows of step {s['step']}",
                       reads="one held-out rate")
            out.append(rows)
        except RowsError as err:
            raise RowsError(f"held-out rows of step {s['step']}: {err}") from None
    return out
