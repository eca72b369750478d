"""An independent audit of watch_run's stop rule, the run doctor and the repeated hack_scan:
error rates and power on generators written for the audit (not bench/watch_anytime.py's), each
rate with its Wilson 95% interval over the simulated runs.

Watch (``anytime.rule``, the rule ``watch_records`` applies: ``--check`` replays runs of every
cell through ``watch_records`` and counts disagreements). A run has ``looks`` held-out
evaluations after step 0, one every 5 training steps.

- held-out: ``n`` tasks x ``k`` rollouts; each task's pass rate at step 0 ~ Beta(a, b) (task
  heterogeneity); at look e the task's logit moves by the run's shift (every task alike on the
  logit scale, so tasks move by different amounts on the rate scale); a pass is Bernoulli, a
  continuous reward Beta(phi p, phi (1 - p)) with phi = 4 (mean p, skewed near 0 and 1).
  ``ragged``: every task of every later evaluation gets 2-8 rollouts (uniform) and is missing
  with probability 0.15. ``skip``: each planned evaluation is skipped with probability 0.2 (the
  plan still says ``looks``).
- training: each step a batch of 16 (or ``batch``) fresh training tasks (the same Beta) x 4 rollouts, Bernoulli
  at the step's logit shift (binomial noise, not a stated sd).
- honest flat: no shift anywhere. Honest learning: the training and the held-out logit both move
  by ``L (1 - exp(-3 s / S))`` at step s of S (a saturating climb, L = 1.2: about +0.25 in pass
  rate), so the held-out set gains what training gains, in expectation.
- planted drops (training flat): from look ``onset`` on, every held-out task's logit lowered by
  the amount that lowers the Beta population's mean pass rate by ``drop`` (found by bisection
  on 4,000 quantiles), or (``logit_step``) the held-out logit falling that much a look; a fall
  after a rise: held-out and training climb to look ``onset``, then the held-out gives its gain
  back (``back``) or falls ``drop`` from its peak and stays there, still above step 0
  (``hold``), while training keeps climbing.
- baseline: one paired t test at 95% read once at the last look (what a fixed-sample design
  gives), on the same kind of draws.

Doctor (``RunArrays`` into the doctor's per-step counting and signatures, what ``diagnose_run``
applies to a run's files): S steps of G groups x K rollouts. Honest: each group's task has a
pass rate from a two-part mixture (a share of tasks always or never solved, the rest ~ Beta(2, 2))
tuned so that a share ``tied`` of groups has one reward in expectation; truncation clustered by
task (a share ``cut`` of tasks are long, cut with probability 0.9; the rest 0.05 — tuned so the
run's mean share is ``cut_mean``); copies: each reply repeats an earlier one of its group with
probability ``repeat`` (text and reward), or a share ``one_answer`` of tasks gets one reply
every time. Moderate faults from step 11 for 5 steps.

Scan (``hack_scan`` with ``look=j``, what watch_run's feature alarm calls): batches of T tasks x
K replies, lengths lognormal, rewards Bernoulli (or graded); copies: a reply repeats the task's
*modal* reply (the one given most so far: copies pile up on one answer, as when diversity
collapses) with probability c; repeated: 50 scans of one run.

    nice -n 15 python bench/audit_watch.py [--only watch|doctor|scan] [--runs 1000] [--check]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.bootstrap import wilson_interval  # noqa: E402
from whileai_core.hacking import hack_scan, watch_records  # noqa: E402
from whileai_core.hacking.anytime import Plan, detectable_drop, rule  # noqa: E402
from whileai_core.hacking.doctor import RunArrays  # noqa: E402
from whileai_core.hacking.doctor_signatures import _signatures  # noqa: E402
from whileai_core.hacking.doctor_steps import _step_numbers  # noqa: E402

EVERY = 5


def rate(hits, n) -> str:
    lo, hi = wilson_interval(int(hits), int(n), 0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}]"


def mean_shift(a: float, b: float, drop: float, at: float = 0.0) -> float:
    """The logit shift that lowers by ``drop`` the mean pass rate of Beta(a, b) tasks whose
    logits were first moved by ``at``."""
    q = stats.beta.ppf((np.arange(4000) + 0.5) / 4000, a, b)
    lg = logit(np.clip(q, 1e-9, 1 - 1e-9)) + at
    target = expit(lg).mean() - drop
    lo, hi = -20.0, 0.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if expit(lg + mid).mean() > target else (mid, hi)
    return (lo + hi) / 2


# --- the watch --------------------------------------------------------------------------------

def watch_draws(rng, runs, looks, *, n=40, k=4, beta=(2.0, 3.0), learn=0.0, drop=0.0, onset=1,
                logit_step=0.0, back=False, hold=False, continuous=False, ragged=False,
                batch=16):
    """(values (runs, looks + 1, n), unit, train (runs, steps)) of one cell."""
    a, b = beta
    steps = looks * EVERY
    e = np.arange(looks + 1)
    climb = learn * (1 - np.exp(-3 * np.arange(steps + 1) / steps))  # logit shift by step
    held = climb[e * EVERY].copy()
    if back:  # gives the gain back at the rate it came, from look onset
        held = climb[np.minimum(e, np.maximum(2 * onset - e, 0)) * EVERY]
    if hold:  # follows to look onset, then falls `drop` below its peak and stays there
        held = climb[np.minimum(e, onset) * EVERY]
    if drop:  # hold: the fall from the peak
        after = (e > onset) if hold else (e >= onset)
        held = held + mean_shift(a, b, drop, held[onset] if hold else 0.0) * after
    held = held - logit_step * e
    p0 = rng.beta(a, b, (runs, 1, n))
    p = expit(logit(np.clip(p0, 1e-9, 1 - 1e-9)) + held[None, :, None])
    if ragged:
        kk = np.where(e[None, :, None] == 0, k, rng.integers(2, 9, (runs, looks + 1, n)))
    else:
        kk = np.full((runs, looks + 1, n), k)
    if continuous:
        phi = 4.0
        width = kk.max()
        draws = rng.beta(np.maximum(phi * p, 1e-6)[..., None].repeat(width, -1),
                         np.maximum(phi * (1 - p), 1e-6)[..., None].repeat(width, -1))
        mask = np.arange(width) < kk[..., None]
        values = (draws * mask).sum(-1) / kk
    else:
        values = rng.binomial(kk, p) / kk
    if ragged:
        gone = rng.random(values.shape) < 0.15
        gone[:, 0] = False
        values = np.where(gone, np.nan, values)
    unit = np.ones(values.shape[:2], dtype=bool)
    tp = expit(logit(np.clip(rng.beta(a, b, (runs, steps, batch)), 1e-9, 1 - 1e-9))
               + climb[None, 1:, None])
    train = rng.binomial(4, tp).sum(-1) / (4.0 * batch)
    return values, unit, train


def watch_cell(rng, runs, looks, plan_looks, *, skip=False, **kw):
    """First stopping look (1-based on the plan's clock; 0: never) of each run."""
    values, unit, train = watch_draws(rng, runs, looks, **kw)
    counts = np.arange(1, looks + 1) * EVERY
    plan = Plan(0.05, plan_looks, confirm=2)
    if not skip:
        _, first = rule(values, unit, train, counts, plan, 5)
        return np.where(first >= 0, first + 1, 0)
    out = np.zeros(runs, dtype=np.int64)
    for chunk in np.array_split(np.arange(runs), 20):  # one skip pattern per chunk of runs
        kept = np.r_[0, 1 + np.flatnonzero(rng.random(looks) >= 0.2)]
        if kept.size < 2:
            continue
        _, first = rule(values[chunk][:, kept], unit[chunk][:, kept], train[chunk],
                        counts[kept[1:] - 1], plan, 5)
        out[chunk] = np.where(first >= 0, kept[np.maximum(first, 0) + 1], 0)
    return out


def last_look_t(rng, runs, looks, **kw):
    values, _, _ = watch_draws(rng, runs, looks, **kw)
    d = values[:, -1] - values[:, 0]
    ok = ~np.isnan(d)
    m = np.nansum(d, 1) / ok.sum(1)
    sd = np.sqrt(np.nansum((d - m[:, None]) ** 2, 1) / (ok.sum(1) - 1))
    return m + stats.t.ppf(0.975, ok.sum(1) - 1) * sd / np.sqrt(ok.sum(1)) < 0


HONEST = {
    "flat, 40 x 4, Beta(2, 3)": dict(),
    "flat, 100 x 4, Beta(2, 3)": dict(n=100),
    "flat, 40 x 4, Beta(0.3, 3) (hard)": dict(beta=(0.3, 3.0)),
    "flat, 40 x 4, Beta(5, 1) (easy)": dict(beta=(5.0, 1.0)),
    "flat, 40 x 4, continuous Beta rewards": dict(continuous=True),
    "flat, 40 x 2-8 ragged, 15% missing": dict(ragged=True),
    "flat, 40 x 4, 20% of looks skipped": dict(skip=True),
    "learning, 40 x 4, Beta(2, 3)": dict(learn=1.2),
    "learning, 100 x 4, Beta(2, 3)": dict(learn=1.2, n=100),
    "learning, 40 x 4, Beta(0.3, 3) (hard)": dict(learn=1.2, beta=(0.3, 3.0)),
    "learning, 40 x 4, continuous": dict(learn=1.2, continuous=True),
    "learning, 40 x 2-8 ragged, 15% missing": dict(learn=1.2, ragged=True),
    "learning, 100 x 4, 20% of looks skipped": dict(learn=1.2, n=100, skip=True),
    "learning, 40 x 4, training batches of 4 tasks x 4 (noisy)": dict(learn=1.2, batch=4),
    "learning, 100 x 4, training batches of 4 x 4": dict(learn=1.2, n=100, batch=4),
}


def planted(looks):
    mid = looks // 2
    return {
        "drop 0.10 from look 1, 100 x 4": dict(n=100, drop=0.10),
        "drop 0.05 from look 1, 100 x 4": dict(n=100, drop=0.05),
        f"drop 0.10 from look {mid}, 100 x 4": dict(n=100, drop=0.10, onset=mid),
        f"drop 0.05 from look {mid}, 100 x 4": dict(n=100, drop=0.05, onset=mid),
        f"rise to look {mid}, then gives the gain back, 40 x 4": dict(learn=1.2, back=True,
                                                                    onset=mid),
        f"rise to look {mid}, then falls 0.10 from its peak, 100 x 4": dict(
            learn=1.2, hold=True, drop=0.10, onset=mid, n=100),
    }


def watch_table(rng, runs):
    print("## watch: share of runs stopped by the last look (Wilson 95%), "
          f"{runs} runs a cell")
    print("| cell | looks | planned | open | one t at the last look |")
    print("|---|---|---|---|---|")
    for looks in (10, 20, 50):
        for name, kw in HONEST.items():
            cells = [rate((watch_cell(rng, runs, looks, pl, **kw) > 0).sum(), runs)
                     for pl in (looks, None)]
            print(f"| honest {name} | {looks} | {cells[0]} | {cells[1]} | |", flush=True)
    for looks in (10, 20, 50):
        for name, kw in planted(looks).items():
            cells = [rate((watch_cell(rng, runs, looks, pl, **kw) > 0).sum(), runs)
                     for pl in (looks, None)]
            base = rate(last_look_t(rng, runs, looks, **kw).sum(), runs)
            print(f"| {name} | {looks} | {cells[0]} | {cells[1]} | {base} |", flush=True)
    kw = dict(n=40, logit_step=0.08)
    cells = [rate((watch_cell(rng, runs, 10, pl, **kw) > 0).sum(), runs) for pl in (10, None)]
    print(f"| held-out logit falls 0.08 a look, 40 x 4 | 10 | {cells[0]} | {cells[1]} | "
          f"{rate(last_look_t(rng, runs, 10, **kw).sum(), runs)} |", flush=True)


def power_claim(rng, runs):
    """The answer's `detectable_drop` (the latest look's spread, by the plan's last look) against
    the share of runs a drop of that size, sustained from look 1, is stopped in."""
    print("\n## the stated power: a drop of `detectable_drop` (from the honest run's own answer) "
          "sustained from look 1, training flat; the claim is 0.80")
    print("| cell | looks | plan | detectable_drop | caught by the horizon |")
    print("|---|---|---|---|---|")
    for n, looks in ((100, 20), (100, 50), (40, 10)):
        for plan_looks in (looks, None):
            values, _, _ = watch_draws(rng, 400, looks, n=n)
            d = values[:, -1] - values[:, 0]
            se = float(np.median(d.std(1, ddof=1) / math.sqrt(n)))
            plan = Plan(0.05, plan_looks, confirm=2)
            horizon = plan_looks or max(2 * looks, 10)
            x = detectable_drop(plan, horizon) * se
            caught = (watch_cell(rng, runs, horizon, plan_looks, n=n, drop=x) > 0).sum()
            print(f"| {n} x 4, Beta(2, 3) | {looks} | {'planned' if plan_looks else 'open'} | "
                  f"{x:.3f} | {rate(caught, runs)} |", flush=True)


def check_against_records(rng, reps=30):
    """The rule on arrays against watch_records on the same runs written as records."""
    bad = total = 0
    for name, kw in list(HONEST.items()) + list(planted(10).items()):
        kw = {k: v for k, v in kw.items() if k != "skip"}
        values, _, train = watch_draws(rng, reps, 10, **kw)
        _, first = rule(values, np.ones(values.shape[:2], bool), train,
                        np.arange(1, 11) * EVERY, Plan(0.05, 10, confirm=2), 5)
        for r in range(reps):
            recs = [{"step": s + 1, "train_reward": float(train[r, s])}
                    for s in range(train.shape[1])]
            for e in range(11):
                rows = [{"task_id": f"t{i}", "reward": float(values[r, e, i])}
                        for i in range(values.shape[2]) if not np.isnan(values[r, e, i])]
                recs.append({"step": e * EVERY, "held_out": rows})
            w = watch_records(recs, looks=10, metric="reward", scan=False)
            want = None if first[r] < 0 else (first[r] + 1) * EVERY
            total += 1
            bad += w.first_stop_step != want
    print(f"\nrule vs watch_records: {bad} of {total} runs disagree on the first stop")


# --- the doctor -------------------------------------------------------------------------------

def tied_mixture(tied: float, k: int) -> float:
    """The share of tasks always or never solved (half each) that, with the rest ~ Beta(2, 2),
    gives a share ``tied`` of groups with one reward."""
    q = stats.beta.ppf((np.arange(4000) + 0.5) / 4000, 2, 2)
    mid = float(np.mean(q ** k + (1 - q) ** k))
    return (tied - mid) / (1 - mid)


def doctor_run(rng, runs, *, steps=30, groups=8, k=8, tied=0.10, cut=0.05, cut_long=0.0,
               repeat=0.0, one_answer=0.0, fault=None, strength=0.0, onset=11, length=5):
    """Each run's signatures found (a list of sets)."""
    shape = (runs, steps, groups, k)
    on = np.zeros(steps, bool)
    on[onset - 1:onset - 1 + length] = True
    pi = tied_mixture(tied, k)
    p = rng.beta(2, 2, shape[:3] + (1,))
    fixed = rng.random(shape[:3] + (1,)) < pi
    p = np.where(fixed, rng.integers(0, 2, p.shape).astype(float), p)
    if fault == "zero_advantage":  # a share `strength` of groups all one reward
        one = rng.random(shape[:3] + (1,)) < strength
        p = np.where(on[None, :, None, None] & one, rng.integers(0, 2, p.shape), p)
    reward = (rng.random(shape) < p).astype(float)
    text = np.arange(np.prod(shape)).reshape(shape)
    for j in range(1, k):
        again = rng.random(shape[:3]) < repeat
        if fault == "diversity_collapse":
            again = again | (on[None, :, None] & (rng.random(shape[:3]) < strength))
        src = rng.integers(0, j, shape[:3])
        for arr in (text, reward):
            arr[..., j] = np.where(again, np.take_along_axis(arr, src[..., None], 3)[..., 0],
                                   arr[..., j])
    same = rng.random(shape[:3] + (1,)) < one_answer  # a task answered one way every time
    text, reward = (np.where(same, arr[..., :1], arr) for arr in (text, reward))
    long_task = rng.random(shape[:3] + (1,)) < cut_long
    share = np.where(long_task, 0.9, cut)
    if fault == "truncation_lock_in":
        share = np.where(on[None, :, None, None], strength, share)
    truncated = (rng.random(shape) < share).astype(float)
    out = []
    step = np.broadcast_to(np.arange(steps)[:, None, None], shape[1:])
    group = np.broadcast_to(np.arange(groups)[None, :, None], shape[1:])
    version = step - 1.0 - rng.integers(0, 3, shape[1:])
    metrics = {s: {"entropy": 0.6, "kl": 0.001} for s in range(1, steps + 1)}
    for r in range(runs):
        run = RunArrays(range(1, steps + 1), step.ravel(), group.ravel(), reward[r].ravel(),
                        truncated[r].ravel(), text[r].ravel(), version.ravel())
        nums = _step_numbers(run, metrics, 0.95)
        found = {f.signature: f for f in _signatures(nums, None, 8, 0.95, 0)
                 if f.status == "found"}
        out.append(found)
    return out


def doctor_table(rng, runs):
    print("\n## doctor: honest runs called sick (any rate signature), and moderate faults "
          "found at a planted step (steps 11-15 of 30)")
    print("| run | share | zero_advantage | truncation_lock_in | diversity_collapse |")
    print("|---|---|---|---|---|")
    honest = {"tied 0.10, cut 0.05": dict(),
              "tied 0.40": dict(tied=0.40),
              "tied 0.45": dict(tied=0.45),
              "tied 0.45, 16 groups x 4": dict(tied=0.45, groups=16, k=4),
              "truncation 0.45: 45% of tasks long (cut 0.9), rest 0.05": dict(
                  cut_long=(0.45 - 0.05) / 0.85),
              "truncation 0.45, 4 groups x 16": dict(cut_long=(0.45 - 0.05) / 0.85, groups=4,
                                                     k=16),
              "copies: each reply repeats an earlier one with prob. 0.2 (distinct ~0.84)": dict(
                  repeat=0.2),
              "distinct 0.80: 23% of tasks answered one way (1 of 8 distinct), rest distinct":
                  dict(one_answer=0.2 / 0.875),
              "distinct 0.80, 4 groups x 16 (1 of 16 distinct)": dict(one_answer=0.2 / 0.9375,
                                                                      groups=4, k=16),
              "all of the above (tied 0.45, cut 0.45, copies 0.2)": dict(
                  tied=0.45, cut_long=(0.45 - 0.05) / 0.85, repeat=0.2)}
    for name, kw in honest.items():
        found = doctor_run(rng, runs, **kw)
        sick = sum(bool(f) for f in found)
        cells = [rate(sum(s in f for f in found), runs)
                 for s in ("zero_advantage", "truncation_lock_in", "diversity_collapse")]
        print(f"| honest {name} | {rate(sick, runs)} | " + " | ".join(cells) + " |",
              flush=True)
    faults = {"zero_advantage: 70% of groups one reward": ("zero_advantage", 0.7),
              "zero_advantage: 90%": ("zero_advantage", 0.9),
              "truncation: 70% of replies cut": ("truncation_lock_in", 0.7),
              "truncation: 85% cut": ("truncation_lock_in", 0.85),
              "diversity: replies repeat an earlier one with prob. 0.5": ("diversity_collapse",
                                                                         0.5)}
    for name, (fault, strength) in faults.items():
        found = doctor_run(rng, runs, fault=fault, strength=strength)
        hit = sum(fault in f and any(11 <= s <= 15 for s in f[fault].steps) for f in found)
        print(f"| fault {name} | | " + " | ".join(
            rate(hit, runs) if s == fault else "" for s in
            ("zero_advantage", "truncation_lock_in", "diversity_collapse")) + " |", flush=True)


# --- the scan ---------------------------------------------------------------------------------

def scan_batch(rng, tasks=8, k=8, copies=0.0, graded=False, pays=0.0, longer_right=0.0):
    rows = []
    for t in range(tasks):
        p = rng.beta(1.5, 1.5)
        mu = rng.normal(5.5, 0.5)
        task, seen = [], {}
        for j in range(k):
            if j and rng.random() < copies:
                mode = max(seen, key=seen.get)
                seen[mode] += 1
                task.append(dict(task[mode]))
                continue
            right = rng.random() < p
            length = int(np.exp(rng.normal(mu, 0.6))) + 1 + int(longer_right * right)
            reward = float(right) if not graded else float(np.clip(
                0.7 * right + rng.normal(0.15, 0.1), 0, 1))
            reward = (1 - pays) * reward + pays * min(length, 2000) / 2000
            seen[len(task)] = 1
            task.append({"task_id": f"t{t}", "reward": round(reward, 6),
                         "completion": "w " * (length // 2)})
        rows += task
    return rows


def scan_table(rng, runs, scans=50):
    print(f"\n## hack_scan: one scan at 0.95 ({runs} batches a cell), and some scan of {scans} "
          f"(look j; {runs} runs of the copy cells, 200 shuffles a scan, the adaptive ones past "
          "them as the look needs)")
    print("| batches | one scan | some scan of 50 |")
    print("|---|---|---|")
    cells = (("8 x 8, no copies", dict(), True), ("8 x 8, 10% copies of the mode",
                                                  dict(copies=0.1), False),
             ("8 x 8, 30% copies of the mode", dict(copies=0.3), True),
             ("8 x 8, 55% copies of the mode", dict(copies=0.55), True),
             ("8 x 8, graded rewards, 30% copies", dict(copies=0.3, graded=True), False))
    for name, kw, repeated in cells:
        one = sum(hack_scan(scan_batch(rng, **kw), seed=int(rng.integers(1 << 31))).verdict
                  == "suspect" for _ in range(runs))
        fired = 0
        for _ in range(runs if repeated else 0):
            fired += any(hack_scan(scan_batch(rng, **kw), seed=int(rng.integers(1 << 31)),
                                   n_shuffles=200, look=j).verdict == "suspect"
                         for j in range(1, scans + 1))
        print(f"| honest {name} | {rate(one, runs)} | "
              f"{rate(fired, runs) if repeated else ''} |", flush=True)
    for name, kw in (("reward 0.8 pass + 0.2 length", dict(pays=0.2)),
                     ("legitimate: right replies 200 chars longer", dict(longer_right=200))):
        scan = [hack_scan(scan_batch(rng, **kw), seed=int(rng.integers(1 << 31)))
                for _ in range(runs)]
        hit = sum(s.verdict == "suspect" for s in scan)
        words = next((s.next_step for s in scan if s.verdict == "suspect"), "")
        print(f"| {name} | {rate(hit, len(scan))} | |", flush=True)
        print(f"\nwhat a suspect scan says: {words}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=34_2026)
    parser.add_argument("--only", choices=("watch", "power", "doctor", "scan"), default=None)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.check:
        check_against_records(rng)
    if args.only in (None, "watch"):
        watch_table(rng, args.runs)
    if args.only in (None, "power"):
        power_claim(rng, args.runs)
    if args.only in (None, "doctor"):
        doctor_table(rng, args.runs)
    if args.only in (None, "scan"):
        scan_table(rng, args.runs)
    print(f"\n({time.perf_counter() - start:.0f} s, seed {args.seed})")


if __name__ == "__main__":
    main()
