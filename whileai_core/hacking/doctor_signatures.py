"""The signatures of a run that learns nothing or the wrong thing, read from its per-step numbers
(``doctor_steps``), each with its evidence, the threshold and its source, and what to do:

- ``zero_advantage``: the share of groups (one task's rollouts) whose rewards are all equal: a
  group-relative advantage is 0 for all of them (the groups DAPO's dynamic sampling drops [1]).
- ``truncation_lock_in``: the share of rollouts cut at the token cap, when most of a step's are.
- ``reward_pays_feature``: within tasks the reward rises with a reply feature (``hack_scan`` on the
  batches), beside the held-out delta where the run has held-out evaluations.
- ``staleness``: rollouts whose policy version lags their step by more than
  ``max_off_policy_steps`` (prime-rl's own bound; it drops them).
- ``verifier_noise``: identical replies to one task, in one step, scored differently.
- ``diversity_collapse``: distinct replies per group, when most groups repeat one reply.
- ``entropy_runaway`` / ``kl_runaway``: from the trainer's logged metrics.

Each of the three sampled rates (zero advantage, truncation, distinct replies) gets
``DOCTOR_RATE_SHARE`` of the run's error ``1 - level`` and the scans the rest (``SCAN_RUN_SHARE``),
so an honest run is called sick by a sampled rate with probability at most ``1 - level``.

[1] Yu et al. (2025). DAPO: An Open-Source LLM Reinforcement Learning System at Scale.
    arXiv:2503.14476, sec. 3.2 (dynamic sampling).
[2] Waudby-Smith & Ramdas (2024). Estimating means of bounded random variables by betting.
    J. R. Stat. Soc. B 86(1), 1-27.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import voice
from ..defaults import (DOCTOR_DISTINCT_SHARE, DOCTOR_ENTROPY_FALL, DOCTOR_ENTROPY_RISE,
                        DOCTOR_KL_MAX, DOCTOR_RATE_SHARE, DOCTOR_TRUNCATION_SHARE,
                        DOCTOR_ZERO_SPREAD_SHARE,
                        SCAN_RUN_SHARE, WATCH_SCAN_EVERY, source)
from ..errors import WhileaiError
from ..result import fmt_rate
from .doctor_results import Finding
from .doctor_steps import _wilson
from .watch import watch_records

_FINDING_STEPS = 20
_PLAN = (f"each of the three rates gets DOCTOR_RATE_SHARE ({DOCTOR_RATE_SHARE:.3g}) of the run's "
         "error, split over every run of 1, 2, 4, ... consecutive steps")


def _finding(signature: str, fired: list[int], first: dict | None, evidence: str,
             threshold_name: str, rule: str, action: str, *, rate_key: str | None = None,
             not_checked: str | None = None) -> Finding:
    threshold = f"{rule} ({threshold_name}: {source(threshold_name).split(';')[0]})"
    if not_checked is not None:
        return Finding(signature=signature, status="not_checked", evidence=not_checked,
                       threshold=threshold, action=action)
    fields: dict[str, Any] = {}
    if first is not None and rate_key is not None and first.get(rate_key) is not None:
        fields = dict(rate=first[rate_key], ci=first.get(f"{rate_key}_ci"), n=first.get("n_groups"))
    return Finding(signature=signature, status="found" if fired else "clear",
                   steps=fired[:_FINDING_STEPS], n_steps=len(fired), evidence=evidence,
                   threshold=threshold, action=action, **fields)


def _rate_signature(nums: list[dict], key: str, alpha: float, *, above: float | None = None,
                    below: float | None = None) -> tuple[list[int], dict | None, dict | None, bool]:
    """(firing steps, the first firing run of steps, worst step, any value at all) for a rate.

    The plan over steps: every run of consecutive steps of 1, 2, 4, 8, ... steps is a test of
    the rate pooled over its groups, and ``alpha`` is split evenly over them all (a union
    bound), so an honest run fires with probability at most ``alpha`` however many steps it has.
    A share of groups (0/1 per group) is tested by Wilson's bound, groups as trials; a mean of
    group shares (truncation, distinct replies) by a bet against the threshold (:func:`_bets`).
    The steps named are those inside a firing run whose own rate is past the threshold; a step
    with only a logged share (no groups) fires on the share itself."""
    counted = [n for n in nums if n.get(f"{key}_n")]
    seen = any(n.get(key) is not None for n in nums)
    past = (lambda v: v > above) if above is not None else (lambda v: v < below)
    fired = {n["step"] for n in nums if n.get(key) is not None and not n.get(f"{key}_n")
             and past(n[key])}
    first = None
    if counted:
        k = np.cumsum([0.0] + [n[f"{key}_k"] for n in counted])
        m = np.cumsum([0] + [n[f"{key}_n"] for n in counted])
        widths = [w for w in 2 ** np.arange(12) if w <= len(counted)]
        tests = sum(len(counted) - w + 1 for w in widths)
        shares = f"{key}_values" in counted[0]
        values = (np.concatenate([n[f"{key}_values"] for n in counted]) if shares else None)
        line = above if above is not None else below
        for w in widths:
            ks, ms = k[w:] - k[:-w], m[w:] - m[:-w]
            if shares:
                hit = _bets(values, m[:-w], m[w:], line, alpha / tests, above is not None)
            else:
                lo, hi = _wilson(ks, ms, 1.0 - 2.0 * alpha / tests)
                hit = lo > above if above is not None else hi < below
            for i in np.flatnonzero(hit):
                inside = counted[i:i + w]
                fired |= {n["step"] for n in inside if past(n[key])}
                if first is None or (inside[0]["step"], w) < (first["step"], first["width"]):
                    ci = (_bet_interval(values[m[i]:m[i + w]], alpha / tests) if shares else
                          (float(lo[i]), float(hi[i])))
                    first = {"step": inside[0]["step"], "last": inside[-1]["step"], "width": w,
                             key: float(ks[i] / ms[i]), f"{key}_ci": ci,
                             "n_groups": int(ms[i])}
    values = [n for n in nums if n.get(key) is not None]
    worst = (max if above is not None else min)(values, key=lambda n: n[key]) if values else None
    if first is None and fired:
        first = next(n for n in nums if n["step"] in fired)
    return sorted(fired), first, worst, seen


_BET_CAP = 0.9  # the largest bet, as a share of what the line leaves (c in [2], sec. 5)


def _log_capital(x: np.ndarray, real: np.ndarray, line) -> np.ndarray:
    """The log capital, at the end of each row of ``x`` (rows x groups in order; ``real``: the
    entries that are groups), of a bettor against "every group's mean is at most ``line``":
    on group j it stakes ``lambda_j (x_j - line)`` of its capital, ``lambda_j`` from the groups
    before j in the row (the running mean and variance, with one pseudo-group at the line, so
    the first stake is 0), ``lambda = (mean - line) / (variance + (mean - line)^2)`` (the stake
    that grows the capital fastest to second order), held in [0, _BET_CAP / line]. ``line``: a
    number, or one per column of a grid (x then (1, groups))."""
    x = np.where(real, x, 0.0)
    n = np.cumsum(real, axis=-1) - real
    s = np.cumsum(x, axis=-1) - x
    q = np.cumsum(x * x, axis=-1) - x * x
    line = np.asarray(line, dtype=np.float64)
    line = line[:, None] if line.ndim else line
    mean = (line + s) / (1.0 + n)
    var = (0.25 + q - s * s / np.maximum(n, 1)) / (1.0 + n)
    gap = mean - line
    stake = np.clip(gap / (var + gap * gap), 0.0, _BET_CAP / line)
    return np.where(real, np.log1p(stake * (x - line)), 0.0).sum(axis=-1)


def _bets(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, line: float, alpha: float,
          above: bool) -> np.ndarray:
    """Whether each run of groups ``values[starts[i]:ends[i]]`` (shares in [0, 1]) shows its
    mean past ``line`` at one-sided ``alpha``: a bettor against the line (:func:`_log_capital`;
    for ``below``, against ``1 - line`` on ``1 - values``) reaches ``1 / alpha`` times its
    stake. Under the null (each group's expected share on the other side of the line, given the
    groups before it) the capital is a nonnegative supermartingale that starts at 1, so it
    reaches ``1 / alpha`` with probability at most ``alpha`` (Ville's inequality), whatever the
    shares' distribution in [0, 1] [2]; Student's t's tail is wrong at a union bound's small
    ``alpha`` for shares piled at 0 and 1."""
    x, line = (values, line) if above else (1.0 - values, 1.0 - line)
    length = ends - starts
    out = np.zeros(starts.size, dtype=bool)
    cells = max(1, 2_000_000 // max(1, int(length.max(initial=1))))
    for a in range(0, starts.size, cells):  # a chunk of runs at a time: bounded memory
        s, n = starts[a:a + cells], length[a:a + cells]
        pos = np.arange(int(n.max(initial=0)))
        real = pos[None, :] < n[:, None]
        grid = x[np.minimum(s[:, None] + pos[None, :], max(x.size - 1, 0))]
        out[a:a + cells] = _log_capital(grid, real, line) >= -math.log(alpha)
    return out


def _bet_interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    """The lines no bet of :func:`_bets` rejects at ``alpha`` on one run of groups, read on a
    grid of 2,000: (the lowest line "at most" is not rejected at, the highest "at least" is
    not), each one grid step outward."""
    grid = (np.arange(2000) + 0.5) / 2000
    real = np.ones((1, values.size), dtype=bool)
    need = -math.log(alpha)
    low = _log_capital(values[None, :], real, grid) >= need        # "mean <= m" rejected
    high = _log_capital(1.0 - values[None, :], real, 1.0 - grid) >= need  # "mean >= m" too
    lo = grid[np.argmin(low)] - 0.0005 if not low.all() else 1.0
    hi = grid[len(grid) - 1 - np.argmin(high[::-1])] + 0.0005 if not high.all() else 0.0
    return float(max(lo, 0.0)), float(min(hi, 1.0))


def _describe(n: dict | None, key: str, noun: str) -> str:
    if n is None:
        return ""
    groups = n.get("n_groups")
    where = (f"steps {n['step']}-{n['last']}" if n.get("width", 1) > 1 else f"step {n['step']}")
    if not groups and "width" not in n:
        return (f"{where}: {noun} {n[key]:.3f} (logged by the trainer; no group count, so no "
                "interval)")
    return (f"{where}: {noun} " + fmt_rate(n[key], n.get(f"{key}_ci"), groups, "groups")
            + (" at the plan's level for this run of steps" if "width" in n else ""))


def _signatures(nums: list[dict], records: list[dict] | None, max_off_policy: int,
                level: float, seed: int | None) -> list[Finding]:
    share = DOCTOR_RATE_SHARE * (1.0 - level)
    return [_zero_advantage(nums, share), _truncation_lock_in(nums, share),
            _feature_signature(records, level, seed), _staleness(nums, max_off_policy),
            _verifier_noise(nums, level), _diversity_collapse(nums, share),
            *_metric_signatures(nums)]


def _zero_advantage(nums: list[dict], share: float) -> Finding:
    fired, first, worst, seen = _rate_signature(nums, "zero_spread", share,
                                                above=DOCTOR_ZERO_SPREAD_SHARE)
    trend = ""
    values = [n["zero_spread"] for n in nums if n.get("zero_spread") is not None]
    if len(values) >= 4:
        half = len(values) // 2
        early, late = float(np.mean(values[:half])), float(np.mean(values[half:]))
        trend = f"; trend: {early:.2f} in the first half of the steps, {late:.2f} in the second"
    return _finding(
        "zero_advantage", fired, first,
        (_describe(first, "zero_spread", "share of groups with one reward") if fired else
         _describe(worst, "zero_spread", "at most, share of groups with one reward")) + trend,
        "DOCTOR_ZERO_SPREAD_SHARE", f"the interval of the share of groups whose rollouts all got "
        f"the same reward, pooled over a run of steps, lies above {DOCTOR_ZERO_SPREAD_SHARE:g} "
        f"({_PLAN})",
        "those groups give every rollout advantage 0: raise the rollouts per task, drop or resample "
        "groups with one reward (DAPO's dynamic sampling), or move to tasks the model sometimes "
        "solves (route the rows again)", rate_key="zero_spread",
        not_checked=None if seen else "no step has several rollouts of one task")


def _truncation_lock_in(nums: list[dict], share: float) -> Finding:
    fired, first, worst, seen = _rate_signature(nums, "truncated", share,
                                                above=DOCTOR_TRUNCATION_SHARE)
    lock = ""
    if fired:
        before = [n for n in nums if n["step"] < fired[0] and n.get("truncated") is not None]
        if before:
            rewards = [n.get("mean_reward") for n in (before[0], first)]
            lock = (f"; rose from {before[0]['truncated']:.2f} at step {before[0]['step']}"
                    + (f" while the mean reward went {rewards[0]:.3f} -> {rewards[1]:.3f}"
                       if None not in rewards else ""))
    return _finding(
        "truncation_lock_in", fired, first,
        (_describe(first, "truncated", "share cut at the token cap") + lock if fired else
         _describe(worst, "truncated", "at most, share cut at the token cap")),
        "DOCTOR_TRUNCATION_SHARE", f"the interval of the share of rollouts cut at the token cap, "
        f"pooled over a run of steps, lies above {DOCTOR_TRUNCATION_SHARE:g} ({_PLAN})",
        "replies that hit the cap are scored unfinished: raise the token cap, or penalise "
        "truncation in the reward; if the reward rose with the share, the run learned to run "
        f"long ({voice.name('hack_scan')} on a batch, {voice.name('cheat_probes')}' filler "
        "probe)", rate_key="truncated",
        not_checked=None if seen else "no truncation flag or logged truncation share")


def _staleness(nums: list[dict], max_off_policy: int) -> Finding:
    lags = [(n["step"], n["max_staleness"]) for n in nums if n.get("max_staleness") is not None]
    stale = [s for s, lag in lags if lag > max_off_policy]
    worst_lag = max(lags, key=lambda x: x[1]) if lags else None
    return _finding(
        "staleness", stale, None,
        (f"step {worst_lag[0]}: rollouts {worst_lag[1]} policy versions behind the weights they "
         f"train (max_off_policy_steps {max_off_policy})") if worst_lag else "",
        "DOCTOR_MAX_OFF_POLICY", f"a step's rollouts lag its policy by more than "
        f"max_off_policy_steps ({max_off_policy})",
        "prime-rl drops rollouts past max_off_policy_steps: inference is outrunning the trainer, "
        "so that compute is wasted; lower the async level or add trainer GPUs",
        not_checked=None if lags else "no policy version on the rollouts (TRL trains on-policy)")


_NOISE_RULE = ("any set of identical replies to one task scored differently (a deterministic "
               "verifier gives one text one score)")


def _verifier_noise(nums: list[dict], level: float) -> Finding:
    noisy = [n for n in nums if n.get("noisy_sets")]
    if not noisy:
        dupes = [n for n in nums if n.get("duplicate_sets")]
        total = sum(n["duplicate_sets"] for n in dupes)
        return Finding(
            signature="verifier_noise", status="clear" if dupes else "not_checked",
            evidence=(f"{total} sets of identical replies to one task, each scored alike"
                      if dupes else "no two identical replies to one task in any step: "
                      "nothing to compare (needs the reply text)"),
            threshold=_NOISE_RULE,
            action="the reward breaks ties at random: fix the verifier's seed or temperature")
    first = noisy[0]
    k, n = first["noisy_sets"], first["duplicate_sets"]
    lo, hi = _wilson(k, n, level)
    return Finding(signature="verifier_noise", status="found",
                   steps=[x["step"] for x in noisy][:_FINDING_STEPS], n_steps=len(noisy),
                   evidence=(f"step {first['step']}: {k} of {n} sets of identical replies to one "
                             f"task got different rewards ({k / n:.3f} [{lo:.3f}, {hi:.3f}])"),
                   rate=k / n, ci=(lo, hi), n=n, threshold=_NOISE_RULE,
                   action="the reward breaks ties at random: fix the verifier's seed or "
                          "temperature, or average several judge calls, before the policy "
                          "learns the noise")


def _diversity_collapse(nums: list[dict], share: float) -> Finding:
    fired, first, worst, seen = _rate_signature(nums, "distinct", share,
                                                below=DOCTOR_DISTINCT_SHARE)
    return _finding(
        "diversity_collapse", fired, first,
        (_describe(first, "distinct", "distinct replies per rollout") if fired else
         _describe(worst, "distinct", "at least, distinct replies per rollout")),
        "DOCTOR_DISTINCT_SHARE", f"the interval of the mean share of distinct replies in a group, "
        f"pooled over a run of steps, lies below {DOCTOR_DISTINCT_SHARE:g} ({_PLAN})",
        "the policy repeats itself within a prompt, so groups lose their spread: raise the "
        "sampling temperature, add an entropy bonus or lower the learning rate",
        rate_key="distinct",
        not_checked=None if seen else "no reply text on the rollouts")


def _metric_signatures(nums: list[dict]) -> list[Finding]:
    out = []
    for key, signature, name in (("entropy", "entropy_runaway", "DOCTOR_ENTROPY_FALL"),
                                 ("kl", "kl_runaway", "DOCTOR_KL_MAX")):
        series = [(n["step"], n[key]) for n in nums if n.get(key) is not None]
        if not series:
            out.append(_finding(signature, [], None, "", name, "", "",
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
        else:
            limit = max(DOCTOR_KL_MAX, 10 * base)
            fired = [s for s, v in series if v > limit]
            rule = (f"kl above max({DOCTOR_KL_MAX:g}, 10x the median of its first 3 logged "
                    "steps)")
            action = ("the policy is leaving its reference (or the trainer and the inference "
                      "engine disagree, prime-rl's mismatch_kl): lower the learning rate, raise "
                      "the KL weight, check the weight sync")
        at = dict(series)
        shown = fired[0] if fired else max(series, key=lambda x: abs(x[1] - base))[0]
        evidence = (f"step {shown}: {key} {at[shown]:.4g} against {base:.4g} at the start "
                    f"({len(series)} logged steps)")
        out.append(_finding(signature, fired, None, evidence, name, rule, action))
    return out


def _feature_signature(records: list[dict] | None, level: float, seed: int | None) -> Finding:
    rule = ("hack_scan on the batch of every 5th step, each scan a look of the run's spending "
            f"plan (the run's scans share SCAN_RUN_SHARE of its error: an honest run alarms at "
            f"most {SCAN_RUN_SHARE:g} x (1 - level) of the time)")
    action = ("a reply feature tracks the reward within tasks (a correlation): read the scan's "
              "example, run cheat_probes (its filler probe) or prove_reward to see whether the "
              "reward pays for it, and if so cap or penalise the feature before training further")

    def finding(fired: list[int], evidence: str, not_checked: str | None = None) -> Finding:
        return _finding("reward_pays_feature", fired, None, evidence, "WATCH_SCAN_EVERY", rule,
                        action, not_checked=not_checked)

    if not records or not any(r.get("batch") for r in records):
        return finding([], "", "no batch with reply text to scan")
    try:
        watch = watch_records(records, level=level, seed=seed, scan=True)
    except WhileaiError as err:
        return finding([], "", f"the batches could not be scanned: {err}")
    if watch.scans == 0:
        return finding([], "", f"no batch at a step that is a multiple of {WATCH_SCAN_EVERY}")
    held = ("no held-out evaluation in the run: whether the held-out score followed is unknown"
            if watch.held_out_delta is None else
            f"held-out delta {watch.held_out_delta:+.3f}"
            + (f" [{watch.held_out_ci[0]:+.3f}, {watch.held_out_ci[1]:+.3f}]"
               if watch.held_out_ci else "") + f" at step {watch.latest_eval_step} "
            f"(watch: {watch.decision})")
    if watch.feature_alarm_step is None:
        weak = (f"; latest scan: weak signal ({', '.join(watch.scan.weak)})"
                if watch.scan is not None and watch.scan.weak else "")
        return finding([], f"{watch.scans} batches scanned, no feature alarm{weak}; {held}")
    return finding([watch.feature_alarm_step],
                   f"step {watch.feature_alarm_step}: the reward rises with "
                   f"{', '.join(watch.feature_alarm)} within tasks (a correlation, not yet a "
                   f"payment); {held}")
