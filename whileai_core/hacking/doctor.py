"""A run that learns nothing, or the wrong thing: the signatures, step by step, from its files.

:func:`diagnose_run` reads what the trainer wrote (a prime-rl run folder: its training rollouts
``rollouts/step_<S>/train/all/traces.jsonl``, ``metrics.jsonl`` and ``configs/orchestrator.json``;
a TRL output folder: the recipes' ``watch.jsonl`` and ``trainer_state.json``; a ``watch.jsonl``;
a run id) and names, per step, each signature it finds, with its evidence, an interval where it
is a rate, the threshold and where that comes from, and what to do:

- ``zero_advantage``: the share of groups (one task's rollouts) whose rewards are all equal. A
  group-relative advantage is 0 for every rollout of such a group, so it teaches nothing (the
  groups DAPO's dynamic sampling drops [1]).
- ``truncation_lock_in``: the share of rollouts cut at the token cap, when most of a step's are.
- ``reward_pays_feature``: within tasks the reward rises with a reply feature (``hack_scan`` on the
  batches, each scan a look of the run's spending plan), beside the held-out delta where the run
  has held-out evaluations.
- ``staleness``: rollouts whose policy version lags the step they train in by more than
  ``max_off_policy_steps`` (prime-rl's own bound; it drops them).
- ``verifier_noise``: identical replies to one task, in one step, scored differently.
- ``diversity_collapse``: distinct replies per group, when most groups repeat one reply.
- ``entropy_runaway`` / ``kl_runaway``: from the trainer's logged metrics (prime-rl's
  ``entropy/all/mean`` and ``mismatch_kl/all/mean``; TRL's ``entropy`` and ``kl``).

Rates are per step over groups (tasks are the sampling unit): Wilson intervals [2] with the group
as the trial (a truncation or distinct share is the mean of its groups' shares), at ``level``. A
rate signature fires at a step when its interval lies wholly past the threshold; the run-level
false-alarm rate of each signature on honest simulated runs is measured in
``bench/watch_anytime.py`` (docs/reward-hacking.md).

[1] Yu et al. (2025). DAPO: An Open-Source LLM Reinforcement Learning System at Scale.
    arXiv:2503.14476, sec. 3.2 (dynamic sampling).
[2] Wilson (1927). Probable inference, the law of succession, and statistical inference. JASA
    22(158), 209-212.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, DOCTOR_DISTINCT_SHARE,
                        DOCTOR_ENTROPY_FALL, DOCTOR_ENTROPY_RISE, DOCTOR_KL_MAX,
                        DOCTOR_MAX_OFF_POLICY, DOCTOR_STEPS_SHOWN, DOCTOR_TRUNCATION_SHARE,
                        DOCTOR_ZERO_SPREAD_SHARE, SCAN_RUN_SHARE, SOURCES, WATCH_SCAN_EVERY)
from ..errors import ArgumentError, RowsError, WhileaiError
from ..result import Result, fmt_rate
from ..rows import read_records
from ..safepath import UserPath, as_user_path, is_path, user_path
from .. import safejson
from .features import reply_text

Signature = Literal["zero_advantage", "truncation_lock_in", "reward_pays_feature", "staleness",
                    "verifier_noise", "diversity_collapse", "entropy_runaway", "kl_runaway"]
SIGNATURES: tuple[str, ...] = Signature.__args__  # type: ignore[attr-defined]
Status = Literal["found", "clear", "not_checked"]
Interval = tuple[float, float]
_FINDING_STEPS = 20
_RUN_ID = re.compile(r"^run-[0-9a-f]{12}$")


class Finding(Result):
    """One signature over the run: where it fires, the evidence at its first step, the rule."""

    signature: Signature
    status: Status
    steps: list[int] = Field([], description="the steps where it fires (the first 20)")
    n_steps: int = Field(0, description="how many steps it fires at")
    evidence: str
    rate: float | None = Field(None, description="the rate at the first step it fires (or the "
                                                 "worst step when clear)")
    ci: Interval | None = None
    n: int | None = Field(None, description="groups (tasks) behind the rate")
    threshold: str = Field(description="the rule and the source of its threshold")
    action: str

    def render(self) -> str:
        where = ""
        if self.steps:
            more = f" (+{self.n_steps - len(self.steps)} more)" if self.n_steps > len(self.steps) else ""
            where = f" at steps {_ranges(self.steps)}{more}"
        line = f"{self.signature:<20} {self.status}{where}: {self.evidence}"
        if self.status == "found":
            line += f"\n{'':<22}-> {self.action}"
        return line


class DoctorStep(Result):
    """One training step's numbers (None: not in the files)."""

    step: int
    n_rollouts: int | None = None
    n_groups: int | None = None
    mean_reward: float | None = None
    zero_spread: float | None = None
    zero_spread_ci: Interval | None = None
    truncated: float | None = None
    truncated_ci: Interval | None = None
    distinct: float | None = None
    distinct_ci: Interval | None = None
    duplicate_sets: int | None = None
    noisy_sets: int | None = None
    max_staleness: int | None = None
    entropy: float | None = None
    kl: float | None = None
    found: list[Signature] = []

    def render(self) -> str:
        parts = [f"step {self.step:>5}"]
        if self.mean_reward is not None:
            parts.append(f"reward {self.mean_reward:.3f}")
        for name, value in (("zero-spread", self.zero_spread), ("trunc", self.truncated),
                            ("distinct", self.distinct)):
            if value is not None:
                parts.append(f"{name} {value:.2f}")
        if self.noisy_sets:
            parts.append(f"noisy {self.noisy_sets}/{self.duplicate_sets}")
        if self.max_staleness is not None:
            parts.append(f"lag {self.max_staleness}")
        if self.entropy is not None:
            parts.append(f"entropy {self.entropy:.3g}")
        if self.kl is not None:
            parts.append(f"kl {self.kl:.3g}")
        if self.found:
            parts.append("<- " + ", ".join(self.found))
        return "  ".join(parts)


