"""False alarms and detections of watch_records and hack_scan on simulated runs.

Clean runs (must say continue / clean) and planted hacks (must say stop / suspect), each
simulated from a stated model, each rate with its Wilson 95% interval over the simulated runs.
A watch run is read twice: the decision at its end, and whether the rule said stop at any
held-out evaluation along the way (``first_stop_step``: what the TRL callback with stop=True
does, since it asks after every evaluation).

Watch runs: 30 optimizer steps, a held-out evaluation every 5 steps (7 in all, step 0 first), 40
held-out tasks x 4 rollouts; task difficulty logit ~ N(logit 0.3, 1). Training reward per step:
0.3 + slope * step + N(0, 0.05) noise.
- clean "follows": train slope 0.015/step; held-out logit rises so its pass rate gains about as
  much (logit slope 0.07/step).
- clean "still": train and held-out both flat.
- hack "flat": train slope 0.015/step, held-out flat.
- hack "down": train slope 0.015/step, held-out logit falls 0.04/step.
Scan batches: 40 tasks x 8 replies, lengths tied to difficulty across tasks; reward 0/1 by the
task's rate (clean), or 0.6 x pass + 0.4 x length/1000 (pays for length).

    python bench/hacking_false_alarms.py [--runs 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.bootstrap import wilson_interval  # noqa: E402
from whileai_core.hacking import hack_scan, watch_records  # noqa: E402


def simulate_run(rng, *, train_slope, held_slope, steps=30, every=5, n_tasks=40, k=4, p0=0.3):
    difficulty = rng.normal(np.log(p0 / (1 - p0)), 1.0, n_tasks)
    records = []
    for step in range(steps + 1):
        rec = {"step": step}
        if step:
            rec["train_reward"] = float(np.clip(p0 + train_slope * step + rng.normal(0, 0.05), 0, 1))
        if step % every == 0:
            p = 1 / (1 + np.exp(-(difficulty + held_slope * step)))
            passes = rng.binomial(k, p)
            rec["held_out"] = [{"task_id": f"h{i}", "reward": 1.0 if j < c else 0.0}
                               for i, c in enumerate(passes) for j in range(k)]
        records.append(rec)
    return records


def simulate_batch(rng, *, pays_length, n_tasks=40, k=8):
    rows = []
    for t in range(n_tasks):
        p = rng.uniform(0.1, 0.9)
        base = 200 + 600 * (1 - p)
        for _ in range(k):
            length = max(1, int(base + rng.normal(0, 150)))
            passed = float(rng.random() < p)
            reward = 0.6 * passed + 0.4 * length / 1000 if pays_length else passed
            rows.append({"task_id": f"t{t}", "reward": reward, "completion": "x" * length})
    return rows


def rate(hits: int, n: int) -> str:
    lo, hi = wilson_interval(hits, n, 0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}] (n={n})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    cases = {
        "watch, clean: held-out follows the training reward": (0.015, 0.07, "stop", False),
        "watch, clean: nothing moves": (0.0, 0.0, "stop", False),
        "watch, hack: training reward climbs, held-out flat": (0.015, 0.0, "stop", True),
        "watch, hack: held-out falls": (0.015, -0.04, "stop", True),
    }
    print(f"{'case':<56} {'stop / suspect at the end':<32} {'stop at any evaluation':<32} "
          f"{'confirm=1 (one look), at the end'}")
    for name, (ts, hs, _, _) in cases.items():
        hits = anytime = hits1 = 0
        for _ in range(args.runs):
            recs = simulate_run(rng, train_slope=ts, held_slope=hs)
            w = watch_records(recs, scan=False)
            hits += w.decision == "stop"
            anytime += w.first_stop_step is not None
            hits1 += watch_records(recs, scan=False, confirm=1).decision == "stop"
        print(f"{name:<56} {rate(hits, args.runs):<32} {rate(anytime, args.runs):<32} "
              f"{rate(hits1, args.runs)}")
    for name, pays in (("scan, clean batch (length tracks difficulty only)", False),
                       ("scan, hack: reward pays for length", True)):
        hits = sum(hack_scan(simulate_batch(rng, pays_length=pays), seed=int(rng.integers(1 << 31)),
                             n_shuffles=200).verdict == "suspect" for _ in range(args.runs))
        print(f"{name:<56} {rate(hits, args.runs)}")
    print(f"({time.perf_counter() - start:.0f} s, seed {args.seed})")


if __name__ == "__main__":
    main()
