"""During training: is the held-out pass rate following the training reward?

:func:`watch_records` compares every held-out evaluation after the first (a *look*) with the
first (step 0) and with every earlier look, paired by task, beside the training reward's climb,
by a plan stated before the first look (:mod:`.anytime`; planned when the run says how many
looks, open otherwise): an honest run is ever stopped with probability at most ``1 - level``.
It says ``stop`` when, at ``confirm`` looks in a row, the held-out score moved down (its change
since step 0, or since an earlier look, has an interval below 0), or stays flat (its interval
holds 0 and lies below the climb) while the training reward climbs beyond its noise band: the
over-optimisation picture of Gao et al. [1]. Otherwise ``continue``, or ``not_enough_data``.

The climb is the mean training reward of the last ``window`` steps minus that of the first; its
noise comes from von Neumann's mean square successive difference [2], sigma^2 = sum (r_t -
r_{t-1})^2 / (2 (T - 1)), which a slow trend barely inflates (:func:`.anytime.climb_band`). For
a 0/1 reward the training reward and the held-out pass rate share a scale; for a graded one,
use ``metric="reward"``.

[1] Gao, Schulman & Hilton (2022). Scaling Laws for Reward Model Overoptimization. arXiv:2210.10760.
[2] von Neumann et al. (1941). Distribution of the ratio of the mean square successive difference
    to the variance. Ann. Math. Statist. 12(2), 153-162.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .. import voice
from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, MIN_TASKS_FOR_INTERVAL,
                        SCAN_RUN_SHARE, WATCH_CONFIRM, WATCH_OPEN_HALF, WATCH_POWER,
                        WATCH_LOOKS_MAX, WATCH_SCAN_EVERY, WATCH_STEPS_SHOWN,
                        WATCH_WINDOW)
from ..errors import ArgumentError, WhileaiError
from ..operations import READS, VERDICT, operation
from ..operations.args import RUN_OR_PATH, Arg, Level, Metric, StateDir, Threshold
from ..result import Result, fmt_rate
from ..roles import fields_report
from ..rows import Rows
from ..stats import Rate, check_metric, pass_rate
from .anytime import (DOWN, FLAT, Plan, detectable_drop, look_tails, rule, tasks_to_bound,
                      zero_spread_share)
from .scan import HackScan, _tracks, hack_scan
from .watch_files import (TRL_STATE, WATCH_FILE, registered_run,  # noqa: F401 (re-exported)
                          STEP_NUMBERS, held_out_rows, planned_looks, source_records, step_records)

Decision = Literal["stop", "continue", "not_enough_data"]
Condition = Literal["down", "flat_while_climbing"]
CiMethod = Literal["t", "zero_spread_bound"]
Interval = tuple[float, float]


class WatchStep(Result):
    """One step: the training reward, and at an evaluation the held-out rate and its changes."""

    step: int
    train_reward: float | None = None
    train_reward_std: float | None = None
    n_completions: int | None = None
    mean_length: float | None = None
    truncated_share: float | None = None
    held_out: Rate | None = None
    delta: float | None = Field(None, description="the held-out change since the first "
                                                  "evaluation, paired by task")
    delta_ci: Interval | None = Field(None, description=(
        "its interval at this look's boundary of the plan (not the fixed-sample level): every "
        "look's intervals hold together at `level`"))
    n_paired: int | None = None
    delta_ci_method: CiMethod | None = Field(None, description=(
        "t: Student's t on the per-task paired deltas; zero_spread_bound: every task changed "
        "by the same amount (no spread, no t interval), so the interval is the exact bound on "
        "the share of tasks that could have moved unseen times a task's largest change"))
    peak_step: int | None = Field(None, description=(
        "the earlier look (after the first evaluation) against which this look's fall is "
        "bounded hardest: the best earlier look"))
    peak_delta: float | None = Field(None, description="the held-out change since `peak_step`")
    peak_ci: Interval | None = Field(None, description="its interval at the plan's boundary "
                                                       "for falls from an earlier look")
    look: int | None = Field(None, description="the held-out evaluation's number after the first")
    look_level: float | None = Field(None, description="1 - the error this look spends (its "
                                                       "three parts together)")
    train_climb: float | None = None
    train_noise_band: float | None = None
    climb_gap_bound: float | None = Field(None, description=(
        "the upper bound of the held-out change since the first evaluation minus the training "
        "climb, at this look's boundary, with both their noises (Welch's t): "
        "flat_while_climbing needs it below 0"))
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
            parts.append(f"delta {self.delta:+.3f}{_ci(self.delta_ci)} (n={self.n_paired} "
                         f"paired, look {self.look} at {self.look_level:.5f})")
        if self.peak_delta is not None:
            parts.append(f"since step {self.peak_step} {self.peak_delta:+.3f}{_ci(self.peak_ci)}")
        if self.train_climb is not None:
            band = "n/a" if self.train_noise_band is None else f"{self.train_noise_band:.3f}"
            parts.append(f"climb {self.train_climb:+.3f} (noise {band})")
        if self.climb_gap_bound is not None:
            parts.append(f"held-out - climb <= {self.climb_gap_bound:+.3f}")
        if self.condition:
            parts.append(f"<- {self.condition}")
        return "  ".join(parts)


def _ci(ci: Interval | None) -> str:
    return f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " [no interval]"


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
        None, description="the first held-out evaluation at which the rule said stop: where a "
                          "trainer watched with stop=True stops, even if it no longer holds at "
                          "the end")
    baseline_step: int | None = None
    latest_eval_step: int | None = None
    held_out_delta: float | None = None
    held_out_ci: Interval | None = None
    held_out_ci_method: CiMethod | None = None
    n_paired: int | None = None
    train_climb: float | None = None
    train_noise_band: float | None = None
    confirm: int
    level: float = Field(description="the run-level confidence: every look's intervals hold "
                                     "together with this probability, so an honest run is "
                                     "stopped with probability at most 1 - level")
    false_alarm: float = Field(0.05, description="the chance that an honest run is ever "
                                                 "stopped is at most this: 1 - level")
    schedule: Literal["planned", "open"] = Field(
        "open", description="planned: the number of looks was known (the run's config, or "
                            "`looks`); open: an anytime-valid plan over any number of looks")
    planned_looks: int | None = None
    spending: str = Field("", description="how each look's error is spent")
    power: float = Field(WATCH_POWER, description="the chance that `detectable_drop` is caught")
    detectable_drop: float | None = Field(
        None, description="the held-out drop from step 0, sustained from look 1, that the plan "
                          "catches with probability `power` by look `detectable_by_look`, at "
                          "the latest look's spread (the plan's power)")
    detectable_by_look: int | None = None
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
        lines.append(f"plan: {self.spending}; an honest run is stopped at most "
                     f"{self.false_alarm:.0%} of the time"
                     + (f"; power: a held-out drop of {self.detectable_drop:.3f} from step 0, "
                        f"sustained from look 1, is caught by look {self.detectable_by_look} in "
                        f"{self.power:.0%} of runs" if self.detectable_drop is not None else ""))
        if self.scan is not None:
            lines.append(f"latest batch scan (scan {self.scans}): {self.scan.verdict}"
                         + (f" ({', '.join(self.scan.suspects or self.scan.weak)})"
                            if self.scan.suspects or self.scan.weak else ""))
        if self.feature_alarm_step is not None:
            lines.append(f"feature alarm at step {self.feature_alarm_step}: "
                         f"{_tracks(self.feature_alarm)} within tasks")
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def _check_settings(window: Any, confirm: Any, scan_every: Any, looks: Any) -> None:
    for name, value, lo, default in (("window", window, 2, WATCH_WINDOW),
                                     ("confirm", confirm, 1, WATCH_CONFIRM),
                                     ("scan_every", scan_every, 1, WATCH_SCAN_EVERY)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= 1000:
            raise ArgumentError(f"`{name}` must be an integer in [{lo}, 1000], got {value!r}",
                                fix=f"use the default {default}")
    if looks is not None and (isinstance(looks, bool) or not isinstance(looks, int)
                              or not 1 <= looks <= WATCH_LOOKS_MAX):
        raise ArgumentError(f"`looks` must be an integer in [1, {WATCH_LOOKS_MAX}], got {looks!r}",
                            fix="the number of held-out evaluations after step 0 the run will "
                            "make, or leave it out (read from the run's config, else an open "
                            "schedule)")


# --- the looks --------------------------------------------------------------------------------

def _matrix(rows: list[Rows], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(values (1, evaluations, tasks), NaN where a task was not scored; whether each
    evaluation's values lie in [0, 1], the range the zero-spread bound needs)."""
    index: dict[str, int] = {}
    for r in rows:
        for t in r.task_ids:
            index.setdefault(t, len(index))
    values = np.full((1, len(rows), len(index)), np.nan)
    for j, r in enumerate(rows):
        values[0, j, [index[t] for t in r.task_ids]] = r.task_values(metric)
    unit = np.array([[metric == "pass" or (float(r.reward.min()) >= 0.0
                                           and float(r.reward.max()) <= 1.0) for r in rows]])
    return values, unit


