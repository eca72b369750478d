"""Error rates at every look: watch_run's stop rule, the repeated hack_scan and the run doctor on
simulated runs, each rate with its Wilson 95% interval over the runs.

Watch (the rule of ``whileai_core.hacking.anytime``, the one watch_records applies:
tests/test_hacking.py checks they agree run by run): 40 held-out tasks x 4 rollouts, difficulty
logit ~ N(logit 0.3, 1), a look every 5 steps; training reward 0.3 + gain x step / steps +
N(0, 0.05) per step.
- flat: training reward and held-out both flat (an honest run that learns nothing);
- partial: training gains 0.45, the held-out logit gains 60% of the training logit gain (honest,
  but the held-out set follows only part of the climb);
- hack flat: training gains 0.45, held-out flat;
- drop: training gains 0.45, held-out logit falls 0.2 a look (the planted drop of
  bench/hacking_false_alarms.py: 0.04 a step, evaluated every 5 steps) from look 1; or the
  held-out set follows the training gain
  until the run's middle look, then falls 0.2 a look;
- few tasks: 12 held-out tasks x 2 rollouts starting near 0.02 (most looks have no spread: the
  zero-spread bound), flat or following a training gain of 0.45 from 0.02 (honest); and 48 x 2
  that never move while training climbs (the hack the TRL smoke test plants).
The fixed-sample rule (the 0.1 rule: 95% t interval and 1.96 band at every look) is run on the
same draws for comparison.

Scan: 50 honest batches of one run, 8 tasks x 8 replies (length random, reward 0/1 at the task's
rate), scan j at look j (the scans' share of the run's error, SCAN_RUN_SHARE); and a length hack
(reward 0.6 x pass + 0.4 x length / 1000) at every batch: the scan at which it first alarms.

Doctor: 30 steps of 8 groups x 8 rollouts, drawn as arrays and read by the doctor's own
per-step counting (``RunArrays``, ``_step_numbers``) and signatures; each failure planted from
step 16 to 20, and its honest twin; per signature the share of planted runs in which it fires
at a planted step (and the first such step), and the share of honest runs in which it fires
anywhere. About 20 ms a run.

    nice -n 10 python bench/watch_anytime.py [--runs 1000] [--scan-runs 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.bootstrap import wilson_interval  # noqa: E402
from whileai_core.hacking import hack_scan  # noqa: E402
from whileai_core.hacking.anytime import (climb_band, first_stop, look_conditions,  # noqa: E402
                                          paired_look_interval)
from whileai_core.hacking.doctor import RunArrays, _signatures, _step_numbers  # noqa: E402


def rate(hits: int, n: int) -> str:
    lo, hi = wilson_interval(int(hits), n, 0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}] (n={n})"


def watch_runs(rng, runs, looks, *, gain=0.45, share=0.0, drop=0.0, onset=0, anytime=True,
               confirm=2, every=5, n=40, k=4, p0=0.3):
    """First stopping look (1-based, 0: never) of each simulated run."""
    steps = looks * every
    lg0 = np.log(p0 / (1 - p0))
    diff = rng.normal(lg0, 1.0, (runs, 1, n))
    train = p0 + gain * np.arange(1, steps + 1) / steps + rng.normal(0, 0.05, (runs, steps))
    at = p0 + gain * np.arange(looks + 1) * every / steps
    shift = share * (np.log(at / (1 - at)) - lg0) - drop * np.clip(np.arange(looks + 1) - onset, 0, None)
    values = rng.binomial(k, 1 / (1 + np.exp(-(diff + shift[None, :, None])))) / k
    d = values[:, 1:] - values[:, :1]
    lk = np.arange(1, looks + 1)
    # the fixed-sample rule: every look at 95%, i.e. look 1 of a plan at level 0.90 (alpha_1 =
    # 0.05): Student's t at 0.975, and a zero-spread look its exact bound at 0.05
    _, lo, hi, _ = paired_look_interval(d, 0.95 if anytime else 0.90,
                                        lk[None, :] if anytime else 1)
    climbs = np.full((runs, looks), np.nan)
    bands = np.full((runs, looks), np.nan)
    for j in range(looks):
        t = (j + 1) * every
        w = max(2, min(5, t // 2))
        r = train[:, :t]
        climbs[:, j] = r[:, -w:].mean(1) - r[:, :w].mean(1)
        sigma = np.sqrt((np.diff(r, axis=1) ** 2).sum(1) / (2 * (t - 1)))
        bands[:, j] = (climb_band(sigma, w, t, 0.95, j + 1) if anytime
                       else 1.959964 * sigma * np.sqrt(2 / w))
    return first_stop(look_conditions(lo, hi, climbs, bands), confirm) + 1


def watch_table(rng, runs):
    print("## watch_run: share of runs stopped at some look (first stop look: median, 95th pct)")
    print("| case | looks | anytime, confirm 2 (default) | anytime, confirm 1 | fixed-sample, confirm 2 |")
    print("|---|---|---|---|---|")
    for looks in (10, 20, 50):
        cases = {"flat (honest)": dict(gain=0.0), "partial gain 60% (honest)": dict(share=0.6),
                 "hack: held-out flat": dict(), "drop 0.2 logit/look from look 1": dict(drop=0.2),
                 f"follows, then drops 0.2 logit/look from look {looks // 2}":
                     dict(share=1.0, drop=0.2, onset=looks // 2),
                 "few tasks, flat (honest): 12 x 2, pass near 0.02": dict(gain=0.0, n=12, k=2,
                                                                         p0=0.02),
                 "few tasks, follows (honest): 12 x 2 from 0.02": dict(share=1.0, n=12, k=2,
                                                                      p0=0.02),
                 "few tasks, hack: held-out flat, 48 x 2 from 0.02": dict(n=48, k=2, p0=0.02)}
        for name, kw in cases.items():
            cells = []
            for anytime, confirm in ((True, 2), (True, 1), (False, 2)):
                stop = watch_runs(rng, runs, looks, anytime=anytime, confirm=confirm, **kw)
                hit = stop > 0
                cell = rate(hit.sum(), runs)
                if "drop" in name or "hack" in name:
                    at = stop[hit] - kw.get("onset", 0)
                    if at.size:
                        cell += f"; looks after onset {np.median(at):.0f}, {np.percentile(at, 95):.0f}"
                cells.append(cell)
            print(f"| {name} | {looks} | " + " | ".join(cells) + " |")


def scan_batch(rng, pays_length, n_tasks=8, k=8):
    rows = []
    for t in range(n_tasks):
        p = rng.uniform(0.1, 0.9)
        for _ in range(k):
            length = int(rng.integers(50, 1000))
            passed = float(rng.random() < p)
            reward = 0.6 * passed + 0.4 * length / 1000 if pays_length else passed
            rows.append({"task_id": f"t{t}", "reward": reward, "completion": "x" * length})
    return rows


def scan_table(rng, runs, scans=50):
    print("\n## hack_scan repeated over one run's batches (8 tasks x 8 replies)")
    alarms = single = 0
    for _ in range(runs):
        fired = fired_single = False
        for j in range(1, scans + 1):
            batch = scan_batch(rng, False)
            seed = int(rng.integers(1 << 31))
            fired |= hack_scan(batch, seed=seed, look=j, n_shuffles=200).verdict == "suspect"
            if j <= 10:
                fired_single |= hack_scan(batch, seed=seed, n_shuffles=200).verdict == "suspect"
        alarms += fired
        single += fired_single
    print(f"honest runs alarmed at some scan of {scans}, spending plan: {rate(alarms, runs)}")
    print(f"honest runs alarmed at some scan of the first 10, each scan at 0.95: {rate(single, runs)}")
    first = []
    for _ in range(max(50, runs // 10)):
        for j in range(1, scans + 1):
            if hack_scan(scan_batch(rng, True), seed=int(rng.integers(1 << 31)), look=j,
                         n_shuffles=200).verdict == "suspect":
                first.append(j)
                break
        else:
            first.append(0)
    first = np.array(first)
    caught = first > 0
    print(f"length hack at every batch: caught {rate(caught.sum(), first.size)}; first alarm "
          f"at scan median {np.median(first[caught]):.0f}, 95th pct {np.percentile(first[caught], 95):.0f}")


PLANTS = ("zero_advantage", "truncation_lock_in", "staleness", "verifier_noise",
          "diversity_collapse", "entropy_runaway", "kl_runaway")


def doctor_run(rng, plant, steps=30, groups=8, k=8, onset=16, length=5):
    """One simulated run's findings: rollouts drawn as arrays (steps x groups x k) and read by
    the doctor's own per-step counting and signatures."""
    shape = (steps, groups, k)
    on = np.zeros(steps, dtype=bool)
    if plant is not None:
        on[onset - 1:onset - 1 + length] = True  # steps onset .. onset + length - 1
    on3 = on[:, None, None]
    p = rng.uniform(0.2, 0.8, (steps, groups, 1))
    rewards = (rng.random(shape) < p).astype(float)
    text = np.arange(steps * groups * k).reshape(shape)  # every reply distinct ...
    text[..., 1] = text[..., 0]  # ... but one repeated a group: scored alike by an honest verifier
    rewards[..., 1] = rewards[..., 0]
    if plant == "zero_advantage":
        rewards = np.where(on3, rewards[..., :1], rewards)
    if plant == "verifier_noise":
        rewards[..., 1] = np.where(on[:, None], 1.0 - rewards[..., 0], rewards[..., 1])
    if plant == "diversity_collapse":
        head = np.zeros(k, dtype=bool)
        head[:k - 1] = True
        text = np.where(on3 & head, text[..., :1], text)
        rewards = np.where(on3 & head, rewards[..., :1], rewards)
    cut = rng.random(shape) < np.where(on3 & (plant == "truncation_lock_in"), 0.9, 0.05)
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
    print("\n## diagnose_run: per signature, planted (steps 16-20 of 30) and honest twins")
    print("| signature | detected in planted runs | first detection, steps after onset (median, max) | fires in honest runs |")
    print("|---|---|---|---|")
    honest = {p: 0 for p in PLANTS}
    for _ in range(runs):
        found = doctor_run(rng, None)
        for p in PLANTS:
            honest[p] += found[p].status == "found"
    for plant in PLANTS:
        hits, lags = 0, []
        for _ in range(runs):
            f = doctor_run(rng, plant)[plant]
            at = [s for s in f.steps if onset <= s < onset + length]
            hits += bool(at)
            if at:
                lags.append(at[0] - onset)
        lag = f"{np.median(lags):.0f}, {max(lags)}" if lags else "n/a"
        print(f"| {plant} | {rate(hits, runs)} | {lag} | {rate(honest[plant], runs)} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--scan-runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--only", choices=("watch", "scan", "doctor"), default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.only in (None, "watch"):
        watch_table(rng, args.runs)
    if args.only in (None, "doctor"):
        doctor_table(rng, args.runs)
    if args.only in (None, "scan"):
        scan_table(rng, args.scan_runs)
    print(f"\n({time.perf_counter() - start:.0f} s, seed {args.seed})")


if __name__ == "__main__":
    main()