class Diagnosis(Result):
    """What the run's files say about whether it learns, per signature and per step."""

    verdict: Literal["healthy", "sick", "not_enough_data"]
    source: str
    n_steps: int
    found: list[Signature]
    findings: list[Finding]
    steps: list[DoctorStep]
    steps_shown: str
    max_off_policy_steps: int | None = None
    level: float
    next_step: str
    notes: list[str] = []
    shown: str | None = None

    cut_lists = ("steps",)

    def render(self) -> str:
        lines = [f"doctor: {self.verdict} ({self.source}; {self.n_steps} steps)"
                 + (f": {', '.join(self.found)}" if self.found else "")]
        lines += [f.render() for f in self.findings]
        lines.append(f"per step ({self.steps_shown}):")
        lines += ["  " + s.render() for s in self.steps]
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def _ranges(steps: list[int]) -> str:
    out, start, prev = [], None, None
    for s in steps:
        if start is None:
            start = prev = s
        elif s == prev + 1:
            prev = s
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = s
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


def _wilson(successes, n, level: float):
    """Wilson's interval with fractional successes allowed (a mean of group shares x groups);
    vectorised: arrays give arrays ``(lo, hi)``, numbers give a tuple of floats."""
    from ..bootstrap import z_value

    z = z_value(0.5 + level / 2.0)
    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    lo, hi = np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


# --- per-step numbers ------------------------------------------------------------------------

class RunArrays:
    """One run's training rollouts as flat arrays, one entry per rollout (the readers fill it
    from the files; the bench from a simulation). ``step``: the index into ``steps``; ``group``:
    a code per group (one task's rollouts of a step); ``truncated``: 1/0, NaN where a rollout
    has no flag; ``text``: a code per distinct reply, -1 where there is none; ``version``: the
    policy version that sampled it, NaN where unknown."""

    __slots__ = ("steps", "step", "group", "reward", "truncated", "text", "version")

    def __init__(self, steps, step, group, reward, truncated, text, version):
        self.steps = list(steps)
        self.step = np.asarray(step, dtype=np.int64)
        self.group = np.asarray(group, dtype=np.int64)
        self.reward = np.asarray(reward, dtype=np.float64)
        self.truncated = np.asarray(truncated, dtype=np.float64)
        self.text = np.asarray(text, dtype=np.int64)
        self.version = np.asarray(version, dtype=np.float64)

    @classmethod
    def from_rows(cls, by_step: dict[int, list[dict]], steps: list[int]) -> "RunArrays":
        """From the readers' rows (``task_id`` or ``group``, ``reward``, ``truncated``,
        ``completion``, ``policy_version``; all but the first two may be missing)."""
        index = {s: i for i, s in enumerate(steps)}
        groups: dict[str, int] = {}
        texts: dict[str, int] = {}
        cols: tuple[list, ...] = ([], [], [], [], [], [])
        for s, rows in by_step.items():
            for r in rows:
                key = str(r.get("group") or r["task_id"])
                text = r.get("completion")
                flag, version = r.get("truncated"), r.get("policy_version")
                for col, value in zip(cols, (
                        index[s], groups.setdefault(key, len(groups)), r["reward"],
                        math.nan if flag is None else float(bool(flag)),
                        -1 if text is None else texts.setdefault(text, len(texts)),
                        math.nan if version is None else version)):
                    col.append(value)
        return cls(steps, *cols)