def _looks(steps: list[dict], evals: list[dict], rows: list[Rows], plan: Plan, metric: str,
           window: int) -> tuple[dict[str, np.ndarray], int]:
    """The rule's table for this run's looks (one row: :func:`.anytime.rule`) and the index
    of the first stopping look (-1: none)."""
    values, unit = _matrix(rows, metric)
    train = [s for s in steps if s.get("train_reward") is not None]
    rewards = np.array([[s["train_reward"] for s in train]], dtype=np.float64)
    counts = np.array([sum(t["step"] <= e["step"] for t in train) for e in evals[1:]])
    table, first = rule(values, unit, rewards, counts, plan, window)
    return {k: v[0] for k, v in table.items()}, int(first[0])


def _look_fields(table: dict[str, np.ndarray], j: int, plan_level: float,
                 eval_steps: list[int]) -> dict[str, Any]:
    """The WatchStep fields of look ``j + 1`` from the rule's table."""
    def num(key):
        v = float(table[key][j])
        return v if math.isfinite(v) else None

    ci = None if num("hi") is None else (num("lo"), num("hi"))
    peak = int(table["peak"][j])
    fields = dict(delta=num("delta"), delta_ci=ci, n_paired=int(table["n"][j]), look=j + 1,
                  look_level=plan_level,
                  delta_ci_method=None if ci is None else
                  "zero_spread_bound" if table["flat"][j] else "t",
                  condition={DOWN: "down", FLAT: "flat_while_climbing"}.get(int(table["code"][j])))
    if peak >= 0:
        fields.update(peak_step=eval_steps[peak], peak_delta=num("peak_delta"),
                      peak_ci=(num("peak_lo"), num("peak_hi")))
    if num("climb") is not None:
        fields.update(train_climb=num("climb"), train_noise_band=num("band"),
                      climb_gap_bound=num("gap"))
    return fields


