"""During training: is the held-out pass rate following the training reward?

Per step (or checkpoint) a run gives a training reward, and at some steps the graded rows of a
frozen held-out set. :func:`watch_records` pairs every held-out evaluation with the first one
(step 0: before training), by task, and sets the paired delta beside the training reward's
climb. Each evaluation after the first is a *look*, tested at the level the spending plan of
:mod:`.anytime` gives it, so the chance that an honest run is ever stopped is at most
``1 - level`` however many looks it gets (the fixed-sample rule of 0.1 stopped up to 10% of
honest runs at 50 looks, docs/reward-hacking.md).

It says ``stop`` only when, at ``confirm`` held-out evaluations in a row,

- **the held-out interval moves down**: the paired delta's interval lies below 0; or
- **it stays flat while the training reward climbs beyond its own noise**: the interval holds 0,
  lies wholly below the training reward's climb, and the climb clears its noise band.

That is the over-optimisation picture of Gao et al. [1]: the proxy (training) reward keeps
rising while the gold (held-out) score stops rising, then falls. A held-out set on which every
task changed by the same amount (often: none moved at all) has no spread and so no t interval;
its interval is then the exact bound on the share of tasks that could have moved unseen
(:func:`.anytime.zero_spread_bound`), said so in a note: no movement on enough tasks is evidence
of a flat held-out set, and on too few the reason says how many would tell. Otherwise it says ``continue``,
or ``not_enough_data`` (no held-out evaluation after the first, or too few training steps to tell
a climb from noise), always with the numbers.

The climb is the mean training reward of the last ``window`` steps minus that of the first
``window`` (``window`` = min(``WATCH_WINDOW``, half the steps)); its noise is estimated from
successive differences, sigma^2 = sum (r_t - r_{t-1})^2 / (2 (T - 1)) (von Neumann's mean square
successive difference [2], which a slow trend barely inflates), and the band is
q sigma sqrt(2 / window), q the look's Student t quantile (:func:`.anytime.climb_band`). For a 0/1 reward the training reward and the held-out
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
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .. import voice
from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, MIN_TASKS_FOR_INTERVAL, RUN_ID_PATTERN,
                        SCAN_RUN_SHARE, WATCH_CONFIRM, WATCH_SCAN_EVERY, WATCH_SPENDING,
                        WATCH_STEPS_SHOWN, WATCH_WINDOW)
from ..errors import ArgumentError, RowsError, WhileaiError
from ..result import Result, fmt_rate
from ..rows import Rows, load_rows, read_records
from ..safepath import UserPath, as_user_path, is_path, user_path
from ..stats import Rate, check_metric, pass_rate
from ..stats.arms import pair_tasks
from ..stats.paired import no_spread, value_scale
from .anytime import (DOWN, FLAT, climb_band, first_stop, look_alpha, look_conditions,
                      paired_look_interval, tasks_to_bound, zero_spread_bound)
from .scan import HackScan, hack_scan
from .. import safejson

Decision = Literal["stop", "continue", "not_enough_data"]
Condition = Literal["down", "flat_while_climbing"]
CiMethod = Literal["t", "zero_spread_bound"]
Interval = tuple[float, float]
WATCH_FILE = "watch.jsonl"
TRL_STATE = "trainer_state.json"
_RUN_ID = re.compile(RUN_ID_PATTERN)


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
    delta_ci: Interval | None = Field(None, description=(
        "the paired delta's interval at this look's spent level `look_level` (not the "
        "fixed-sample level): every look's interval holds together at `level`"))
    n_paired: int | None = None
    delta_ci_method: CiMethod | None = Field(None, description=(
        "t: Student's t on the per-task paired deltas; zero_spread_bound: every task changed "
        "by the same amount (no spread, no t interval), so the interval is the exact bound on "
        "the share of tasks that could have moved unseen times a task's largest change"))
    look: int | None = Field(None, description="the held-out evaluation's number after the first")
    look_level: float | None = Field(None, description="1 - alpha_t: the level this look is "
                                                       "tested at")
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
            parts.append(f"delta {self.delta:+.3f}{ci} (n={self.n_paired} paired, look "
                         f"{self.look} at {self.look_level:.5f})")
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
    held_out_ci_method: CiMethod | None = None
    n_paired: int | None = None
    train_climb: float | None = None
    train_noise_band: float | None = None
    confirm: int
    level: float = Field(description="the run-level confidence: every look's interval holds "
                                     "together with this probability")
    spending: str = Field(WATCH_SPENDING, description="the error each look spends")
    scan: HackScan | None = Field(None, description="the latest scanned batch, at its look")
    scans: int = Field(0, description="batches scanned (every `scan_every`-th step's)")
    feature_alarm_step: int | None = Field(
        None, description="the first scanned step whose batch was suspect at its look's spent "
                          "level: the run's scans share SCAN_RUN_SHARE of its error, so an "
                          "honest run alarms at most SCAN_RUN_SHARE x (1 - level) of the time")
    feature_alarm: list[str] = []
    next_step: str
    notes: list[str] = []

    negative_means: ClassVar[str | None] = (
        "the decision is `stop`")

    @property
    def negative(self) -> bool:
        return self.decision == "stop"

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
            lines.append(f"latest batch scan (scan {self.scans}): {self.scan.verdict}"
                         + (f" ({', '.join(self.scan.suspects or self.scan.weak)})"
                            if self.scan.suspects or self.scan.weak else ""))
        if self.feature_alarm_step is not None:
            lines.append(f"feature alarm at step {self.feature_alarm_step}: the reward pays for "
                         f"{', '.join(self.feature_alarm)} within tasks")
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


def _climb(rewards: np.ndarray, window: int) -> tuple[float, float, int, int] | None:
    """(climb, sigma, window used, steps) of the training rewards so far, or None (< 4 steps)."""
    t = rewards.size
    if t < 4:
        return None
    w = max(2, min(window, t // 2))
    climb = float(rewards[-w:].mean() - rewards[:w].mean())
    sigma = math.sqrt(float((np.diff(rewards) ** 2).sum()) / (2 * (t - 1)))
    return climb, sigma, w, t


def _look_interval(base: Rows, rows: Rows, metric: str, level: float, look: int
                   ) -> tuple[float | None, Interval | None, int, str | None, bool]:
    """(delta, interval at look ``look``'s spent level, paired tasks, why there is none, zero
    spread): the per-task paired differences against the baseline (:mod:`.anytime`). Student's t
    when they spread; when every task changed by the same amount, the exact zero-spread bound
    (:func:`.anytime.zero_spread_bound`), which needs the values' range: pass rates lie in
    [0, 1]; rewards only when every held-out reward of both evaluations does."""
    ib, ia = pair_tasks(base, rows)
    n = int(ib.size)
    if n == 0:
        return None, None, 0, "it shares no task_id with the first evaluation", False
    vb, va = base.task_values(metric)[ib], rows.task_values(metric)[ia]
    d = va - vb
    delta = float(d.mean())
    if n < MIN_TASKS_FOR_INTERVAL:
        return (delta, None, n, f"an interval needs at least {MIN_TASKS_FOR_INTERVAL} paired "
                "tasks", False)
    scale = value_scale(vb, va)   # a spread within rounding of this is none
    flat = bool(no_spread(d, scale))
    if flat and metric == "reward" and not all(
            float(r.reward.min()) >= 0.0 and float(r.reward.max()) <= 1.0 for r in (base, rows)):
        return (delta, None, n, f"every one of the {n} tasks changed by exactly {delta:+.3f} (no "
                "spread, so no t interval), and the rewards leave [0, 1], so no bound on how far "
                "an unseen task could move exists: rescale the reward to [0, 1], or watch the "
                "pass rate (metric='pass')", True)
    _, lo, hi, _ = paired_look_interval(d, level, look, scale=scale)
    return delta, (float(lo), float(hi)), n, None, flat


def watch_records(records: Any, *, metric: Literal["pass", "reward"] = "pass",
                  threshold: float | None = None, level: float = CONFIDENCE_LEVEL,
                  seed: int | None = BOOTSTRAP_SEED, window: int = WATCH_WINDOW,
                  confirm: int = WATCH_CONFIRM, scan: bool = True,
                  scan_every: int = WATCH_SCAN_EVERY, source: str = "<records>") -> Watch:
    """The decision on step records (a path to ``watch.jsonl`` or a list of dicts).

    A record: ``{"step": int, "train_reward": float, "train_reward_std", "n_completions",
    "mean_length", "truncated_share", "held_out": [graded rows], "batch": [graded rows with the
    reply text]}``; all but ``step`` optional. Held-out rows are paired by ``task_id``.

    Every held-out evaluation after the first is a look (1, 2, ...); look ``t`` is tested at
    level ``1 - alpha_t`` with ``alpha_t = (1 - level) / (t (t + 1))`` (:mod:`.anytime`), so the
    chance that an honest run is ever stopped stays under ``1 - level`` however many looks it
    gets. ``scan``: scan the batch of every ``scan_every``-th step (each scan its own look of the
    same plan: the feature alarm).
    """
    level, seed = check_level(level), check_seed(seed)
    check_metric(metric)
    for name, value, lo in (("window", window, 2), ("confirm", confirm, 1),
                            ("scan_every", scan_every, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= 1000:
            default = {"window": WATCH_WINDOW, "confirm": WATCH_CONFIRM,
                       "scan_every": WATCH_SCAN_EVERY}[name]
            raise ArgumentError(f"`{name}` must be an integer in [{lo}, 1000], got {value!r}. "
                                f"Fix: use the default {default}")
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
    last = None  # (delta, ci, n_paired, climb) at the latest look
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
                look = len(conditions) + 1
                delta, ci, n_paired, why, flat = _look_interval(base, rows, metric, level, look)
                climb = _climb(train[train_steps <= s["step"]], window)
                band = None if climb is None else float(
                    climb_band(climb[1], climb[2], climb[3], level, look))
                fields.update(delta=delta, delta_ci=ci, n_paired=n_paired, look=look,
                              look_level=1.0 - look_alpha(1.0 - level, look),
                              delta_ci_method=None if ci is None else
                              "zero_spread_bound" if flat else "t")
                if climb is not None:
                    fields.update(train_climb=climb[0], train_noise_band=band)
                cond: Condition | None = None
                if ci is not None:
                    code = int(look_conditions(ci[0], ci[1],
                                               math.nan if climb is None else climb[0],
                                               math.nan if band is None else band))
                    cond = {DOWN: "down", FLAT: "flat_while_climbing"}.get(code)
                fields["condition"] = cond
                conditions.append(cond)
                cond_steps.append(s["step"])
                last = (delta, ci, n_paired, None if climb is None else (climb[0], band), why,
                        flat)
        out_steps.append(WatchStep(step=s["step"], **fields))
    streak = 0
    for cond in reversed(conditions):
        if cond is None:
            break
        streak += 1
    latest = conditions[-1] if conditions else None
    first_stop_step = None  # what a callback with stop=True would have done
    if conditions:
        codes = np.array([0 if c is None else 1 for c in conditions])
        hit = int(first_stop(codes, confirm))
        first_stop_step = cond_steps[hit] if hit >= 0 else None
    last_delta, last_ci, last_n, last_climb, last_why, last_flat = last if last else (None,) * 6
    looks = len(conditions)
    if last_flat and last_ci is not None:
        share = zero_spread_bound(last_n, level, looks)
        notes.append(f"at step {evals[-1]['step']} every one of the {last_n} paired tasks "
                     f"changed by exactly {last_delta:+.3f} (no spread, so no t interval): the "
                     f"interval is the exact bound on the share of tasks that could have moved "
                     f"unseen, {share:.3f} (0 of {last_n} moved, Clopper-Pearson at the look's "
                     "level), times the largest change a task can make (1)")
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
    elif last_ci is None:
        decision = "not_enough_data"
        reason = f"the latest held-out evaluation pairs {last_n or 0} tasks: {last_why}"
    elif latest is None and last_climb is None and last_ci[0] <= 0:
        decision = "not_enough_data"
        reason = (f"{train.size} training steps with a reward: too few to tell a climb from "
                  "noise (need 4), and the held-out interval holds 0")
    else:
        decision = "continue"
        lo, hi = last_ci
        reason = (f"held-out delta {last_delta:+.3f} [{lo:+.3f}, {hi:+.3f}] vs step "
                  f"{evals[0]['step']} (look {len(conditions)}, tested at level "
                  f"{1.0 - look_alpha(1.0 - level, len(conditions)):.5f})")
        if latest is not None:
            reason += (f"; the stop condition ({latest}) holds at the latest evaluation only: "
                       f"stop if it holds at {confirm - streak} more")
        elif lo > 0:
            reason += ": the held-out set is improving"
        elif last_climb is not None and last_climb[0] <= last_climb[1]:
            reason += (f"; the training reward's climb {last_climb[0]:+.3f} is inside its noise "
                       f"band {last_climb[1]:.3f}")
        elif last_climb is not None and hi >= last_climb[0] and last_flat:
            need = tasks_to_bound(last_climb[0] - last_delta, level, looks)
            reason += (f"; no held-out task moved, but at this look {last_n} tasks bound the "
                       f"change only to {hi:+.3f}, above the training reward's climb "
                       f"{last_climb[0]:+.3f}"
                       + (f" ({need} unmoved tasks would bound it under the climb)" if need
                          else "") + ": evaluate more held-out tasks")
        elif last_climb is not None and hi >= last_climb[0]:
            reason += (f"; the interval still reaches the training reward's climb "
                       f"{last_climb[0]:+.3f}: {last_n} held-out tasks cannot tell "
                       f"flat from following it (the interval is {hi - lo:.3f} wide); evaluate "
                       f"more held-out tasks to narrow it")
        else:
            reason += "; the interval still reaches the training reward's climb"
    batch_scan, scans, alarm_step, alarm = None, 0, None, []
    if scan:
        scanned = [x for x in steps if x.get("batch") and x["step"] % scan_every == 0]
        for j, x in enumerate(scanned, 1):  # scan j is look j of the run's scans
            try:
                batch_scan = hack_scan(x["batch"], seed=seed, threshold=threshold, level=level,
                                       look=j)
            except WhileaiError as err:
                notes.append(f"hack scan of step {x['step']}'s batch skipped: {err}")
                continue
            scans = j
            if alarm_step is None and batch_scan.verdict == "suspect":
                alarm_step, alarm = x["step"], batch_scan.suspects
    if alarm_step is not None:
        notes.append(f"feature alarm: the batch of step {alarm_step} pays for "
                     f"{', '.join(alarm)} within tasks, at its look's spent level (run-level "
                     f"false-alarm rate at most {SCAN_RUN_SHARE * (1 - level):.2g}); read "
                     f"watch.scan and run {voice.name('cheat_probes')}")
    elif batch_scan is not None and batch_scan.verdict == "weak_signal":
        notes.append(f"the latest batch shows a weak signal ({', '.join(batch_scan.weak)}): "
                     "below the strength gate, watch the next scans")
    next_step = {
        "stop": "stop the run and keep the checkpoint before the held-out set stopped "
                "following; read the latest batch scan and run "
                f"{voice.name('cheat_probes')} on the reward, then "
                "fix the reward (or the token cap, or the judge) before training again",
        "continue": f"keep training; run {voice.name('watch_run')} again after the next held-out "
                    "evaluation",
        "not_enough_data": "evaluate the frozen held-out set at step 0 and every few steps "
                           "(the TRL callback's `every`), then call watch_run again",
    }[decision]
    shown = out_steps[-WATCH_STEPS_SHOWN:]
    return Watch(decision=decision, reason=reason, source=source, metric=metric,
                 n_steps=len(out_steps), steps_shown=f"{len(shown)} of {len(out_steps)}",
                 steps=shown, n_evals=len(evals), first_stop_step=first_stop_step,
                 baseline_step=evals[0]["step"] if evals else None,
                 latest_eval_step=evals[-1]["step"] if evals else None,
                 held_out_delta=last_delta, held_out_ci=last_ci, n_paired=last_n,
                 held_out_ci_method=None if last_ci is None else
                 "zero_spread_bound" if last_flat else "t",
                 train_climb=None if last_climb is None else last_climb[0],
                 train_noise_band=None if last_climb is None else last_climb[1],
                 confirm=confirm, level=level, scan=batch_scan, scans=scans,
                 feature_alarm_step=alarm_step, feature_alarm=alarm, next_step=next_step,
                 notes=notes)


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
    from ..importers.prime_rl import read_prime_rl  # lazy: importers.prime_rl loads only when records_from_prime_rl() runs

    rows = [dict(r, split="eval") for r in read_prime_rl(path, kind="eval").rows]
    try:
        rows += read_prime_rl(path, kind="train").rows
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


def registered_run(source: str, state_dir: Any) -> tuple[Any, Any]:
    """(the registry's record of run id ``source``, its folder through the door), or the error
    naming where the runs live (watch_run and diagnose_run read a run id the same way)."""
    from ..runs.registry import Registry  # lazy: runs.registry loads only when a run id is read

    registry = Registry(state_dir, create=False)
    record = registry.get(source.strip())
    if record is None:
        raise ArgumentError(f"no run {source!r} in {registry.path}. Fix: "
                            f"{voice.name('list_runs')} shows the runs; pass "
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
                                "volume, not here. Fix: download its folder (modal volume get "
                                f"whileai-runs {record.name}) and watch that folder")
        if found is None:
            raise ArgumentError(f"run {record.id} has written no {WATCH_FILE} under {run_dir} "
                                f"yet (status {record.status}). Fix: wait for its first step, "
                                "or check that the recipe runs the watch callback")
        return found, f"run {record.id}"
    if is_path(source):
        return _records_from_path(as_user_path(source, None, argument="source", error=RowsError))
    return source, "<records>"


def watch_run(source: Any, *, state_dir: str | os.PathLike | None = None,
              metric: Literal["pass", "reward"] = "pass", threshold: float | None = None,
              level: float = CONFIDENCE_LEVEL, seed: int | None = BOOTSTRAP_SEED,
              window: int = WATCH_WINDOW, confirm: int = WATCH_CONFIRM,
              scan: bool = True) -> Watch:
    """Watch a run: a run id from ``launch_run``, a TRL output folder (its ``watch.jsonl`` from
    the recipes' callback, else ``trainer_state.json``), a ``watch.jsonl``, a rows file whose rows
    carry ``step``, or step records as a list. See :func:`watch_records` for the decision."""
    recs, label = source_records(source, state_dir)
    return watch_records(recs, metric=metric, threshold=threshold, level=level, seed=seed,
                         window=window, confirm=confirm, scan=scan, source=label)