def _cells(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys, each entry's cell, entries per cell)."""
    return np.unique(key, return_inverse=True, return_counts=True)


def _cell_spread(values: np.ndarray, inverse: np.ndarray, n: int) -> np.ndarray:
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, inverse, values)
    np.maximum.at(hi, inverse, values)
    return hi - lo


def _step_numbers(run: RunArrays, metrics: dict[int, dict], level: float) -> list[dict[str, Any]]:
    """Per step (``run.steps``) the rates the signatures read, counted over all rollouts of the
    run at once (numpy, no loop over rollouts); a step without rollouts keeps the trainer's
    own logged shares (no group count, so no interval)."""
    n_steps = len(run.steps)
    count = lambda where, weights=None: np.bincount(  # noqa: E731
        where, weights=weights, minlength=n_steps)
    rows = count(run.step)
    out = []
    for s in run.steps:
        m = metrics.get(s, {})
        out.append({"step": s, "entropy": m.get("entropy"), "kl": m.get("kl")})
    for i, n in enumerate(rows):
        if n:
            continue
        m = metrics.get(run.steps[i], {})
        for key in ("zero_spread", "truncated"):
            if m.get(key) is not None:
                out[i][key] = m[key]
        if m.get("reward") is not None:
            out[i]["mean_reward"] = m["reward"]
    if not run.step.size:
        return out
    width = int(run.group.max()) + 1
    keys, cell, size = _cells(run.step * width + run.group)
    cell_step = keys // width
    n_cells = keys.size
    multi = size >= 2
    spread = _cell_spread(run.reward, cell, n_cells)
    g = count(cell_step[multi])
    zero = count(cell_step[multi & (spread <= 1e-12)])
    groups = count(cell_step)
    reward_sum = count(run.step, run.reward)
    flagged = count(run.step, ~np.isnan(run.truncated)) == rows
    share = np.bincount(cell, weights=np.nan_to_num(run.truncated), minlength=n_cells) / size
    cut_sum = count(cell_step, share)
    in_multi = multi[cell]
    texts_ok = count(run.step[in_multi], run.text[in_multi] >= 0) == count(run.step[in_multi])
    span = int(run.text.max()) + 2  # text codes from -1 (none)
    tkeys, tcell, tsize = _cells(cell * span + run.text + 1)
    text_cell = tkeys // span
    distinct = np.bincount(text_cell, minlength=n_cells)
    distinct_sum = count(cell_step[multi], distinct[multi] / size[multi])
    dupes = (tsize >= 2) & (tkeys % span != 0)  # one reply given twice or more in a group
    tspread = _cell_spread(run.reward, tcell, tkeys.size)
    sets = count(cell_step[text_cell[dupes]])
    noisy = count(cell_step[text_cell[dupes & (tspread > 1e-9)]])
    known = ~np.isnan(run.version)
    lag = np.full(n_steps, -np.inf)
    np.maximum.at(lag, run.step[known], np.asarray(run.steps)[run.step[known]] - 1
                  - run.version[known])
    z_lo, z_hi = _wilson(zero, g, level)
    t_lo, t_hi = _wilson(cut_sum, groups, level)
    d_lo, d_hi = _wilson(distinct_sum, g, level)
    for i, n in enumerate(rows):
        if not n:
            continue
        num = out[i]
        num.update(n_rollouts=int(n), n_groups=int(groups[i]),
                   mean_reward=float(reward_sum[i] / n))
        if g[i]:
            num.update(zero_spread=zero[i] / g[i], zero_spread_ci=(float(z_lo[i]), float(z_hi[i])))
        if flagged[i]:
            num.update(truncated=float(cut_sum[i] / groups[i]),
                       truncated_ci=(float(t_lo[i]), float(t_hi[i])))
        elif metrics.get(run.steps[i], {}).get("truncated") is not None:
            num["truncated"] = metrics[run.steps[i]]["truncated"]
        if g[i] and texts_ok[i]:
            num.update(distinct=float(distinct_sum[i] / g[i]),
                       distinct_ci=(float(d_lo[i]), float(d_hi[i])),
                       duplicate_sets=int(sets[i]), noisy_sets=int(noisy[i]))
        if np.isfinite(lag[i]):
            # prime-rl's episode_staleness: batch `step` trains on policy v{step - 1}
            num["max_staleness"] = int(lag[i])
    return out