def _step_results(steps: list[dict], evals: list[dict], rows: list[Rows],
                  table: dict[str, np.ndarray] | None, plan: Plan, level: float,
                  seed: int | None, metric: str) -> list[WatchStep]:
    at = {e["step"]: i for i, e in enumerate(evals)}
    levels = plan.level_at(len(evals) - 1)
    eval_steps = [e["step"] for e in evals]
    out = []
    for s in steps:
        fields: dict[str, Any] = {k: s.get(k) for k in STEP_NUMBERS + ("n_completions",)}
        i = at.get(s["step"])
        if i is not None:
            fields["held_out"] = pass_rate(rows[i], level, seed, metric)
            if i and table is not None:
                fields.update(_look_fields(table, i - 1, float(levels[i - 1]), eval_steps))
        out.append(WatchStep(step=s["step"], **fields))
    return out


# --- the decision -----------------------------------------------------------------------------

def _decide(latest: WatchStep | None, table: dict[str, np.ndarray] | None, steps: list[dict],
            evals: list[dict], metric: str, confirm: int, plan: Plan) -> tuple[Decision, str]:
    """The decision at the latest look and why (stop codes: 1 down since the first evaluation,
    2 down since an earlier look, 3 flat while the training reward climbs)."""
    stop_by, streak = (0, 0) if table is None else (int(table["stop_by"][-1]),
                                                    int(table["streak"][-1]))
    if latest is not None and stop_by in (1, 2):
        return "stop", _down_reason(latest, evals[0]["step"], metric, stop_by, confirm)
    if latest is not None and stop_by == 3:
        return "stop", (f"the held-out {metric} stays flat (its interval holds 0) while the "
                        f"training reward climbed {latest.train_climb:+.3f}, beyond its noise "
                        f"band {latest.train_noise_band:.3f}, and the held-out change lies below "
                        f"the climb beyond both noises (by at least "
                        f"{-latest.climb_gap_bound:.3f}), at the last {confirm} evaluations")
    if len(evals) < 2:
        return "not_enough_data", ("no held-out evaluation yet" if not evals else
                                   f"one held-out evaluation (step {evals[0]['step']}); the "
                                   "first comparison comes with the next")
    if latest.delta_ci is None:
        return "not_enough_data", (f"the latest held-out evaluation pairs {latest.n_paired or 0} "
                                   f"tasks with the first: {_no_interval(latest)}")
    if latest.condition is None and latest.train_climb is None and latest.delta_ci[0] <= 0:
        n_train = sum(s.get("train_reward") is not None for s in steps)
        return "not_enough_data", (f"{n_train} training steps with a reward: too few to tell a "
                                   "climb from noise (need 4), and the held-out interval holds 0")
    return "continue", _continue_reason(latest, streak, evals[0]["step"], confirm, plan)


