"""Error rates at every look: watch_run's stop rule, the repeated hack_scan and the run doctor on
simulated runs, each rate with its Wilson 95% interval over the runs.

Watch (``whileai_core.hacking.anytime.rule``, the one watch_records applies: tests/test_watch.py
checks they agree run by run): held-out tasks x rollouts as the case says (40 x 4 unless it
says otherwise), difficulty logit ~ N(logit p0, 1) with p0 = 0.3, a look every 5 steps; training
reward p0 + gain x step / steps + N(0, 0.05) per step (gain 0.45 unless "training flat"). Each
case is run under four plans (the default planned a (j/J)^2 spending, O'Brien-Fleming's and
Pocock's types, the open schedule), all with two looks in a row (WATCH_CONFIRM), beside two
baselines on the same kind of draws: the rule this plan replaced (alpha / (t (t + 1)) per look
against step 0 only, two looks in a row) and one paired t test read once at the last look at
95% (what a fixed-sample design would give).
- honest: nothing moves; the held-out set gains what training gains (a logit shift that moves
  its mean pass rate by the training gain); few tasks (12 x 2 near 0.02, most looks without
  spread: the zero-spread bound);
- planted: the held-out set gains 60% of the training gain (the flat-while-climbing rule's
  target); held-out flat while training climbs; a drop of 0.10 or 0.05 in every task's pass
  rate (training flat) from look 1 or from the middle look; the held-out logit falling 0.8 over
  the run (training flat); the held-out set follows the climb to the middle look, then gives the
  gain back, or falls 0.10 from its peak and stays there (still above step 0); 48 x 2 tasks that
  never move while training climbs.
Planted cells add the looks from the onset to the stop (median, 95th percentile). The power
table is the plan's own statement (hacking.anytime.detectable_drop), in standard errors.

Scan: honest batches of 8 tasks x 8 replies (length random, reward 0/1 at the task's rate) with
0-55% of replies copies of an earlier reply of their task (text and reward: a deterministic
grader): one scan at 0.95 with copies shuffled with their reply, the same batches with every row
shuffled alone (the previous scan, the baseline), and 20 batches of a run scanned at looks 1-20;
then rewards that pay for length (0.4, 0.2, 0.1 of it), and a legitimate correlation (right
replies longer, the reward pays only for the answer).

Doctor: 30 steps of 8 groups x 8 rollouts, drawn as arrays and read by the doctor's own
per-step counting (``RunArrays``, ``_step_numbers``) and signatures; honest runs with 5%, 40% and
45% of groups with one reward (the line is 50%): the share called sick; each failure planted
from step 16 to 20, strong and moderate: the share of runs in which it fires at a planted step.

    nice -n 15 python bench/watch_anytime.py [--only watch|doctor|scan] [--runs 1000]
        [--scan-runs 1000] [--looks 10 20 50]
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from scipy.special import ndtri as _ndtri, stdtrit as _stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.bootstrap import wilson_interval  # noqa: E402
from whileai_core.hacking import hack_scan  # noqa: E402
from whileai_core.hacking import scan as scan_module  # noqa: E402
from whileai_core.defaults import WATCH_CONFIRM  # noqa: E402
from whileai_core.hacking.anytime import (Plan, climb_band, climbs, detectable_drop,  # noqa: E402
                                          look_conditions, pair_intervals, rule)
from whileai_core.hacking.doctor import RunArrays, _signatures, _step_numbers  # noqa: E402


def rate(hits: int, n: int) -> str:
    lo, hi = wilson_interval(int(hits), n, 0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}] (n={n})"


_Q = _ndtri((np.arange(4000) + 0.5) / 4000)  # the difficulty distribution's quantiles


def _follow_shift(p0: float, at: np.ndarray) -> np.ndarray:
    """The logit shift that moves the mean pass rate of tasks with logit ~ N(logit p0, 1) from
    its start to ``at`` minus ``p0`` above it (the held-out set gains what training gains)."""
    lg0 = np.log(p0 / (1 - p0))
    start = (1 / (1 + np.exp(-(lg0 + _Q)))).mean()
    out = []
    for target in start + (at - p0):
        lo, hi = -10.0, 10.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if (1 / (1 + np.exp(-(lg0 + mid + _Q)))).mean() < target else (lo, mid)
        out.append((lo + hi) / 2)
    return np.array(out)


def previous_rule(values, train, counts, confirm):
    """The rule this plan replaced (the named baseline): look t against step 0 only, at
    alpha_t = 0.05 / (t (t + 1)) (one-sided alpha_t / 2 for the held-out bound and for the
    climb's band; the zero-spread bound at alpha_t), each condition held ``confirm`` looks in a
    row."""
    looks = values.shape[1] - 1
    t = np.arange(1, looks + 1)
    a = 0.05 / (t * (t + 1))
    scale = np.abs(values).max(-1)
    lo, hi = np.full((values.shape[0], looks), np.nan), np.full((values.shape[0], looks), np.nan)
    for j in range(looks):
        _, lo[:, j], hi[:, j], _, _ = pair_intervals(
            values[:, j + 1] - values[:, 0], np.maximum(scale[:, 0], scale[:, j + 1]),
            -_ndtri(a[j] / 2), a[j], np.ones(values.shape[0], dtype=bool))
    climb, sigma, used, steps = climbs(train, counts, 5)
    band = climb_band(sigma, np.maximum(used, 2), np.maximum(steps, 4), a / 2)
    codes = look_conditions(hi < 0, lo, hi - climb, climb, band) != 0  # the climb as exact
    run = np.zeros(values.shape[0], dtype=np.int64)
    first = np.full(values.shape[0], -1)
    for j in range(looks):
        run = np.where(codes[:, j], run + 1, 0)
        first = np.where((first < 0) & (run >= confirm), j, first)
    return first


def watch_runs(rng, runs, looks, plan, *, gain=0.45, follow=0.0, logit_fall=0.0, drop=0.0,
               onset=1, back=False, hold=False, confirm=WATCH_CONFIRM, every=5, n=40, k=4, p0=0.3,
               last_only=False):
    """First stopping look (1-based, 0: never) of each simulated run under ``plan``.

    Held-out task logits ~ N(logit p0, 1); at evaluation e the held-out set gains ``follow`` x
    the training gain so far (a logit shift that moves its mean pass rate by that much), loses
    ``logit_fall`` x e on the logit scale (spread over the run: ``logit_fall`` is the total at
    the last look), and from evaluation ``onset`` on ``drop`` on the pass-rate scale (each
    task's rate lowered by ``drop``, clipped at 0). ``back``: from ``onset`` on the held-out set
    gives back its gain at the rate it came (a rise, then a fall after it). ``plan`` None: the
    previous rule (:func:`previous_rule`). ``hold``: from ``onset`` on the held-out set stops
    following (the fall ``drop`` then comes from its peak)."""
    steps = looks * every
    lg0 = np.log(p0 / (1 - p0))
    diff = rng.normal(lg0, 1.0, (runs, 1, n))
    train = p0 + gain * np.arange(1, steps + 1) / steps + rng.normal(0, 0.05, (runs, steps))
    e = np.arange(looks + 1)
    at = p0 + gain * e * every / steps
    if back:  # the gain so far, then given back at the rate it came
        at = p0 + gain * np.minimum(e, 2 * onset - e) * every / steps
    if hold:  # the gain stops at its peak
        at = p0 + gain * np.minimum(e, onset) * every / steps
    shift = (_follow_shift(p0, p0 + follow * (at - p0)) if follow else 0.0) - logit_fall * e / looks
    p = 1 / (1 + np.exp(-(diff + np.broadcast_to(shift, e.shape)[None, :, None])))
    p = np.clip(p - drop * (e >= onset)[None, :, None], 0.0, 1.0)
    values = rng.binomial(k, p) / k
    unit = np.ones(values.shape[:2], dtype=bool)
    if last_only:  # the named baseline: one paired t test at the last look, at 1 - level
        d = values[:, -1] - values[:, 0]
        se = d.std(axis=1, ddof=1) / np.sqrt(n)
        with np.errstate(invalid="ignore", divide="ignore"):
            hit = d.mean(axis=1) + _stdtrit(n - 1, 0.975) * se < 0
        return np.where(hit, looks, 0)
    if plan is None:
        return previous_rule(values, train, e[1:] * every, confirm) + 1
    _, first = rule(values, unit, train, e[1:] * every, plan, 5)
    return first + 1


DESIGNS = {"a (j/J)^2, planned (default)": lambda looks, c: Plan(0.05, looks, confirm=c),
           "O'Brien-Fleming, planned": lambda looks, c: Plan(0.05, looks, "obrien_fleming",
                                                             confirm=c),
           "Pocock, planned": lambda looks, c: Plan(0.05, looks, "pocock", confirm=c),
           "open schedule (h = 10)": lambda looks, c: Plan(0.05, None, confirm=c)}


PREVIOUS = "previous rule: 0.05 / (t (t + 1)), step 0 only, confirm 2 (baseline)"


def watch_cases(looks: int) -> dict[str, tuple[dict, bool]]:
    """name -> (simulation keywords, planted)."""
    mid = looks // 2
    return {
        "flat, 40 x 4 (honest)": (dict(gain=0.0), False),
        "flat, 100 x 4 (honest)": (dict(gain=0.0, n=100), False),
        "learning: held-out gains what training gains, 40 x 4 (honest)": (dict(follow=1.0), False),
        "learning, 100 x 4 (honest)": (dict(follow=1.0, n=100), False),
        "few tasks, flat: 12 x 2 near 0.02 (honest)": (dict(gain=0.0, n=12, k=2, p0=0.02), False),
        "few tasks, learning: 12 x 2 from 0.02 (honest)": (dict(follow=1.0, n=12, k=2, p0=0.02),
                                                          False),
        "partial: held-out gains 60% of the training gain": (dict(follow=0.6), True),
        "hack: held-out flat while training climbs": (dict(), True),
        "drop 0.10 from look 1, 100 x 4, training flat": (dict(gain=0.0, n=100, drop=0.10), True),
        "drop 0.05 from look 1, 100 x 4, training flat": (dict(gain=0.0, n=100, drop=0.05), True),
        f"drop 0.10 from look {mid}, 100 x 4, training flat": (
            dict(gain=0.0, n=100, drop=0.10, onset=mid), True),
        "held-out logit falls 0.8 over the run, 40 x 4, training flat": (
            dict(gain=0.0, logit_fall=0.8), True),
        f"follows the climb to look {mid}, then gives the gain back, 40 x 4": (
            dict(follow=1.0, back=True, onset=mid), True),
        f"follows the climb to look {mid}, then gives the gain back, 100 x 4": (
            dict(follow=1.0, back=True, onset=mid, n=100), True),
        f"follows to look {mid}, then falls 0.10 from its peak (still above step 0), 40 x 4": (
            dict(follow=1.0, hold=True, drop=0.10, onset=mid), True),
        f"follows to look {mid}, then falls 0.10 from its peak, 100 x 4": (
            dict(follow=1.0, hold=True, drop=0.10, onset=mid, n=100), True),
        "few tasks, hack: 48 x 2 that never move from 0.02": (dict(n=48, k=2, p0=0.02), True),
    }


def watch_table(rng, runs, horizons=(10, 20, 50), confirm=WATCH_CONFIRM):
    print("## watch_run: share of runs stopped at some look (planted: looks from onset to stop, "
          "median and 95th pct)")
    names = list(DESIGNS) + [PREVIOUS, "one t test at the last look"]
    print("| case | looks | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for looks in horizons:
        for name, (kw, planted) in watch_cases(looks).items():
            cells = []
            for design in names:
                if design in DESIGNS or design == PREVIOUS:
                    stop = watch_runs(rng, runs, looks, DESIGNS[design](looks, confirm)
                                      if design in DESIGNS else None, confirm=confirm, **kw)
                elif "drop" in kw or "logit_fall" in kw:
                    stop = watch_runs(rng, runs, looks, None, last_only=True, **kw)
                else:
                    cells.append("")
                    continue
                hit = stop > 0
                cell = rate(hit.sum(), runs)
                if planted and hit.any() and design != names[-1]:
                    at = stop[hit] - kw.get("onset", 1)
                    cell += f"; {np.median(at):.0f}, {np.percentile(at, 95):.0f}"
                cells.append(cell)
            print(f"| {name} | {looks} | " + " | ".join(cells) + " |", flush=True)


def power_table(horizons=(10, 20, 50)):
    print("\n## the plan's stated power: the sustained held-out drop from look 1 caught in 80% "
          "of runs by the last look, in standard errors of one look's paired change")
    print("| looks | " + " | ".join(DESIGNS) + " |")
    print("|---|" + "---|" * len(DESIGNS))
    for looks in horizons:
        print(f"| {looks} | " + " | ".join(
            f"{detectable_drop(make(looks, WATCH_CONFIRM), looks):.2f}"
            for make in DESIGNS.values()) + " |")


def scan_batch(rng, pays=0.0, copies=0.0, longer_right=0, n_tasks=8, k=8):
    """One batch: per task a pass rate ~ U(0.1, 0.9), replies of 50-1000 characters; reward =
    (1 - pays) x pass + pays x length / 1000. ``copies``: each reply after a task's first repeats
    an earlier reply of its task word for word (text and reward: a deterministic grader) with
    that probability. ``longer_right``: right replies are that many characters longer (a
    legitimate correlation: the reward pays only for the answer)."""
    rows = []
    for t in range(n_tasks):
        p = rng.uniform(0.1, 0.9)
        task: list[dict] = []
        for j in range(k):
            if j and rng.random() < copies:
                task.append(dict(task[int(rng.integers(j))]))
                continue
            passed = float(rng.random() < p)
            length = int(rng.integers(50, 1000)) + int(longer_right * passed)
            reward = (1 - pays) * passed + pays * length / 1000
            task.append({"task_id": f"t{t}", "reward": reward, "completion": "x" * length})
        rows += task
    return rows


@contextmanager
def row_shuffle():
    """The previous scan (the named baseline): every row shuffled alone, copies apart."""
    saved = scan_module._copy_units
    scan_module._copy_units = lambda data, matrix, keep: (None, 0)
    try:
        yield
    finally:
        scan_module._copy_units = saved


def _suspect(batch, seed, **kw) -> bool:
    return hack_scan(batch, seed=seed, n_shuffles=200, **kw).verdict == "suspect"


def scan_table(rng, runs, scans=20):
    print("\n## hack_scan on 8 tasks x 8 replies: one scan at 0.95, and repeated over one run's "
          f"{scans} batches (scan j at look j of the scans' half of the plan)")
    print("| batches | one scan, copies shuffled with their reply | one scan, every row alone "
          f"(previous, baseline) | some scan of {scans}, the plan |")
    print("|---|---|---|---|")
    for copies in (0.0, 0.1, 0.3, 0.55):
        one = old = 0
        for _ in range(runs):
            batch, seed = scan_batch(rng, copies=copies), int(rng.integers(1 << 31))
            one += _suspect(batch, seed)
            with row_shuffle():
                old += _suspect(batch, seed)
        fired = 0
        for _ in range(runs):
            fired += any(_suspect(scan_batch(rng, copies=copies), int(rng.integers(1 << 31)),
                                  look=j) for j in range(1, scans + 1))
        print(f"| honest, {copies:.0%} copies | {rate(one, runs)} | {rate(old, runs)} | "
              f"{rate(fired, runs)} |", flush=True)
    for name, kw in (("reward 0.6 pass + 0.4 length / 1000", dict(pays=0.4)),
                     ("reward 0.8 pass + 0.2 length / 1000 (moderate)", dict(pays=0.2)),
                     ("reward 0.9 pass + 0.1 length / 1000 (weak)", dict(pays=0.1)),
                     ("moderate, 30% copies", dict(pays=0.2, copies=0.3)),
                     ("legitimate: right replies 300 characters longer, reward = pass",
                      dict(longer_right=300))):
        one = sum(_suspect(scan_batch(rng, **kw), int(rng.integers(1 << 31)))
                  for _ in range(runs))
        first = []
        for _ in range(runs // 5):
            first.append(next((j for j in range(1, scans + 1) if _suspect(
                scan_batch(rng, **kw), int(rng.integers(1 << 31)), look=j)), 0))
        first = np.array(first)
        hit = first > 0
        print(f"| {name} | {rate(one, runs)} | | {rate(hit.sum(), first.size)}"
              + (f"; first alarm at scan {np.median(first[hit]):.0f} (median)" if hit.any() else "")
              + " |", flush=True)
    words = hack_scan(scan_batch(rng, longer_right=300, n_tasks=40), seed=1).next_step
    print(f"\nwhat a suspect scan says (the legitimate case, 40 tasks): {words}")


PLANTS = ("zero_advantage", "truncation_lock_in", "staleness", "verifier_noise",
          "diversity_collapse", "entropy_runaway", "kl_runaway")
_U = np.linspace(0.2, 0.8, 2001)
_TIED = float(np.mean(_U ** 8 + (1 - _U) ** 8))  # a U(0.2, 0.8) group of 8 with one reward


def doctor_run(rng, plant, steps=30, groups=8, k=8, onset=16, length=5, tied=0.0,
               strength=None, cut=0.05, repeat=0.0):
    """One simulated run's findings: rollouts drawn as arrays (steps x groups x k) and read by
    the doctor's own per-step counting and signatures. Honest: a group's pass rate ~ U(0.2,
    0.8), or with probability chosen so that a share ``tied`` of groups has one reward, 0 or 1;
    a share ``cut`` of replies cut (above 5%: clustered by task, each group's share ~ Beta with
    that mean and concentration 3); each group repeats one reply, scored alike, and each later
    reply repeats an earlier one with probability ``repeat``. ``strength``: a moderate
    plant (the share of groups with one reward, of replies cut, of a group's replies that repeat
    its first) instead of the strong default (all, 0.9, 7 of 8)."""
    shape = (steps, groups, k)
    on = np.zeros(steps, dtype=bool)
    if plant is not None:
        on[onset - 1:onset - 1 + length] = True  # steps onset .. onset + length - 1
    on3 = on[:, None, None]
    p = rng.uniform(0.2, 0.8, (steps, groups, 1))
    if tied:
        pi = (tied - _TIED) / (1 - _TIED)
        p = np.where(rng.random((steps, groups, 1)) < pi, rng.integers(0, 2, (steps, groups, 1)), p)
    rewards = (rng.random(shape) < p).astype(float)
    text = np.arange(steps * groups * k).reshape(shape)  # every reply distinct ...
    text[..., 1] = text[..., 0]  # ... but one repeated a group: scored alike by an honest verifier
    rewards[..., 1] = rewards[..., 0]
    for j in range(2, k):  # and, honestly, a later reply repeating an earlier one
        again = rng.random((steps, groups)) < repeat
        src = rng.integers(0, j, (steps, groups))
        text[..., j] = np.where(again, np.take_along_axis(text, src[..., None], 2)[..., 0],
                                text[..., j])
        rewards[..., j] = np.where(again, np.take_along_axis(rewards, src[..., None], 2)[..., 0],
                                   rewards[..., j])
    if plant == "zero_advantage":
        one = rng.random((steps, groups, 1)) < (1.0 if strength is None else strength)
        rewards = np.where(on3 & one, rewards[..., :1], rewards)
    if plant == "verifier_noise":
        rewards[..., 1] = np.where(on[:, None], 1.0 - rewards[..., 0], rewards[..., 1])
    if plant == "diversity_collapse":
        head = np.zeros(k, dtype=bool)
        head[:k - 1 if strength is None else int(round(strength * k))] = True
        text = np.where(on3 & head, text[..., :1], text)
        rewards = np.where(on3 & head, rewards[..., :1], rewards)
    cut_share = 0.9 if strength is None else strength
    base = (rng.beta(3 * cut, 3 * (1 - cut), (steps, groups, 1)) if cut > 0.05
            else np.full((steps, groups, 1), cut))
    cut = rng.random(shape) < np.where(on3 & (plant == "truncation_lock_in"), cut_share, base)
    lag = np.where(on[:, None] & (plant == "staleness"), 12, rng.integers(0, 3, (steps, groups)))
    version = (np.arange(steps)[:, None] - lag)[..., None] + np.zeros(shape)  # step s: s - 1 - lag
    step = np.broadcast_to(np.arange(steps)[:, None, None], shape)
    group = np.broadcast_to(np.arange(groups)[None, :, None], shape)
    run = RunArrays(range(1, steps + 1), step.ravel(), group.ravel(), rewards.ravel(),
                    cut.ravel().astype(float), text.ravel(), version.ravel())
    entropy = np.where(on & (plant == "entropy_runaway"), 0.03, 0.6) + rng.normal(0, 0.02, steps)
    kl = np.where(on & (plant == "kl_runaway"), 0.5, 0.001) + np.abs(rng.normal(0, 3e-4, steps))
    metrics = {s: {"entropy": float(entropy[s - 1]), "kl": float(kl[s - 1])}
               for s in range(1, steps + 1)}
    nums = _step_numbers(run, metrics, 0.95)
    return {f.signature: f for f in _signatures(nums, None, 8, 0.95, 0)}


def doctor_table(rng, runs, onset=16, length=5):
    print("\n## diagnose_run: 30 steps of 8 groups x 8 rollouts; honest runs (any signature "
          "found: the run called sick), and each failure planted at steps 16-20")
    print("| honest run | called sick (any signature) | zero_advantage | truncation_lock_in | "
          "diversity_collapse |")
    print("|---|---|---|---|---|")
    honest = {f"{_TIED:.2f} of groups with one reward, 5% cut, distinct 0.88": {},
              "0.40 of groups with one reward (the line: 0.50)": dict(tied=0.40),
              "0.45 of groups with one reward": dict(tied=0.45),
              "45% of replies cut, clustered by task (the line: 50%)": dict(cut=0.45),
              "distinct share 0.76 (the line: 0.75)": dict(repeat=0.15)}
    for name, kw in honest.items():
        sick = {"any": 0, "zero_advantage": 0, "truncation_lock_in": 0, "diversity_collapse": 0}
        for _ in range(runs):
            found = {s for s, f in doctor_run(rng, None, **kw).items() if f.status == "found"}
            sick["any"] += bool(found)
            for sig in list(sick)[1:]:
                sick[sig] += sig in found
        print(f"| {name} | " + " | ".join(rate(v, runs) for v in sick.values()) + " |",
              flush=True)
    print("\n| planted at steps 16-20 | detected at a planted step | first detection, steps "
          "after onset (median, max) |")
    print("|---|---|---|")
    cases = [(p, None, p) for p in PLANTS] + [
        ("zero_advantage", 0.7, "zero_advantage: 70% of groups one reward (moderate)"),
        ("truncation_lock_in", 0.7, "truncation_lock_in: 70% of replies cut (moderate)"),
        ("diversity_collapse", 0.5, "diversity_collapse: half a group's replies one (moderate)")]
    for plant, strength, name in cases:
        hits, lags = 0, []
        for _ in range(runs):
            f = doctor_run(rng, plant, strength=strength)[plant]
            at = [s for s in f.steps if onset <= s < onset + length]
            hits += bool(at)
            if at:
                lags.append(at[0] - onset)
        lag = f"{np.median(lags):.0f}, {max(lags)}" if lags else "n/a"
        print(f"| {name} | {rate(hits, runs)} | {lag} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--scan-runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--only", choices=("watch", "scan", "doctor"), default=None)
    parser.add_argument("--looks", type=int, nargs="*", default=[10, 20, 50])
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.only in (None, "watch"):
        watch_table(rng, args.runs, args.looks)
        power_table(args.looks)
    if args.only in (None, "doctor"):
        doctor_table(rng, args.runs)
    if args.only in (None, "scan"):
        scan_table(rng, args.scan_runs)
    print(f"\n({time.perf_counter() - start:.0f} s, seed {args.seed})")


if __name__ == "__main__":
    main()