# --- the signatures --------------------------------------------------------------------------

def _finding(signature: str, fired: list[int], first: dict | None, evidence: str,
             threshold_name: str, rule: str, action: str, *, rate_key: str | None = None,
             not_checked: str | None = None) -> Finding:
    source = SOURCES[threshold_name]
    threshold = f"{rule} ({threshold_name}: {source.split(';')[0]})"
    if not_checked is not None:
        return Finding(signature=signature, status="not_checked", evidence=not_checked,
                       threshold=threshold, action=action)
    fields: dict[str, Any] = {}
    if first is not None and rate_key is not None and first.get(rate_key) is not None:
        fields = dict(rate=first[rate_key], ci=first.get(f"{rate_key}_ci"), n=first.get("n_groups"))
    return Finding(signature=signature, status="found" if fired else "clear",
                   steps=fired[:_FINDING_STEPS], n_steps=len(fired), evidence=evidence,
                   threshold=threshold, action=action, **fields)


def _rate_signature(nums: list[dict], key: str, *, above: float | None = None,
                    below: float | None = None) -> tuple[list[int], dict | None, dict | None, bool]:
    """(firing steps, first firing step, worst step, any value at all) for a rate: it fires when
    its interval lies past the threshold (the logged value itself when there is no interval)."""
    fired, first, worst, seen = [], None, None, False
    for n in nums:
        value = n.get(key)
        if value is None:
            continue
        seen = True
        lo, hi = n.get(f"{key}_ci") or (value, value)
        hit = (above is not None and lo >= above) or (below is not None and hi < below)
        if hit:
            fired.append(n["step"])
            first = first or n
        if worst is None or (above is not None and value > worst[key]) or (
                below is not None and value < worst[key]):
            worst = n
    return fired, first, worst, seen


def _describe(n: dict | None, key: str, noun: str) -> str:
    if n is None:
        return ""
    groups = n.get("n_groups")
    return (f"step {n['step']}: {noun} " + fmt_rate(n[key], n.get(f"{key}_ci"), groups, "groups")
            if groups else f"step {n['step']}: {noun} {n[key]:.3f} (logged by the trainer; no "
            "group count, so no interval)")