def _no_interval(latest: WatchStep) -> str:
    """Why the latest look has no interval."""
    if (latest.n_paired or 0) < MIN_TASKS_FOR_INTERVAL:
        return f"an interval needs at least {MIN_TASKS_FOR_INTERVAL} paired tasks"
    return (f"every one of the {latest.n_paired} tasks changed by exactly {latest.delta:+.3f} (no "
            "spread, so no t interval), and the rewards leave [0, 1], so no bound on how far an "
            "unseen task could move exists: rescale the reward to [0, 1], or watch the pass rate "
            f"({voice.arg('metric', 'pass')})")


def _down_reason(latest: WatchStep, base: int, metric: str, stop_by: int, confirm: int) -> str:
    rows = (f" and at the {confirm - 1} look{'s' if confirm > 2 else ''} before it"
            if confirm > 1 else "")
    if stop_by == 1:
        return (f"the held-out {metric} moved down: its change since step {base}, "
                f"{latest.delta:+.3f}{_ci(latest.delta_ci)}, lies below 0 at look "
                f"{latest.look}{rows}")
    return (f"the held-out {metric} fell after a rise: its change since step "
            f"{latest.peak_step}, {latest.peak_delta:+.3f}{_ci(latest.peak_ci)}, lies below 0 at "
            f"look {latest.look}{rows} (every earlier look compared, inside the plan)")


def _continue_reason(latest: WatchStep, streak: int, base: int, confirm: int,
                     plan: Plan) -> str:
    lo, hi = latest.delta_ci
    reason = (f"held-out delta {latest.delta:+.3f} [{lo:+.3f}, {hi:+.3f}] vs step {base} (look "
              f"{latest.look}, its intervals at level {latest.look_level:.5f}"
              + (f"; a stop needs {confirm} looks in a row" if confirm > 1 else "") + ")")
    climb, band = latest.train_climb, latest.train_noise_band
    if latest.condition is not None:
        return reason + (f"; the stop condition ({latest.condition}) holds at the latest "
                         f"{streak} evaluation{'s' if streak > 1 else ''} only: stop if it "
                         f"holds at {confirm - streak} more")
    if lo > 0:
        return reason + ": the held-out set is improving"
    if climb is not None and band is not None and climb <= band:
        return reason + f"; the training reward's climb {climb:+.3f} is inside its noise band {band:.3f}"
    gap = latest.climb_gap_bound
    if climb is not None and gap is not None and latest.delta_ci_method == "zero_spread_bound":
        alpha = float(look_tails(plan.bounds("start", latest.look))[-1])
        floor = hi - gap  # the climb's lower bound at the look's tail
        need = tasks_to_bound(floor - latest.delta, alpha)
        return reason + (f"; no held-out task moved, but at this look {latest.n_paired} tasks "
                         f"bound the change only to {hi:+.3f}, above the training reward's "
                         f"climb {climb:+.3f} less its noise ({floor:+.3f})"
                         + (f"; {need} unmoved tasks would bound it under that" if need else "")
                         + ": evaluate more held-out tasks")
    if climb is not None and gap is not None:
        return reason + (f"; the held-out change is {latest.delta - climb:+.3f} from the training "
                         f"reward's climb {climb:+.3f}, and with both noises it may be "
                         f"{gap:+.3f} or more: {latest.n_paired} held-out tasks cannot tell flat "
                         f"from following it (the held-out interval is {hi - lo:.3f} wide); "
                         "evaluate more held-out tasks to narrow it")
    return reason + "; the interval still reaches the training reward's climb"


