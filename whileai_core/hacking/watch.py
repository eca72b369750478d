"""During training: is the held-out pass rate following the training reward?

Per step (or checkpoint) a run gives a training reward, and at some steps the graded rows of a
frozen held-out set. :func:`watch_records` pairs every held-out evaluation with the first one
(step 0: before training), by task, with the task-bootstrap interval of
:func:`whileai_core.stats.compare`, and sets it beside the training reward's climb.

It says ``stop`` only when, at ``confirm`` held-out evaluations in a row,

- **the held-out interval moves down**: the paired delta's interval lies below 0; or
- **it stays flat while the training reward climbs beyond its own noise**: the interval holds 0,
  lies wholly below the training reward's climb, and the climb clears its noise band.

That is the over-optimisation picture of Gao et al. [1]: the proxy (training) reward keeps
rising while the gold (held-out) score stops rising, then falls. Otherwise it says ``continue``,
or ``not_enough_data`` (no held-out evaluation after the first, or too few training steps to tell
a climb from noise), always with the numbers.

The climb is the mean training reward of the last ``window`` steps minus that of the first
``window`` (``window`` = min(``WATCH_WINDOW``, half the steps)); its noise is estimated from
successive differences, sigma^2 = sum (r_t - r_{t-1})^2 / (2 (T - 1)) (von Neumann's mean square
successive difference [2], which a slow trend barely inflates), and the band is
z_{(1+level)/2} sigma sqrt(2 / window). For a 0/1 reward the training reward and the held-out
pass rate are on one scale; for a graded reward, watch with ``metric="reward"``.

Why one module of ~470 lines: the stop rule and the readers of its sources (rows, a TRL
trainer_state.json, a run folder) are one feature, ``watch_run``; the readers are the lower third
and would be the cut if it grows.

[1] Gao, Schulman & Hilton (2022). Scaling Laws for Reward Model Overoptimization. arXiv:2210.10760.
[2] von Neumann et al. (1941). Distribution of the ratio of the mean square successive difference
    to the variance. Ann. Math. Statist. 12(2), 153-162.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level, check_seed, z_value
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, WATCH_CONFIRM, WATCH_STEPS_SHOWN,
                        WATCH_WINDOW)
from ..errors import ArgumentError, RowsError, WhileaiError
from ..result import Result, fmt_rate
from ..rows import load_rows, read_records
from ..safepath import UserPath, as_user_path, is_path, user_path
from ..stats import Rate, check_metric, compare, pass_rate
from .scan import HackScan, hack_scan
from .. import safejson

Decision = Literal["stop", "continue", "not_enough_data"]
Condition = Literal["down", "flat_while_climbing"]
Interval = tuple[float, float]
WATCH_FILE = "watch.jsonl"
TRL_STATE = "trainer_state.json"
_RUN_ID = re.compile(r"^run-[0-9a-f]{12}$")


class WatchStep(Result):
    """One step: the training reward, and at an evaluation the held-out rate and its delta."""

    step: int
    train_reward: float | None = None
    train_reward_std: float | None = None
    n_completions: int | None = None
    mean_length: float | None = None
    truncated_share: float | None = None
    held_out: Rate | None = None
    delta: float | None = None
    delta_ci: Interval | None = None
    delta_n_paired: int | None = None   # the paired tasks behind delta and delta_ci
    train_climb: float | None = None
    train_noise_band: float | None = None
    condition: Condition | None = None

    def render(self) -> str:
        parts = [f"step {self.step:>5}"]
        if self.train_reward is not None:
            parts.append(f"train {self.train_reward:.3f}")
        if self.mean_length is not None:
            parts.append(f"len {self.mean_length:.1f}")
        if self.truncated_share is not None:
            parts.append(f"trunc {self.truncated_share:.2f}")
        if self.held_out is not None:
            parts.append(f"held-out {fmt_rate(self.held_out.value, self.held_out.ci, self.held_out.n_tasks)}")
        if self.delta is not None:
            ci = (f" [{self.delta_ci[0]:+.3f}, {self.delta_ci[1]:+.3f}]"
                  if self.delta_ci else " [no interval]")
            n = f" (n={self.delta_n_paired} paired)" if self.delta_n_paired is not None else ""
            parts.append(f"delta {self.delta:+.3f}{ci}{n}")
        if self.train_climb is not None:
            parts.append(f"climb {self.train_climb:+.3f} (noise {self.train_noise_band:.3f})")
        if self.condition:
            parts.append(f"<- {self.condition}")
        return "  ".join(parts)


class Watch(Result):
    """The decision and the numbers behind it, per step."""

    decision: Decision
    reason: str
    source: str
    metric: Literal["pass", "reward"]
    n_steps: int
    steps_shown: str
    steps: list[WatchStep]
    n_evals: int
    first_stop_step: int | None = Field(
        None, description="the first held-out evaluation at which the rule said stop (the "
                          "condition at `confirm` evaluations in a row): where a trainer "
                          "watched with stop=True stops, even if it no longer holds at the end")
    baseline_step: int | None = None
    latest_eval_step: int | None = None
    held_out_delta: float | None = None
    held_out_ci: Interval | None = None
    n_paired: int | None = None
    train_climb: float | None = None
    train_noise_band: float | None = None
    confirm: int
    level: float
    scan: HackScan | None = None
    next_step: str
    notes: list[str] = []

    def render(self) -> str:
        lines = [f"watch: {self.decision} ({self.source}; {self.n_steps} steps, {self.n_evals} "
                 f"held-out evaluations, metric {self.metric})", f"why: {self.reason}"]
        lines += [s.render() for s in self.steps]
        if self.first_stop_step is not None and self.decision != "stop":
            lines.append(f"the rule said stop at step {self.first_stop_step} (a trainer watched "
                         "with stop=True would have stopped there)")
        if len(self.steps) < self.n_steps:
            lines.append(f"(steps shown: {self.steps_shown})")
        if self.scan is not None:
            lines.append(f"latest batch scan: {self.scan.verdict}"
                         + (f" ({', '.join(self.scan.suspects)})" if self.scan.suspects else ""))
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


# --- the decision on step records ------------------------------------------------------------

def _number(rec: dict, key: str, where: dict, *, integer: bool = False) -> Any:
    value = rec.get(key)
    if value is None:
        return None
    ok = (isinstance(value, int) if integer else isinstance(value, (int, float)))
    if isinstance(value, bool) or not ok or not math.isfinite(value):
        raise RowsError(f"`{key}` is {value!r}", **where, field=key,
                        fix=f"write {key} as a {'whole' if integer else 'finite'} number or null")
    return value


def _check_records(records: Any) -> list[dict]:
    recs = read_records(records, noun="step record")
    out = []
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        step = rec.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise RowsError(f"`step` is {step!r}", **where, field="step",
                            fix="give each record its optimizer step as an integer >= 0")
        clean = {"step": step}
        for key in ("train_reward", "train_reward_std", "mean_length", "truncated_share"):
            clean[key] = _number(rec, key, where)
        clean["n_completions"] = _number(rec, "n_completions", where, integer=True)
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


def _climb(rewards: np.ndarray, window: int, level: float) -> tuple[float, float] | None:
    t = rewards.size
    if t < 4:
        return None
    w = max(2, min(window, t // 2))
    climb = float(rewards[-w:].mean() - rewards[:w].mean())
    sigma = math.sqrt(float((np.diff(rewards) ** 2).sum()) / (2 * (t - 1)))
    return climb, z_value(0.5 + level / 2) * sigma * math.sqrt(2 / w)


def watch_records(records: Any, *, metric: Literal["pass", "reward"] = "pass",
                  threshold: float | None = None, level: float = CONFIDENCE_LEVEL,
                  seed: int | None = BOOTSTRAP_SEED, window: int = WATCH_WINDOW,
                  confirm: int = WATCH_CONFIRM, scan: bool = True,
                  source: str = "<records>") -> Watch:
    """The decision on step records (a path to ``watch.jsonl`` or a list of dicts).

    A record: ``{"step": int, "train_reward": float, "train_reward_std", "n_completions",
    "mean_length", "truncated_share", "held_out": [graded rows], "batch": [graded rows with the
    reply text]}``; all but ``step`` optional. Held-out rows are paired by ``task_id``.
    """
    level, seed = check_level(level), check_seed(seed)
    check_metric(metric)
    for name, value, lo in (("window", window, 2), ("confirm", confirm, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= 1000:
            raise ArgumentError(f"`{name}` must be an integer in [{lo}, 1000], got {value!r}. "
                                f"Fix: use the default {WATCH_WINDOW if name == 'window' else WATCH_CONFIRM}")
    recs = sorted(_check_records(records), key=lambda r: r["step"])
    by_step: dict[int, dict] = {}
    for rec in recs:  # a step logged twice (a resumed run): the later record wins, field by field
        merged = by_step.setdefault(rec["step"], {"step": rec["step"]})
        merged.update({k: v for k, v in rec.items() if v is not None})
    steps = [by_step[s] for s in sorted(by_step)]
    train_steps = np.array([s["step"] for s in steps if s.get("train_reward") is not None])
    train = np.array([s["train_reward"] for s in steps if s.get("train_reward") is not None])
    evals = [s for s in steps if s.get("held_out")]
    notes: list[str] = []
    base = None
    if evals:
        try:
            base = load_rows(evals[0]["held_out"], threshold=threshold)
        except RowsError as err:
            raise RowsError(f"held-out rows of step {evals[0]['step']}: {err}") from None
        if evals[0]["step"] != 0:
            notes.append(f"no held-out evaluation at step 0: paired against step "
                         f"{evals[0]['step']}, the first one")
    out_steps: list[WatchStep] = []
    conditions: list[Condition | None] = []
    cond_steps: list[int] = []
    last_cmp = last_climb = None
    for s in steps:
        fields: dict[str, Any] = {k: s.get(k) for k in ("train_reward", "train_reward_std",
                                                       "n_completions", "mean_length",
                                                       "truncated_share")}
        if s.get("held_out"):
            try:
                rows = load_rows(s["held_out"], threshold=threshold)
            except RowsError as err:
                raise RowsError(f"held-out rows of step {s['step']}: {err}") from None
            fields["held_out"] = pass_rate(rows, level, seed, metric)
            if s is not evals[0]:
                cmp = compare(base, rows, level=level, seed=seed, metric=metric)
                climb = _climb(train[train_steps <= s["step"]], window, level)
                fields.update(delta=cmp.delta, delta_ci=cmp.ci, delta_n_paired=cmp.n_paired)
                if climb is not None:
                    fields.update(train_climb=climb[0], train_noise_band=climb[1])
                cond: Condition | None = None
                if cmp.ci is not None:
                    lo, hi = cmp.ci
                    if hi < 0:
                        cond = "down"
                    elif climb is not None and lo <= 0 and climb[0] > climb[1] and hi < climb[0]:
                        cond = "flat_while_climbing"
                fields["condition"] = cond
                conditions.append(cond)
                cond_steps.append(s["step"])
                last_cmp, last_climb = cmp, climb
        out_steps.append(WatchStep(step=s["step"], **fields))
    streak = 0
    for cond in reversed(conditions):
        if cond is None:
            break
        streak += 1
    latest = conditions[-1] if conditions else None
    first_stop, run_len = None, 0  # what a callback with stop=True would have done
    for step, cond in zip(cond_steps, conditions):
        run_len = run_len + 1 if cond is not None else 0
        if run_len >= confirm:
            first_stop = step
            break
    decision: Decision
    if streak >= confirm:
        decision = "stop"
        if latest == "down":
            reason = (f"the held-out {metric} moved down: its paired delta's interval lies below 0 "
                      f"at the last {streak} evaluations")
        else:
            reason = (f"the held-out {metric} stays flat (its interval holds 0) while the training "
                      f"reward climbed {last_climb[0]:+.3f}, beyond its noise band "
                      f"{last_climb[1]:.3f}, at the last {streak} evaluations")
    elif len(evals) < 2:
        decision = "not_enough_data"
        reason = ("no held-out evaluation yet" if not evals else
                  f"one held-out evaluation (step {evals[0]['step']}); the first comparison "
                  "comes with the next")
    elif last_cmp is None or last_cmp.ci is None:
        decision = "not_enough_data"
        reason = f"the held-out set pairs {0 if last_cmp is None else last_cmp.n_paired} tasks; " \
                 "an interval needs at least 3"
    elif latest is None and last_climb is None and last_cmp.ci[0] <= 0:
        decision = "not_enough_data"
        reason = (f"{train.size} training steps with a reward: too few to tell a climb from "
                  "noise (need 4), and the held-out interval holds 0")
    else:
        decision = "continue"
        lo, hi = last_cmp.ci
        reason = f"held-out delta {last_cmp.delta:+.3f} [{lo:+.3f}, {hi:+.3f}] vs step " \
                 f"{evals[0]['step']}"
        if latest is not None:
            reason += (f"; the stop condition ({latest}) holds at the latest evaluation only: "
                       f"stop if it holds at {confirm - streak} more")
        elif lo > 0:
            reason += ": the held-out set is improving"
        elif last_climb is not None and last_climb[0] <= last_climb[1]:
            reason += (f"; the training reward's climb {last_climb[0]:+.3f} is inside its noise "
                       f"band {last_climb[1]:.3f}")
        elif last_climb is not None and hi >= last_climb[0]:
            reason += (f"; the interval still reaches the training reward's climb "
                       f"{last_climb[0]:+.3f}: {last_cmp.n_paired} held-out tasks cannot tell "
                       f"flat from following it (the interval is {hi - lo:.3f} wide); evaluate "
                       f"more held-out tasks to narrow it")
        else:
            reason += "; the interval still reaches the training reward's climb"
    batch_scan = None
    if scan:
        latest_batch = next((s for s in reversed(steps) if s.get("batch")), None)
        if latest_batch is not None:
            try:
                batch_scan = hack_scan(latest_batch["batch"], seed=seed, threshold=threshold)
            except WhileaiError as err:
                notes.append(f"hack scan of step {latest_batch['step']}'s batch skipped: {err}")
    if batch_scan is not None and batch_scan.verdict == "suspect":
        notes.append(f"the latest batch's scan is suspect: the reward pays for "
                     f"{', '.join(batch_scan.suspects)} within tasks")
    next_step = {
        "stop": "stop the run and keep the checkpoint before the held-out set stopped "
                "following; read the latest batch scan and run cheat_probes on the reward, then "
                "fix the reward (or the token cap, or the judge) before training again",
        "continue": "keep training; call watch_run again after the next held-out evaluation",
        "not_enough_data": "evaluate the frozen held-out set at step 0 and every few steps "
                           "(the TRL callback's `every`), then call watch_run again",
    }[decision]
    shown = out_steps[-WATCH_STEPS_SHOWN:]
    return Watch(decision=decision, reason=reason, source=source, metric=metric,
                 n_steps=len(out_steps), steps_shown=f"{len(shown)} of {len(out_steps)}",
                 steps=shown, n_evals=len(evals), first_stop_step=first_stop,
                 baseline_step=evals[0]["step"] if evals else None,
                 latest_eval_step=evals[-1]["step"] if evals else None,
                 held_out_delta=None if last_cmp is None else last_cmp.delta,
                 held_out_ci=None if last_cmp is None else last_cmp.ci,
                 n_paired=None if last_cmp is None else last_cmp.n_paired,
                 train_climb=None if last_climb is None else last_climb[0],
                 train_noise_band=None if last_climb is None else last_climb[1],
                 confirm=confirm, level=level, scan=batch_scan, next_step=next_step, notes=notes)


# --- where the records come from --------------------------------------------------------------

def records_from_rows(rows: Any, *, held_out_field: str = "held_out") -> list[dict]:
    """Step records from graded rows that carry a ``step``: rows whose ``held_out_field`` is true
    (or whose ``split`` is ``"eval"``) are the held-out evaluation of their step, the others
    that step's training batch (its mean reward is the training reward)."""
    recs = read_records(rows, noun="row")
    steps: dict[int, dict[str, list]] = {}
    for i, rec in enumerate(recs.items):
        step = rec.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise RowsError(f"`step` is {step!r}", **recs.where(i), field="step",
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


def records_from_trl_state(path: str | os.PathLike | UserPath) -> list[dict]:
    """Step records from a TRL ``trainer_state.json``: each ``log_history`` entry with a
    ``reward`` (GRPOTrainer's logged mean reward) is one step; there are no held-out rows."""
    path = as_user_path(path, None, argument="source", error=RowsError)
    try:
        state = safejson.loads(path.read_text("rows", error=RowsError))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RowsError(f"cannot be read as JSON ({exc})", source=str(path),
                        fix="point at the trainer_state.json TRL wrote") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RowsError("has no `log_history` list", source=str(path), field="log_history",
                        fix="point at the trainer_state.json TRL wrote in its output folder")
    out = []
    for entry in history:
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
    are the held-out evaluations (per ``step``), its train episodes each step's batch."""
    from ..importers.prime_rl import import_prime_rl

    rows = [dict(r, split="eval") for r in import_prime_rl(path, kind="eval").rows]
    try:
        rows += import_prime_rl(path, kind="train").rows
    except WhileaiError:  # a run whose training episodes were not kept: held-out only
        pass
    return records_from_rows(rows)


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
                                f"({shown}): several runs. Fix: point at one run's folder")
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
        raise ArgumentError(f"{path} does not exist. Fix: give a run id, a TRL or prime-rl "
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
                        "rollouts/. Fix: point at the trainer's output folder")