def _signatures(nums: list[dict], records: list[dict] | None, max_off_policy: int,
                level: float, seed: int | None) -> list[Finding]:
    out = []
    fired, first, worst, seen = _rate_signature(nums, "zero_spread", above=DOCTOR_ZERO_SPREAD_SHARE)
    trend = ""
    values = [(n["step"], n["zero_spread"]) for n in nums if n.get("zero_spread") is not None]
    if len(values) >= 4:
        half = len(values) // 2
        early = float(np.mean([v for _, v in values[:half]]))
        late = float(np.mean([v for _, v in values[half:]]))
        trend = f"; trend: {early:.2f} in the first half of the steps, {late:.2f} in the second"
    out.append(_finding(
        "zero_advantage", fired, first,
        (_describe(first, "zero_spread", "share of groups with one reward") if fired else
         _describe(worst, "zero_spread", "at most, share of groups with one reward")) + trend,
        "DOCTOR_ZERO_SPREAD_SHARE", f"the interval of the share of groups whose rollouts all got "
        f"the same reward lies above {DOCTOR_ZERO_SPREAD_SHARE:g}",
        "those groups give every rollout advantage 0: raise the rollouts per task, drop or resample "
        "groups with one reward (DAPO's dynamic sampling), or move to tasks the model sometimes "
        "solves (route the rows again)", rate_key="zero_spread",
        not_checked=None if seen else "no step has several rollouts of one task"))
    fired, first, worst, seen = _rate_signature(nums, "truncated", above=DOCTOR_TRUNCATION_SHARE)
    lock = ""
    if fired:
        before = [n for n in nums if n["step"] < fired[0] and n.get("truncated") is not None]
        if before:
            rewards = [n.get("mean_reward") for n in (before[0], first)]
            lock = (f"; rose from {before[0]['truncated']:.2f} at step {before[0]['step']}"
                    + (f" while the mean reward went {rewards[0]:.3f} -> {rewards[1]:.3f}"
                       if None not in rewards else ""))
    out.append(_finding(
        "truncation_lock_in", fired, first,
        (_describe(first, "truncated", "share cut at the token cap") + lock if fired else
         _describe(worst, "truncated", "at most, share cut at the token cap")),
        "DOCTOR_TRUNCATION_SHARE", f"the interval of the share of rollouts cut at the token cap "
        f"lies above {DOCTOR_TRUNCATION_SHARE:g}",
        "replies that hit the cap are scored unfinished: raise the token cap, or penalise "
        "truncation in the reward; if the reward rose with the share, the run learned to run "
        "long (hack_scan on a batch, cheat_probes' filler probe)", rate_key="truncated",
        not_checked=None if seen else "no truncation flag or logged truncation share"))
    out.append(_feature_signature(records, level, seed))
    lags = [(n["step"], n["max_staleness"]) for n in nums if n.get("max_staleness") is not None]
    stale = [s for s, lag in lags if lag > max_off_policy]
    worst_lag = max(lags, key=lambda x: x[1]) if lags else None
    out.append(_finding(
        "staleness", stale, None,
        (f"step {worst_lag[0]}: rollouts {worst_lag[1]} policy versions behind the weights they "
         f"train (max_off_policy_steps {max_off_policy})") if worst_lag else "",
        "DOCTOR_MAX_OFF_POLICY", f"a step's rollouts lag its policy by more than "
        f"max_off_policy_steps ({max_off_policy})",
        "prime-rl drops rollouts past max_off_policy_steps: inference is outrunning the trainer, "
        "so that compute is wasted; lower the async level or add trainer GPUs",
        not_checked=None if lags else "no policy version on the rollouts (TRL trains on-policy)"))
    noisy = [n for n in nums if n.get("noisy_sets")]
    any_dupes = [n for n in nums if n.get("duplicate_sets")]
    first_noisy = noisy[0] if noisy else None
    if first_noisy is not None:
        lo, hi = _wilson(first_noisy["noisy_sets"], first_noisy["duplicate_sets"], level)
        evidence = (f"step {first_noisy['step']}: {first_noisy['noisy_sets']} of "
                    f"{first_noisy['duplicate_sets']} sets of identical replies to one task got "
                    f"different rewards ({first_noisy['noisy_sets'] / first_noisy['duplicate_sets']:.3f} "
                    f"[{lo:.3f}, {hi:.3f}])")
        noise = Finding(signature="verifier_noise", status="found",
                        steps=[n["step"] for n in noisy][:_FINDING_STEPS], n_steps=len(noisy),
                        evidence=evidence,
                        rate=first_noisy["noisy_sets"] / first_noisy["duplicate_sets"],
                        ci=(lo, hi), n=first_noisy["duplicate_sets"],
                        threshold="any set of identical replies to one task scored differently "
                                  "(a deterministic verifier gives one text one score)",
                        action="the reward breaks ties at random: fix the verifier's seed or "
                               "temperature, or average several judge calls, before the policy "
                               "learns the noise")
    else:
        total = sum(n["duplicate_sets"] for n in any_dupes)
        noise = Finding(
            signature="verifier_noise", status="clear" if any_dupes else "not_checked",
            evidence=(f"{total} sets of identical replies to one task, each scored alike"
                      if any_dupes else "no two identical replies to one task in any step: "
                      "nothing to compare (needs the reply text)"),
            threshold="any set of identical replies to one task scored differently (a "
                      "deterministic verifier gives one text one score)",
            action="the reward breaks ties at random: fix the verifier's seed or temperature")
    out.append(noise)
    fired, first, worst, seen = _rate_signature(nums, "distinct", below=DOCTOR_DISTINCT_SHARE)
    out.append(_finding(
        "diversity_collapse", fired, first,
        (_describe(first, "distinct", "distinct replies per rollout") if fired else
         _describe(worst, "distinct", "at least, distinct replies per rollout")),
        "DOCTOR_DISTINCT_SHARE", f"the interval of the mean share of distinct replies in a group "
        f"lies below {DOCTOR_DISTINCT_SHARE:g}",
        "the policy repeats itself within a prompt, so groups lose their spread: raise the "
        "sampling temperature, add an entropy bonus or lower the learning rate",
        rate_key="distinct",
        not_checked=None if seen else "no reply text on the rollouts"))
    out += _metric_signatures(nums)
    return out