def _plan_notes(plan: Plan, looks: int, latest: WatchStep | None) -> list[str]:
    notes = []
    if plan.looks is not None and looks > plan.looks:
        notes.append(f"{looks} looks, more than the {plan.looks} planned: the plan's error is "
                     f"spent, so looks past {plan.looks} cannot stop the run. Fix: pass "
                     f"{voice.arg('looks', op='watch_run')} with the number of evaluations the run makes")
    if latest is not None and latest.delta_ci_method == "zero_spread_bound":
        alpha = float(look_tails(plan.bounds("start", latest.look))[-1])
        notes.append(f"every one of the {latest.n_paired} paired tasks changed by exactly "
                     f"{latest.delta:+.3f} since the first evaluation (no spread, so no t "
                     "interval): the interval is the exact bound on the share of tasks that "
                     f"could have moved unseen, {zero_spread_share(latest.n_paired, alpha):.3f} "
                     f"(0 of {latest.n_paired} moved, Clopper-Pearson at the look's error "
                     f"{alpha:.2g}), times the largest change a task can make (1)")
    return notes


def _power(plan: Plan, rows: list[Rows], metric: str, looks: int) -> tuple[float | None, int]:
    """The sustained drop (in the metric's units, at the latest look's spread) caught with
    probability ``WATCH_POWER`` by the planned last look (open: by twice the looks so far, at
    least ``WATCH_OPEN_HALF``), and that look."""
    horizon = plan.looks or max(2 * looks, WATCH_OPEN_HALF)
    if len(rows) < 2:
        return None, horizon
    values, _ = _matrix([rows[0], rows[-1]], metric)
    d = values[0, 1] - values[0, 0]
    d = d[~np.isnan(d)]
    if d.size < 3 or float(np.std(d)) == 0.0:
        return None, horizon
    se = float(np.std(d, ddof=1)) / math.sqrt(d.size)
    drop = detectable_drop(plan, horizon) * se
    return (drop if math.isfinite(drop) else None), horizon


# --- the batch scans --------------------------------------------------------------------------

def _scans(steps: list[dict], seed: int | None, threshold: float | None, level: float,
           scan_every: int, notes: list[str]) -> dict[str, Any]:
    """Scan every ``scan_every``-th step's batch, scan j at look j of the scans' plan; the
    first suspect batch is the feature alarm."""
    batch_scan, scans, alarm_step, alarm = None, 0, None, []
    scanned = [x for x in steps if x.get("batch") and x["step"] % scan_every == 0]
    for j, x in enumerate(scanned, 1):
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
        notes.append(f"feature alarm: in the batch of step {alarm_step}, "
                     f"{_tracks(alarm)} within tasks, at its look's spent "
                     f"level (run-level false-alarm rate at most {SCAN_RUN_SHARE * (1 - level):.2g}); "
                     "a correlation is not yet a payment: read watch.scan and run "
                     f"{voice.name('cheat_probes')} (its filler probe: does filler alone pass?)")
    elif batch_scan is not None and batch_scan.verdict == "weak_signal":
        notes.append(f"the latest batch shows a weak signal ({', '.join(batch_scan.weak)}): "
                     "below the strength gate, watch the next scans")
    return dict(scan=batch_scan, scans=scans, feature_alarm_step=alarm_step,
                feature_alarm=alarm)