def watch_run(source: Any, *, state_dir: str | os.PathLike | None = None,
              metric: Literal["pass", "reward"] = "pass", threshold: float | None = None,
              level: float = CONFIDENCE_LEVEL, seed: int | None = BOOTSTRAP_SEED,
              window: int = WATCH_WINDOW, confirm: int = WATCH_CONFIRM,
              scan: bool = True) -> Watch:
    """Watch a run: a run id from ``launch_run``, a TRL output folder (its ``watch.jsonl`` from
    the recipes' callback, else ``trainer_state.json``), a ``watch.jsonl``, a rows file whose rows
    carry ``step``, or step records as a list. See :func:`watch_records` for the decision."""
    if isinstance(source, str) and _RUN_ID.match(source.strip()):
        from ..runs.registry import Registry

        registry = Registry(state_dir, create=False)
        record = registry.get(source.strip())
        if record is None:
            raise ArgumentError(f"no run {source!r} in {registry.path}. Fix: list_runs shows "
                                "the runs; pass --state-dir if they live elsewhere")
        run_dir = user_path(registry.run_dir(record.id), argument="run folder")
        found = _find(run_dir, WATCH_FILE, depth=4) if run_dir.is_dir() else None
        if found is None and record.backend == "modal":
            raise ArgumentError(f"run {record.id} runs on Modal; its records are on the runs "
                                "volume, not here. Fix: download its folder (modal volume get "
                                f"whileai-runs {record.name}) and watch that folder")
        if found is None:
            raise ArgumentError(f"run {record.id} has written no {WATCH_FILE} under {run_dir} "
                                f"yet (status {record.status}). Fix: wait for its first step, "
                                "or check that the recipe runs the watch callback")
        recs, label = found, f"run {record.id}"
    elif is_path(source):
        recs, label = _records_from_path(as_user_path(source, None, argument="source",
                                                      error=RowsError))
    else:
        recs, label = source, "<records>"
    return watch_records(recs, metric=metric, threshold=threshold, level=level, seed=seed,
                         window=window, confirm=confirm, scan=scan, source=label)
