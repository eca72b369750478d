"""Reading a run's files into per-step rollout rows, the trainer's logged metrics and the watch
records the feature scan reads: a prime-rl run folder (``rollouts/step_<S>/train/...``,
``metrics.jsonl``, ``configs/orchestrator.json``), a TRL output folder (the recipes'
``watch.jsonl``, ``trainer_state.json``), what watch_run reads
(:func:`.watch_files.source_records`), a ``trainer_state.json`` alone, or a run id.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, RowsError, WhileaiError
from ..importers.prime_rl import episode_rows, files_for, read_prime_rl
from ..rows import read_records
from ..safepath import UserPath, as_user_path, is_path
from .. import safejson, voice
from .features import reply_text
from .watch_files import (_PRESENT, _RUN_ID, TRL_STATE, WATCH_FILE, _find, _newest_state,
                          check_records, prime_rl_config, registered_run, source_records,
                          trl_log_history)


_PRIME_METRICS = {"entropy": ("entropy/all/mean",), "kl": ("mismatch_kl/all/mean",),
                  "truncated": ("train/agg/is_truncated/mean",),
                  "reward": ("train/agg/reward/mean",)}
_TRL_METRICS = {"entropy": ("entropy",), "kl": ("kl",), "zero_spread": ("frac_reward_zero_std",),
                "truncated": ("completions/clipped_ratio",), "reward": ("reward",)}


def _episode_reply(record: dict, trace_index: int) -> str | None:
    """The text the policy sampled in one trace: its sampled assistant nodes, joined."""
    traces = record.get("traces") or []
    if trace_index >= len(traces) or not isinstance(traces[trace_index], dict):
        return None
    parts = []
    for node in traces[trace_index].get("nodes") or []:
        if isinstance(node, dict) and node.get("sampled") and isinstance(node.get("message"), dict):
            content = node["message"].get("content")
            if isinstance(content, str):
                parts.append(content)
    return "\n".join(parts) if parts else None


def _from_prime_rl(run: UserPath) -> tuple[dict[int, list], dict[int, dict], int | None,
                                             list[dict], list[str]]:
    notes = []
    steps: dict[int, list] = {}
    for file in files_for(run, "train"):
        step = int(file.parent.parent.parent.name.split("_", 1)[1])
        recs = read_records(file, noun="episode")
        rows = steps.setdefault(step, [])
        for i, record in enumerate(recs.items):
            for t, row in enumerate(episode_rows(record, recs.where(i))):
                if row["errored"]:
                    continue
                rows.append({"task_id": row["task_id"], "group": row.get("group_id"),
                             "reward": row["reward"], "truncated": row["truncated"],
                             "policy_version": row["policy_version"],
                             "completion": _episode_reply(record, t)})
    root = run if (run / "rollouts").kind() == "dir" else run.parent
    metrics: dict[int, dict] = {}
    if (root / "metrics.jsonl").kind() in _PRESENT:  # prime-rl's FileMonitor.log_metrics
        metrics = _metrics_lines(read_records(root / "metrics.jsonl", noun="metrics line").items,
                                 _PRIME_METRICS)
    else:
        notes.append("no metrics.jsonl beside rollouts/: entropy and KL not read (prime-rl's "
                     "file monitor writes it)")
    max_off = prime_rl_config(run).get("max_off_policy_steps")
    if isinstance(max_off, bool) or not isinstance(max_off, int):
        max_off = None
    held: list[dict] = []
    try:
        held = [dict(r, split="eval") for r in read_prime_rl(run, kind="eval").rows]
    except WhileaiError:
        pass
    records = _records(steps, held)
    return steps, metrics, max_off, records, notes


def _records(steps: dict[int, list], held: list[dict]) -> list[dict]:
    """Watch records (batch per step, held-out per eval step) for the feature scan."""
    out: dict[int, dict] = {}
    for step, rows in steps.items():
        batch = [r for r in rows if r.get("completion") is not None]
        out.setdefault(step, {"step": step})["batch"] = batch or None
        if rows:
            out[step]["train_reward"] = float(np.mean([r["reward"] for r in rows]))
    for r in held:
        out.setdefault(r["step"], {"step": r["step"]}).setdefault("held_out", []).append(r)
    return [out[s] for s in sorted(out)]


def _from_watch_file(recs: Any, state: UserPath | None) -> tuple[
        dict[int, list], dict[int, dict], list[dict]]:
    """Per-step rows from step records (a ``watch.jsonl``, or what watch_run's reader built)."""
    recs = check_records(recs)
    steps: dict[int, list] = {}
    for rec in recs:
        if rec.get("batch"):
            rows = steps.setdefault(rec["step"], [])
            for r in rec["batch"]:
                if not isinstance(r, dict) or "task_id" not in r or "reward" not in r:
                    raise RowsError("a batch row has no task_id or reward", **rec["_where"],
                                    field="batch", fix="write each batch row as {task_id, "
                                    "reward, completion}, as the recipes' watch callback does")
                rows.append({"task_id": str(r["task_id"]), "reward": float(r["reward"]),
                             "truncated": r.get("truncated"),
                             "completion": reply_text(r)})
    metrics = _trl_metrics(state) if state is not None else {}
    records = [{k: v for k, v in r.items() if k != "_where"} for r in recs]
    return steps, metrics, records


def _trl_metrics(state: UserPath) -> dict[int, dict]:
    return _metrics_lines(trl_log_history(state), _TRL_METRICS)


def _metrics_lines(items: list, keys: dict[str, tuple[str, ...]]) -> dict[int, dict]:
    """Per step, the first of each alias present, from records ``{"step": S, ...}``."""
    out: dict[int, dict] = {}
    for rec in items:
        step = rec.get("step") if isinstance(rec, dict) else None
        if isinstance(step, bool) or not isinstance(step, (int, float)) or step != int(step):
            continue
        row = out.setdefault(int(step), {})
        for name, aliases in keys.items():
            for alias in aliases:
                value = rec.get(alias)
                if isinstance(value, (int, float)) and not isinstance(value, bool) \
                        and math.isfinite(value):
                    row[name] = float(value)
                    break
    return out


def _load(source: Any, state_dir: Any) -> tuple[str, dict[int, list], dict[int, dict],
                                                 int | None, list[dict], list[str]]:
    record = None
    if isinstance(source, str) and _RUN_ID.match(source.strip()):
        record, folder = registered_run(source, state_dir)
        if not folder.is_dir():
            raise ArgumentError(f"run {record.id} has no folder here ({folder})", fix="for a "
                                f"Modal run, download its folder (modal volume get "
                                f"whileai-runs {record.name}) and diagnose that folder")
        label = f"run {record.id}"
    elif is_path(source):
        folder = as_user_path(source, None, argument="source", error=RowsError)
        label = str(folder)
    else:
        raise ArgumentError(f"`source` must be a run id or a path, got {type(source).__name__}",
                            fix="give a run id, a prime-rl or TRL output folder, or a watch.jsonl")
    if folder.kind() in ("file", "link", "special"):
        if folder.name == TRL_STATE:
            return f"TRL {label}", {}, _trl_metrics(folder), None, [], []
        # what watch_run reads from this file (a watch.jsonl, or graded rows with `step`)
        recs, label = source_records(folder, None)
        steps, metrics, records = _from_watch_file(recs, None)
        return label, steps, metrics, None, records, []
    if not folder.is_dir():
        raise ArgumentError(f"{folder} does not exist", fix="give a run id, a prime-rl or TRL "
                            "output folder, or a watch.jsonl")
    if (folder / "rollouts").kind() == "dir" or folder.name == "rollouts":
        steps, metrics, max_off, records, notes = _from_prime_rl(folder)
        return f"prime-rl {label}", steps, metrics, max_off, records, notes
    found = _find(folder, WATCH_FILE, depth=4)
    state = _newest_state(folder)
    if state is None and found is not None:
        state = _newest_state(found.parent)
    if found is not None:
        steps, metrics, records = _from_watch_file(found, state)
        return f"TRL {label}", steps, metrics, None, records, []
    if state is not None:
        return f"TRL {label}", {}, _trl_metrics(state), None, [], [
            f"no {WATCH_FILE} (the recipes' watch callback): only the trainer's logged shares, "
            "no per-group rows, so no intervals and no reply text"]
    raise ArgumentError(_no_rl_files(folder, label, record, state_dir))


# Recipes that train on fixed examples, not on rewards sampled step by step: their runs have
# nothing the doctor reads.
_NOT_RL = {"sft": "SFT trains on fixed conversations", "dpo": "DPO trains on fixed preference pairs"}


def _no_rl_files(folder: UserPath, label: str, record: Any, state_dir: Any) -> str:
    """Why ``folder`` gives the doctor nothing, and what to run instead: a finished SFT or DPO
    run (its recipe from the registry, else from the results.json the recipe wrote) holds an
    adapter and a before/after comparison, no rewards per step."""
    from ..runs.local import OUT_DIR, RESULTS_FILE  # lazy: it loads the run registry

    recipe = getattr(record, "recipe", None)
    results = next((f for f in (folder / RESULTS_FILE, folder / OUT_DIR / RESULTS_FILE)
                    if f.kind() == "file"), None)
    if recipe is None and results is not None:
        try:
            data = safejson.loads(results.read_text("config", error=RowsError))
        except (json.JSONDecodeError, RecursionError):
            data = None
        recipe = data.get("recipe") if isinstance(data, dict) else None
    if recipe in _NOT_RL:
        parts = list(Path(str(folder)).parts)  # as the user wrote it
        at = next((i for i in range(len(parts) - 1, 0, -1)
                   if _RUN_ID.fullmatch(parts[i]) and parts[i - 1] == "runs"), None)
        named = [p for p in parts if _RUN_ID.fullmatch(p)]
        run_id = getattr(record, "id", None) or (parts[at] if at is not None else
                                                 named[-1] if named else "RUN")
        if record is None and at is not None and at >= 2:  # <state dir>/runs/<id>[/out]
            state_dir = os.path.join(*parts[:at - 1])
        held = f"{results.name} (the loss per step, the held-out rows before and after)" \
            if results is not None else "no results yet"
        return (f"{label} is an {recipe.upper()} run: {_NOT_RL[recipe]}, so it has no rewards per step "
                f"to diagnose (its folder holds {held}, the adapter, the log); the doctor reads "
                f"RL runs (GRPO's {WATCH_FILE}, prime-rl's rollouts/). Fix: "
                f"{voice.call('collect_run', id=run_id, state_dir=state_dir)} gives its held-out before/after "
                "verdict")
    return (f"{folder} holds no prime-rl rollouts/, no {WATCH_FILE} and no {TRL_STATE}. Fix: "
            "point at an RL run's output folder (GRPO's, with its watch.jsonl; prime-rl's "
            "<output_dir>/<run name>), or its run id")