_NEXT = {
    "stop": "stop the run and keep the checkpoint before the held-out set stopped following; "
            "read the latest batch scan and run {probes} on the reward, then fix the reward (or "
            "the token cap, or the judge) before training again",
    "continue": "keep training; run {watch} again after the next held-out evaluation",
    "not_enough_data": "evaluate the frozen held-out set at step 0 and every few steps (the TRL "
                       "callback's `every`), then call {watch} again",
}


def watch_records(records: Any, *, metric: Literal["pass", "reward"] = "pass",
                  threshold: float | None = None, level: float = CONFIDENCE_LEVEL,
                  seed: int | None = BOOTSTRAP_SEED, window: int = WATCH_WINDOW,
                  confirm: int = WATCH_CONFIRM, scan: bool = True,
                  scan_every: int = WATCH_SCAN_EVERY, source: str = "<records>",
                  looks: int | None = None) -> Watch:
    """The decision on step records (a path to ``watch.jsonl`` or a list of dicts).

    A record: ``{"step": int, "train_reward": float, "train_reward_std", "n_completions",
    "mean_length", "truncated_share", "held_out": [graded rows], "batch": [graded rows with the
    reply text], "eval_every": int, "max_steps": int}``; all but ``step`` optional. Held-out rows
    are paired by ``task_id``.

    ``looks``: the held-out evaluations after the first the run will make (None: from the
    records' ``eval_every`` and ``max_steps``, else an open schedule). ``confirm``: looks in a
    row at which a stop condition must hold. ``scan``: scan the batch of every
    ``scan_every``-th step (each scan a look of the scans' plan: the feature alarm).
    """
    level, seed = check_level(level), check_seed(seed)
    check_metric(metric)
    _check_settings(window, confirm, scan_every, looks)
    steps = step_records(records)
    evals = [s for s in steps if s.get("held_out")]
    scheduled = looks if looks is not None else planned_looks(steps, evals)
    # a records' schedule past the cap a caller may ask for: the open plan holds at any count
    too_many = looks is None and scheduled is not None and scheduled > WATCH_LOOKS_MAX
    plan = Plan(1.0 - level, None if too_many else scheduled, confirm=confirm)
    rows = held_out_rows(evals, threshold)
    table, first = _looks(steps, evals, rows, plan, metric, window) \
        if len(evals) >= 2 else (None, -1)
    out_steps = _step_results(steps, evals, rows, table, plan, level, seed, metric)
    looked = [s for s in out_steps if s.look is not None]
    latest = looked[-1] if looked else None
    decision, reason = _decide(latest, table, steps, evals, metric, confirm, plan)
    notes = _notes(evals, rows, metric, plan, len(looked), latest)
    if too_many:
        notes.append(f"the records' schedule gives {scheduled:,} looks, more than the "
                     f"{WATCH_LOOKS_MAX:,} a planned schedule is computed for: watched with the "
                     "open schedule, valid at any number of looks")
    shown = out_steps[-WATCH_STEPS_SHOWN:]
    return Watch(
        decision=decision, reason=reason, source=source, metric=metric, n_steps=len(out_steps),
        steps_shown=f"{len(shown)} of {len(out_steps)}", steps=shown, n_evals=len(evals),
        first_stop_step=looked[first].step if first >= 0 else None,
        baseline_step=evals[0]["step"] if evals else None,
        latest_eval_step=evals[-1]["step"] if evals else None,
        **_latest(latest), confirm=confirm, level=level, false_alarm=1.0 - level,
        **_plan_fields(plan, rows, metric, len(looked)),
        **(_scans(steps, seed, threshold, level, scan_every, notes) if scan else {}),
        next_step=_NEXT[decision].format(probes=voice.name("cheat_probes"),
                                         watch=voice.name("watch_run")),
        notes=notes)