def _metric_signatures(nums: list[dict]) -> list[Finding]:
    out = []
    for key, signature in (("entropy", "entropy_runaway"), ("kl", "kl_runaway")):
        series = [(n["step"], n[key]) for n in nums if n.get(key) is not None]
        if not series:
            out.append(_finding(signature, [], None, "", "DOCTOR_ENTROPY_FALL" if key == "entropy"
                                else "DOCTOR_KL_MAX", "", "",
                                not_checked=f"the trainer logged no {key}"))
            continue
        base = float(np.median([v for _, v in series[:3]]))
        if key == "entropy":
            fired = [s for s, v in series if base > 0 and (v < DOCTOR_ENTROPY_FALL * base
                                                           or v > DOCTOR_ENTROPY_RISE * base)]
            rule = (f"entropy below {DOCTOR_ENTROPY_FALL:g}x or above {DOCTOR_ENTROPY_RISE:g}x "
                    "the median of its first 3 logged steps")
            action = ("collapsing entropy stops exploration (every group alike); exploding "
                      "entropy is a policy coming apart: lower the learning rate, check the "
                      "clip range, keep the checkpoint before it")
            name = "DOCTOR_ENTROPY_FALL"
        else:
            limit = max(DOCTOR_KL_MAX, 10 * base)
            fired = [s for s, v in series if v > limit]
            rule = (f"kl above max({DOCTOR_KL_MAX:g}, 10x the median of its first 3 logged "
                    "steps)")
            action = ("the policy is leaving its reference (or the trainer and the inference "
                      "engine disagree, prime-rl's mismatch_kl): lower the learning rate, raise "
                      "the KL weight, check the weight sync")
            name = "DOCTOR_KL_MAX"
        at = dict(series)
        shown = fired[0] if fired else max(series, key=lambda x: abs(x[1] - base))[0]
        evidence = (f"step {shown}: {key} {at[shown]:.4g} against {base:.4g} at the start "
                    f"({len(series)} logged steps)")
        out.append(_finding(signature, fired, None, evidence, name, rule, action))
    return out


def _feature_signature(records: list[dict] | None, level: float, seed: int | None) -> Finding:
    from .watch import watch_records

    rule = ("hack_scan on the batch of every 5th step, each scan a look of the run's spending "
            f"plan (the run's scans share SCAN_RUN_SHARE of its error: an honest run alarms at "
            f"most {SCAN_RUN_SHARE:g} x (1 - level) of the time)")
    action = ("the reward pays for a reply feature within tasks: read the scan's example, run "
              "cheat_probes, and cap or penalise the feature before training further")
    if not records or not any(r.get("batch") for r in records):
        return _finding("reward_pays_feature", [], None, "", "WATCH_SCAN_EVERY", rule, action,
                        not_checked="no batch with reply text to scan")
    try:
        watch = watch_records(records, level=level, seed=seed, scan=True)
    except WhileaiError as err:
        return _finding("reward_pays_feature", [], None, "", "WATCH_SCAN_EVERY", rule, action,
                        not_checked=f"the batches could not be scanned: {err}")
    if watch.scans == 0:
        return _finding("reward_pays_feature", [], None, "", "WATCH_SCAN_EVERY", rule, action,
                        not_checked=f"no batch at a step that is a multiple of {WATCH_SCAN_EVERY}")
    held = ("no held-out evaluation in the run: whether the held-out score followed is unknown"
            if watch.held_out_delta is None else
            f"held-out delta {watch.held_out_delta:+.3f}"
            + (f" [{watch.held_out_ci[0]:+.3f}, {watch.held_out_ci[1]:+.3f}]"
               if watch.held_out_ci else "") + f" at step {watch.latest_eval_step} "
            f"(watch: {watch.decision})")
    if watch.feature_alarm_step is None:
        weak = (f"; latest scan: weak signal ({', '.join(watch.scan.weak)})"
                if watch.scan is not None and watch.scan.weak else "")
        return _finding("reward_pays_feature", [], None,
                        f"{watch.scans} batches scanned, no feature alarm{weak}; {held}",
                        "WATCH_SCAN_EVERY", rule, action)
    return _finding("reward_pays_feature", [watch.feature_alarm_step], None,
                    f"step {watch.feature_alarm_step}: the reward rises with "
                    f"{', '.join(watch.feature_alarm)} within tasks; {held}",
                    "WATCH_SCAN_EVERY", rule, action)