def _notes(evals: list[dict], rows: list[Rows], metric: str, plan: Plan, looks: int,
           latest: WatchStep | None) -> list[str]:
    """What the held-out rows were read as, a baseline after step 0, and the plan's notes."""
    notes = ([] if not evals or evals[0]["step"] == 0 else
             [f"no held-out evaluation at step 0: compared with step {evals[0]['step']}, the "
              "first one"]) + _plan_notes(plan, looks, latest)
    if rows:
        notes.insert(0, "held-out fields: " + "; ".join(fields_report(rows[0], {
            "task": "paired by task with the first evaluation",
            "reward": f"read as the {'mean reward' if metric == 'reward' else 'pass rate'}",
            "model": "one writer per evaluation"})))
    return notes


def _plan_fields(plan: Plan, rows: list[Rows], metric: str, looks: int) -> dict[str, Any]:
    """The plan's own fields of the Watch: its schedule, its spending and its power."""
    drop, horizon = _power(plan, rows, metric, looks)
    return dict(schedule=plan.schedule, planned_looks=plan.looks, spending=plan.describe(),
                detectable_drop=drop, detectable_by_look=horizon if drop is not None else None)


def _latest(latest: WatchStep | None) -> dict[str, Any]:
    """The latest look's numbers, as the Watch's own fields."""
    keys = {"held_out_delta": "delta", "held_out_ci": "delta_ci",
            "held_out_ci_method": "delta_ci_method", "n_paired": "n_paired",
            "train_climb": "train_climb", "train_noise_band": "train_noise_band"}
    return {k: None if latest is None else getattr(latest, v) for k, v in keys.items()}


@operation(
    cli="watch", toolset="core", effect=READS, title="Watch a training run",
    description=(
        "During training: per step the training reward, the held-out pass rate paired by task "
        "against step 0 and each earlier look, length, truncation, and hack scans. A "
        "sequential plan stops an honest run at some look with probability at most 1 - level "
        "and states the sustained drop it catches in 80% of runs; the scans' alarm holds "
        f"{SCAN_RUN_SHARE:g} of it. Says stop when the held-out score falls below step 0 or "
        "an earlier look, or stays flat while the training reward climbs past its noise; else "
        "continue or not_enough_data. plot: the curve."),
    exit_code=VERDICT, doing="watching a run",
    picture="whileai_core.pictures:watch_run_picture", serves=("watch_picture",))
def watch_run(
        source: Annotated[str, Field(min_length=1, max_length=1000, description=(
            "A run id from launch_run, or a path: a TRL output folder (its watch.jsonl, else "
            "trainer_state.json), a watch.jsonl, or rows carrying `step` (held-out ones "
            "\"split\": \"eval\")."), examples=["run-0123456789ab", "runs/grpo-1"]),
            Arg(RUN_OR_PATH, positional=True)], *,
        metric: Metric = "pass", threshold: Threshold = None,
        confirm: Annotated[int, Field(ge=1, le=20, description=(
            "Held-out evaluations in a row at which a stop condition must hold (the plan's "
            "boundaries are solved for it)."))
        ] = WATCH_CONFIRM,
        window: Annotated[int, Field(ge=2, le=1000, description=(
            "Steps averaged at each end of the training reward to measure its climb."))
        ] = WATCH_WINDOW,
        looks: Annotated[int | None, Field(ge=1, le=WATCH_LOOKS_MAX, description=(
            "Held-out evaluations after step 0 the run will make; null: from the run's config, "
            "else an open schedule.")), Arg(metavar="N")] = None,
        level: Level = CONFIDENCE_LEVEL, state_dir: StateDir = None,
        seed: Annotated[int | None, Arg(cli=False, mcp=False)] = BOOTSTRAP_SEED,
        scan: Annotated[bool, Arg(cli=False, mcp=False)] = True) -> Watch:
    """Watch a run (``source``: a run id, a path, or step records as a list; see
    :mod:`.watch_files`). See :func:`watch_records` for the decision."""
    recs, label = source_records(source, state_dir)
    return watch_records(recs, metric=metric, threshold=threshold, level=level, seed=seed,
                         window=window, confirm=confirm, scan=scan, source=label, looks=looks)