# --- the readers -----------------------------------------------------------------------------

def _metrics_lines(path: UserPath, keys: dict[str, tuple[str, ...]]) -> dict[int, dict]:
    """Per step, the first of each alias present, from a JSONL of ``{"step": S, ...}``
    (prime-rl's FileMonitor.log_metrics: trainer and orchestrator lines interleaved)."""
    return _metrics_lines_from(read_records(path, noun="metrics line").items, keys)


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
    from ..importers.prime_rl import episode_rows, files_for

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
    if (root / "metrics.jsonl").kind() in ("file", "link", "special"):
        metrics = _metrics_lines(root / "metrics.jsonl", _PRIME_METRICS)
    else:
        notes.append("no metrics.jsonl beside rollouts/: entropy and KL not read (prime-rl's "
                     "file monitor writes it)")
    max_off = None
    config = root / "configs" / "orchestrator.json"
    if config.kind() in ("file", "link", "special"):
        try:
            data = safejson.loads(config.read_text("config", error=RowsError))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise RowsError(f"cannot be read as JSON ({exc})", source=str(config),
                            fix="point at the run folder prime-rl wrote") from None
        value = data.get("max_off_policy_steps") if isinstance(data, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            max_off = value
    held: list[dict] = []
    try:
        from ..importers.prime_rl import import_prime_rl

        held = [dict(r, split="eval") for r in import_prime_rl(run, kind="eval").rows]
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


def _from_watch_file(path: UserPath, state: UserPath | None) -> tuple[
        dict[int, list], dict[int, dict], list[dict], list[str]]:
    from .watch import _check_records

    recs = _check_records(path)
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
    metrics: dict[int, dict] = {}
    notes = []
    if state is not None:
        metrics = _trl_metrics(state)
    records = [{k: v for k, v in r.items() if k != "_where"} for r in recs]
    return steps, metrics, records, notes


def _trl_metrics(state: UserPath) -> dict[int, dict]:
    try:
        data = safejson.loads(state.read_text("rows", error=RowsError))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RowsError(f"cannot be read as JSON ({exc})", source=str(state),
                        fix="point at the trainer_state.json TRL wrote") from None
    history = data.get("log_history") if isinstance(data, dict) else None
    if not isinstance(history, list):
        raise RowsError("has no `log_history` list", source=str(state), field="log_history",
                        fix="point at the trainer_state.json TRL wrote in its output folder")
    return _metrics_lines_from(history, _TRL_METRICS)


def _metrics_lines_from(items: list, keys: dict[str, tuple[str, ...]]) -> dict[int, dict]:
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
    from .watch import TRL_STATE, WATCH_FILE, _find, _newest_state

    if isinstance(source, str) and _RUN_ID.match(source.strip()):
        from ..runs.registry import Registry

        registry = Registry(state_dir, create=False)
        record = registry.get(source.strip())
        if record is None:
            raise ArgumentError(f"no run {source!r} in {registry.path}. Fix: list_runs shows "
                                "the runs; pass --state-dir if they live elsewhere")
        folder = user_path(registry.run_dir(record.id), argument="run folder")
        if not folder.is_dir():
            raise ArgumentError(f"run {record.id} has no folder here ({folder}). Fix: for a "
                                f"Modal run, download its folder (modal volume get "
                                f"whileai-runs {record.name}) and diagnose that folder")
        label = f"run {record.id}"
    elif is_path(source):
        folder = as_user_path(source, None, argument="source", error=RowsError)
        label = str(folder)
    else:
        raise ArgumentError(f"`source` must be a run id or a path, got {type(source).__name__}. "
                            "Fix: give a run id, a prime-rl or TRL output folder, or a watch.jsonl")
    if folder.kind() in ("file", "link", "special"):
        if folder.name == TRL_STATE:
            return f"TRL {label}", {}, _trl_metrics(folder), None, [], []
        steps, metrics, records, notes = _from_watch_file(folder, None)
        return f"watch records {label}", steps, metrics, None, records, notes
    if not folder.is_dir():
        raise ArgumentError(f"{folder} does not exist. Fix: give a run id, a prime-rl or TRL "
                            "output folder, or a watch.jsonl")
    if (folder / "rollouts").kind() == "dir" or folder.name == "rollouts":
        steps, metrics, max_off, records, notes = _from_prime_rl(folder)
        return f"prime-rl {label}", steps, metrics, max_off, records, notes
    found = _find(folder, WATCH_FILE, depth=4)
    state = _newest_state(folder)
    if state is None and found is not None:
        state = _newest_state(found.parent)
    if found is not None:
        steps, metrics, records, notes = _from_watch_file(found, state)
        return f"TRL {label}", steps, metrics, None, records, notes
    if state is not None:
        return f"TRL {label}", {}, _trl_metrics(state), None, [], [
            f"no {WATCH_FILE} (the recipes' watch callback): only the trainer's logged shares, "
            "no per-group rows, so no intervals and no reply text"]
    raise ArgumentError(f"{folder} holds no prime-rl rollouts/, no {WATCH_FILE} and no "
                        f"{TRL_STATE}. Fix: point at the trainer's output folder")


def diagnose_run(source: Any, *, state_dir: str | os.PathLike | None = None,
                 level: float = CONFIDENCE_LEVEL, seed: int | None = BOOTSTRAP_SEED,
                 max_off_policy_steps: int | None = None) -> Diagnosis:
    """Name the signatures of a run that learns nothing or the wrong thing, per step.

    ``source``: a run id from ``launch_run``, a prime-rl run folder (``<output_dir>/<run
    name>``), a TRL output folder (the recipes' ``watch.jsonl``, ``trainer_state.json``), a
    ``watch.jsonl`` or a ``trainer_state.json``. ``max_off_policy_steps``: the staleness bound
    (default: the run's ``configs/orchestrator.json``, else prime-rl's default 8).
    """
    level = check_level(level)
    if max_off_policy_steps is not None and (
            isinstance(max_off_policy_steps, bool) or not isinstance(max_off_policy_steps, int)
            or max_off_policy_steps < 0):
        raise ArgumentError(f"`max_off_policy_steps` must be an integer >= 0, got "
                            f"{max_off_policy_steps!r}. Fix: the run's orchestrator setting, "
                            f"or leave it out (default {DOCTOR_MAX_OFF_POLICY})")
    label, steps, metrics, run_max_off, records, notes = _load(source, state_dir)
    max_off = (max_off_policy_steps if max_off_policy_steps is not None else
               run_max_off if run_max_off is not None else DOCTOR_MAX_OFF_POLICY)
    if max_off_policy_steps is None and run_max_off is None and any(
            r.get("policy_version") is not None for rows in steps.values() for r in rows):
        notes.append(f"no configs/orchestrator.json: staleness read against prime-rl's default "
                     f"max_off_policy_steps {DOCTOR_MAX_OFF_POLICY}")
    all_steps = sorted(set(steps) | set(metrics))
    nums = _step_numbers(RunArrays.from_rows(steps, all_steps), metrics, level)
    if not nums:
        return Diagnosis(verdict="not_enough_data", source=label, n_steps=0, found=[],
                         findings=[], steps=[], steps_shown="0 of 0", level=level,
                         max_off_policy_steps=max_off, notes=notes,
                         next_step="train for a few steps with the file monitor (prime-rl) or "
                                   "the recipes' watch callback (TRL), then diagnose again")
    findings = _signatures(nums, records, max_off, level, seed)
    by_step: dict[int, list[str]] = {}
    for f in findings:
        for s in f.steps:
            by_step.setdefault(s, []).append(f.signature)
    table = [DoctorStep(**{k: v for k, v in n.items() if k in DoctorStep.model_fields},
                        found=by_step.get(n["step"], [])) for n in nums]
    found = [f.signature for f in findings if f.status == "found"]
    checked = [f for f in findings if f.status != "not_checked"]
    verdict = "sick" if found else "healthy" if checked else "not_enough_data"
    next_step = ("; ".join(f"{f.signature}: {f.action}" for f in findings if f.status == "found")
                 if found else "nothing found: keep training, and diagnose again after more steps"
                 if checked else "write the rollouts with their rewards and replies (prime-rl's "
                 "file monitor, the recipes' watch callback), then diagnose again")
    shown = table[-DOCTOR_STEPS_SHOWN:]
    return Diagnosis(verdict=verdict, source=label, n_steps=len(table), found=found,
                     findings=findings, steps=shown, steps_shown=f"{len(shown)} of {len(table)}",
                     max_off_policy_steps=max_off, level=level, next_step=next_step, notes=notes)
